"""The ``handoff`` command (also ``python -m sim``).

Exit status: 0 nothing found / all passed; 1 a violation was found or a scenario failed; 2 bad
input, with a one-line message and never a traceback; 3 a Dask sweep cut short by its cluster
(the partial summary printed); 130 interrupted (Ctrl-C; a sweep prints its partial summary).
``--json`` prints one JSON document on stdout; progress and summaries go to stderr.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sim.choice_names import MAX_SEED, STRATEGIES
from sim.cli.args import check_mutants as _check_mutants
from sim.cli.args import default_world_path, repro_command
from sim.cli.args import load_world as _load_world
from sim.cli.args import parse_faults as _parse_faults
from sim.cli.files.outfiles import check_folder, check_outputs, write_output
from sim.cli.lazy import LazyGroup
from sim.cli.style import CUT_SHORT, INTERRUPTED, console
from sim.cli.style import bad_input as _bad_input
from sim.textout import counted, dump_json

# The world, the model and Trio are imported inside the commands that run them, and commands in
# modules of their own are loaded when used, so `handoff --help` starts fast (SPEC §5: under
# 0.15 s; tests/world/test_startup.py).
if TYPE_CHECKING:
    from sim.explore import sweeps as explore_mod
    from sim.explore.tally import Tally

__all__ = ["default_world_path", "main", "repro_command"]

# Flag ranges (README): a sweep holds at most this many seeds; seeds are 0..MAX_SEED.
MAX_SWEEP = 10_000_000
MAX_JOBS = 1_024


# Commands in modules of their own: where each lives, and its help `handoff --help` shows.
_LAZY = {
    "replay": ("sim.cli.replay:replay",
               "Re-run one seed (or a recorded schedule, or a branch of one) and write its trace."),
    "output": ("sim.cli.output:output_command",
               "Read a child's session log (V1 or V2) and print the output it selects."),
    "announce": ("sim.cli.announce:announce_command",
                 "Render the payload a requester reads for these child results."),
    "conform": ("sim.cli.conform:conform_command",
                "Check the model against OpenClaw's released npm package, installed into a "
                "cache."),
    "shrink": ("sim.cli.shrink:shrink_command",
               "Shrink a failing seed to a small run that fails the same invariant, saved as a "
               "scenario."),
}


@click.group(cls=LazyGroup, lazy=_LAZY, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="handoff-sim", prog_name="handoff")
def main() -> None:
    """handoff: a deterministic simulator of sub-agent completion delivery."""


# -- explore -------------------------------------------------------------------------------------


@main.command()
@click.option("--seeds", "n_seeds", type=click.IntRange(1, MAX_SWEEP), default=None,
              help="Sweep seeds 1..N (default 200).")
@click.option("--seed", "one_seed", type=click.IntRange(0, MAX_SEED), default=None,
              help="Run this one seed.")
@click.option("--start", type=click.IntRange(0, MAX_SEED), default=1, show_default=True,
              help="First seed of the sweep.")
@click.option("--jobs", type=click.IntRange(1, MAX_JOBS), default=None,
              help="Worker processes (default: all usable cores; more only with --force).")
@click.option("--force", is_flag=True,
              help="Allow --jobs above the usable cores (each worker is a process of its own), "
                   "and replace existing --report and --save-failures files.")
@click.option("--mutant", "mutants", multiple=True, help="Switch on a known-bug variant.")
@click.option("--faults", "faults", default=None,
              help="Comma-separated fault kinds to allow (default: the world's), 'all', or "
              "'none'.")
@click.option("--strategy", type=click.Choice(STRATEGIES), default=None,
              help="How ties between ready actors are ordered: random (uniformly), pct "
              "(random priorities with three change points) or fifo (a fixed order); "
              "default: the world's.")
@click.option("--scenario", "world_path", default=None,
              help="World to explore (default: the built-in default world).")
@click.option("--check-determinism", is_flag=True,
              help="Run each seed twice and report the first diverging trace record.")
@click.option("--from", "branch_from", default=None, metavar="SCHEDULE",
              help="Branch from a recorded schedule: every seed keeps its first --at choices.")
@click.option("--at", "branch_at", type=click.IntRange(min=0), default=None, metavar="STEP",
              help="With --from: how many of the schedule's choices every future keeps.")
@click.option("--save-failures", "save_dir", default=None, metavar="DIR",
              help="Shrink each failing (seed, invariant) and save it as a scenario in DIR.")
@click.option("--max-runs", type=click.IntRange(min=1), default=None,
              help="With --save-failures: shrinking budget per failure, in runs (default 2000).")
@click.option("--report", "report_path", default=None, metavar="FILE.html",
              help="Write an HTML sweep report: violations by invariant and fault kind, "
                   "detection figures, probe hits, each failing seed's repro.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.option("--probes", "probe_table", is_flag=True,
              help="Print how many seeds hit each code probe (default: one line of counts).")
@click.option("--list-mutants", is_flag=True,
              help="List the known-bug variants and the requirement each one breaks.")
@click.option("--guided", is_flag=True,
              help="Probe-guided: part of each round of seeds branches from moments that "
                   "reached rare probes (findings repro with --moment).")
@click.option("--dask", "dask_address", default=None, metavar="ADDRESS",
              help="Run the seed batches on this Dask scheduler (needs handoff-sim[dask]); "
                   "its workers' threads take --jobs' place.")
@click.option("--dask-timeout", type=click.FloatRange(0.5, 3600), default=10.0,
              show_default=True, metavar="SECONDS",
              help="With --dask: how long to wait for the scheduler, and for a worker when the "
                   "cluster has none, before giving up (exit 3).")
def explore(n_seeds: int | None, one_seed: int | None, start: int, jobs: int | None,
            force: bool, mutants: tuple[str, ...], faults: str | None, strategy: str | None,
            world_path: str | None, check_determinism: bool, branch_from: str | None,
            branch_at: int | None, save_dir: str | None, max_runs: int | None,
            as_json: bool, probe_table: bool, list_mutants: bool,
            dask_address: str | None = None, report_path: str | None = None,
            guided: bool = False, dask_timeout: float = 10.0) -> None:
    """Sweep seeds over a world and check every run against the invariants."""
    from sim.cli.probes import print_mutants, print_probes, print_summary

    if list_mutants:
        print_mutants(as_json)
        return
    if n_seeds is not None and one_seed is not None:
        _bad_input("--seeds and --seed cannot be used together")
    if guided and (branch_from is not None or dask_address is not None or check_determinism
                   or save_dir is not None):
        _bad_input("--guided cannot be used with --from, --dask, --check-determinism or "
                   "--save-failures")
    mutant_names = _check_mutants(mutants)
    fault_kinds = _parse_faults(faults)
    jobs = _check_jobs(jobs, force, dask_address)
    if dask_address is not None and not dask_address.strip():
        _bad_input("--dask: is empty (give the scheduler's address, e.g. tcp://HOST:8786)")
    if save_dir is not None:
        check_folder("--save-failures", save_dir)
    check_outputs((("--report", report_path),),
                  (("--scenario", world_path), ("--from", branch_from)), force)
    scenario = _load_world(world_path)
    count = n_seeds or 200
    if one_seed is None and start + count - 1 > MAX_SEED:
        _bad_input(f"--start: the sweep would pass the largest seed, {MAX_SEED}")
    # A range, not a list: a sweep's seeds are never all built at once.
    seeds = range(one_seed, one_seed + 1) if one_seed is not None else range(start, start + count)
    from sim.cli.shrink import branch_schedule, check_branch, save_failures, sweep_summary
    from sim.explore import sweeps as explore_mod

    branch = branch_schedule(branch_from, branch_at, mutants, faults, strategy)
    if branch is not None:  # a branch runs in the world its schedule was recorded in
        from sim.cli.replay import scenario_for

        scenario = scenario_for(branch, branch_from, world_path)
    spec = explore_mod.Sweep(scenario, strategy, mutant_names or None, fault_kinds,
                             digests=check_determinism, branch=branch, branch_at=branch_at)
    if branch is not None:
        check_branch(spec, seeds[0], branch_from)

    from sim.explore.tally import Tally

    started = time.perf_counter()  # wall-clock ok: measures the sweep, never enters a run
    tally = Tally(seeds, trace_digests=check_determinism)
    workers = {"jobs": jobs}
    with _progress(len(seeds), enabled=sys.stderr.isatty()) as advance:
        status = _run(spec, tally, jobs, advance, guided, dask_address, dask_timeout, workers)
    elapsed = time.perf_counter() - started  # wall-clock ok
    jobs = workers["jobs"]
    stopped = tally.interrupted
    if stopped:  # Ctrl-C or a lost cluster: what was done so far, nothing more run
        click.echo(f"handoff: {status} after {tally.done:,} of {len(seeds):,} seeds; the "
                   "summary covers those", err=True)

    divergences = []
    for seed, digest in (tally.trace_digests or ()) if not stopped else ():
        if explore_mod.run_seed(spec, seed).digest != digest:
            divergences.append(_divergence(spec, seed))

    violations = []
    for outcome in tally.failing:
        for v in outcome.violations:
            violations.append({
                "seed": outcome.seed, "invariant": v.invariant, "requirement": v.requirement,
                "message": v.message,
                "repro": repro_command(outcome.seed, world_path, mutant_names, fault_kinds,
                                       strategy, branch_from, branch_at,
                                       tally.chains.get(outcome.seed))})
    rate = tally.done / elapsed if elapsed > 0 else 0.0
    saved = None if stopped else save_failures(spec, tally.failing, save_dir, max_runs,
                                               world_path, branch_from, jobs, force)
    probes = tally.probes
    never_hit = [name for name, n in probes.items() if n == 0]
    if report_path is not None and not stopped:
        from sim.html.report import original_pages, report_page

        title = f"handoff explore: {world_path or 'the default world'}, seeds {seeds[0]}.." \
                f"{seeds[-1]}" + "".join(f", --mutant {m}" for m in mutant_names)
        write_output(report_path, "--report", report_page(
            title=title, spec=spec, outcomes=tally.failing, seeds=tally.done,
            violations=violations, probes=probes, digest=tally.digest(), saved=saved,
            report_path=report_path, fault_seeds=tally.fault_seeds,
            originals=original_pages(spec, violations, report_path)))
    if as_json:
        doc: dict[str, Any] = {
            "seeds": tally.done, "violations": violations, "seeds_per_second": round(rate, 1),
            "jobs": jobs, "failing_seeds": sorted({v["seed"] for v in violations}),
            "divergences": divergences, "mutants": list(mutant_names),
            **({"checked_twice": tally.done} if check_determinism and not stopped else {}),
            "probes": {name: {"seeds": n} for name, n in probes.items()},
            "never_hit": never_hit,
            **({"guided": {"branched": tally.branched}} if guided else {}),
            **({"interrupted": {"seeds_done": tally.done, "of": len(seeds)}} if stopped
               else {}),
        }
        doc.update(sweep_summary(tally, branch_from, branch_at, saved))
        dump_json(doc, lambda text: click.echo(text, nl=False))
        click.echo()
    else:
        print_summary(tally.done, violations, rate, jobs, divergences,
                               checked_twice=check_determinism and not stopped,
                               probes=lambda: print_probes(probes, never_hit, probe_table))
        if saved is not None:
            from sim.cli.shrink import print_saved

            print_saved(saved)
    if stopped:
        raise SystemExit(INTERRUPTED if status == "interrupted" else CUT_SHORT)
    raise SystemExit(1 if violations or divergences else 0)


def _check_jobs(jobs: int | None, force: bool, dask_address: str | None) -> int:
    """Worker processes: at most the usable cores unless forced (a worker beyond them only
    waits for a core, holding its memory)."""
    from sim.explore.sweeps import default_jobs

    usable = default_jobs()
    if jobs is None:
        return usable
    if dask_address is not None:
        _bad_input("--jobs cannot be used with --dask (the cluster's worker threads run the "
                   "batches)")
    if jobs > usable and not force:
        _bad_input(f"--jobs: {jobs} is more than the {usable} usable core(s); "
                   "add --force to start that many workers anyway")
    return jobs


def _run(spec: explore_mod.Sweep, tally: Tally, jobs: int, progress: Callable[[int], None],
         guided: bool, dask_address: str | None, dask_timeout: float,
         workers: dict[str, int]) -> str:
    """Run the sweep into ``tally``, a part at a time; Ctrl-C (or a lost Dask cluster) stops
    it with what was done. Returns why it stopped early ("" if it did not)."""
    from sim.explore.pool import DaskLost, DaskMissing, DaskUnreachable, stop_on_interrupt

    def seen(threads: int) -> None:
        workers["jobs"] = threads

    try:
        with stop_on_interrupt():
            _parts(spec, tally, jobs, progress, guided, dask_address, dask_timeout, seen)
        return "interrupted" if tally.interrupted else ""
    except DaskMissing as err:
        _bad_input(f"--dask: {err}")
    except DaskUnreachable as err:
        _bad_input(f"--dask: {dask_address}: {err}")
    except DaskLost as err:
        return f"--dask: {dask_address}: {err}"
    except KeyboardInterrupt:  # a second Ctrl-C: the tally holds every part done
        return "interrupted"


def _parts(spec: explore_mod.Sweep, tally: Tally, jobs: int, progress: Callable[[int], None],
           guided: bool, dask_address: str | None, dask_timeout: float,
           seen: Callable[[int], None]) -> None:
    from sim.explore import sweeps as explore_mod

    if guided:
        from sim.explore import guided as explore_guided

        for done in explore_guided.rounds(spec, tally.seeds, jobs):
            for g in done:
                tally.add(g.outcome, explore_guided.format_chain(g.chain) or None)
            progress(len(done))
        return
    for part in explore_mod.parts(spec, tally.seeds, jobs, dask_address, dask_timeout, seen,
                                  progress):
        tally.add_all(part)


def _divergence(spec: explore_mod.Sweep, seed: int) -> dict[str, Any]:
    from sim.trace import first_difference
    from sim.world import core as world

    a = world.run(spec.scenario, seed=seed, strategy=spec.strategy, mutants=spec.mutants,
                  fault_kinds=spec.fault_kinds)
    b = world.run(spec.scenario, seed=seed, strategy=spec.strategy, mutants=spec.mutants,
                  fault_kinds=spec.fault_kinds)
    index = first_difference(a.trace, b.trace)
    first = a.trace[index].jsonl() if index is not None and index < len(a.trace) else None
    second = b.trace[index].jsonl() if index is not None and index < len(b.trace) else None
    return {"seed": seed, "record": index, "first": first, "second": second}


@contextmanager
def _progress(total: int, enabled: bool) -> Iterator[Callable[[int], None]]:
    if not enabled:
        yield lambda n: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    with Progress("[progress.description]{task.description}", BarColumn(),
                  MofNCompleteColumn(), TimeRemainingColumn(), transient=True,
                  console=_stderr_console()) as bar:
        task = bar.add_task("exploring", total=total)
        yield lambda n: bar.advance(task, n)


def _stderr_console() -> Any:
    return console(stderr=True)


# -- run -----------------------------------------------------------------------------------------


def _scenario_files(paths: Sequence[str]) -> list[str]:
    """The scenario files named, a folder's ``*.toml`` below it included; a path or a subfolder
    that cannot be read is one line and exit 2 (never skipped in silence)."""
    files: list[str] = []
    for path in paths:
        try:
            status = os.stat(path)
        except FileNotFoundError:
            _bad_input(f"{path}: no such file or folder")
        except OSError as err:
            _bad_input(f"{path}: cannot read: {err.strerror or err}")
        if not stat.S_ISDIR(status.st_mode):
            files.append(path)
            continue

        def unreadable(err: OSError) -> None:
            _bad_input(f"{err.filename}: cannot read: {err.strerror or err}")

        found = []
        for folder, folders, names in os.walk(path, onerror=unreadable):
            # A folder named *.toml is listed too, to be refused as not a scenario file.
            found += [os.path.join(folder, name) for name in (*folders, *names)
                      if name.endswith(".toml")]
        files += sorted(str(Path(f)) for f in found)
    if not files:
        _bad_input(f"no scenario files (*.toml) in {', '.join(paths)}")
    return files


@main.command("run")
@click.argument("paths", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def run_command(paths: tuple[str, ...], as_json: bool) -> None:
    """Run scenario files (or every *.toml under folders) and check their expectations."""
    from sim import scenario as scenario_mod
    from sim.expect import failures, unreached
    from sim.explore import sweeps as explore_mod
    from sim.world import core as world

    files = _scenario_files(paths)
    # Load everything first: one bad file means nothing runs.
    scenarios = [scenario_mod.load(f) for f in files]
    rows: list[dict[str, Any]] = []
    for scenario in scenarios:
        try:
            result = world.run(scenario)
        except Exception as exc:  # a model bug fails this scenario, not the whole suite
            rows.append({"path": scenario.path, "name": scenario.name, "passed": False,
                         "covers": list(scenario.covers),
                         "failure": f"{explore_mod.CRASH[0]}: {explore_mod.crash_message(exc)}",
                         "seed": scenario.seed, "records": None, "unreached": None})
            continue
        problems = failures(result)
        rows.append({"path": scenario.path, "name": scenario.name, "passed": not problems,
                     "covers": list(scenario.covers),
                     "failure": "; ".join(counted(problems)) if problems else None,
                     "seed": result.seed, "records": len(result.trace),
                     # [expect] reaches the run missed: a stale saved run (sim/expect.py)
                     "unreached": unreached(result)})
    passed = sum(1 for r in rows if r["passed"])
    failed = len(rows) - passed
    if as_json:
        covered = sorted({c for r in rows if r["passed"] for c in r["covers"]})
        click.echo(json.dumps({"passed": passed, "failed": failed, "scenarios": rows,
                               "covered": covered}, indent=2))
    else:
        from rich.table import Table

        from sim.textout import fit

        table = Table(show_lines=False)
        for column in ("scenario", "result", "covers", "why"):  # a file name is never split
            table.add_column(column, no_wrap=column in ("scenario", "result"))
        for r in rows:
            table.add_row(r["path"], "pass" if r["passed"] else "FAIL", ", ".join(r["covers"]),
                          r["failure"] or "")
        out = console()
        dropped = fit(table, out.width, drop=("covers", "why"))
        out.print(table)
        for r in rows if "why" in dropped else ():  # each failure's reason, below the table
            if not r["passed"]:
                out.print(f"FAIL {r['path']}: {r['failure']}", markup=False)
        if dropped:
            out.print(f"({' and '.join(dropped)} left out to fit {out.width} columns; "
                      "--json has everything)")
        out.print(f"{passed} passed, {failed} failed")
    raise SystemExit(1 if failed else 0)


@main.command("bench")
@click.option("--quick", is_flag=True,
              help="Five mutants, small sizes and few rounds: under a minute.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def bench_command(quick: bool, as_json: bool) -> None:
    """Measure the simulator itself: ratios against baselines measured in the same process."""
    from sim.bench.command import bench
    from sim.bench.report import print_figures

    figures = bench(quick=quick, progress=lambda what: click.echo(f"bench: {what}", err=True))
    if as_json:
        click.echo(json.dumps(figures, indent=2))
    else:
        print_figures(figures)
