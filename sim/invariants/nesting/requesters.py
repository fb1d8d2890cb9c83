"""Nested requesters (DEL-4, DEL-6): who reads a completion in which form, and when a child that
spawned children may announce.

Restated from the spawn records (which session spawned which child session, and when), each
child's end record, what each requester received (``requester.accept``) and what the registry
recorded as resolved. A requester is nested when its session key is the session of a spawned child.
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.delivery.retries import transport_tries
from sim.invariants.index import of_kinds
from sim.invariants.observations import is_wake, key_runs
from sim.invariants.settled import settles
from sim.trace import Record

# The reply instructions of reference §c5, restated by a phrase each form must carry.
NESTED_PHRASE = "short internal update"
TOP_LEVEL_PHRASE = "give the user"


def nested_instruction(trace: Sequence[Record]) -> list[Violation]:
    """A nested requester reads the internal-update form; a top-level one the user-facing form.
    The reader decides: a completion that fell back from a deleted nested session to a
    top-level one is read in the top-level form (reference §c2)."""
    child_sessions: set[str] = set()
    spawns: dict[str, Record] = {}
    violations: list[Violation] = []
    for r in of_kinds(trace, ("spawn", "requester.accept")):
        if r.kind == "spawn":
            child_sessions.add(r.data["child_session_key"])
            spawns[r.data["run_id"]] = r
        elif r.kind == "requester.accept" and r.data["run_id"] in spawns:
            spawn = spawns[r.data["run_id"]]
            reader = r.actor.removeprefix("requester:")
            nested = reader in child_sessions
            want, unwanted = ((NESTED_PHRASE, TOP_LEVEL_PHRASE) if nested
                              else (TOP_LEVEL_PHRASE, NESTED_PHRASE))
            # The instruction closes the block, after the child's (data) result.
            instruction = r.data["text"].rsplit("\nInstruction:\n", 1)[-1]
            if want not in instruction or unwanted in instruction:
                violations.append(Violation(
                    "nested-instruction", "DEL-4",
                    f"{r.data['run_id']} reached {'nested' if nested else 'top-level'} requester "
                    f"{reader} without the "
                    f"{'internal-update' if nested else 'user-facing'} instruction",
                    (spawn.seq, r.seq)))
    return violations


def descendants_first(trace: Sequence[Record]) -> list[Violation]:
    """A child that spawned children announces only after every descendant its run spawned has
    settled, as an outsider can tell (:class:`~sim.invariants.settled.EarliestSettle`: taken by
    its requester, nothing owed, refused for good, closed by its session's reset, or its expiry
    reached); never the registry's own records of a give-up, skip or close."""
    spawns: dict[str, Record] = {}
    ends: dict[str, Record] = {}
    by_requester: dict[str, list[str]] = {}
    settle = settles(trace)  # read as of each record (``seen_to``)
    # When each run started (its trace position): at its spawn, or later (lane.started) if it
    # was told to wait for the lane or its session's earlier run; None while it waits (it
    # spawns nothing then). Positions, not times: a session's next run may start at the very
    # instant its earlier run ends, and a spawn of that instant belongs to whichever ran when
    # it was made (seed 8298).
    starts: dict[str, int | None] = {}
    violations: list[Violation] = []

    def descendants(run_id: str) -> list[str]:
        spawn, end, start = spawns[run_id], ends.get(run_id), starts[run_id]
        if start is None:
            return []
        until = end.seq if end is not None else trace[-1].seq + 1  # still running: all so far
        found: list[str] = []
        for child in by_requester.get(spawn.data["child_session_key"], []):
            # Spawned while the run ran: at or after its end, the run no longer owns it.
            if start <= spawns[child].seq < until:
                found += [child, *descendants(child)]
        return found

    for r in of_kinds(trace, ("spawn", "lane.queued", "session.queued", "lane.started",
                              "child.end", "requester.accept")):
        kind = r.kind
        if kind == "spawn":
            spawns[r.data["run_id"]] = r
            starts[r.data["run_id"]] = r.seq
            by_requester.setdefault(r.data["requester"], []).append(r.data["run_id"])
        elif kind in ("lane.queued", "session.queued"):
            starts[r.data["run_id"]] = None
        elif kind == "lane.started":
            starts[r.data["run_id"]] = r.seq
        elif kind == "child.end":
            ends[r.data["run_id"]] = r
        if kind == "requester.accept" and r.data["run_id"] in spawns:
            run_id = r.data["run_id"]
            pending = [d for d in descendants(run_id) if not settle.settled(d, r.t_ms, r.seq)]
            if pending:
                violations.append(Violation(
                    "descendants-first", "DEL-6",
                    f"{run_id} reached {r.actor} while its descendants "
                    f"{', '.join(pending)} were still pending",
                    (spawns[run_id].seq, r.seq)))
    return violations


