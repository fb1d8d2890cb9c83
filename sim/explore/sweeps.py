"""Seed sweeps: run the world for many seeds, serially or over local processes.

Results are collected in seed order, so a parallel sweep reports exactly what a serial one does.
A sweep may also branch from a moment (SIM-11): every seed keeps a recorded schedule's first
choices and draws the rest itself. Failing seeds can be shrunk in the same pool
(sim/explore/shrinking/shrink.py).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator, Sequence

import attrs

from actors.probes import PROBES
from sim.explore.seed import CRASH as CRASH
from sim.explore.seed import SeedOutcome as SeedOutcome
from sim.explore.seed import Sweep as Sweep
from sim.explore.seed import crash_message as crash_message
from sim.explore.seed import run_digest as run_digest
from sim.explore.seed import run_seed as run_seed
from sim.explore.seed import run_seeds
from sim.explore.shrinking.shrink import Shrunk, shrink


def sweep_digest(outcomes: Sequence[SeedOutcome]) -> str:
    """One hash over every seed's run digest, in seed order."""
    h = hashlib.sha256()
    for outcome in outcomes:
        h.update(f"{outcome.seed}:{outcome.run_digest}\n".encode())
    return h.hexdigest()


def probe_table(outcomes: Sequence[SeedOutcome]) -> dict[str, int]:
    """Per declared probe, how many seeds hit it (catalogue order; 0 for never hit)."""
    seeds = dict.fromkeys(PROBES, 0)
    for outcome in outcomes:
        for name in outcome.probes:
            seeds[name] += 1
    return seeds


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else (os.cpu_count() or 1))


# Below this many seeds a sweep runs in this process: starting workers would cost more.
SERIAL_BELOW = 50


def sweep(
    spec: Sweep,
    seeds: Sequence[int],
    jobs: int = 1,
    progress: Callable[[int], None] | None = None,
    dask: str | None = None,
) -> list[SeedOutcome]:
    """Run every seed, in this process, over ``jobs`` local workers or on the Dask scheduler at
    ``dask`` (sim/explore/pool.py); ``progress`` is told how many seeds finished since its last
    call."""
    from sim.explore import pool
    from sim.gc_tuning import tune_for_sweeps

    tune_for_sweeps()  # before forking, so local workers inherit it
    if dask is not None:
        return pool.dask(spec, seeds, dask, progress)
    if jobs <= 1 or len(seeds) < SERIAL_BELOW:
        return run_seeds(spec, seeds, progress)
    return pool.local(spec, seeds, jobs, progress)


# A serial sweep's seeds run in parts this long: Ctrl-C loses at most the part it stopped in.
SERIAL_PART = 64


def parts(spec: Sweep, seeds: Sequence[int], jobs: int = 1, dask: str | None = None,
          dask_timeout: float | None = None,
          workers_seen: Callable[[int], None] | None = None,
          progress: Callable[[int], None] | None = None) -> Iterator[list[SeedOutcome]]:
    """:func:`sweep`'s outcomes a part at a time, in seed order, so the caller keeps what it
    needs of each (a sweep of millions of seeds never holds them all) and has every part done
    so far when it stops early: a stop request (Ctrl-C under ``pool.stop_on_interrupt``) ends
    it after the seeds in hand, and closing the iterator stops the workers. ``progress`` is
    told of seeds as they finish (a Dask sweep's, a part at a time)."""
    from sim.explore import pool
    from sim.gc_tuning import tune_for_sweeps

    tune_for_sweeps()
    if dask is not None:
        for outcomes in pool.dask_parts(spec, seeds, dask, dask_timeout or pool.DASK_TIMEOUT,
                                        workers_seen):
            if progress is not None:
                progress(len(outcomes))
            yield outcomes
    elif jobs <= 1 or len(seeds) < SERIAL_BELOW:
        for start in range(0, len(seeds), SERIAL_PART):
            part = seeds[start:start + SERIAL_PART]
            done = run_seeds(spec, part, progress, stop=pool.stop_requested)
            yield done
            if len(done) < len(part) or pool.stop_requested():
                return
    else:
        yield from pool.local_parts(spec, seeds, jobs, progress)


@attrs.frozen
class Failure:
    """One (seed, invariant) of a sweep to shrink."""

    seed: int
    invariant: str


def _shrink_one(spec: Sweep, max_runs: int, source: str, failure: Failure) -> Shrunk:
    return shrink(spec.scenario, seed=failure.seed, strategy=spec.strategy,
                  mutants=spec.mutants, fault_kinds=spec.fault_kinds,
                  invariant=failure.invariant, max_runs=max_runs, source=source,
                  replay=spec.branch, replay_steps=spec.branch_at)


def shrink_failures(spec: Sweep, failures: Sequence[Failure], max_runs: int, source: str,
                    jobs: int = 1) -> list[Shrunk]:
    """Shrink each failure (in order; each shrink is deterministic, so jobs change nothing)."""
    if jobs <= 1 or len(failures) <= 1:
        return [_shrink_one(spec, max_runs, source, f) for f in failures]
    n = len(failures)
    from sim.explore.pool import workers

    with workers(min(jobs, n)) as pool:
        return list(pool.map(_shrink_one, [spec] * n, [max_runs] * n, [source] * n, failures))
