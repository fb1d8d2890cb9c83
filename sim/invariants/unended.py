"""Runs that a time-limit end found unended: which could still legitimately be running or waiting.

A world that stops at its time limit (``world.end`` reason ``time-limit``, with ``until_ms``: the
limit it ran under; no work due after it ran; or at its step limit: no work due after the instant
before it stopped is sure to have run) may leave runs unended that nothing is wrong with:
a run whose script asks for 30-day steps, or one waiting in its child session's queue behind such
a run (a session runs one run at a time: actors/nesting/session_queue.py, docs/nesting.md), or one
waiting for a slot of the global ``maxConcurrent`` lane (reference §c15: "``maxConcurrent``
(global concurrency lane, default 8)"; a lane queues work, it does not refuse it). Each excuse is
an exact computation from what was asked and what an outsider sees, never from the model's own
queue records (``lane.queued``, ``lane.started``, ``session.queued``):

- what was asked: each spawn request (``world.spawn``: requester and session label, hence the
  child session key; ``runTimeoutSeconds`` and the child's own budget; ``plan``, the steps the
  world scripted: each one's duration, how it ends and its tool calls); the registration that
  answered it (``spawn``: its run id and instant); the lane's width (``world.limits``); the
  Gateway restarts (``world.gateway-restart``: down from then until ``back_ms``, no run time);
- what an outsider sees: the child's transcript (``child.message`` / ``child.attempt``: a step's
  attempt ending, at its step's exact end; ``child.delta``: text streamed in a step) and its end
  (``child.end``).

A run that streamed (its *anchor*: the end of the last step attempt it logged, or, none logged
yet, its first streamed text, by which it had begun) owes the rest of its plan from there: each
step's duration, a scripted ``error`` step twice (one retry), a ``stream-error`` step half of it
(and the run ends), a step with no tool call (or one cut at ``max-tokens``) the last; moved on by
every Gateway outage after the anchor (:func:`advance`); or less, its deadline (start +
runTimeoutSeconds floored, or its own budget; the start read back exactly from its first step's
end). It may still be running iff that latest end lies past the horizon (``until_ms``).

A run that never streamed either waits behind an earlier run of its child session that has not
ended (excused iff each such run is), or its session was free from ``A`` (its spawn, or the last
end of the session's earlier runs): then it may be in its first step iff that step's first
logged end, from ``A`` at the earliest, lies past ``until_ms``; else it must be waiting for the
lane, which it may only do while the lane is full: at least ``maxConcurrent`` runs that are
themselves excused as running (they streamed, or may be in their first step and were free for
the lane before it) hold its slots when the world stops. With no lane limit it may not wait.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from sim.invariants.child.run_timeout import deadline_budget_ms
from sim.invariants.index import last_of_kind, of_kinds, shared
from sim.invariants.nesting.limits import child_key
from sim.invariants.observations import Asked, asked_runs
from sim.trace import Record

# A step's attempt ending, logged at its step's exact end (the step number it carries).
_BOUNDARY = ("child.message", "child.attempt")
# A step may go on to the next only if it calls tools and neither breaks nor hits the limit.
_LAST_STEP_FINISHES = ("max-tokens", "stream-error")


@attrs.frozen
class Unended:
    """A run the world left unended, and whether it may legitimately be so (``why`` says)."""

    run_id: str
    excused: bool
    why: str
    holds_slot: bool = False  # excused as running: it holds a lane slot


def advance(t_ms: int, work_ms: int, outages: Sequence[tuple[int, int]]) -> int:
    """When ``work_ms`` of run time begun at ``t_ms`` is done, the Gateway's outages (down,
    back) being no run time (a run streaming when one comes pauses until it is back; one that
    would start while it is down waits for it). An outage in the instant the work would end is
    taken to come first: the latest legitimate end."""
    for down, back in outages:
        if back <= t_ms:
            continue
        if down > t_ms + work_ms:
            break
        if down > t_ms:
            work_ms -= down - t_ms
        t_ms = back
    return t_ms + work_ms


def _cost(step: Sequence[object]) -> int:
    """The run time a scripted step takes: an ``error`` step is retried once (twice its
    duration), a ``stream-error`` breaks half-way."""
    duration, finish = int(str(step[0])), step[1]
    if finish == "error":
        return 2 * duration
    if finish == "stream-error":
        return round(duration * 0.5)
    return duration


def _goes_on(step: Sequence[object]) -> bool:
    return int(str(step[2])) > 0 and step[1] not in _LAST_STEP_FINISHES


def remaining_ms(plan: Sequence[Sequence[object]], step: int, attempt_failed: bool) -> int:
    """The plan's run time left after its step ``step`` (1-based; 0: before the first) logged
    the end of an attempt: ``attempt_failed``, a failed first attempt (its retry is owed)."""
    left = 0
    if step >= 1:
        current = plan[step - 1]
        if attempt_failed and current[1] == "error":
            left += int(str(current[0]))
        elif attempt_failed:
            return 0  # a broken stream ends the run
        if not _goes_on(current):
            return left
    for following in plan[step:]:
        left += _cost(following)
        if not _goes_on(following):
            break
    return left


def first_logged_ms(plan: Sequence[Sequence[object]]) -> int:
    """How long after its start a run logs its first step attempt's end."""
    if not plan:
        return 0
    duration, finish = int(str(plan[0][0])), plan[0][1]
    return round(duration * 0.5) if finish == "stream-error" else duration


