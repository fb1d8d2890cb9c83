"""The registry check's figures for the report: how much was replayed, what was left out and
why, and every divergence (documented ones by row, the first undocumented one in full)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from sim.conform.registry.check import WorldOutcome


@attrs.frozen
class RegistrySummary:
    scenarios: int  # scenario files looked at
    scenarios_replayed: int
    not_translated: dict[str, str]  # scenario file -> why none of its runs is replayed
    seeds: int
    worlds: int
    runs: int
    events: int
    checks: int
    runs_left_out: dict[str, int]  # why -> how many runs
    documented: dict[str, int]  # difference id -> runs
    undocumented: int
    first: dict[str, str] | None  # the first undocumented divergence: where, both sides, repro
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


def summarize(scenario_count: int, scenario_outcomes: Sequence[WorldOutcome],
              not_translated: dict[str, str], seed_outcomes: Sequence[WorldOutcome],
              seconds: float) -> RegistrySummary:
    worlds = [*scenario_outcomes, *seed_outcomes]
    left_out: dict[str, int] = {}
    documented: dict[str, int] = {}
    first: dict[str, str] | None = None
    undocumented = 0
    for world in worlds:
        for why in world.skipped.values():
            left_out[why] = left_out.get(why, 0) + 1
        for row in world.documented.values():
            documented[row] = documented.get(row, 0) + 1
        undocumented += len(world.undocumented)
        if world.undocumented and first is None:
            divergence = world.undocumented[0]
            first = {"world": world.source, "divergence": divergence.line(),
                     "repro": world.repro}
    return RegistrySummary(
        scenarios=scenario_count, scenarios_replayed=len(scenario_outcomes),
        not_translated=dict(sorted(not_translated.items())), seeds=len(seed_outcomes),
        worlds=len(worlds), runs=sum(w.runs for w in worlds),
        events=sum(w.events for w in worlds), checks=sum(w.checks for w in worlds),
        runs_left_out=dict(sorted(left_out.items(), key=lambda item: (-item[1], item[0]))),
        documented=dict(sorted(documented.items())), undocumented=undocumented, first=first,
        seconds=round(seconds, 2))
