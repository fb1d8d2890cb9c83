"""Probe-guided exploration: a sweep that keeps a corpus of moments and branches from them.

A *moment* is a run's schedule prefix: its first ``at`` choices, up to the instant a code probe
(actors/probes.py) first fired in it. A run enters the corpus when it hit a probe that few runs
of the sweep hit so far (rare), or a combination of probes never seen together; its moment is
the first firing of its rarest probe. Part of each later round's runs branch from a corpus
moment with a fresh future (SIM-11's ``--from/--at`` machinery: the prefix is replayed, the
rest is drawn from the run's own seed), so the search spends its time around the rare corners
a plain sweep reaches once in hundreds of seeds.

Determinism: the sweep runs in rounds of ``ROUND`` seeds. Which seeds of a round branch, and
from which moment, depends only on the corpus before the round and the seed (its own RNG
stream), and the corpus is updated after the round from the outcomes in seed order, so the
result is the same for any ``--jobs`` and in any process.

A branched run's finding reproduces from one line: ``--moment`` names the chain of moments it
grew from (``SEED@AT/SEED@AT/...``: run the first seed, keep AT choices, let the next seed draw
the rest, ...), rebuilt by re-running the chain, so the repro needs no file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack

import attrs

from sim.choices import Schedule
from sim.determinism import rng_for
from sim.explore.pool import stop_requested, wait, workers
from sim.explore.sweeps import SeedOutcome, Sweep, run_seed

# Seeds per round: the corpus changes between rounds only.
ROUND = 16
# Of a round's seeds (once the corpus has a moment), the share that branch from one.
BRANCH_SHARE = 0.5
# A probe hit by at most this share of the sweep's runs so far is rare.
RARE_SHARE = 0.05
# The corpus keeps at most this many moments (the oldest of the commonest go first).
CORPUS_MAX = 64


@attrs.frozen
class Moment:
    """Where a branch starts: the chain that rebuilds the schedule, and that schedule."""

    chain: tuple[tuple[int, int], ...]  # ((seed, at), ...), see the module doc
    schedule: Schedule
    probe: str  # the rare probe whose first firing the moment stops at

    @property
    def at(self) -> int:
        return self.chain[-1][1]

    def text(self) -> str:
        return format_chain(self.chain)


def format_chain(chain: Sequence[tuple[int, int]]) -> str:
    return "/".join(f"{seed}@{at}" for seed, at in chain)


# A chain's limits (``--moment``): each link is a run to redo, and no run makes more choices
# than a schedule file may hold.
MAX_CHAIN = 1_000
MAX_AT = 10_000_000


def parse_chain(text: str) -> tuple[tuple[int, int], ...]:
    """``SEED@AT/SEED@AT...`` (ValueError with what is wrong): seeds 0..MAX_SEED, AT
    0..``MAX_AT``, at most ``MAX_CHAIN`` links."""
    from sim.choices import MAX_SEED

    parts = text.split("/")
    if len(parts) > MAX_CHAIN:
        raise ValueError(f"a chain of {len(parts):,} moments; at most {MAX_CHAIN:,}")
    chain = []
    for part in parts:
        seed, sep, at = part.partition("@")
        if not sep or not seed.isascii() or not seed.isdigit() or not at.isascii() \
                or not at.isdigit() or len(seed) > 20 or len(at) > 20:
            raise ValueError(f"{part[:40]!r} is not SEED@AT (e.g. 17@120)")
        if int(seed) > MAX_SEED:
            raise ValueError(f"seed {seed} is above the largest seed, {MAX_SEED}")
        if int(at) > MAX_AT:
            raise ValueError(f"step {at} is above {MAX_AT:,}")
        chain.append((int(seed), int(at)))
    return tuple(chain)


def rebuild(spec: Sweep, chain: Sequence[tuple[int, int]]) -> Schedule:
    """The schedule a chain of moments names, by re-running it (each step a branch of the
    previous one's schedule)."""
    from sim.world import core as world

    schedule: Schedule | None = None
    at: int | None = None
    for seed, keep in chain:
        result = world.run(spec.scenario, seed=seed, strategy=spec.strategy,
                           mutants=spec.mutants, fault_kinds=spec.fault_kinds,
                           replay=schedule, replay_steps=at)
        schedule, at = result.schedule, keep
    assert schedule is not None
    if at is not None and at > len(schedule.choices):
        raise ValueError(f"the chain's last run has {len(schedule.choices)} choices, "
                         f"cannot keep {at}")
    return schedule


@attrs.frozen
class Task:
    seed: int
    origin: Moment | None  # None: a plain run of ``seed``


@attrs.frozen
class GuidedOutcome:
    outcome: SeedOutcome
    chain: tuple[tuple[int, int], ...]  # the moment it branched from (empty: a plain run)
    schedule: Schedule | None  # kept when the run may enter the corpus
    moments: dict[str, int]  # probe -> choices made when it first fired


def run_task(spec: Sweep, task: Task) -> GuidedOutcome:
    if task.origin is not None:
        spec = attrs.evolve(spec, branch=task.origin.schedule, branch_at=task.origin.at)
    outcome, schedule, moments = run_seed_with_moments(spec, task.seed)
    chain = task.origin.chain if task.origin is not None else ()
    return GuidedOutcome(outcome, chain, schedule, moments)


def run_seed_with_moments(spec: Sweep, seed: int
                          ) -> tuple[SeedOutcome, Schedule | None, dict[str, int]]:
    captured: dict[str, object] = {}
    outcome = run_seed(spec, seed, keep=captured)
    schedule = captured.get("schedule")
    moments = captured.get("moments")
    return (outcome, schedule if isinstance(schedule, Schedule) else None,
            moments if isinstance(moments, dict) else {})


def _run_batch(spec: Sweep, tasks: Sequence[Task]) -> list[GuidedOutcome]:
    """The tasks' outcomes: all, or the first ones when a stop was requested (Ctrl-C)."""
    done = []
    for task in tasks:
        if stop_requested():
            break
        done.append(run_task(spec, task))
    return done


class Corpus:
    """The moments kept so far and how often each probe (and probe set) was seen."""

    def __init__(self) -> None:
        self.runs = 0
        self.hits: dict[str, int] = {}
        self.combos: set[tuple[str, ...]] = set()  # membership only, never iterated
        self.moments: list[Moment] = []

    def rarity(self, probe: str) -> int:
        return self.hits.get(probe, 0)

    def add(self, guided: GuidedOutcome) -> None:
        """Count the run's probes; keep its moment if it reached a rare probe or a new
        combination (before counting it)."""
        probes = guided.outcome.probes
        combo = tuple(sorted(probes))
        limit = max(1, int(RARE_SHARE * self.runs))
        rare = sorted((self.rarity(p), p) for p in probes if self.rarity(p) < limit)
        new_combo = combo not in self.combos
        self.runs += 1
        for p in probes:
            self.hits[p] = self.hits.get(p, 0) + 1
        self.combos.add(combo)
        if guided.schedule is None or not (rare or new_combo) or not guided.moments:
            return
        if rare:
            probe = rare[0][1]
        else:  # a new combination: stop where its rarest probe first fired
            probe = min(probes, key=lambda p: (self.rarity(p), p))
        at = guided.moments.get(probe)
        if at is None:
            return
        self.moments.append(Moment((*guided.chain, (guided.outcome.seed, at)),
                                   guided.schedule, probe))
        if len(self.moments) > CORPUS_MAX:
            # Drop the moment whose probe is the commonest now (the oldest among equals).
            commonest = max(range(len(self.moments)),
                            key=lambda i: (self.rarity(self.moments[i].probe), -i))
            del self.moments[commonest]

    def pick(self, seed: int) -> Moment | None:
        """For ``seed``: a moment to branch from (the rarer its probe, the likelier), or None
        for a plain run. On the seed's own stream, so the pick depends on nothing else."""
        if not self.moments:
            return None
        rng = rng_for(seed, "guided")
        if rng.random() >= BRANCH_SHARE:
            return None
        weights = [1.0 / (1 + self.rarity(m.probe)) for m in self.moments]
        return rng.choices(self.moments, weights)[0]


def sweep(spec: Sweep, seeds: Sequence[int], jobs: int = 1,
          progress: Callable[[int], None] | None = None) -> list[GuidedOutcome]:
    """A guided sweep of ``seeds`` (see the module doc), in rounds of ``ROUND``."""
    results: list[GuidedOutcome] = []
    for done in rounds(spec, seeds, jobs):
        results += done
        if progress is not None:
            progress(len(done))
    return results


def rounds(spec: Sweep, seeds: Sequence[int], jobs: int = 1) -> Iterator[list[GuidedOutcome]]:
    """Each round's outcomes in seed order, the corpus updated between rounds."""
    corpus = Corpus()
    with ExitStack() as stack:
        # Forked workers that die with this process and stop at once on Ctrl-C (pool.py).
        pool = (stack.enter_context(workers(jobs)) if jobs > 1 and len(seeds) > ROUND
                else None)
        for start in range(0, len(seeds), ROUND):
            tasks = [Task(seed, corpus.pick(seed)) for seed in seeds[start:start + ROUND]]
            if pool is None:
                done = _run_batch(spec, tasks)
            else:
                share = -(-len(tasks) // jobs)
                futures = [pool.submit(_run_batch, spec, tasks[i:i + share])
                           for i in range(0, len(tasks), share)]
                done = []
                for future in futures:
                    part = wait(future, pool)
                    done += part
                    if len(part) < share:  # cut short (or the round's last part)
                        break
                done = done[:len(tasks)]
            for guided in done:
                corpus.add(guided)
            yield [attrs.evolve(guided, schedule=None) for guided in done]
            if len(done) < len(tasks) or stop_requested():
                return