def horizon_ms(end: Record | None) -> int | None:
    """The last instant all of whose work ran when the world stopped short (None: it quiesced,
    or an old trace): its time limit (no work due after ``until_ms`` ran); at its step limit the
    instant before it stopped (work due in that instant may not have run)."""
    if end is None or end.data["reason"] not in ("time-limit", "step-limit"):
        return None
    if end.data["reason"] == "step-limit":
        return end.t_ms - 1
    until = end.data.get("until_ms")
    return None if until is None else int(until)


def unended_runs(trace: Sequence[Record]) -> dict[str, Unended]:
    """Each run a time-limit end found unended, by run id (none for any other end: a world that
    quiesced excuses nothing). Computed once per trace."""
    return shared(trace, "unended-runs", _unended_runs)


def _unended_runs(trace: Sequence[Record]) -> dict[str, Unended]:
    end = last_of_kind(trace, "world.end")
    until = horizon_ms(end)
    if until is None:
        return {}
    asked = asked_runs(trace)
    limits = last_of_kind(trace, "world.limits")
    width = None if limits is None else limits.data.get("max_concurrent")
    outages: list[tuple[int, int]] = []
    spawned: dict[str, Record] = {}
    keys: dict[str, str] = {}
    ended: dict[str, int] = {}
    first_text: dict[str, int] = {}  # run -> its first streamed record's instant
    first_end: dict[str, int] = {}  # run -> its first logged attempt end
    last_end: dict[str, tuple[int, int, bool]] = {}  # run -> (instant, step, attempt failed)
    for r in of_kinds(trace, ("world.gateway-restart", "spawn", "child.end", "child.delta",
                              *_BOUNDARY)):
        kind = r.kind
        if kind == "world.gateway-restart":
            outages.append((r.t_ms, int(r.data["back_ms"])))
            continue
        if kind not in ("spawn", "child.end", "child.delta", *_BOUNDARY):
            continue
        run_id = r.data["run_id"]
        if kind == "spawn" and run_id in asked:
            request = asked[run_id].request.data
            spawned[run_id] = r
            keys[run_id] = child_key(request["requester"], request["session"])
        elif kind == "child.end":
            ended.setdefault(run_id, r.t_ms)
        elif kind != "spawn" and run_id not in ended:
            first_text.setdefault(run_id, r.t_ms)
            if kind in _BOUNDARY:
                first_end.setdefault(run_id, r.t_ms)
                last_end[run_id] = (r.t_ms, int(r.data["step"]), kind == "child.attempt")
    outages.sort()
    verdicts: dict[str, Unended] = {}
    waiting: list[str] = []  # unended runs that never streamed, in spawn order
    for run_id in spawned:
        if run_id in ended:
            continue
        plan = asked[run_id].request.data.get("plan")
        if plan is None:
            verdicts[run_id] = Unended(run_id, False, "its spawn request holds no plan")
        elif run_id in first_text:
            verdicts[run_id] = _streamed(run_id, plan, asked[run_id].request.data, until,
                                         outages, first_text[run_id], first_end.get(run_id),
                                         last_end.get(run_id))
        else:
            waiting.append(run_id)
    # Never streamed: its session free from ``free`` (None: an earlier run of it is unended).
    free: dict[str, int | None] = {}
    for run_id in waiting:
        spawn, key = spawned[run_id], keys[run_id]
        earlier = [other for other in spawned if keys[other] == key
                   and spawned[other].seq < spawn.seq]
        if any(other not in ended for other in earlier):
            free[run_id] = None
            continue
        free[run_id] = max([spawn.t_ms] + [ended[other] for other in earlier])
        request = asked[run_id].request.data
        plan = request["plan"]
        budget = deadline_budget_ms(request.get("run_timeout_seconds"),
                                    request.get("timeout_ms"))
        first = first_logged_ms(plan) if budget is None else min(budget, first_logged_ms(plan))
        due = advance(free[run_id] or 0, first, outages)
        if due > until:
            verdicts[run_id] = Unended(
                run_id, True, f"free to start from {free[run_id]} ms, its first step's end is "
                f"due at {due} ms at the earliest, past the world's horizon ({until} ms)", True)
    # The lane's holders when the world stopped, excused as running: each streamed (None), or
    # may be in its first step, free for the lane from then.
    holders = {run_id: free.get(run_id) for run_id, verdict in verdicts.items()
               if verdict.holds_slot}
    for run_id in waiting:
        since = free[run_id]
        if since is None or run_id in verdicts:
            continue
        first = advance(since, first_logged_ms(asked[run_id].request.data["plan"]), outages)
        ahead = [other for other, entered in holders.items() if entered is None
                 or (entered, spawned[other].seq) < (since, spawned[run_id].seq)]
        if width is not None and len(ahead) >= width:
            verdicts[run_id] = Unended(
                run_id, True, f"waits for a slot of the maxConcurrent lane ({width}), held by "
                f"{len(ahead)} runs still running when the world stopped")
            continue
        lane = "no lane limit" if width is None else \
            f"{len(ahead)} of the lane's {width} slots held when the world stopped"
        verdicts[run_id] = Unended(
            run_id, False, f"free to start from {since} ms, it would have logged its first "
            f"step's end by {first} ms ({lane})")
    for run_id in waiting:  # behind an earlier unended run of its session, in spawn order
        if free[run_id] is not None:
            continue
        key, seq = keys[run_id], spawned[run_id].seq
        ahead = [other for other in spawned if keys[other] == key and other not in ended
                 and spawned[other].seq < seq]
        stuck = [other for other in ahead if not verdicts[other].excused]
        verdicts[run_id] = Unended(
            run_id, not stuck, f"waits in child session {key} behind {ahead[-1]}" if not stuck
            else f"waits in child session {key} behind {stuck[0]}, itself stuck")
    return verdicts