def requester_fallback(trace: Sequence[Record]) -> list[Violation]:
    """DEL-4: a completion lands in the session that spawned its run; once that nested session
    was deleted, in that session's own requester (one level up, reference §c2); never in a
    deleted session (with both gone it waits, retryable), and never nowhere: a run the registry
    records delivered was read by someone (or replied exactly ANNOUNCE_SKIP). The flow picks the
    fallback when it builds the call (reference §c2: "switches to it"), so the deletions are
    read as of the gateway's send of the copy that landed: a copy sent to the fallback while the
    asked session was deleted may land after that session was spawned again (seed 10796). A
    transport try of an attempt under way (the retry policy's 5, 10, 20 s tries,
    :func:`~sim.invariants.delivery.retries.transport_tries`) repeats the call its attempt built,
    so it is read as of that attempt's first send: a session spawned again between two tries
    of one attempt does not move it (seeds 83741, 89972); the next attempt picks again."""
    spawner: dict[str, str] = {}  # child session key -> the session that spawned it (latest)
    spawns: dict[str, Record] = {}
    deleted: dict[str, Record] = {}  # session -> its deletion, while it stays deleted
    ends: dict[str, Record] = {}
    landed: dict[str, str] = {}
    routed: dict[tuple[str, str], str | None] = {}  # (key, session sent to) -> want, at the send
    tries = transport_tries(trace)  # sends that repeat their attempt's call (its target too)
    violations: list[Violation] = []

    def wanted(run_id: str) -> str | None:
        """The asked requester, or once it is deleted its own requester (one level)."""
        asked: str | None = spawns[run_id].data["requester"]
        if asked in deleted:
            asked = spawner.get(asked)
            if asked in deleted:
                return None
        return asked

    for r in of_kinds(trace, ("spawn", "world.delete-session", "child.end", "gateway.send",
                              "requester.accept", "world.rows")):
        kind = r.kind
        if kind == "spawn":
            spawns[r.data["run_id"]] = r
            spawner[r.data["child_session_key"]] = r.data["requester"]
            deleted.pop(r.data["child_session_key"], None)  # spawned again: re-created
        elif kind == "world.delete-session":
            deleted[r.data["session"]] = r
        elif kind == "child.end":
            ends[r.data["run_id"]] = r
        elif kind == "gateway.send" and r.data["run_id"] in spawns:
            at = (r.data["key"], r.data["requester"].removeprefix("requester:"))
            if r.seq not in tries or at not in routed:
                routed[at] = wanted(r.data["run_id"])
        elif kind == "requester.accept" and is_wake(r.data["key"]):
            # A yield batch's wake carries its members' results (YLD-2): where it may land is
            # the wake oracles' (it goes to the yielded turn's own session).
            for run_id in key_runs(r.data["key"]):
                landed[run_id] = r.actor.removeprefix("requester:")
        elif kind == "requester.accept" and r.data["run_id"] in spawns:
            run_id = r.data["run_id"]
            asked = spawns[run_id].data["requester"]
            reader = r.actor.removeprefix("requester:")
            landed[run_id] = reader
            # Where the send of this copy had to go; a copy the gateway never logged (an
            # internal injection) as of now.
            want = routed.get((r.data["key"], reader), wanted(run_id))
            if reader != want or reader in deleted:
                why = (f"{reader} was deleted at {deleted[reader].t_ms} ms" if reader in deleted
                       else f"the asked requester {asked} and its fallback say {want}")
                violations.append(Violation(
                    "requester-fallback", "DEL-4",
                    f"{run_id} landed in {reader}, but {why}", (spawns[run_id].seq, r.seq)))
        elif kind == "world.rows":
            for row in r.data["rows"]:
                run_id = row["run_id"]
                end = ends.get(run_id)
                if (row["delivery_status"] != "delivered" or run_id in landed
                        or run_id not in spawns or end is None):
                    continue
                result = end.data["result"]
                if result is not None and result.strip() == "ANNOUNCE_SKIP":
                    continue
                violations.append(Violation(
                    "requester-fallback", "DEL-4",
                    f"{run_id} is recorded delivered but no session ever read it (asked "
                    f"requester {spawns[run_id].data['requester']})", (spawns[run_id].seq,
                                                                       r.seq)))
    return violations


