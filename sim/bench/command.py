"""``handoff bench``: the simulator measuring itself (SPEC §5), on explore's default world.

First what a user pays for, time to find a bug (sim/bench/detect.py): ``detection`` (per built-in
mutant, the seed of plain ``explore --mutant NAME``'s first violation, the kernel ``steps`` of
every run up to and including it, and their ``cpu_seconds``), ``detection_steps_median`` and
``detection_steps_max`` (SPEC targets: at most 300 and 10,000), ``steps_per_cpu_second`` of those
runs, and ``steps_per_seed``, ``records_per_seed``, ``choices_per_seed`` and
``sql_statements_per_seed``: kernel steps, trace records, recorded choices and SQL statements per
default-world seed. Step counts are deterministic; they do not depend on the machine.

Then how small a found bug becomes (sim/bench/shrinks.py): ``shrink`` (per mutant, ``handoff
shrink`` of that first failing seed: ``records_before``, ``records_after``, their ``ratio``, the
shrinker's ``runs`` and ``cpu_seconds``) and ``shrink_within_tenth`` of ``shrink_rows``.

Every other figure is a ratio against a baseline measured in the same process, in interleaved rounds
(baseline, subject, baseline, subject, ...), reported as the median with the spread of the
rounds, because these machines are noisy and their speed drifts:

- ``kernel_message_cost_vs_trio``: seconds per message through the kernel over seconds per bare
  Trio memory-channel message (sim/bench/micro.py). SPEC target: at most 1.5.
- ``world_steps_vs_trio_messages``: kernel steps per second of the default world (actors, store,
  faults, trace and invariants included; its seeds in one Trio run, as a sweep runs them) over
  bare Trio messages per second. Target: >= 0.167.
- ``seeds_per_second_per_core``: default-world seeds per second in this one process, from the
  same rounds: information (a seed is no fixed unit of work).
- ``parallel_efficiency``: speed-up of a ``--jobs N`` sweep over a ``--jobs 1`` sweep of the same
  seeds, divided by N (N: the cores this process may use). Target: near 1.
- ``scale``: one default-world run per size, each in a fresh process (sim/bench/scale.py), in
  the big-tree shape; growth per doubling is of CPU time.
- ``formatter``: the 160,000-character multi-result formatter on inputs that make it do its
  work: all results whole, heads truncated to share the cap, and thousands of children folded
  into a summary line, with time per child as the count doubles.
- ``conform``: a small call's round trip through ``handoff conform``'s Node driver (mean of
  200, milliseconds) and the seconds of a whole conformance run (every function check, 2,000
  inputs each; 200 with ``--quick``) with the registry check's share (every scenario and 100
  default-world seeds; 20 with ``--quick``), when openclaw is installed (sim/conform).
- ``startup``: CPU seconds of a whole ``handoff --help`` process against a bare ``python -c pass``
  (SPEC target: under 0.15 s).
Wall-clock reads are the point here and never enter a simulated run.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from actors.announce import DEFAULT_CAP, ChildResult, format_results

Spread = dict[str, float]


def spread(values: Sequence[float], digits: int = 3) -> Spread:
    return {"median": round(statistics.median(values), digits),
            "min": round(min(values), digits), "max": round(max(values), digits)}


# -- the message loop and the world, interleaved -------------------------------------------------


def default_world() -> Any:
    """Explore's default world, as ``handoff explore`` loads it."""
    from sim.bench.detect import default_world as explores

    return explores()


def world_batch(seeds: Sequence[int]) -> tuple[float, int]:
    """Seconds and kernel steps of the default world over ``seeds`` (invariants included), run
    as a sweep runs them: in one Trio run (sim/world/batch.py)."""
    from sim.world import batch
    from sim.world.result import RunResult

    scenario = default_world()
    steps = 0

    def take(seed: int, result: RunResult | Exception) -> None:
        nonlocal steps
        if isinstance(result, Exception):
            raise result
        steps += next(r.data["steps"] for r in reversed(result.trace.records)
                      if r.kind == "world.end")

    start = time.perf_counter()  # wall-clock ok: benchmark
    batch.run_each(scenario, seeds, take)
    return time.perf_counter() - start, steps  # wall-clock ok: benchmark


