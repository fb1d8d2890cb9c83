"""Seed sweeps: run the world for many seeds, serially or over local processes.

Results are collected in seed order, so a parallel sweep reports exactly what a serial one does.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor

import attrs

from sim import world
from sim.scenario import Scenario


@attrs.frozen
class SeedOutcome:
    seed: int
    digest: str | None  # the trace's SHA-256, when the sweep checks determinism
    records: int
    violations: tuple[tuple[str, str, str], ...]  # (invariant, requirement, message)


@attrs.frozen
class Sweep:
    scenario: Scenario
    strategy: str | None
    mutants: tuple[str, ...] | None
    fault_kinds: tuple[str, ...] | None
    # Hashing every trace costs about a tenth of a run; only a determinism check needs it.
    digests: bool = False


def run_seed(sweep: Sweep, seed: int) -> SeedOutcome:
    result = world.run(sweep.scenario, seed=seed, strategy=sweep.strategy,
                       mutants=sweep.mutants, fault_kinds=sweep.fault_kinds)
    digest = result.trace.digest() if sweep.digests else None
    return SeedOutcome(seed, digest, len(result.trace),
                       tuple((v.invariant, v.requirement, v.message) for v in result.violations))


def _run_chunk(sweep: Sweep, seeds: Sequence[int]) -> list[SeedOutcome]:
    return [run_seed(sweep, seed) for seed in seeds]


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else (os.cpu_count() or 1))


def sweep(
    spec: Sweep,
    seeds: Sequence[int],
    jobs: int = 1,
    progress: Callable[[int], None] | None = None,
    chunk: int = 25,
) -> list[SeedOutcome]:
    """Run every seed; ``progress`` is told how many seeds finished since its last call."""
    if jobs <= 1 or len(seeds) <= chunk:
        outcomes = []
        for seed in seeds:
            outcomes.append(run_seed(spec, seed))
            if progress is not None:
                progress(1)
        return outcomes
    chunks = [seeds[i:i + chunk] for i in range(0, len(seeds), chunk)]
    results: list[list[SeedOutcome]] = []
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for part in pool.map(_run_chunk, [spec] * len(chunks), chunks):
            results.append(part)
            if progress is not None:
                progress(len(part))
    return [outcome for part in results for outcome in part]
