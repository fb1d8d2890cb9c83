"""A run's start as the model records it agrees with the start an outsider reads back (issue 36
item 3): the queue records (``lane.queued``, ``session.queued``: told to wait; ``lane.started``:
the wait is over) are the model's own word, which the queue oracles, ``run-timeout`` and the
lineage take as when a run began. Here that word becomes a claim checked from outside.

Read back from what was asked and what the child logged: the spawn request's ``plan`` (its first
step's duration and finish), the first step's committed message in the child's transcript
(``child.message``, not interrupted: logged at the step's exact end) and the Gateway's outages
(``world.gateway-restart``: no run time). A run that began at ``B`` commits it at
``advance(B, d)`` (sim/invariants/unended.py; ``d`` the step's duration, twice it for a
scripted ``error`` step, retried once), so its start lies in the set of instants that map there:
one instant, or, when the Gateway was down at the start (a run that would start then waits for it
to be back), the outage's span. The model's claim is the instant of its ``lane.started`` for a run
told to wait, else of its ``child.start``.

Not judged (its start stays the model's word): a run that committed no first step message
(aborted, killed, timed out or its context lost in its first step or while it waited, a first
step scripted to break its stream, or still in it when the world stopped): a failed or cut
attempt is logged at the instant it was cut, not at a planned end, so no outside record dates its
start. A run without a plan in its request (an old trace) neither.
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.index import of_kinds
from sim.invariants.observations import asked_runs
from sim.invariants.unended import advance
from sim.trace import Record


def start_span(logged_ms: int, first_ms: int, outages: Sequence[tuple[int, int]]
               ) -> tuple[int, int] | None:
    """The instants ``B`` with ``advance(B, first_ms) == logged_ms`` (first, last), or None if
    there is none (``advance`` never decreases, so they are one span, found by bisection)."""
    low, high = 0, logged_ms
    while low < high:  # the first B that lands at or past the logged end
        mid = (low + high) // 2
        if advance(mid, first_ms, outages) >= logged_ms:
            high = mid
        else:
            low = mid + 1
    if advance(low, first_ms, outages) != logged_ms:
        return None
    first, high = low, logged_ms
    while low < high:  # the last B that lands at it
        mid = (low + high + 1) // 2
        if advance(mid, first_ms, outages) <= logged_ms:
            low = mid
        else:
            high = mid - 1
    return first, low


def first_message_ms(plan: Sequence[Sequence[object]]) -> int | None:
    """How long after its start a run commits its first step's message: the step's duration,
    twice that for a scripted ``error`` step (its attempt fails and is retried once); None for a
    ``stream-error`` step, which commits none (an aborted or timed-out attempt is logged as an
    attempt or an interrupted message, never as a committed one)."""
    duration, finish = int(str(plan[0][0])), plan[0][1]
    if finish == "stream-error":
        return None
    return 2 * duration if finish == "error" else duration


def start_observed(trace: Sequence[Record]) -> list[Violation]:
    asked = asked_runs(trace)
    outages: list[tuple[int, int]] = []
    claimed: dict[str, Record] = {}  # run -> the record of its start as the model tells it
    told_to_wait: set[str] = set()
    said_started: set[str] = set()
    judged: set[str] = set()
    violations: list[Violation] = []
    kinds = ("world.gateway-restart", "lane.queued", "session.queued", "child.start",
             "lane.started", "child.message", "child.end")
    for r in of_kinds(trace, kinds):
        kind = r.kind
        if kind == "world.gateway-restart":
            outages.append((r.t_ms, int(r.data["back_ms"])))
            continue
        if kind not in kinds:
            continue
        run_id = r.data["run_id"]
        if kind in ("lane.queued", "session.queued"):
            told_to_wait.add(run_id)
            claimed.pop(run_id, None)
        elif kind == "child.start":
            if run_id not in told_to_wait:
                claimed.setdefault(run_id, r)
        elif kind == "lane.started":
            if run_id not in said_started:  # a run starts once: its first word on it holds
                said_started.add(run_id)
                claimed[run_id] = r
        elif kind == "child.end":
            judged.add(run_id)
        elif kind == "child.message" and run_id not in judged and run_id in asked \
                and not r.data["interrupted"]:
            judged.add(run_id)  # its first step's end: judge its start once
            plan = asked[run_id].request.data.get("plan")
            first = None if not plan or int(r.data["step"]) != 1 else first_message_ms(plan)
            if first is None:
                continue
            span = start_span(r.t_ms, first, sorted(outages))
            claim = claimed.get(run_id)
            if span is not None and claim is not None and span[0] <= claim.t_ms <= span[1]:
                continue
            said = "no start" if claim is None else f"its start at {claim.t_ms} ms ({claim.kind})"
            read = "no instant" if span is None else (
                f"{span[0]} ms" if span[0] == span[1] else f"{span[0]}..{span[1]} ms")
            violations.append(Violation(
                "queue-start-observed", "DEL-6",
                f"{run_id} logged its first step's end at {r.t_ms} ms, which a "
                f"{first} ms first step reaches from {read}; the model "
                f"recorded {said}",
                (r.seq,) if claim is None else (claim.seq, r.seq)))
    return violations


INVARIANTS = (
    Invariant("queue-start-observed", "DEL-6", "safety",
              "A run's start as the model records it (at its spawn, or lane.started after a "
              "wait) is the start its first step's logged end reads back through its plan.",
              start_observed),
)
