"""Seeds sharing one Trio run (sim/world/batch.py) give what each gives in a run of its own."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

import sim.world.batch as world_batch
from sim.bench.detect import default_world
from sim.determinism import _trio_run
from sim.explore.seed import SeedOutcome, Sweep, run_seed, run_seeds
from sim.world import core

# Seeds 1..25 of the default world include seeds (3, 20, 23) whose runs have a Trio batch of
# several tasks after the start: their traces change when Trio's batch order stream leaks from
# the seed before.
SEEDS = range(1, 26)


def _spec() -> Sweep:
    return Sweep(default_world(), None, None, None, digests=True)


def _mismatches(spec: Sweep, seeds: Sequence[int]) -> list[int]:
    """The seeds whose outcome (the whole trace's SHA-256 included) in one shared run differs
    from the seed's run alone."""
    together = run_seeds(spec, seeds)
    alone = [run_seed(spec, seed) for seed in seeds]
    assert [o.seed for o in together] == list(seeds)
    return [a.seed for a, b in zip(together, alone, strict=True) if a != b]


def test_a_batch_gives_each_seed_its_own_runs_trace() -> None:
    assert _mismatches(_spec(), SEEDS) == []


@pytest.mark.parametrize("leak", [
    pytest.param(("as_if_run_started", lambda: None), id="batch-order-not-reset"),
    pytest.param(("seed_trio_scheduler", lambda seed: None), id="batch-order-not-reseeded"),
])
def test_the_comparison_catches_state_left_by_the_seed_before(
        monkeypatch: pytest.MonkeyPatch, leak: tuple[str, Callable[..., None]]) -> None:
    monkeypatch.setattr(world_batch, *leak)
    assert _mismatches(_spec(), SEEDS) != []


@pytest.fixture
def starts(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[int, object, float]]]:
    """Per world started: its seed, Trio's batch order state and Trio's time as its main
    begins."""
    import trio

    seen: list[tuple[int, object, float]] = []
    main = core.World.main

    async def watched(self: core.World) -> None:
        seen.append((self.seed, _trio_run()._r.getstate(), trio.current_time()))
        await main(self)

    monkeypatch.setattr(core.World, "main", watched)
    yield seen


def test_each_seed_starts_where_a_fresh_run_starts(starts: list[Any]) -> None:
    spec = _spec()
    run_seeds(spec, [3, 20, 3])
    together = list(starts)
    starts.clear()
    for seed in (3, 20, 3):
        run_seed(spec, seed)
    assert together == starts
    assert [time for _, _, time in together] == [0.0, 0.0, 0.0]


def test_a_model_exception_in_a_batch_is_that_seeds_finding(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """It crashes its seed alone, as in a run of its own; the next seed runs as usual."""
    spec = _spec()
    start = core.World._start_delivery

    def broken(self: core.World) -> None:
        if self.seed == 2 and self.kernel.steps > 20:
            raise RuntimeError("broken delivery start")
        start(self)

    monkeypatch.setattr(core.World, "_start_delivery", broken)
    together = run_seeds(spec, [1, 2, 3])
    alone = [run_seed(spec, seed) for seed in (1, 2, 3)]
    assert together == alone
    crashed: SeedOutcome = together[1]
    crash = crashed.violations[0]
    assert (crash.invariant, crash.requirement) == ("crash", "SIM-10")
    assert "RuntimeError: broken delivery start" in crashed.violations[0].message
    assert crashed.steps > 20
    assert together[2].violations == () and together[2].digest is not None


def test_a_world_that_fails_to_build_is_that_seeds_finding(
        monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _spec()
    chooser = core.Chooser

    def broken(seed: int, *args: Any, **kwargs: Any) -> core.Chooser:
        if seed == 2:
            raise ValueError("no chooser for seed 2")
        return chooser(seed, *args, **kwargs)

    monkeypatch.setattr(core, "Chooser", broken)
    together = run_seeds(spec, [1, 2, 3])
    assert together == [run_seed(spec, seed) for seed in (1, 2, 3)]
    assert "ValueError: no chooser for seed 2" in together[1].violations[0].message
    assert together[2].violations == () and together[2].digest is not None
