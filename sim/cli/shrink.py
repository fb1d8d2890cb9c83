"""``handoff shrink``, and the parts of ``handoff explore`` built on it: ``--save-failures``,
a branching sweep's check (``--from/--at``; sim/cli/schedules.py reads the schedule) and the
sweep summary of ``--json``.

A shrunk failure is saved as an ordinary scenario (docs/scenarios.md) whose ``[replay] choices``
replay the small run; ``handoff replay --scenario FILE`` shows it failing, and ``handoff run FILE``
checks it against its expectations (see sim/explore/shrinking/shrink.py for what those are).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from sim.choices import STRATEGIES, ScheduleDiverged
from sim.cli.args import check_mutants as _check_mutants
from sim.cli.args import parse_faults as _parse_faults
from sim.cli.files.outfiles import check_outputs
from sim.cli.files.outfiles import write_output as _write
from sim.cli.schedules import branch_schedule as branch_schedule
from sim.cli.schedules import scenario_for
from sim.cli.style import bad_input as _bad_input
from sim.explore import sweeps as explore_mod
from sim.explore.shrinking.shrink import (
    DEFAULT_MAX_RUNS,
    NothingToShrink,
    NotReproduced,
    Shrunk,
    shrink,
)
from sim.explore.tally import Tally
from sim.html.report import failure_page, timeline_path
from sim.scenario.write import dumps
from sim.textout import Streamed


def _source(world_path: str | None, branch_from: str | None, branch_at: int | None) -> str:
    """Where a shrunk failure came from, for its description."""
    world = world_path or "the default world"
    if branch_from is None:
        return world
    return f"{world}, as a future of {branch_from} from step {branch_at}"


def _summary(shrunk: Shrunk, seed: int) -> dict[str, Any]:
    return {"seed": seed, "invariant": shrunk.invariant, "requirement": shrunk.requirement,
            "original_records": shrunk.original_records, "records": shrunk.records,
            "original_choices": shrunk.original_choices, "choices": shrunk.choices,
            "runs": shrunk.runs, "crashes": shrunk.crashes, "first_crash": shrunk.first_crash,
            # The moments the saved file says its run reaches ([expect] reaches).
            "reaches": list(shrunk.scenario.expect.reaches)}


def _describe(summary: dict[str, Any]) -> str:
    text = (f"seed {summary['seed']}: {summary['invariant']}: {summary['original_records']} -> "
            f"{summary['records']} trace records, {summary['original_choices']} -> "
            f"{summary['choices']} choices ({summary['runs']} shrinking runs)")
    if summary["crashes"]:
        text += (f"; {summary['crashes']} candidate run(s) crashed the model, first: "
                 f"{summary['first_crash']}")
    return text


@click.command("shrink")
@click.option("--seed", type=click.IntRange(min=0), required=True, help="The failing seed.")
@click.option("--scenario", "world_path", default=None,
              help="World the seed ran in (default: the built-in default world).")
@click.option("--mutant", "mutants", multiple=True, help="Switch on a known-bug variant.")
@click.option("--faults", "faults", default=None,
              help="Comma-separated fault kinds, 'all', or 'none'.")
@click.option("--strategy", type=click.Choice(STRATEGIES), default=None,
              help="How ties between ready actors are ordered: random (uniformly), pct "
              "(random priorities with three change points) or fifo (a fixed order); "
              "default: the world's.")
@click.option("--from", "branch_from", default=None, metavar="SCHEDULE",
              help="The seed is a future of this schedule (as explore --from).")
@click.option("--at", "branch_at", type=click.IntRange(min=0), default=None, metavar="STEP",
              help="With --from: how many of the schedule's choices the future keeps.")
@click.option("--invariant", default=None,
              help="The invariant to keep failing (default: the first one the seed violates).")
@click.option("--max-runs", type=click.IntRange(min=1), default=DEFAULT_MAX_RUNS,
              show_default=True, help="Budget: how many runs shrinking may spend.")
@click.option("--save", "save_path", default=None,
              help="Write the shrunk scenario here (default: print it on stdout).")
@click.option("--force", is_flag=True, help="Replace an existing --save file.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def shrink_command(seed: int, world_path: str | None, mutants: tuple[str, ...],
                   faults: str | None, strategy: str | None, branch_from: str | None,
                   branch_at: int | None, invariant: str | None, max_runs: int,
                   save_path: str | None, as_json: bool, force: bool = False) -> None:
    """Shrink a failing seed to a small run that fails the same invariant, saved as a scenario.

    Exit status 1 when the seed fails (and was shrunk), 0 when it violates nothing.
    """
    from sim.invariants import BY_NAME

    mutant_names = _check_mutants(mutants)
    fault_kinds = _parse_faults(faults)
    check_outputs((("--save", save_path),),
                  (("--scenario", world_path), ("--from", branch_from)), force)
    if invariant is not None and invariant not in BY_NAME:
        _bad_input(f"--invariant: unknown invariant {invariant!r} (known: {', '.join(BY_NAME)})")
    branch = branch_schedule(branch_from, branch_at, mutants, faults, strategy)
    scenario = scenario_for(branch, branch_from, world_path)
    try:
        shrunk = shrink(scenario, seed=seed, strategy=strategy, mutants=mutant_names or None,
                        fault_kinds=fault_kinds, invariant=invariant, max_runs=max_runs,
                        source=_source(world_path, branch_from, branch_at), replay=branch,
                        replay_steps=branch_at)
    except ScheduleDiverged as err:
        click.echo(f"handoff: branch from {branch_from}: {err}", err=True)
        raise SystemExit(1) from None
    except NothingToShrink as err:
        click.echo(f"handoff: {err}: nothing to shrink", err=True)
        if as_json:
            click.echo(json.dumps({"seed": seed, "invariant": None, "saved": None}, indent=2))
        raise SystemExit(0) from None
    except NotReproduced as err:
        click.echo(f"handoff: {err} (flaky: please report it)", err=True)
        raise SystemExit(1) from None
    text = dumps(shrunk.scenario)
    summary = _summary(shrunk, seed)
    summary["saved"] = save_path
    if save_path is not None:
        _write(save_path, "--save", text)
        summary["repro"] = shlex.join(["handoff", "replay", "--scenario", save_path,
                                       "--format", "text"])
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    elif save_path is None:
        click.echo(text, nl=False)
    click.echo(_describe(summary), err=True)
    if save_path is not None:
        click.echo(f"saved {save_path}; reproduce: {summary['repro']}", err=True)
    raise SystemExit(1)


def failure_file(seed: int, invariant: str, mutants: Sequence[str],
                 branch_at: int | None) -> str:
    """A saved failure's file name: the same (seed, invariant, configuration), the same name."""
    parts = [*mutants, *([f"at-{branch_at}"] if branch_at is not None else []), f"seed-{seed}",
             invariant]
    return "-".join(parts) + ".toml"


