"""Probe-guided exploration (sim/explore/guided.py): moments kept at rare probes, branches with
fresh futures, the same result for any --jobs, and a one-line repro for a branch's finding."""

from __future__ import annotations

import json
import shlex

from click.testing import CliRunner

from sim import scenario
from sim.cli.root import main
from sim.explore import guided as explore_guided
from sim.explore.sweeps import Sweep
from sim.world import core as world

SEEDS = range(1, 49)


def test_a_chain_round_trips_and_bad_ones_are_refused() -> None:
    chain = ((17, 120), (4, 300))
    assert explore_guided.parse_chain(explore_guided.format_chain(chain)) == chain
    for bad in ("17", "17@", "x@3", "17@3/", "@3"):
        try:
            explore_guided.parse_chain(bad)
        except ValueError:
            continue
        raise AssertionError(bad)


def test_a_moment_is_where_its_probe_first_fired(default_world: scenario.Scenario) -> None:
    result = world.run(default_world, seed=5)
    assert result.moments and set(result.moments) == set(result.probes)
    for name, at in result.moments.items():
        assert 0 <= at <= len(result.schedule.choices), name
    # Keeping the choices up to a probe's first firing and drawing the rest anew still reaches
    # that probe's moment with the same prefix.
    name, at = max(result.moments.items(), key=lambda item: item[1])
    branch = world.run(default_world, seed=99, replay=result.schedule, replay_steps=at)
    assert branch.schedule.choices[:at] == result.schedule.choices[:at]


def test_the_sweep_branches_and_is_the_same_for_any_jobs(
        default_world: scenario.Scenario) -> None:
    spec = Sweep(default_world, None, None, None)
    serial = explore_guided.sweep(spec, SEEDS, jobs=1)
    parallel = explore_guided.sweep(spec, SEEDS, jobs=2)
    assert [(g.outcome.seed, g.outcome.run_digest, g.chain) for g in serial] == \
        [(g.outcome.seed, g.outcome.run_digest, g.chain) for g in parallel]
    branched = [g for g in serial if g.chain]
    assert branched, "no seed branched from a moment"
    # The first round has no corpus yet: plain runs.
    assert not any(g.chain for g in serial[:explore_guided.ROUND])
    # A branched run keeps its moment's prefix.
    one = branched[0]
    rebuilt = explore_guided.rebuild(spec, one.chain)
    again = world.run(default_world, seed=one.outcome.seed, replay=rebuilt,
                      replay_steps=one.chain[-1][1])
    assert again.schedule.choices[:one.chain[-1][1]] == rebuilt.choices[:one.chain[-1][1]]


def test_a_branch_finding_reproduces_from_its_one_line_repro() -> None:
    # A mutant whose 64-seed guided sweep finds it in a branch (seeds 19, 27, 40; plain seeds
    # find it too). compaction-drops-turns was, until the worker session and early re-runs
    # (sim/world/draws/child.py) moved the corpus: its guided sweep now needs 108 seeds.
    mutant = "spawner-permission"
    out = CliRunner().invoke(main, ["explore", "--guided", "--seeds", "64", "--jobs", "1",
                                    "--mutant", mutant, "--json"])
    assert out.exit_code == 1, out.output
    doc = json.loads(out.stdout)
    assert doc["guided"]["branched"] > 0
    branch = [v for v in doc["violations"] if "--moment" in v["repro"]]
    assert branch, "no finding came from a branch"
    finding = branch[0]
    args = shlex.split(finding["repro"])[1:]
    replayed = CliRunner().invoke(main, args)
    assert replayed.exit_code == 1
    assert f"violation: {finding['invariant']} " in replayed.stderr


def test_guided_refuses_what_it_cannot_do() -> None:
    for extra in (["--check-determinism"], ["--save-failures", "x"]):
        out = CliRunner().invoke(main, ["explore", "--guided", "--seeds", "3", *extra])
        assert out.exit_code == 2
        assert "--guided cannot be used" in out.stderr
    bad = CliRunner().invoke(main, ["replay", "--seed", "3", "--moment", "x@1"])
    assert bad.exit_code == 2 and "--moment" in bad.stderr
