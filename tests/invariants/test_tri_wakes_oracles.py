"""Stop-43 triage, the batch-wake family: each fix keeps its regression scenario clean
(scenarios/regressions/), and the oracle still catches the broken variant next to it: the
scenario's trace forged (the fact the oracle's fix reads, changed), or the model's fix undone."""

from __future__ import annotations

import attrs

from sim import invariants, scenario
from sim.trace import Record
from sim.world import core as world
from tests.conftest import SCENARIOS

REGRESSIONS = SCENARIOS / "regressions"


def _trace(name: str) -> list[Record]:
    return list(world.run(scenario.load(REGRESSIONS / f"{name}.toml")).trace)


def _check(name: str, trace: list[Record]) -> list[str]:
    return [v.message for v in invariants.BY_NAME[name].check(trace)]


def test_wake_not_delayed_reads_a_redrive_after_a_deferred_close_as_the_members_own() -> None:
    # The batch's members settle at 32 s; its descendant run-2's delivery never settles
    # through the outage, so the batch closes at its deferral limit (302 s) unwoken. run-3 is
    # redriven at 427 s, and run-2 settles at 665 s: no wake was owed (seed 30564).
    trace = _trace("redrive-after-deferred-close-seed-30564")
    assert _check("wake-not-delayed", trace) == []
    # Had the redrive come before the deferral limit could close the batch, the batch waited
    # for the member's new delivery (taken at 427 s) and then for run-2 (665 s): the deferral
    # limit could no longer have closed it first, and the wake was owed.
    redrive = next(r for r in trace if r.kind == "world.operator" and r.t_ms == 427_000)
    early = [attrs.evolve(r, t_ms=250_000) if r is redrive else r for r in trace]
    assert any("had settled by 665026 ms, yet its wake was never sent" in m
               for m in _check("wake-not-delayed", early))
