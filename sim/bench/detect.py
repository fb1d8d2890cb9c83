"""Time to find a bug (SPEC §5): per built-in mutant, what plain ``explore --mutant NAME`` pays
up to its first violation, and what one default-world seed is made of.

``steps`` counts the kernel steps of every run up to and including the first failing one: a
deterministic figure (the same on any machine), unlike ``cpu_seconds`` beside it. The sweep is
the one ``explore`` runs (sim/explore/sweeps.py's ``run_seed`` on explore's default world, seeds 1,
2, ...), so the figures are what a user meets. Wall-clock and CPU reads are the point here and
never enter a simulated run. One first seed per mutant is one geometric sample: for the expected
figure (steps per failing seed over seeds 1..N) see sim/bench/hits.py.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

# A mutant not found within this many steps is reported with ``first_seed`` None (its
# ``steps`` is then the work spent not finding it): the SPEC's bound, and then some.
STEP_CAP = 30_000
# ``bench --quick``: a few mutants, spread over the catalogue's subsystems.
QUICK_MUTANTS = ("last-assistant-message", "dedupe-off", "key-without-run-id",
                 "cleanup-not-recorded", "wake-into-busy-turn")


def default_world() -> Any:
    """Explore's default world (sim/default_world.toml), as ``explore`` loads it."""
    from sim import scenario
    from sim.explore.worlds import default_world_path

    return scenario.load(default_world_path())


def _plain(spec: Any) -> Iterator[Any]:
    from sim.explore.sweeps import run_seed

    seed = 0
    while True:
        seed += 1
        yield run_seed(spec, seed)


def _guided(spec: Any) -> Iterator[Any]:
    from sim.explore import guided as explore_guided

    for done in explore_guided.rounds(spec, range(1, 10_000_000)):
        yield from (guided.outcome for guided in done)


def detect(mutant: str, cap: int = STEP_CAP, scenario: Any = None,
           guided: bool = False) -> dict[str, Any]:
    """Seeds 1, 2, ... of plain ``explore --mutant NAME`` (``guided``: of the probe-guided
    sweep, sim/explore/guided.py) until one fails or ``cap`` steps."""
    from sim.explore.sweeps import Sweep

    spec = Sweep(scenario or default_world(), None, (mutant,), None)
    steps = seeds = 0
    started = time.process_time()  # CPU clock ok: benchmark
    for outcome in (_guided if guided else _plain)(spec):
        if steps >= cap:
            break
        steps += outcome.steps
        seeds += 1
        if outcome.violations:
            return {"first_seed": outcome.seed, "steps": steps, "seeds": seeds,
                    "invariant": outcome.violations[0].invariant,
                    "cpu_seconds": round(time.process_time() - started, 3)}  # CPU clock ok
    return {"first_seed": None, "steps": steps, "seeds": seeds, "invariant": None,
            "cpu_seconds": round(time.process_time() - started, 3)}  # CPU clock ok


def detection(mutants: Sequence[str] | None = None, cap: int = STEP_CAP,
              progress: Callable[[str], None] | None = None,
              guided: bool = False) -> dict[str, Any]:
    """``detection`` per mutant (catalogue order), its median and max steps and the steps per
    CPU second of these very runs (a mutant never found counts its capped steps)."""
    from actors.mutant_catalogue import MUTANTS

    names = list(MUTANTS) if mutants is None else list(mutants)
    scenario = default_world()
    table: dict[str, dict[str, Any]] = {}
    for n, name in enumerate(names, 1):
        row = table[name] = detect(name, cap, scenario, guided)
        if progress is not None:
            found = f"seed {row['first_seed']}" if row["first_seed"] else "NOT FOUND"
            progress(f"detection {n}/{len(names)}: {name}: {found}, {row['steps']} steps, "
                     f"{row['cpu_seconds']} CPU s")
    steps = [row["steps"] for row in table.values()]
    cpu = sum(row["cpu_seconds"] for row in table.values())
    return {"detection": table,
            "detection_steps_median": statistics.median(steps) if steps else 0,
            "detection_steps_max": max(steps, default=0),
            "detection_not_found": [name for name, row in table.items()
                                    if row["first_seed"] is None],
            "steps_per_cpu_second": round(sum(steps) / cpu, 1) if cpu > 0 else 0.0}


@contextmanager
def _sql_counter() -> Iterator[list[int]]:
    """Runs the world inside on the SQLite store (actors/store/sqlite.py) and counts its SQL
    statements: the world's own store keeps its rows in memory and runs none, so this is what a
    registry on SQLite would pay for the same writes (tests/store/test_store_backends.py checks
    that both stores give the same runs)."""
    from actors.store.sqlite import SqliteStore
    from sim.world import core as world

    count = [0]
    opened: list[SqliteStore] = []

    def counting() -> SqliteStore:
        # One run at a time: the previous run's store is finished (the world closed it).
        for done in opened:
            count[0] += done.statements
        opened[:] = [SqliteStore()]
        return opened[0]

    swapped = world.RunStore  # type: ignore[attr-defined]
    world.RunStore = counting  # type: ignore[attr-defined,assignment]  # undone below
    try:
        yield count
    finally:
        world.RunStore = swapped  # type: ignore[attr-defined]
        count[0] += sum(done.statements for done in opened)


def seed_shape(seeds: Sequence[int]) -> dict[str, Any]:
    """What a default-world seed is made of, per seed over ``seeds``: kernel steps, trace
    records, recorded choices and SQL statements (counts, the same on any machine)."""
    from sim.world import core as world

    scenario = default_world()
    steps = records = choices = 0
    with _sql_counter() as sql:
        for seed in seeds:
            result = world.run(scenario, seed=seed)
            steps += result.steps
            records += len(result.trace)
            choices += len(result.schedule.choices)
    n = max(1, len(seeds))
    shape = {"shape_seeds": len(seeds), "steps_per_seed": round(steps / n, 1),
             "records_per_seed": round(records / n, 1),
             "choices_per_seed": round(choices / n, 1)}
    if sql[0]:
        shape["sql_statements_per_seed"] = round(sql[0] / n, 1)
    return shape
