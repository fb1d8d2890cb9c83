"""One scale point of ``handoff bench``, run as ``python -m sim.bench_scale CHILDREN`` in a
fresh process so its peak memory is its own; prints one JSON line.

The default world with ``CHILDREN`` children instead of eight, seed 1: time of the run and the
process's peak resident memory (``peak_mib``), and how much of it the run itself added
(``run_mib``, peak minus what the process held after loading the world).
"""

from __future__ import annotations

import json
import resource
import sys
import time
from importlib import resources

from sim import scenario as scenario_mod
from sim import world
from sim.gc_tuning import tune_for_big_runs


def _rss_mib() -> float:
    import os

    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def world_with(children: int) -> scenario_mod.Scenario:
    text = resources.files("sim").joinpath("default_world.toml").read_text(encoding="utf-8")
    if "children = 8" not in text:
        raise AssertionError("the default world no longer says `children = 8`")
    return scenario_mod.loads(text.replace("children = 8", f"children = {children}"),
                              f"<default world with {children} children>")


def measure(children: int) -> dict[str, float | int]:
    loaded = world_with(children)
    tune_for_big_runs()
    before = _rss_mib()
    start = time.perf_counter()  # wall-clock ok: benchmark
    result = world.run(loaded, seed=1)
    seconds = time.perf_counter() - start  # wall-clock ok: benchmark
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"children": children, "seconds": round(seconds, 3), "peak_mib": round(peak, 1),
            "run_mib": round(max(0.0, peak - before), 1), "records": len(result.trace),
            "violations": len(result.violations)}


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]))))
