"""One scale point of ``handoff bench``, run as ``python -m sim.bench.scale CHILDREN [--flat]`` in
a fresh process so its peak memory is its own; prints one JSON line.

The default world, seed 1, with ``CHILDREN`` children instead of eight, drawn as big trees
across many requester sessions (the workload knob, sim/world/draws/trees.py): half the children are
spawned by an earlier child, trees up to depth 5 with up to 20 children each (the ranges of
``maxSpawnDepth`` and ``maxChildrenPerAgent``), top-level children spread over one session per
hundred children (at most 1,000). ``--flat`` keeps the default world's own shape. Past the
scenario limit of 10,000 children the world is built in code, not loaded.

Figures: ``seconds`` (wall) and ``cpu_seconds`` (this process's user+system time) of the run
with its invariants, the process's peak resident memory (``peak_mib``) and what the run added
(``run_mib``, peak minus what the process held after loading the world), trace records and
kernel steps.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from importlib import resources

import attrs

from actors.nesting.spawn_limits import NO_LIMITS
from actors.records.keys import is_subagent
from sim import scenario as scenario_mod
from sim.gc_tuning import tune_for_big_runs
from sim.scenario.model import MAX_SESSIONS, MAX_TREE_DEPTH, MAX_TREE_FAN_OUT
from sim.world import core as world

TREE_SHARE = 0.5
CHILDREN_PER_SESSION = 100


def _rss_mib() -> float:
    import os

    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def world_with(children: int, *, trees: bool = False) -> scenario_mod.Scenario:
    """The default world with ``children`` children; with ``trees``, in the big-tree shape.
    Without spawn limits (docs/nesting.md): under the default world's, a big workload would be
    refused past ten active children per session and queue on an eight-slot lane."""
    text = resources.files("sim").joinpath("default_world.toml").read_text(encoding="utf-8")
    if "children = 8" not in text:
        raise AssertionError("the default world no longer says `children = 8`")
    loaded = scenario_mod.loads(text, f"<default world with {children} children>")
    assert loaded.workload is not None
    # Every feature on, every child drawn: a scale point measures the whole world's growth, not
    # one swarm draw (sim/world/draws/features.py).
    workload = attrs.evolve(loaded.workload, children=children, swarm=False)
    if trees:
        workload = attrs.evolve(
            workload, tree_share=TREE_SHARE, tree_depth=MAX_TREE_DEPTH,
            tree_fan_out=MAX_TREE_FAN_OUT,
            sessions=max(1, min(MAX_SESSIONS, children // CHILDREN_PER_SESSION)))
    return attrs.evolve(loaded, workload=workload, limits=NO_LIMITS, draw_limits=False)


def measure(children: int, *, trees: bool = True) -> dict[str, float | int | str]:
    loaded = world_with(children, trees=trees)
    tune_for_big_runs()
    before = _rss_mib()
    start = time.perf_counter()  # wall-clock ok: benchmark
    cpu_start = time.process_time()
    result = world.run(loaded, seed=1)
    cpu = time.process_time() - cpu_start
    seconds = time.perf_counter() - start  # wall-clock ok: benchmark
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    nested = sum(1 for r in result.trace if r.kind == "world.spawn"
                 and is_subagent(r.data["requester"]))
    return {"children": children, "shape": "trees" if trees else "flat",
            "seconds": round(seconds, 3), "cpu_seconds": round(cpu, 3),
            "peak_mib": round(peak, 1), "run_mib": round(max(0.0, peak - before), 1),
            "records": len(result.trace), "nested_spawns": nested,
            "end": result.end_reason, "violations": len(result.violations)}


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]), trees="--flat" not in sys.argv[2:])))
