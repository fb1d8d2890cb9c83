"""sim/explore/reaches.py: which moments a shrunk failure's saved file says its run reaches."""

from __future__ import annotations

from pathlib import Path

from sim import scenario
from sim.explore.reaches import MAX_REACHES, ProbeTally
from sim.explore.shrinking.shrink import shrink
from sim.scenario.write import dumps
from sim.world import core as world
from tests.conftest import SCENARIOS


def test_the_probes_every_failing_run_hit_fewest_passing_first() -> None:
    tally = ProbeTally()
    tally.count(True, ["a", "b", "c", "d", "e"])
    tally.count(False, ["a", "b"])
    tally.count(False, ["a"])
    tally.count(True, ["e", "a", "b", "c", "d"])
    tally.count(True, ["a", "b", "c", "e"])  # d is not needed for the failure
    tally.count(False, ["e"])
    # Always hit when failing: a, b, c, e. Passing hits: a 2, b 1, c 0, e 1; ties in the saved
    # run's order (e before b there).
    assert tally.reaches(["e", "a", "b", "c"]) == ("c", "e", "b")
    assert MAX_REACHES == 3


def test_no_failing_run_names_no_moment() -> None:
    tally = ProbeTally()
    tally.count(False, ["a"])
    assert tally.reaches(["a"]) == ()


def test_when_no_probe_survived_every_failing_run_the_saved_runs_own_are_named() -> None:
    tally = ProbeTally()
    tally.count(True, ["a", "b"])
    tally.count(False, ["d"])
    tally.count(False, ["c", "d"])
    tally.count(True, ["c", "d"])  # the shrunk run shares nothing with the first
    assert tally.reaches(["d", "c"]) == ("c", "d")


def test_a_probe_the_saved_run_missed_is_never_named() -> None:
    tally = ProbeTally()
    tally.count(True, ["a", "b"])
    assert tally.reaches(["b"]) == ("b",)


def test_a_shrunk_failure_names_the_moments_it_reaches_and_keeps_them(tmp_path: Path) -> None:
    # Re-shrinking a saved failure from its own file: the rule picks the token-limit cut with an
    # empty last message (the lost partial answer of OUT-1), not the probes every run hits.
    source = scenario.load(SCENARIOS / "regressions" /
                           "last-assistant-message-seed-251-output-rule.toml")
    shrunk = shrink(source, seed=251, mutants=["last-assistant-message"], max_runs=60)
    reaches = shrunk.scenario.expect.reaches
    assert reaches == ("child.token-limit-empty-message", "child.no-output", "child.token-limit")
    path = tmp_path / "again.toml"
    path.write_text(dumps(shrunk.scenario), encoding="utf-8")
    assert 'reaches = ["child.token-limit-empty-message", ' in path.read_text()
    rerun = world.run(scenario.load(path))
    assert set(reaches) <= set(rerun.probes)
    assert "route.internal" in rerun.probes and "route.internal" not in reaches
