"""Requester-turn binding, restated from what the harness asked (``world.spawn`` with the turn
and the session incarnation it asked in) and the registry's spawn record (``spawn``): a child run
is bound to the turn that spawned it and to that incarnation of its requester session, never to
another turn or to the session's state after a reset (reference §a, requester-turn binding)."""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.index import of_kinds
from sim.invariants.observations import asked_runs
from sim.trace import Record


def turn_binding(trace: Sequence[Record]) -> list[Violation]:
    asked = asked_runs(trace)
    violations = []
    for r in of_kinds(trace, ("spawn",)):
        if r.kind != "spawn" or r.data["run_id"] not in asked:
            continue
        request = asked[r.data["run_id"]].request.data
        turn = request.get("turn")
        bound = r.data["turn_run_id"]
        problems = []
        if r.data["incarnation"] != request.get("incarnation", 1):
            problems.append(f"incarnation {r.data['incarnation']}, asked in incarnation "
                            f"{request.get('incarnation', 1)}")
        if turn is None and bound is not None:
            problems.append(f"turn {bound}, asked outside any turn")
        elif turn is not None and (bound is None or not bound.endswith(f":{turn}")):
            problems.append(f"turn {bound}, asked by turn {turn}")
        if problems:
            violations.append(Violation(
                "turn-binding", "YLD-1", f"{r.data['run_id']} (child {r.data['child']}) is "
                "bound to " + "; ".join(problems), (asked[r.data["run_id"]].request.seq, r.seq)))
    return violations


INVARIANTS = (
    Invariant("turn-binding", "YLD-1", "safety",
              "A child run records the requester turn that asked for it and the session "
              "incarnation it was asked in.", turn_binding),
)
