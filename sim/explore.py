"""Seed sweeps: run the world for many seeds, serially or over local processes.

Results are collected in seed order, so a parallel sweep reports exactly what a serial one does.
A sweep may also branch from a moment (SIM-11): every seed keeps a recorded schedule's first
choices and draws the rest itself. Failing seeds can be shrunk in the same pool (sim/shrink.py).
"""

from __future__ import annotations

import hashlib
import os
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import attrs

from actors.probes import PROBES
from sim import world
from sim.choices import Schedule, ScheduleDiverged
from sim.scenario import Scenario
from sim.shrink import Shrunk, shrink


@attrs.frozen
class SeedOutcome:
    seed: int
    digest: str | None  # the trace's SHA-256, when the sweep checks determinism
    records: int
    violations: tuple[tuple[str, str, str], ...]  # (invariant, requirement, message)
    run_digest: str = ""  # see run_digest()
    probes: tuple[str, ...] = ()  # the code probes this seed hit (actors/probes.py)
    steps: int = 0  # kernel steps of the run (of a crash too: up to the exception)


@attrs.frozen
class Sweep:
    scenario: Scenario
    strategy: str | None
    mutants: tuple[str, ...] | None
    fault_kinds: tuple[str, ...] | None
    # Hashing every trace costs about a tenth of a run; only a determinism check needs it.
    digests: bool = False
    # Branching from a moment: keep this schedule's first ``branch_at`` choices in every seed.
    branch: Schedule | None = None
    branch_at: int | None = None


# A model exception is a finding for its seed (SIM-10), under this invariant name.
CRASH = ("crash", "SIM-10")


def crash_message(exc: BaseException) -> str:
    """The exception and the frame that raised it, on one line."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:  # Trio wraps task errors
        exc = exc.exceptions[0]
    frames = traceback.extract_tb(exc.__traceback__)
    where = ""
    if frames:
        last = frames[-1]
        where = f" (raised at {'/'.join(Path(last.filename).parts[-2:])}:{last.lineno} " \
                f"in {last.name})"
    text = " ".join(str(exc).split())[:300]
    return f"the model raised {type(exc).__name__}: {text}{where}"


def run_seed(sweep: Sweep, seed: int, keep: dict[str, object] | None = None) -> SeedOutcome:
    """One seed's outcome; ``keep``, if given, receives the run's ``schedule`` and probe
    ``moments`` (a guided sweep's corpus, sim/explore_guided.py)."""
    try:
        result = world.run(sweep.scenario, seed=seed, strategy=sweep.strategy,
                           mutants=sweep.mutants, fault_kinds=sweep.fault_kinds,
                           replay=sweep.branch, replay_steps=sweep.branch_at)
    except ScheduleDiverged:  # the branch does not fit this world: bad input, not a model bug
        raise
    except Exception as exc:  # a bug in the model: this seed's finding, the sweep goes on
        return SeedOutcome(seed, None, 0, ((*CRASH, crash_message(exc)),),
                           steps=_steps_before(exc))
    if keep is not None:
        keep.update(schedule=result.schedule, moments=result.moments)
    digest = result.trace.digest() if sweep.digests else None
    return SeedOutcome(seed, digest, len(result.trace),
                       tuple((v.invariant, v.requirement, v.message) for v in result.violations),
                       run_digest(result), tuple(result.probes), result.steps)


def _steps_before(exc: BaseException) -> int:
    for note in getattr(exc, "__notes__", ()):
        if note.startswith(world.STEPS_NOTE):
            return int(note.removeprefix(world.STEPS_NOTE))
    return 0


def run_digest(result: world.RunResult) -> str:
    """A cheap fingerprint of one run: its choices, trace length, end time and violations.

    A run is a function of its scenario, configuration, code and choices, so this pins it down
    for comparing sweeps (across machines, job counts or commits) at a fraction of the cost of
    hashing the trace (a few hundred integers instead of every record's JSON). It does not see a
    change inside a record that moves no choice; ``--check-determinism`` hashes whole traces.
    """
    schedule = result.schedule
    summary = (schedule.subsystems, schedule.choices, len(result.trace), result.end_ms,
               tuple((v.invariant, v.message) for v in result.violations))
    return hashlib.sha256(repr(summary).encode()).hexdigest()[:16]


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
    ``dask`` (sim/pool.py); ``progress`` is told how many seeds finished since its last call."""
    from sim import pool
    from sim.gc_tuning import tune_for_sweeps

    tune_for_sweeps()  # before forking, so local workers inherit it
    if dask is not None:
        return pool.dask(spec, seeds, dask, progress)
    if jobs <= 1 or len(seeds) < SERIAL_BELOW:
        outcomes = []
        for seed in seeds:
            outcomes.append(run_seed(spec, seed))
            if progress is not None:
                progress(1)
        return outcomes
    return pool.local(spec, seeds, jobs, progress)


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
    with ProcessPoolExecutor(max_workers=min(jobs, n)) as pool:
        return list(pool.map(_shrink_one, [spec] * n, [max_runs] * n, [source] * n, failures))