def abort_cascades(trace: Sequence[Record]) -> list[Violation]:
    """Aborting a run that has not ended cancels, at that instant, every run it spawned (and
    theirs, below a run that had ended too) that has not ended either: each ends as killed
    ("subagent run terminated")."""
    spawns: dict[str, Record] = {}
    by_session: dict[str, list[str]] = {}
    latest: dict[str, str] = {}  # (requester session, child id) -> latest run, as a key string
    ended: dict[str, Record] = {}
    owed: dict[str, Record] = {}  # run -> the abort that must end it
    # Where each run started (its spawn, or lane.started after a wait; None while it waits):
    # a spawn into its session before then belongs to the session's earlier run.
    starts: dict[str, int | None] = {}
    violations: list[Violation] = []

    def children(run_id: str, until: int) -> list[str]:
        spawn, start = spawns[run_id], starts[run_id]
        if start is None:
            return []
        if run_id in ended:  # an ended run spawns no more
            until = min(until, ended[run_id].seq)
        return [c for c in by_session.get(spawn.data["child_session_key"], ())
                if start < spawns[c].seq < until]

    for r in of_kinds(trace, ("lane.queued", "session.queued", "lane.started", "spawn", "abort",
                              "child.end")):
        kind = r.kind
        if kind in ("lane.queued", "session.queued"):
            starts[r.data["run_id"]] = None
        elif kind == "lane.started":
            starts[r.data["run_id"]] = r.seq
        elif kind == "spawn":
            spawns[r.data["run_id"]] = r
            starts[r.data["run_id"]] = r.seq
            by_session.setdefault(r.data["requester"], []).append(r.data["run_id"])
            latest[f"{r.data['requester']}/{r.data['child']}"] = r.data["run_id"]
        elif kind == "abort" and r.data["running"]:
            target = latest.get(f"{r.actor.removeprefix('requester:')}/{r.data['child']}")
            if target is None or target in ended:
                continue
            frontier = children(target, r.seq)
            while frontier:
                run_id = frontier.pop()
                if run_id not in ended:
                    owed.setdefault(run_id, r)
                # Below an ended run too: OpenClaw's tree kill visits an ended run's children
                # (``killSubagentRunTree``; seed 49388).
                frontier += children(run_id, r.seq)
        elif kind == "child.end":
            run_id = r.data["run_id"]
            ended[run_id] = r
            abort = owed.pop(run_id, None)
            # A descendant that ended on its own in the abort's very instant ended before the
            # cascade reached its session (seed 23451): the order within one instant is the
            # scheduler's. Later, or not killed then, it was still running.
            if abort is not None and r.t_ms != abort.t_ms:
                violations.append(Violation(
                    "abort-cascades", "DEL-6",
                    f"{run_id} was still running when its ancestor {abort.data['child']} was "
                    f"aborted at {abort.t_ms} ms, yet it ended {r.data['status']} at {r.t_ms} ms",
                    (abort.seq, r.seq)))
    for run_id, abort in owed.items():
        violations.append(Violation(
            "abort-cascades", "DEL-6",
            f"{run_id} never ended after its ancestor {abort.data['child']} was aborted",
            (abort.seq,)))
    return violations


INVARIANTS = (
    Invariant("nested-instruction", "DEL-4", "safety",
              "A nested requester reads a completion as an internal update; a top-level requester "
              "reads the instruction to tell the user.",
              nested_instruction),
    Invariant("descendants-first", "DEL-6", "safety",
              "A child that spawned children announces only after all its run's descendants "
              "settled.",
              descendants_first),
    Invariant("requester-fallback", "DEL-4", "safety",
              "A completion lands in its requester's session, or, once that nested session was "
              "deleted, in its nearest live ancestor; never in a deleted session, never nowhere.",
              requester_fallback),
    Invariant("abort-cascades", "DEL-6", "safety",
              "Aborting a run cancels, at once, the runs it spawned that have not ended, and "
              "theirs.",
              abort_cascades),
)
