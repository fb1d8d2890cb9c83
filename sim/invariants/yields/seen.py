"""What the yield oracles read of a trace, once per trace: every yield batch as asked, every
unfrozen wave as its wakes show it, and what was seen of each run and wake (its trail, its
descendants, the turns). Shared by the oracles of this package; none of them owns it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from sim.invariants.index import of_kinds, shared
from sim.invariants.observations import (
    asked_runs,
    is_delivery_crash,
    is_wake,
    key_runs,
    rejection_class,
)
from sim.invariants.settled import TRAIL_KINDS
from sim.trace import Record


@attrs.frozen
class Batch:
    session: str
    actor: str
    turn: str
    incarnation: int
    members: tuple[str, ...]  # sorted run ids
    yielded: Record


def batches(trace: Sequence[Record]) -> list[Batch]:
    """Every yield as asked, with the required children its turn asked for."""
    return _memo(trace, "batches", _batches)  # type: ignore[return-value]


def _memo(trace: Sequence[Record], name: str, read: Callable[[Sequence[Record]], object]
          ) -> object:
    """A reading several oracles make of one trace, made once (``index.shared``)."""
    return shared(trace, f"yields.{name}", read)


def _batches(trace: Sequence[Record]) -> list[Batch]:
    asked = asked_runs(trace)
    found = []
    for r in of_kinds(trace, ("world.turn_end",)):
        if r.kind == "world.turn_end" and r.data["how"] == "yield":
            members = sorted(
                run_id for run_id, a in asked.items()
                if a.required and a.request.data.get("turn") == r.data["turn"]
                and a.request.data.get("incarnation") == r.data["incarnation"]
                and a.request.data["requester"] == r.data["session"])
            found.append(Batch(r.data["session"], f"requester:{r.data['session']}",
                               r.data["turn"], r.data["incarnation"], tuple(members), r))
    return found


def wave_batches(trace: Sequence[Record]) -> list[Batch]:
    """Every unfrozen wave (reference §c9) as its wakes show it: a settle key without
    ``:yield-`` names its members; the first send stands for its freezing (the wave oracle,
    sim/invariants/yields/waves.py, judges whether the members are the right ones)."""
    return _memo(trace, "waves", _wave_batches)  # type: ignore[return-value]


def _wave_batches(trace: Sequence[Record]) -> list[Batch]:
    found: dict[tuple[str, tuple[str, ...]], Batch] = {}
    for r in _seen(trace).wake_sends:
        if ":yield-" in r.data["key"]:
            continue
        session = r.data["requester"].removeprefix("requester:")
        runs = tuple(sorted(key_runs(r.data["key"])))
        if (session, runs) not in found:
            found[(session, runs)] = Batch(session, r.data["requester"], "wave", 0, runs, r)
    return list(found.values())


def yielded_members(trace: Sequence[Record]) -> set[str]:
    return {run_id for batch in batches(trace) for run_id in batch.members}


@attrs.define
class _Seen:
    ends: dict[str, Record] = attrs.field(factory=dict)
    # When a run's producer first corrected it (``child.correction``), and when an operator
    # asked about a child (``world.operator``, every request in order): a send after either may
    # be a new generation of a run that had settled (DEL-12, DEL-16).
    corrected: dict[str, int] = attrs.field(factory=dict)
    operator: dict[str, list[int]] = attrs.field(factory=dict)  # child -> every request
    spawns: dict[str, Record] = attrs.field(factory=dict)
    sends: dict[str, list[Record]] = attrs.field(factory=dict)  # run_id -> per-child sends
    # run_id -> its own delivery as the gateway and its requester saw it: each per-child send,
    # the transcript taking it (or answering it as a duplicate), a refusal, an acknowledgement
    # lost or slowed on its way back.
    trail: dict[str, list[Record]] = attrs.field(factory=dict)
    wake_sends: list[Record] = attrs.field(factory=list)
    wake_accepts: list[Record] = attrs.field(factory=list)
    # The seqs of the wake accepts whose resumed turn's reply reached the conversation.
    answered: set[int] = attrs.field(factory=set)
    downtime: list[tuple[int, int]] = attrs.field(factory=list)
    lifecycle: dict[str, list[Record]] = attrs.field(factory=dict)
    wake_faults: list[Record] = attrs.field(factory=list)
    late_notices: list[tuple[int, int]] = attrs.field(factory=list)
    # Each session's turns as the harness asked for them: (start, end) while one runs (a turn
    # ends by its end, a reset or delete, or the next turn's start).
    busy: dict[str, list[tuple[int, int]]] = attrs.field(factory=dict)
    turn_starts: dict[str, Record] = attrs.field(factory=dict)  # the open turn, by session
    end: Record | None = None
    # When each run started (its trace position): its spawn, or lane.started after a wait (the
    # lane, or its session's earlier run); None while it waits.
    started: dict[str, int | None] = attrs.field(factory=dict)


def _seen(trace: Sequence[Record]) -> _Seen:
    return _memo(trace, "seen", _read_seen)  # type: ignore[return-value]


# What :func:`_read_seen` reads.
_SEEN_KINDS = ("child.end", "child.correction", "world.operator", "spawn", "lane.queued",
               "session.queued", "lane.started", "gateway.send", "requester.accept",
               "requester.turn_answer", "conversation.reply", *TRAIL_KINDS, "crash",
               "delivery.start", "world.lifecycle", "world.turn", "world.turn_end",
               "requester.wake_refused", "world.end")


def _read_seen(trace: Sequence[Record]) -> _Seen:
    seen = _Seen()
    down_at: int | None = None
    wakes_taken: dict[str, Record] = {}  # wake key -> the transcript taking it
    # (session actor, turn run) -> the wake its latest answer answered, and when
    answering: dict[tuple[str, str], tuple[Record, int]] = {}
    for r in of_kinds(trace, _SEEN_KINDS):
        kind = r.kind
        if kind == "child.end":
            seen.ends.setdefault(r.data["run_id"], r)
        elif kind == "child.correction":
            seen.corrected.setdefault(r.data["run_id"], r.t_ms)
        elif kind == "world.operator":
            seen.operator.setdefault(r.data["child"], []).append(r.t_ms)
        elif kind == "spawn":
            seen.spawns[r.data["run_id"]] = r
            seen.started[r.data["run_id"]] = r.seq
        elif kind in ("lane.queued", "session.queued"):
            seen.started[r.data["run_id"]] = None
        elif kind == "lane.started":
            seen.started[r.data["run_id"]] = r.seq
        elif kind == "gateway.send":
            if is_wake(r.data.get("key", "")):
                seen.wake_sends.append(r)
            else:
                seen.sends.setdefault(r.data["run_id"], []).append(r)
                seen.trail.setdefault(r.data["run_id"], []).append(r)
        elif kind == "requester.accept" and is_wake(r.data.get("key", "")):
            seen.wake_accepts.append(r)
            wakes_taken[r.data["key"]] = r
        elif kind == "requester.turn_answer" and r.data["key"] in wakes_taken:
            answering[(r.actor, r.data["turn_run_id"])] = (wakes_taken[r.data["key"]], r.t_ms)
        elif kind == "conversation.reply":
            taken = answering.get((r.actor, r.data["turn_run_id"]))
            if taken is not None and taken[1] == r.t_ms:  # the answer to that very wake
                seen.answered.add(taken[0].seq)
        elif kind in TRAIL_KINDS and not is_wake(str(r.data.get("key") or "")) and (
                kind != "fault" or rejection_class(r) is not None
                or r.data.get("kind") in ("send-ambiguous", "ack-slow")
                or (r.data.get("kind") == "delay" and r.data.get("message") == "CompletionAck")):
            seen.trail.setdefault(r.data["run_id"], []).append(r)
        elif is_delivery_crash(r):
            down_at = r.t_ms if down_at is None else down_at
        elif kind == "delivery.start" and down_at is not None:
            seen.downtime.append((down_at, r.t_ms))
            down_at = None
        elif kind == "world.lifecycle":
            seen.lifecycle.setdefault(r.data["session"], []).append(r)
            _turn_over(seen, r.data["session"], r.t_ms)
        elif kind == "world.turn":
            _turn_over(seen, r.data["session"], r.t_ms)
            seen.turn_starts[r.data["session"]] = r
        elif kind == "world.turn_end":
            _turn_over(seen, r.data["session"], r.t_ms)
        elif (kind == "fault" and is_wake(str(r.data.get("key", "")))) or \
                kind == "requester.wake_refused":
            seen.wake_faults.append(r)  # the gateway's refusals, and the session's own
        elif kind == "fault" and r.data.get("kind") == "delay" and r.data.get("dst") in (
                "delivery", "gateway"):
            # A late notice to the delivery actor (a child's end, a frozen batch), or a
            # session's acknowledgement late to the gateway.
            seen.late_notices.append((r.t_ms, r.t_ms + int(r.data.get("delay_ms") or 0)))
        elif kind == "world.end":
            seen.end = r
    end_ms = seen.end.t_ms if seen.end is not None else 2**62
    if down_at is not None:
        seen.downtime.append((down_at, end_ms))
    for session in list(seen.turn_starts):
        _turn_over(seen, session, end_ms)
    return seen


def _turn_over(seen: _Seen, session: str, at_ms: int) -> None:
    start = seen.turn_starts.pop(session, None)
    if start is not None:
        seen.busy.setdefault(session, []).append((start.t_ms, at_ms))


def _descendants(seen: _Seen, run_id: str) -> list[str]:
    """Runs spawned by the run's child session while it ran (from its start: a spawn into the
    session while it waited for an earlier run is that run's), theirs, and so on. By trace
    position, not time: a session's next run may start at the instant its earlier one ends
    (seed 8298)."""
    found: list[str] = []
    frontier = [run_id]
    while frontier:
        parent = seen.spawns.get(frontier.pop())
        start = None if parent is None else seen.started[parent.data["run_id"]]
        if parent is None or start is None:
            continue
        end = seen.ends.get(parent.data["run_id"])
        for child_id, spawn in seen.spawns.items():
            if spawn.data["requester"] == parent.data["child_session_key"] and \
                    start <= spawn.seq and (end is None or spawn.seq < end.seq):
                found.append(child_id)
                frontier.append(child_id)
    return found


def _wake_of(batch: Batch, records: list[Record]) -> list[Record]:
    return [r for r in records if key_runs(r.data["key"]) == batch.members
            and f":{batch.session}:" in r.data["key"]]


def _overlap(spans: list[tuple[int, int]], start: int, end: int) -> int:
    return sum(max(0, min(b, end) - max(a, start)) for a, b in spans)