def _streamed(run_id: str, plan: Sequence[Sequence[object]], request: Mapping[str, Any],
              until: int, outages: Sequence[tuple[int, int]], first_text: int,
              first_end: int | None, last_end: tuple[int, int, bool] | None) -> Unended:
    """A run that streamed: the latest it may end, from its anchor (see the module)."""
    if last_end is None:  # in its first step: begun by its first streamed text
        anchor, left = first_text, remaining_ms(plan, 0, False)
    else:
        anchor, left = last_end[0], remaining_ms(plan, last_end[1], last_end[2])
    latest = advance(anchor, left, outages)
    budget = deadline_budget_ms(request.get("run_timeout_seconds"), request.get("timeout_ms"))
    if budget is not None:
        # Its start is read back from its first step's end when logged (exact), else its
        # first streamed text is after it.
        deadline = advance(first_end, max(0, budget - first_logged_ms(plan)), outages) \
            if first_end is not None else advance(first_text, budget, outages)
        latest = min(latest, deadline)
    where = "its last logged step end" if last_end is not None else "its first streamed text"
    if latest > until:
        return Unended(run_id, True, f"running: from {where} at {anchor} ms its plan (and "
                       f"deadline) end at {latest} ms, past the world's horizon ({until} ms)", True)
    return Unended(run_id, False, f"from {where} at {anchor} ms its plan (and deadline) end at "
                   f"{latest} ms, within the world's horizon ({until} ms)")


def batch_waits(run_id: str, asked: dict[str, Asked], yielded: set[tuple[str, str]],
                 ends: dict[str, Record], unended: dict[str, Unended]) -> bool:
    """Whether the run was asked in a turn that yielded (its completion goes with that turn's
    batch, reference §c9: sent once every member settled) and another member of that batch had
    not ended when the world stopped short, legitimately (``unended.py``)."""
    ask = asked[run_id].request.data
    batch = (ask["requester"], ask["turn"])
    if ask["turn"] is None or batch not in yielded:
        return False
    return any(other != run_id and other not in ends and unended.get(other) is not None
               and unended[other].excused
               and (member.request.data["requester"], member.request.data["turn"]) == batch
               for other, member in asked.items())
