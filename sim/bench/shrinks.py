"""How small a found bug becomes (SIM-7): per built-in mutant, ``handoff shrink`` of the first
seed a plain ``explore --mutant NAME`` fails (sim/bench/detect.py finds it), with the default
budget: trace records before and after, their ratio, the shrinker's runs and its CPU seconds.

The issue's bar is a ratio of at most 0.1 (a tenth of the original's records); the mutants whose
failure needs more are named, with the records they cannot lose, in docs/scenarios.md
("How far a failure shrinks"). Records and runs are deterministic (the same on any machine);
CPU seconds are not and never enter a simulated run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

# The bar: a shrunk failure keeps at most this share of the original trace's records.
TENTH = 0.1
# ``bench --quick``: a few of sim/bench/detect.py's quick mutants, quick to shrink.
QUICK_SHRINKS = ("last-assistant-message", "dedupe-off", "wake-into-busy-turn")


def shrink_row(mutant: str, scenario: Any = None, first_seed: int | None = None,
               max_runs: int | None = None) -> dict[str, Any]:
    """One mutant's row: its first failing seed (found, unless given) shrunk."""
    from sim.bench.detect import default_world, detect
    from sim.explore.shrinking.shrink import DEFAULT_MAX_RUNS, shrink

    scenario = scenario or default_world()
    if first_seed is None:
        first_seed = detect(mutant, scenario=scenario)["first_seed"]
    if first_seed is None:
        return {"first_seed": None}
    started = time.process_time()  # CPU clock ok: benchmark
    shrunk = shrink(scenario, seed=first_seed, mutants=[mutant],
                    max_runs=max_runs or DEFAULT_MAX_RUNS)
    cpu = time.process_time() - started  # CPU clock ok: benchmark
    return {"first_seed": first_seed, "invariant": shrunk.invariant,
            "records_before": shrunk.original_records, "records_after": shrunk.records,
            "ratio": round(shrunk.records / shrunk.original_records, 3),
            "choices_before": shrunk.original_choices, "choices_after": shrunk.choices,
            "runs": shrunk.runs, "cpu_seconds": round(cpu, 2)}


def shrinking(mutants: Sequence[str] | None = None,
              first_seeds: dict[str, int | None] | None = None,
              progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """``shrink_row`` per mutant (catalogue order); ``first_seeds``: the detection table's, so
    a bench that measured them does not sweep again. With the count at or under a tenth."""
    from actors.mutant_catalogue import MUTANTS
    from sim.bench.detect import default_world

    names = list(MUTANTS) if mutants is None else list(mutants)
    scenario = default_world()
    table: dict[str, dict[str, Any]] = {}
    for n, name in enumerate(names, 1):
        if first_seeds is not None and first_seeds.get(name) is None:
            row = table[name] = {"first_seed": None}  # the detection sweep did not find it
        else:
            row = table[name] = shrink_row(name, scenario, (first_seeds or {}).get(name))
        if progress is not None:
            done = (f"seed {row['first_seed']}: {row['records_before']} -> "
                    f"{row['records_after']} records ({row['ratio']}), {row['runs']} runs, "
                    f"{row['cpu_seconds']} CPU s" if row["first_seed"] else "not found")
            progress(f"shrink {n}/{len(names)}: {name}: {done}")
    rows = [row for row in table.values() if row["first_seed"] is not None]
    return {"shrink": table,
            "shrink_within_tenth": sum(1 for row in rows if row["ratio"] <= TENTH),
            "shrink_rows": len(rows),
            "shrink_runs": sum(row["runs"] for row in rows),
            "shrink_cpu_seconds": round(sum(row["cpu_seconds"] for row in rows), 2)}


if __name__ == "__main__":  # python -m sim.bench.shrinks [MUTANT ...]: the table as JSON lines
    import json
    import sys

    def _line(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    print(json.dumps(shrinking(sys.argv[1:] or None, progress=_line), indent=1))
