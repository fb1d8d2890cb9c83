"""Swarm over features (sim/world/draws/features.py): each default-world run draws which
features are on and how many children it runs; the draw is in the schedule, the trace and the
shrinker's reach, and a feature that is off draws nothing of its own."""

from __future__ import annotations

import attrs
from click.testing import CliRunner

from sim import scenario
from sim.cli.root import main
from sim.explore.shrinking.shrink import shrink
from sim.world import core as world
from sim.world.draws import features as world_features


def started(result: world.RunResult) -> dict[str, object]:
    record = next(r for r in result.trace.records if r.kind == "world.start")
    return dict(record.data["features"])


def test_the_draw_varies_over_seeds_and_is_in_the_schedule(
        default_world: scenario.Scenario) -> None:
    draws = []
    for seed in range(1, 81):
        result = world.run(default_world, seed=seed)
        features = started(result)
        draws.append((tuple(features["on"]), features["children"]))  # type: ignore[arg-type]
        subsystems = result.schedule.subsystems
        assert all(f"swarm:feature:{name}" in subsystems for name in world_features.FEATURES)
    # Every feature is on in some runs and off in others; child counts vary below eight.
    for name in world_features.FEATURES:
        assert 0 < sum(name in on for on, _ in draws) < len(draws), name
    assert {count for _, count in draws} > {8}
    # Fewer features and children make cheaper runs: a run's steps follow its children.
    small = [seed for seed, (_, n) in enumerate(draws, 1) if n <= 4]
    big = [seed for seed, (_, n) in enumerate(draws, 1) if n == 8]
    assert small and big
    mean = lambda seeds: sum(world.run(default_world, seed=s).steps for s in seeds) / len(seeds)  # noqa: E731
    assert mean(small) < mean(big)


def test_a_world_without_the_swarm_runs_every_feature(default_world: scenario.Scenario) -> None:
    assert default_world.workload is not None and default_world.workload.swarm
    full = attrs.evolve(default_world, workload=attrs.evolve(default_world.workload, swarm=False))
    result = world.run(full, seed=3)
    assert started(result) == {"on": list(world_features.FEATURES), "children": 8}
    assert not any(s.startswith("swarm:feature:") for s in result.schedule.subsystems)


def test_a_feature_that_is_off_draws_nothing_of_its_own(
        default_world: scenario.Scenario) -> None:
    """Runs with chunks off send no chunked completion; with nesting off no child has a
    parent; with archive off the session's owner reads no archive."""
    seen = {"chunks": 0, "nesting": 0, "archive": 0}
    for seed in range(1, 61):
        result = world.run(default_world, seed=seed)
        on = started(result)["on"]
        kinds = list(result.trace.records)
        spawns = [r.data for r in kinds if r.kind == "world.spawn"]
        if "nesting" not in on:  # type: ignore[operator]
            seen["nesting"] += 1
            assert not any("subagent" in str(s["requester"]) for s in spawns), seed
        if "chunks" not in on:  # type: ignore[operator]
            seen["chunks"] += 1
            assert not any(r.kind == "gateway.chunk" and r.data["total"] > 1
                           for r in kinds), seed
        if "archive" not in on:  # type: ignore[operator]
            seen["archive"] += 1
            # (An unauthorised attempt may be an archive read: a fault kind, not the feature.)
            assert not any(r.data["action"] == "archive-read" and r.data["caller"] == "None"
                           for r in kinds if r.kind == "world.action"), seed
    assert all(seen.values()), seen


def test_replay_shows_the_draw() -> None:
    out = CliRunner().invoke(main, ["replay", "--seed", "3", "--format", "text"])
    assert out.exit_code in (0, 1), out.output
    first = out.stdout.splitlines()[0]
    assert "world.start" in first and 'features={"on":' in first


def test_shrinking_turns_features_off(default_world: scenario.Scenario) -> None:
    mutant = "last-assistant-message"
    seed = next(s for s in range(1, 200)
                if world.run(default_world, seed=s, mutants=[mutant]).violations
                and len(started(world.run(default_world, seed=s, mutants=[mutant]))["on"]) >= 3)  # type: ignore[arg-type]
    before = started(world.run(default_world, seed=seed, mutants=[mutant]))
    shrunk = shrink(default_world, seed=seed, mutants=[mutant], max_runs=300)
    after = started(world.run(shrunk.scenario))
    assert len(after["on"]) < len(before["on"])  # type: ignore[arg-type]
    assert shrunk.invariant in [v.invariant for v in world.run(shrunk.scenario).violations]


def test_world_start_lists_the_mutants_in_the_order_given(
        default_world: scenario.Scenario) -> None:
    # A set's order follows string hashes (PYTHONHASHSEED): the record, and so the trace and the
    # digest, must follow the order the user gave instead. A set gives both orders alike.
    for given in (("dedupe-off", "lane-newest-first"), ("lane-newest-first", "dedupe-off")):
        result = world.run(default_world, seed=3, mutants=given)
        record = next(r for r in result.trace.records if r.kind == "world.start")
        assert record.data["mutants"] == list(given)