def message_rounds(rounds: int, messages: int, seeds_per_round: int) -> dict[str, Any]:
    """Bare Trio, the kernel and the default world, one after another in each round."""
    from sim.bench.micro import kernel_messages_per_second, trio_messages_per_second
    cost, steps_ratio, per_core = [], [], []
    trio_rates, kernel_rates, step_rates = [], [], []
    kernel_ceiling, trio_ceiling = [], []
    from sim.gc_tuning import tune_for_sweeps

    world_batch(range(1_000_000, 1_000_002))  # warm-up: imports, caches
    tune_for_sweeps()  # as `explore` runs its seeds
    for r in range(rounds):
        trio_rate = trio_messages_per_second(messages // 2)
        kernel_rate = kernel_messages_per_second(messages)
        first = 1 + r * seeds_per_round
        seconds, steps = world_batch(range(first, first + seeds_per_round))
        step_rate = steps / seconds
        trio_rates.append(trio_rate)
        kernel_rates.append(kernel_rate)
        step_rates.append(step_rate)
        cost.append(trio_rate / kernel_rate)
        steps_ratio.append(step_rate / trio_rate)
        per_core.append(seeds_per_round / seconds)
        # The seeds/s a world of this many steps per seed could reach if a step cost only its
        # kernel message (or only a bare Trio message): no actor, store, trace or invariant work.
        steps_per_seed = steps / seeds_per_round
        kernel_ceiling.append(kernel_rate / steps_per_seed)
        trio_ceiling.append(trio_rate / steps_per_seed)
    return {
        "kernel_message_cost_vs_trio": spread(cost),
        "world_steps_vs_trio_messages": spread(steps_ratio),
        "seeds_per_second_per_core": spread(per_core, 1),
        "trio_messages_per_second": spread(trio_rates, 0),
        "kernel_messages_per_second": spread(kernel_rates, 0),
        "world_steps_per_second": spread(step_rates, 0),
        "kernel_only_seeds_per_second": spread(kernel_ceiling, 1),
        "trio_only_seeds_per_second": spread(trio_ceiling, 1),
    }


# -- parallel sweeps -----------------------------------------------------------------------------


def parallel_rounds(rounds: int, seeds: int, jobs: int) -> dict[str, Any]:
    """``--jobs 1`` and ``--jobs N`` sweeps of the same seeds, alternately."""
    from sim.explore import sweeps as explore

    spec = explore.Sweep(default_world(), None, None, None)
    seed_list = list(range(1, seeds + 1))
    efficiency, speedup = [], []
    for _ in range(rounds):
        serial = _timed(lambda: explore.sweep(spec, seed_list, jobs=1))
        parallel = _timed(lambda: explore.sweep(spec, seed_list, jobs=jobs))
        speedup.append(serial / parallel)
        efficiency.append(serial / parallel / jobs)
    return {"parallel_efficiency": spread(efficiency),
            "parallel": {"jobs": jobs, "seeds": seeds, "speedup": spread(speedup)}}


def _timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()  # wall-clock ok: benchmark
    work()
    return time.perf_counter() - start  # wall-clock ok: benchmark


# -- scale ---------------------------------------------------------------------------------------


def scale(sizes: Sequence[int]) -> list[dict[str, Any]]:
    """One run per size, each in a fresh interpreter (``python -m sim.bench.scale``)."""
    rows: list[dict[str, Any]] = []
    for size in sizes:
        done = subprocess.run([sys.executable, "-m", "sim.bench.scale", str(size)],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            # The model crashed at this size: a finding, reported as the row, not a traceback.
            lines = done.stderr.strip().splitlines() or ["no output"]
            rows.append({"children": size, "error": lines[-1][:300]})
            continue
        row = json.loads(done.stdout.splitlines()[-1])
        if rows and "error" not in rows[-1]:
            previous = rows[-1]
            # CPU time: the process's own work, whatever else the machine is doing.
            row["time_growth"] = round(row["cpu_seconds"] / previous["cpu_seconds"], 2)
            if previous["run_mib"] > 0:
                row["memory_growth"] = round(row["run_mib"] / previous["run_mib"], 2)
        rows.append(row)
    return rows


# -- start-up ------------------------------------------------------------------------------------


def _child_cpu(argv: Sequence[str]) -> float:
    """User plus system CPU seconds of one run of ``argv`` as a child process."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, capture_output=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def startup(rounds: int) -> dict[str, Any]:
    """``handoff --help`` against a bare ``python -c pass``, alternately, as CPU seconds of whole
    processes (the interpreter's own start-up, with this machine's site packages, is the floor)."""
    helps, bare = [], []
    for _ in range(rounds):
        bare.append(_child_cpu([sys.executable, "-c", "pass"]))
        helps.append(_child_cpu([sys.executable, "-m", "sim", "--help"]))
    return {"help_cpu_seconds": spread(helps), "python_cpu_seconds": spread(bare),
            "help_over_python": spread([h / b for h, b in zip(helps, bare, strict=True)
                                        if b > 0] or [0.0])}


# -- the formatter -------------------------------------------------------------------------------

# Escape-heavy: every tenth character or so needs escaping, so lengths take arithmetic.
_PATTERN = "result <b>&</b> line of child output, "


def make_children(count: int, text_chars: int) -> list[ChildResult]:
    """Deterministic children, handed over in reverse delivery order so sorting does work."""
    base = (_PATTERN * (text_chars // len(_PATTERN) + 1))[:text_chars]
    return [
        ChildResult(
            session_key=f"agent:main:subagent:{i:06d}",
            session_id=f"sid-{i:06d}",
            task=f"task {i}",
            status="ok" if i % 7 else "error",
            error=None if i % 7 else "tool crashed",
            text=f"{i}:" + base,  # distinct strings
            created_at=float(count - i),
            ended_at=None if i % 5 == 0 else float(count - i + 1),
        )
        for i in range(count)
    ]


def formatter_row(case: str, children: int, text_chars: int, repeats: int) -> dict[str, Any]:
    batch = make_children(children, text_chars)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()  # wall-clock ok: benchmark
        result = format_results(batch, cap=DEFAULT_CAP)
        times.append(time.perf_counter() - start)  # wall-clock ok: benchmark
        if result.length > DEFAULT_CAP:  # a broken cap would make the figure meaningless
            raise AssertionError(f"payload {result.length} exceeds cap {DEFAULT_CAP}")
    seconds = statistics.median(times)
    return {"case": case, "children": children, "text_chars": text_chars,
            "input_chars": sum(len(c.text or "") for c in batch), "output_chars": result.length,
            "truncated": sum(1 for s in result.shown if s.truncated),
            "summarized": len(result.summarized), "seconds": round(seconds, 5),
            "us_per_child": round(seconds / children * 1e6, 2)}


def formatter(quick: bool) -> list[dict[str, Any]]:
    """Whole results (escaping all of them), truncated heads sharing the cap (water level and
    binary searches), and many short results folded into a summary (sorting, the layout scan),
    the last at doubling counts: ``per_child_growth`` near 1 says linear."""
    repeats = 1 if quick else 5
    rows = [formatter_row("whole", 20, 4_000, repeats),
            formatter_row("truncated", 40 if quick else 200, 20_000, repeats)]
    counts = (500, 1_000) if quick else (1_000, 2_000, 4_000, 8_000, 16_000)
    for count in counts:
        row = formatter_row("summarized", count, 300, repeats)
        if rows[-1]["case"] == "summarized":
            row["per_child_growth"] = round(row["us_per_child"] / rows[-1]["us_per_child"], 2)
        rows.append(row)
    return rows


# -- the whole bench -----------------------------------------------------------------------------


def conform_figures(quick: bool) -> dict[str, Any]:
    """``handoff conform``'s cost (sim/conform): a small call's round trip through the Node
    driver and the whole conformance run's seconds, when the package is installed (bench never
    installs 600 MB on its own: ``handoff conform`` does)."""
    from sim.conform import install
    from sim.conform.checks import DEFAULT_INPUTS
    from sim.conform.session import conform

    if install.find_installed(install.PINNED_OPENCLAW) is None:
        return {"skipped": f"openclaw {install.PINNED_OPENCLAW} not installed (handoff conform)"}
    inputs = 200 if quick else DEFAULT_INPUTS
    seeds = range(1, (20 if quick else 100) + 1)
    scenarios = sorted(Path("scenarios").glob("*.toml")) if Path("scenarios").is_dir() else []
    report = conform(install.PINNED_OPENCLAW, inputs, scenarios=scenarios, seeds=seeds)
    registry = report.registry
    return {"openclaw": report.openclaw, "inputs_per_check": inputs,
            "checks": len(report.outcomes), "undocumented": report.undocumented,
            "round_trip_ms": round(report.round_trip_ms, 4),
            "round_trip_pings": report.ping_count, "seconds": round(report.seconds, 1),
            # The registry check's share of ``seconds``: scenarios and seeds replayed.
            "registry": None if registry is None else {
                "scenarios": registry.scenarios_replayed, "seeds": registry.seeds,
                "runs": registry.runs, "events": registry.events, "checks": registry.checks,
                "undocumented": registry.undocumented, "seconds": registry.seconds}}


def machine() -> dict[str, Any]:
    import trio

    return {"python": platform.python_version(), "trio": trio.__version__,
            "platform": platform.platform(), "cpus": os.cpu_count(),
            "usable_cpus": len(os.sched_getaffinity(0)), "load_average": os.getloadavg()}


def bench(quick: bool = False, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Every figure of ``handoff bench``; ``quick`` keeps it under a minute (five mutants)."""
    from sim.bench.detect import QUICK_MUTANTS, detection, seed_shape
    from sim.explore.sweeps import default_jobs

    say = progress or (lambda _: None)
    jobs = default_jobs()
    figures: dict[str, Any] = {"quick": quick, "machine_before": machine()}
    say("time to find a bug: plain explore --mutant NAME, each built-in mutant"
        + (f" (--quick: {len(QUICK_MUTANTS)} of them)" if quick else ""))
    figures.update(detection(QUICK_MUTANTS if quick else None, progress=say))
    from sim.bench.shrinks import QUICK_SHRINKS, shrinking

    shrunk = QUICK_SHRINKS if quick else None
    say("how small a found bug becomes: handoff shrink of each mutant's first failing seed"
        + (f" (--quick: {len(QUICK_SHRINKS)} of them)" if quick else ""))
    figures.update(shrinking(shrunk, {name: row["first_seed"]
                                      for name, row in figures["detection"].items()}, say))
    say("what a default-world seed is made of")
    figures.update(seed_shape(range(1, 11 if quick else 201)))
    say("message loops and the default world")
    figures.update(message_rounds(3 if quick else 7, 2_000 if quick else 20_000,
                                  5 if quick else 150))
    say(f"parallel sweeps, --jobs 1 against --jobs {jobs}")
    figures.update(parallel_rounds(1 if quick else 2, 60 if quick else 2_000, jobs))
    say("scale, one fresh process per size")
    figures["scale"] = scale((10, 20, 40) if quick else (1_000, 2_000, 4_000, 8_000, 16_000))
    say("formatter")
    figures["formatter"] = formatter(quick)
    say("peak memory against input size, one fresh process per input")
    from sim.bench.inputs import input_memory

    figures["inputs"] = input_memory((10_000, 100_000) if quick else (100_000, 1_000_000))
    say("conform: the Node driver's round trip and a conformance run")
    figures["conform"] = conform_figures(quick)
    say("start-up: handoff --help against python -c pass")
    figures["startup"] = startup(3 if quick else 9)
    figures["load_average_after"] = os.getloadavg()
    return figures