def save_failures(spec: explore_mod.Sweep, outcomes: Sequence[explore_mod.SeedOutcome],
                  folder: str | None, max_runs: int | None, world_path: str | None,
                  branch_from: str | None, jobs: int,
                  force: bool = False) -> list[dict[str, Any]] | None:
    """Shrink each failing (seed, invariant) of a sweep and save it in ``folder``, its HTML
    timeline beside it."""
    if folder is None:
        if max_runs is not None:
            _bad_input("--max-runs needs --save-failures DIR")
        return None
    failures = [explore_mod.Failure(o.seed, name) for o in outcomes
                for name in dict.fromkeys(v.invariant for v in o.violations)]
    if not failures:
        return []
    mutants = spec.branch.mutants if spec.branch is not None else spec.mutants or ()
    paths = [str(Path(folder) / failure_file(failure.seed, failure.invariant, mutants,
                                             spec.branch_at)) for failure in failures]
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _bad_input(f"--save-failures: {folder}: cannot create: {exc.strerror or exc}")
    # Before shrinking: a file there already (a hand-edited scenario) is kept unless --force.
    check_outputs([("--save-failures", p) for path in paths for p in (path, timeline_path(path))],
                  (("--scenario", world_path), ("--from", branch_from)), force)
    try:
        source = _source(world_path, branch_from, spec.branch_at)
        shrunk_all = explore_mod.shrink_failures(spec, failures, max_runs or DEFAULT_MAX_RUNS,
                                                 source, jobs)
    except (NothingToShrink, NotReproduced) as err:  # a seed that fails only sometimes
        click.echo(f"handoff: --save-failures: {err} (flaky: please report it)", err=True)
        raise SystemExit(1) from None
    saved = []
    for failure, shrunk, path in zip(failures, shrunk_all, paths, strict=True):
        _write(path, "--save-failures", dumps(shrunk.scenario))
        # Its timeline beside it: the shrunk run, its violations linked to their records.
        _write(timeline_path(path), "--save-failures", failure_page(shrunk.scenario, path))
        saved.append({**_summary(shrunk, failure.seed), "path": path,
                      "timeline": timeline_path(path)})
    return saved


def print_saved(saved: Sequence[dict[str, Any]]) -> None:
    for entry in saved:
        click.echo(f"saved {entry['path']}: {_describe(entry)}")


def check_branch(spec: explore_mod.Sweep, seed: int, path: str | None) -> None:
    """Every future makes the same first choices, so one run shows whether the world fits."""
    try:
        explore_mod.run_seed(spec, seed)
    except ScheduleDiverged as err:
        click.echo(f"handoff: branch from {path}: {err}", err=True)
        raise SystemExit(1) from None


def sweep_summary(tally: Tally, branch_from: str | None, branch_at: int | None,
                  saved: list[dict[str, Any]] | None) -> dict[str, Any]:
    """explore --json keys beyond the sweep itself: digests, counts per invariant, branch
    (``seed_digests`` written a seed at a time: there may be millions)."""
    from sim.invariants import BY_NAME

    counts = {name: 0 for name in BY_NAME}
    counts.update(tally.invariants)
    doc: dict[str, Any] = {
        "digest": tally.digest(),
        "seed_digests": Streamed(tally.seed_digests),
        "invariants": {name: {"seeds": n} for name, n in counts.items()},
    }
    if branch_from is not None:
        doc["branch"] = {"from": branch_from, "at": branch_at}
    if saved is not None:
        doc["saved"] = saved
    return doc
