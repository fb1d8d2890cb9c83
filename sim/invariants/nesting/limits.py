"""Spawn limits (reference §c15): every spawn the world asked for is accepted or refused as the
configured limits say, a refused spawn never runs, and no more runs stream at once than the
``maxConcurrent`` lane allows.

Restated from the limits the world ran under (``world.limits``), each spawn request
(``world.spawn``), its outcome (``spawn`` or ``spawn.refused``) and the children's own records: a
session's depth is its key's ``:subagent:`` segments; its active children are the runs it spawned
that have no end record yet; a run is streaming from its first model activity to its end. A
request sessions_spawn must refuse for its private-completion options is spawn-refusals' (PRV-4).
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.index import of_kinds
from sim.invariants.private.completion import refusal_wanted
from sim.trace import Record

_ACTIVITY = ("child.delta", "child.message", "child.attempt", "child.tool_result",
             "child.turn_end")


def child_key(requester: str, label: str) -> str:
    """The child session key a spawn asks for (reference §a): a nested child appends a segment
    to its requester's key; a top-level requester's child is ``agent:<agentId>:subagent:<id>``."""
    if ":subagent:" in requester:
        return f"{requester}:subagent:{label}"
    parts = requester.split(":")
    agent = parts[1] if len(parts) > 1 and parts[0] == "agent" else "main"
    return f"agent:{agent}:subagent:{label}"


# What spawn-limits reads.
_LIMITS_KINDS = ("world.limits", "world.spawn", "spawn", "spawn.refused", "child.start",
                 "lane.queued", "session.queued", "lane.started", *_ACTIVITY, "child.end",
                 "steer", "requester.refused")


def spawn_limits(trace: Sequence[Record]) -> list[Violation]:
    limits: dict[str, int | None] = {}
    # child id -> its open requests, oldest first: a steer asks its replacement while the run it
    # replaces may still wait for its own answer (seed 2266)
    asked: dict[str, list[Record]] = {}
    active: dict[str, dict[str, None]] = {}  # session -> its runs without an end record
    session_of_run: dict[str, str] = {}
    latest: dict[tuple[str, str], str] = {}  # (session, child id) -> its latest run
    runs_of_key: dict[str, list[str]] = {}  # child session key -> its runs
    ended: set[str] = set()
    started: set[str] = set()
    queued: set[str] = set()
    streaming: dict[str, None] = {}
    violations: list[Violation] = []

    def fail(what: str, *seqs: int) -> None:
        violations.append(Violation("spawn-limits", "DEL-6", what, seqs))

    for r in of_kinds(trace, _LIMITS_KINDS):
        kind, data = r.kind, r.data
        if kind == "world.limits":
            limits = dict(data)
        elif kind == "world.spawn":
            asked.setdefault(data["child"], []).append(r)
        elif kind == "requester.refused":
            # A spawn refused for its caller's permission (DEL-17), or a steer refused with the
            # replacement it asked (same request number): that request is never answered.
            asked[data["child"]] = [w for w in asked.get(data["child"], [])
                                    if w.data["request"] != data["request"]]
        elif kind == "steer" and not data["killed"]:
            # A steer that found nothing running starts no replacement (reference §c18).
            unanswered = asked.get(data["child"])
            if unanswered:
                unanswered.pop()
        elif kind in ("spawn", "spawn.refused"):
            waiting = asked.get(data["child"])
            request = waiting.pop(0) if waiting else None
            if request is None:
                fail(f"{data['child']}: a spawn outcome without a request", r.seq)
                continue
            session = request.data["requester"]
            depth = session.count(":subagent:")
            count = len(active.get(session, {}))
            most_depth = limits.get("max_spawn_depth")
            most_children = limits.get("max_children_per_agent")
            over_depth = most_depth is not None and depth >= most_depth
            over_children = most_children is not None and count >= most_children
            if kind == "spawn":
                if over_depth or over_children:
                    fail(f"{data['child']} was spawned by {session} at depth {depth} with "
                         f"{count} active children (limits: depth {most_depth}, children "
                         f"{most_children})", request.seq, r.seq)
                run_id = data["run_id"]
                active.setdefault(session, {})[run_id] = None
                session_of_run[run_id] = session
                latest[(session, data["child"])] = run_id
                runs_of_key.setdefault(data["child_session_key"], []).append(run_id)
                continue
            reason = data["reason"]
            if refusal_wanted(request.data):
                continue  # an invalid private request (PRV-4): spawn-refusals judges it
            # Running: one of its runs started and not ended (a queued later one cannot spawn).
            running = ":subagent:" not in session or any(
                own not in ended and own in started and own not in queued
                for own in runs_of_key.get(session, ()))
            if "depth" in reason:
                legit = over_depth
            elif "active children" in reason:
                legit = over_children and not over_depth
            elif "active run of the requester" in reason:
                legit = not running
            else:  # nothing else refuses: a busy child session queues the run (docs/nesting.md)
                legit = False
            if not legit:
                fail(f"{data['child']}: refused ({reason}) though {session} was at depth "
                     f"{depth} with {count} active children and "
                     f"{'a' if running else 'no'} running run (limits: depth {most_depth}, "
                     f"children {most_children})", request.seq, r.seq)
        elif kind == "child.start":
            started.add(data["run_id"])
        elif kind in ("lane.queued", "session.queued"):
            queued.add(data["run_id"])
        elif kind == "lane.started":
            queued.discard(data["run_id"])
        elif kind in _ACTIVITY:
            run_id = data["run_id"]
            if kind == "child.turn_end" and run_id in queued and data["reason"] == "aborted":
                continue  # aborted while it waited (lane or session): it never streamed
            if run_id not in streaming and run_id not in ended:
                streaming[run_id] = None
                lane = limits.get("max_concurrent")
                if lane is not None and len(streaming) > lane:
                    fail(f"{len(streaming)} runs stream at once, over the maxConcurrent lane "
                         f"of {lane} ({', '.join(streaming)})", r.seq)
        elif kind == "steer" and data["killed"]:
            # A steer replaces the run (reference §c18): the run it stopped no longer counts
            # among its session's active children, so its replacement takes the place.
            session = r.actor.removeprefix("requester:")
            active.get(session, {}).pop(latest.get((session, data["child"]), ""), None)
        elif kind == "child.end":
            run_id = data["run_id"]
            ended.add(run_id)
            streaming.pop(run_id, None)
            session = session_of_run.get(run_id)
            if session is not None:
                active[session].pop(run_id, None)
    return violations


INVARIANTS = (
    Invariant("spawn-limits", "DEL-6", "safety",
              "A spawn is refused exactly when its session is at maxSpawnDepth or has "
              "maxChildrenPerAgent active children (or cannot spawn now); no more runs stream "
              "at once than the maxConcurrent lane.",
              spawn_limits),
)
