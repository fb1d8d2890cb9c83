"""A run's deadline (reference §c18): ``runTimeoutSeconds`` floored to whole seconds from the run's
start; a run still going then ends ``timeout`` there; a parent's timeout cancels no child.

Restated from the spawn request as the harness recorded it (``world.spawn``: the
``runTimeoutSeconds`` asked, as given, and the child's own scripted budget), where the run
started (its ``spawn``, or ``lane.started`` after a wait in a line: a run that never started has
no deadline) and how and when it ended
(``child.end``). Never the model's own deadline. Time the Gateway was down (a Gateway restart,
``world.gateway-restart``: from it to when the Gateway was back) is no run time: a deadline moves
on by every outage that overlaps the run before it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.index import of_kinds
from sim.invariants.lineage import killed_silently, unended_descendants
from sim.invariants.observations import asked_runs
from sim.trace import Record

KILLED = "subagent run terminated"


def deadline_budget_ms(run_timeout_seconds: float | None, timeout_ms: int | None) -> int | None:
    """How long after its start a run may go on: ``Math.floor(runTimeoutSeconds) * 1000`` (0 or
    absent: no deadline), or the child's own scripted budget if that comes first."""
    budgets = [] if timeout_ms is None else [timeout_ms]
    if run_timeout_seconds is not None and math.floor(run_timeout_seconds) > 0:
        budgets.append(math.floor(run_timeout_seconds) * 1000)
    return min(budgets, default=None)


def moved_deadline(start: int, deadline: int, outages: Sequence[tuple[int, int]]) -> int:
    """``deadline`` moved on by each outage (from, back) that overlaps the run before it. Only
    outages recorded before the run's end are given, so one that came at the very instant of
    the deadline found the run still going (it was interrupted before its deadline fell)."""
    for down, back in sorted(outages):
        if down <= deadline and back > start:
            deadline += back - max(down, start)
    return deadline


def run_timeout(trace: Sequence[Record]) -> list[Violation]:
    """A run with a deadline (start + its spawn's floored ``runTimeoutSeconds``, or its own
    budget if earlier) never ends after it, and a run that ends ``timeout`` ends exactly at it
    (so its stats line's runtime is the deadline minus the start). A run's timeout stops no
    other run: a run it spawned (or theirs) that had not ended by then never ends killed
    (``subagent run terminated``) unless a kill, reset or delete stopped it."""
    asked = asked_runs(trace)
    budgets = {run_id: budget for run_id, run in asked.items()
               for budget in [deadline_budget_ms(run.request.data.get("run_timeout_seconds"),
                                                 run.request.data.get("timeout_ms"))]
               if budget is not None}
    if not budgets:
        return []
    starts: dict[str, int] = {}
    timed_out: list[Record] = []
    ends: dict[str, Record] = {}
    violations: list[Violation] = []
    outages: list[tuple[int, int]] = []
    for r in of_kinds(trace, ("spawn", "lane.queued", "session.queued", "lane.started",
                              "child.end", "world.gateway-restart")):
        kind = r.kind
        if kind == "world.gateway-restart":
            outages.append((r.t_ms, r.data["back_ms"]))
            continue
        if kind in ("spawn", "lane.started"):
            starts[r.data["run_id"]] = r.t_ms  # a run that waited starts when it leaves the line
            continue
        if kind in ("lane.queued", "session.queued"):
            starts.pop(r.data["run_id"], None)  # not started yet: no deadline runs
            continue
        if kind != "child.end" or r.data["run_id"] in ends:
            continue
        run_id = r.data["run_id"]
        ends[run_id] = r
        budget, start = budgets.get(run_id), starts.get(run_id)
        if budget is None or start is None:
            continue
        deadline = moved_deadline(start, start + budget, outages)
        if r.t_ms > deadline:
            violations.append(Violation(
                "run-timeout", "DEL-14",
                f"{run_id} started at {start} ms with a deadline at {deadline} ms, yet it ended "
                f"{r.data['status']} at {r.t_ms} ms", (r.seq,)))
        elif r.data["status"] == "timeout":
            timed_out.append(r)
            if r.t_ms != deadline:
                violations.append(Violation(
                    "run-timeout", "DEL-14",
                    f"{run_id} started at {start} ms with a deadline at {deadline} ms, yet it "
                    f"ended timeout at {r.t_ms} ms", (r.seq,)))
    if timed_out:
        killed = killed_silently(trace)
        for end in timed_out:
            for below in unended_descendants(trace, end.data["run_id"], end.seq):
                child_end = ends.get(below)
                if child_end is not None and child_end.data["error"] == KILLED \
                        and below not in killed:
                    violations.append(Violation(
                        "run-timeout", "DEL-14",
                        f"{below} was still running when {end.data['run_id']} timed out at "
                        f"{end.t_ms} ms, and it ended killed at {child_end.t_ms} ms, though no "
                        "kill, reset or delete stopped it", (end.seq, child_end.seq)))
    return violations


INVARIANTS = (
    Invariant("run-timeout", "DEL-14", "safety",
              "A run ends by its deadline (start + floor(runTimeoutSeconds) s, or its own "
              "budget); one that ends timeout ends exactly there; a timeout cancels no child "
              "(reference §c18).", run_timeout),
)
