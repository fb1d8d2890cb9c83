"""``handoff conform``: the model checked against OpenClaw's released package (SPEC §7).

Installs Node 24 and the pinned ``openclaw`` into a cache folder on first use (progress on
stderr), then runs each function check on generated inputs and prints one row per check: its
inputs, its differences, and how many of those no row of the table of deliberate differences
explains. Then the registry check: every scenario in ``scenarios/`` and ``--seeds`` default-world
seeds run by the model and replayed on OpenClaw's registry (``--scenario``/``--seed`` pick
some). Exit status: 0 when every check ran with no undocumented difference; 1 otherwise; 2
when the install fails (a registry that cannot be reached, one line).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from sim.cli.style import HandoffCommand, bad_input, console
from sim.conform import install
from sim.conform.checks import DEFAULT_INPUTS
from sim.conform.functions import CHECKS
from sim.conform.session import REGISTRY, Report, conform
from sim.textout import echo


def _table(report: Report) -> None:
    from rich.table import Table

    if not report.outcomes:
        return
    table = Table(title=f"openclaw {report.openclaw} (node {report.node})")
    for column in ("check", "inputs", "differences", "undocumented", "documented as"):
        table.add_column(column, justify="right" if column in ("inputs", "differences",
                                                                  "undocumented") else "left")
    for outcome in report.outcomes:
        if outcome.skipped is not None:
            table.add_row(outcome.check, "-", "-", "-", f"not run: {outcome.skipped}")
            continue
        documented = ", ".join(f"{key} ({count})" for key, count in outcome.by_difference.items())
        table.add_row(outcome.check, str(outcome.inputs), str(outcome.differences),
                      str(outcome.undocumented), documented)
    console().print(table)


def _examples(report: Report) -> None:
    for outcome in report.outcomes:
        if outcome.example is not None:
            echo(f"{outcome.check}: undocumented difference, minimal example:")
            for key, value in outcome.example.items():
                echo(f"  {key}: {value}")


def _summary(report: Report) -> None:
    _examples(report)
    if report.registry is not None:
        _registry(report)
    echo(f"{report.undocumented} undocumented differences; a small call's round trip through "
         f"the driver {report.round_trip_ms:.3f} ms (mean of {report.ping_count}); "
         f"{report.round_trips} requests in {report.seconds:.1f} s")


def _registry(report: Report) -> None:
    summary = report.registry
    assert summary is not None
    echo(f"registry: {summary.scenarios_replayed} of {summary.scenarios} scenarios and "
         f"{summary.seeds} default-world seeds replayed on openclaw's registry: {summary.runs} "
         f"runs, {summary.events} events, {summary.checks} rows compared, "
         f"{summary.undocumented} undocumented divergences ({summary.seconds:.1f} s)")
    for row, runs in summary.documented.items():
        echo(f"  documented: {row} ({runs} runs)")
    for why, runs in summary.runs_left_out.items():
        echo(f"  runs not replayed: {why} ({runs})")
    for path, why in summary.not_translated.items():
        echo(f"  scenario not replayed: {path}: {why}")
    if summary.first is not None:
        echo(f"registry: first undocumented divergence, {summary.first['world']}: "
             f"{summary.first['divergence']}")
        echo(f"  repro: {summary.first['repro']}")


def _scenarios(chosen: tuple[str, ...]) -> list[Path]:
    if chosen:
        return [Path(name) for name in chosen]
    folder = Path("scenarios")
    return sorted(folder.glob("*.toml")) if folder.is_dir() else []


@click.command("conform", cls=HandoffCommand)
@click.option("--openclaw", "version", default=install.PINNED_OPENCLAW, show_default=True,
              help="The openclaw release to check against (installed into the cache).")
@click.option("--inputs", "count", type=click.IntRange(1, 1_000_000), default=DEFAULT_INPUTS,
              show_default=True, help="Generated inputs per function check.")
@click.option("--check", "only", multiple=True,
              type=click.Choice([c.name for c in CHECKS] + [REGISTRY]),
              help="Run only this check (repeatable).")
@click.option("--seeds", "seed_count", type=click.IntRange(0, 1_000_000), default=500,
              show_default=True, help="Default-world seeds (1..N) the registry check replays.")
@click.option("--seed", "seeds", multiple=True, type=click.IntRange(0),
              help="Replay only this default-world seed (repeatable; no scenario unless named).")
@click.option("--scenario", "scenario_files", multiple=True,
              type=click.Path(exists=True, dir_okay=False),
              help="Replay only this scenario (repeatable; no seed unless named). Default: "
                   "every scenarios/*.toml.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def conform_command(version: str, count: int, only: tuple[str, ...], seed_count: int,
                    seeds: tuple[int, ...], scenario_files: tuple[str, ...],
                    as_json: bool) -> None:
    """Check the model against OpenClaw's released npm package, installed into a cache."""
    picked = bool(seeds or scenario_files)
    chosen_seeds = list(seeds) if picked else list(range(1, seed_count + 1))
    scenarios = [Path(f) for f in scenario_files] if picked else _scenarios(())
    try:
        report = conform(version, count, only,
                         progress=lambda line: echo(f"handoff: {line}", err=True),
                         scenarios=scenarios, seeds=chosen_seeds)
    except install.InstallError as err:
        bad_input(str(err))
    if as_json:
        echo(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    else:
        _table(report)
        _summary(report)
    if report.undocumented or not report.complete:
        raise SystemExit(1)
