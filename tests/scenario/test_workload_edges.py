"""The `[workload]` ranges' edges end without a violation (issue 38 item 5): children 1 and 300,
sessions 1 and 300, spawns at once or spread over 30 days, runs of 1 s or up to 30 days, no
faults, seed 1, the default `until`. Two of them run in every `handoff run scenarios/`
(scenarios/workload-edge-300-*.toml); the whole grid is slow (about 25 s)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim import scenario
from sim.world import core as world

DAYS_30 = 2_592_000
GRID = [(children, sessions, spread, run_max)
        for children in (1, 300) for sessions in (1, 300) if sessions <= children
        for spread in (0, DAYS_30) for run_max in (1, DAYS_30)]


@pytest.mark.slow
@pytest.mark.parametrize(("children", "sessions", "spread", "run_max"), GRID)
def test_a_workload_edge_ends_without_violation(tmp_path: Path, children: int, sessions: int,
                                                spread: int, run_max: int) -> None:
    path = tmp_path / "edge.toml"
    path.write_text(f'''name = "workload edge"
description = "An edge of the workload ranges."
covers = []

[[sessions]]
key = "agent:main:main"

[workload]
children = {children}
sessions = {sessions}
spawn_within = {spread}
run_max = {run_max}
''', encoding="utf-8")
    result = world.run(scenario.load(path))
    assert [v.message for v in result.violations] == []
    assert result.end_reason != "step-limit"
