"""runTimeoutSeconds (reference §c18): the deadline is the run's start plus whole seconds (floored),
a run still going then ends timeout there, and a parent's timeout cancels no child. The model
does it, and `run-timeout` catches broken variants of it."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from actors.child.deadline import budget_ms, run_timeout_budget_ms
from sim import scenario
from sim.invariants.child.run_timeout import deadline_budget_ms, run_timeout
from sim.trace import Record
from sim.world import core as world
from tests.conftest import SCENARIOS


def _run(**kwargs: Any) -> world.RunResult:
    return world.run(scenario.load(SCENARIOS / "run-timeout.toml"), **kwargs)


def _ends(result: world.RunResult) -> dict[str, Record]:
    runs = {r.run_id: r.child_id for r in result.runs}
    return {runs[r.data["run_id"]]: r for r in result.trace.records if r.kind == "child.end"}


def test_the_deadline_is_whole_seconds_from_the_start_and_spares_children() -> None:
    result = _run()
    assert result.violations == ()
    ends = _ends(result)
    assert (ends["fractional"].t_ms, ends["fractional"].data["status"]) == (30_000, "timeout")
    assert (ends["quick"].t_ms, ends["quick"].data["status"]) == (10_000, "ok")
    assert (ends["unlimited"].t_ms, ends["unlimited"].data["status"]) == (90_000, "ok")
    assert (ends["orchestrator"].t_ms, ends["orchestrator"].data["status"]) == (40_000, "timeout")
    # The worker its parent spawned at 5 s was not cancelled by the parent's timeout.
    assert (ends["worker"].t_ms, ends["worker"].data["status"]) == (85_000, "ok")


@pytest.mark.parametrize(("asked", "own", "budget"), [
    (30.9, None, 30_000), (31.0, None, 31_000), (0, None, None), (None, None, None),
    (0.5, None, None), (30.9, 20_000, 20_000), (30.9, 45_000, 30_000), (None, 7, 7),
])
def test_the_model_and_the_oracle_agree_on_the_budget(asked: float | None, own: int | None,
                                                      budget: int | None) -> None:
    assert deadline_budget_ms(asked, own) == budget
    asked_ms = None if asked is None else round(asked * 1000)
    assert budget_ms(own, asked_ms) == budget


def test_the_oracle_catches_an_unfloored_deadline() -> None:
    assert run_timeout_budget_ms(30_900, frozenset({"run-timeout-unfloored"})) == 30_900
    result = _run(mutants=["run-timeout-unfloored"])
    messages = [v.message for v in result.violations if v.invariant == "run-timeout"]
    assert any("deadline at 30000 ms, yet it ended timeout at 30900 ms" in m for m in messages)


def test_the_oracle_catches_a_run_past_its_deadline_and_a_cancelled_child() -> None:
    result = _run()
    runs = {r.child_id: r.run_id for r in result.runs}

    def edit(r: Record) -> Record:
        if r.kind == "child.end" and r.data["run_id"] == runs["quick"]:
            return attrs.evolve(r, t_ms=20_500)  # quick's deadline is at 20 s
        if r.kind == "child.end" and r.data["run_id"] == runs["worker"]:
            # As if the orchestrator's timeout had killed it (no kill asked for it).
            return attrs.evolve(r, data={**r.data, "status": "error",
                                         "error": "subagent run terminated"})
        return r

    messages = [v.message for v in run_timeout([edit(r) for r in result.trace.records])]
    assert any(f"{runs['quick']} started at 0 ms with a deadline at 20000 ms, yet it ended ok "
               "at 20500 ms" in m for m in messages), messages
    assert any(f"{runs['worker']} was still running when {runs['orchestrator']} timed out" in m
               for m in messages), messages
