"""One seed of a sweep: what the sweep asks (:class:`Sweep`), the run, and what it reports
(:class:`SeedOutcome`), a model exception included (SIM-10). Both the serial sweep
(``sim/explore/sweeps.py``) and the worker pool (``sim/explore/pool.py``) run seeds through here.
"""

from __future__ import annotations

import hashlib
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from sim.choices import Schedule, ScheduleDiverged
from sim.invariants.base import Violation
from sim.scenario import Scenario
from sim.world import batch as world_batch
from sim.world import core as world


@attrs.frozen
class SeedOutcome:
    seed: int
    digest: str | None  # the trace's SHA-256, when the sweep checks determinism
    records: int
    violations: tuple[Violation, ...]
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


def _source_path(filename: str) -> str:
    """A frame's file from the project's top package on (``actors/delivery/table.py``), else its
    folder and name: short, and the same on every machine."""
    parts = Path(filename).parts
    tops = [i for i, part in enumerate(parts) if part in ("actors", "sim", "tests")]
    return "/".join(parts[tops[-1] if tops else -2:])


def crash_message(exc: BaseException) -> str:
    """The exception and the frame that raised it, on one line."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:  # Trio wraps task errors
        exc = exc.exceptions[0]
    frames = traceback.extract_tb(exc.__traceback__)
    where = ""
    if frames:
        last = frames[-1]
        where = f" (raised at {_source_path(last.filename)}:{last.lineno} in {last.name})"
    text = " ".join(str(exc).split())[:300]
    return f"the model raised {type(exc).__name__}: {text}{where}"


def run_seed(sweep: Sweep, seed: int, keep: dict[str, object] | None = None) -> SeedOutcome:
    """One seed's outcome; ``keep``, if given, receives the run's ``schedule`` and probe
    ``moments`` (a guided sweep's corpus, sim/explore/guided.py)."""
    try:
        result: world.RunResult | Exception = world.run(
            sweep.scenario, seed=seed, strategy=sweep.strategy, mutants=sweep.mutants,
            fault_kinds=sweep.fault_kinds, replay=sweep.branch, replay_steps=sweep.branch_at)
    except Exception as exc:  # a model bug or bad input: _outcome tells them apart
        result = exc
    return _outcome(sweep, seed, result, keep)


def run_seeds(sweep: Sweep, seeds: Sequence[int],
              progress: Callable[[int], None] | None = None) -> list[SeedOutcome]:
    """Each seed's outcome, as :func:`run_seed` gives it, from one Trio run shared by all of
    them (sim/world/batch.py: it saves each seed Trio's start and end, a few per cent);
    ``progress`` is told of each seed done."""
    outcomes: list[SeedOutcome] = []

    def take(seed: int, result: world.RunResult | Exception) -> None:
        outcomes.append(_outcome(sweep, seed, result))
        if progress is not None:
            progress(1)

    world_batch.run_each(sweep.scenario, seeds, take, strategy=sweep.strategy,
                         mutants=sweep.mutants, fault_kinds=sweep.fault_kinds,
                         replay=sweep.branch, replay_steps=sweep.branch_at)
    return outcomes


def _outcome(sweep: Sweep, seed: int, result: world.RunResult | Exception,
             keep: dict[str, object] | None = None) -> SeedOutcome:
    if isinstance(result, ScheduleDiverged):  # the branch does not fit this world: bad input
        raise result
    if isinstance(result, Exception):  # a bug in the model: this seed's finding, the sweep goes on
        return SeedOutcome(seed, None, 0, (Violation(*CRASH, crash_message(result), ()),),
                           steps=_steps_before(result))
    if keep is not None:
        keep.update(schedule=result.schedule, moments=result.moments)
    digest = result.trace.digest() if sweep.digests else None
    return SeedOutcome(seed, digest, len(result.trace),
                       tuple(result.violations),
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
    # repr((subsystems, choices, records, end_ms, violations)), the choices' part spelled out:
    # repr of each of a seed's ~400 choice triples (~0.1 ms a seed) is mostly a few dozen
    # distinct triples, kept once. tests/explore/test_run_digest.py compares it with repr.
    choices = list(map(_choice_texts, schedule.choices))
    summary = (f"({schedule.subsystems!r}, ({', '.join(choices)}{',' if len(choices) == 1 else ''})"
               f", {len(result.trace)!r}, {result.end_ms!r}, "
               f"{tuple((v.invariant, v.message) for v in result.violations)!r})")
    return hashlib.sha256(summary.encode()).hexdigest()[:16]


class _Texts(dict[tuple[int, int, int], str]):
    """Each choice triple's repr, made at its first use (at most ``LIMIT`` kept)."""

    LIMIT = 100_000

    def __missing__(self, triple: tuple[int, int, int]) -> str:
        if len(self) >= self.LIMIT:  # a huge run's many distinct choices: start over
            self.clear()
        text = self[triple] = repr(triple)
        return text


_choice_texts = _Texts().__getitem__


