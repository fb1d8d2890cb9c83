"""Known-bug variants (SIM-8): each is listed with the requirement it breaks, and a plain sweep of
the default world finds it with the invariant that guards that requirement."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from actors.mutant_catalogue import MUTANTS
from sim import invariants, scenario
from sim.cli import root as cli
from sim.explore import sweeps as explore
from sim.explore.breaks import BREAKS
from sim.world import core as world

# A default sweep finds every mutant within this many seeds (most within a handful).
FIRST_SEEDS = 300


def test_every_mutant_names_the_requirement_it_breaks_and_its_invariant() -> None:
    assert len(MUTANTS) >= 12
    assert list(BREAKS) == list(MUTANTS)
    for name, breaks in BREAKS.items():
        assert breaks.invariant in invariants.BY_NAME, name
        assert f"{breaks.requirement}" in MUTANTS[name], name


def test_list_mutants_prints_each_with_its_requirement() -> None:
    out = CliRunner().invoke(cli.main, ["explore", "--list-mutants"])
    assert out.exit_code == 0
    lines = out.output.splitlines()
    assert [line.split()[0] for line in lines] == list(MUTANTS)
    # (The name column is as wide as the longest name.)
    assert re.search(r"^permanent-retried +DEL-10  found by permanent-stops-retries",
                     out.output, re.MULTILINE)
    doc = json.loads(CliRunner().invoke(cli.main, ["explore", "--list-mutants", "--json"]).output)
    assert {row["name"]: row["requirement"] for row in doc["mutants"]} == {
        name: b.requirement for name, b in BREAKS.items()}


@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_a_default_sweep_finds_the_mutant(mutant: str) -> None:
    """The sweep finds the mutant by its own invariant. A seed that fails earlier must fail
    because of the mutant (the same seed passes without it): another oracle may see the bug
    first where the run's features show it another way (key-without-run-id, DEL-15 and DEL-3:
    a reused session key rather than a re-run)."""
    default = scenario.load(cli.default_world_path())
    for seed in range(1, FIRST_SEEDS + 1):
        found = {v.invariant for v in world.run(default, seed=seed, mutants=[mutant]).violations}
        if BREAKS[mutant].invariant in found:
            return
        if found:
            assert world.run(default, seed=seed).ok, (seed, found)
    pytest.fail(f"{mutant}: {BREAKS[mutant].invariant} not violated in seeds 1-{FIRST_SEEDS}")


@pytest.mark.slow
@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_a_300_seed_sweep_finds_the_mutant_in_many_seeds(mutant: str) -> None:
    spec = explore.Sweep(scenario.load(cli.default_world_path()), None, (mutant,), None)
    outcomes = explore.sweep(spec, list(range(1, 301)), jobs=explore.default_jobs())
    by = {v.invariant for o in outcomes for v in o.violations}
    assert BREAKS[mutant].invariant in by
