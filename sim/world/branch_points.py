"""Where a run can be branched from: for each trace record, how many choices the run had made
when the record was written. ``explore --from SCHEDULE --at K`` (or ``replay --from``) keeps that
many of the recorded choices, so its runs repeat the recorded one up to and past that record and
then draw their own: the timeline page's "branch here" command for a clicked record.

Counted by a run of its own, for a page; never in a sweep (the count costs a call per record).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sim.choices import Schedule
from sim.scenario import Scenario
from sim.trace import Record
from sim.world import core
from sim.world.result import RunResult


def run_with_branch_points(scenario: Scenario, *, seed: int | None = None,
                           strategy: str | None = None, mutants: Any = None,
                           fault_kinds: Any = None, replay: Schedule | None = None,
                           replay_steps: int | None = None) -> tuple[RunResult, list[int]]:
    """``core.run``'s result, and per record the choices made before it was written."""
    world = core.prepare(scenario, seed=seed, strategy=strategy, mutants=mutants,
                         fault_kinds=fault_kinds, replay=replay, replay_steps=replay_steps)
    trace, chooser = world.kernel.trace, world.chooser
    made: list[int] = []
    append = trace.append

    def counted(t_ms: int, actor: str, kind: str, data: Mapping[str, Any]) -> Record:
        made.append(chooser.made)
        return append(t_ms, actor, kind, data)

    trace.append = counted  # type: ignore[method-assign]
    return core.execute(world), made
