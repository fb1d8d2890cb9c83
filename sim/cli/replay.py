"""``handoff replay``: one run again, from its seed, a recorded schedule, or a branch of one.

A schedule carries its scenario, mutants, fault kinds and strategy (``docs/inputs.md``), so
``handoff replay --schedule F`` needs no other flag; a ``--scenario`` given as well must be the
recorded one.
"""

from __future__ import annotations

import json
import os
import shlex

import click

from sim.choices import MAX_SEED, STRATEGIES, ScheduleDiverged
from sim.cli.args import check_mutants, load_world, parse_faults, repro_command
from sim.cli.files.outfiles import check_outputs, write_output
from sim.cli.schedules import _read_schedule as _read_schedule
from sim.cli.schedules import branch_schedule, moment_schedule
from sim.cli.schedules import scenario_for as scenario_for
from sim.cli.schedules import schedule_scenario as schedule_scenario
from sim.cli.style import HandoffCommand
from sim.cli.style import bad_input as _bad_input
from sim.explore import sweeps as explore_mod
from sim.export import FORMATS, render
from sim.textout import echo, listed
from sim.world import core as world

# --trace-out's extension -> the format written when --format is not given.
_EXTENSIONS = {".jsonl": "jsonl", ".json": "perfetto", ".html": "html", ".htm": "html",
               ".mmd": "mermaid", ".mermaid": "mermaid", ".txt": "text", ".log": "text"}


def format_for(trace_out: str | None) -> str:
    """The format a trace file's name asks for: text on stdout, or a device (/dev/null); a
    file with another extension (or none) needs ``--format``."""
    if not trace_out or trace_out.startswith("/dev/"):
        return "text"  # an empty name is refused as such (sim/cli/files/outfiles.py)
    suffix = os.path.splitext(trace_out)[1].lower()
    if suffix not in _EXTENSIONS:
        _bad_input(f"--trace-out: {trace_out}: cannot tell the format from "
                   f"{suffix or 'a name with no extension'}; give --format "
                   f"({', '.join(FORMATS)})")
    return _EXTENSIONS[suffix]


@click.command("replay", cls=HandoffCommand)
@click.option("--seed", type=click.IntRange(0, MAX_SEED), default=None, help="Seed to replay.")
@click.option("--scenario", "world_path", default=None,
              help="Scenario or world file (default: the built-in default world, or the "
                   "schedule's own).")
@click.option("--schedule", "schedule_path", default=None,
              help="Replay a recorded schedule (JSON from --schedule-out) instead of a seed; it "
                   "carries its scenario, mutants, faults and strategy.")
@click.option("--schedule-out", default=None, help="Write the run's schedule (JSON) here.")
@click.option("--from", "branch_from", default=None, metavar="SCHEDULE",
              help="Replay a branch: this schedule's first --at choices, then seed --seed's.")
@click.option("--at", "branch_at", type=click.IntRange(min=0), default=None, metavar="STEP",
              help="With --from: how many of the schedule's choices to keep.")
@click.option("--moment", "moment", default=None, metavar="SEED@AT/...",
              help="Replay a guided sweep's branch: rebuild this chain of moments, then seed "
                   "--seed draws the rest (explore --guided's repro).")
@click.option("--mutant", "mutants", multiple=True, help="Switch on a known-bug variant.")
@click.option("--faults", "faults", default=None,
              help="Comma-separated fault kinds, 'all', or 'none'.")
@click.option("--strategy", type=click.Choice(STRATEGIES), default=None,
              help="How ties between ready actors are ordered: random (uniformly), pct "
              "(random priorities with three change points) or fifo (a fixed order); "
              "default: the world's.")
@click.option("--trace-out", default=None, help="Write the trace here (default: stdout).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="The trace's format (default: from --trace-out's extension, .jsonl, .json "
                   "for perfetto, .html, .mmd, .txt; else text).")
@click.option("--force", is_flag=True,
              help="Replace existing --trace-out and --schedule-out files.")
@click.option("--compare", "compare", default=None, metavar="OTHER",
              help="With --format html: one page of this run and OTHER aligned, the first "
                   "record where they differ marked. OTHER: a schedule (.json), a scenario "
                   "(.toml, at its seed), a seed, 'plain' (this run without its mutants) or "
                   "mutant:NAME[,NAME] (this seed with those mutants).")
def replay(seed: int | None, world_path: str | None, schedule_path: str | None,
           schedule_out: str | None, branch_from: str | None, branch_at: int | None,
           mutants: tuple[str, ...], faults: str | None,
           strategy: str | None, trace_out: str | None, fmt: str | None,
           moment: str | None = None, force: bool = False, compare: str | None = None) -> None:
    """Re-run one seed (or a recorded schedule, or a branch of one) and write its trace."""
    if branch_from is not None and schedule_path is not None:
        _bad_input("--from and --schedule cannot be used together")

    branch = branch_schedule(branch_from, branch_at, mutants, faults, strategy)
    if schedule_path is not None and seed is not None:
        _bad_input("--seed and --schedule cannot be used together (the schedule has its seed)")
    if schedule_path is not None and strategy is not None:
        _bad_input("--strategy and --schedule cannot be used together "
                   "(the schedule has its strategy)")
    if schedule_path is not None and (mutants or faults is not None):
        _bad_input("--mutant and --faults cannot be used with --schedule "
                   "(the schedule records its own)")
    mutant_names = check_mutants(mutants)
    fault_kinds = parse_faults(faults)
    fmt = fmt or format_for(trace_out)
    if compare is not None and fmt != "html":
        _bad_input("--compare: needs --format html (the comparison is a page)")
    # Where the output goes is checked before the run, so a typo costs nothing.
    check_outputs((("--trace-out", trace_out), ("--schedule-out", schedule_out)),
                  (("--scenario", world_path), ("--schedule", schedule_path),
                   ("--from", branch_from)), force)
    if moment is not None:
        if branch_from is not None or schedule_path is not None or seed is None:
            _bad_input("--moment needs --seed, and cannot be used with --from or --schedule")
        scenario = load_world(world_path)
        branch = moment_schedule(scenario, moment, strategy, mutant_names or None, fault_kinds)
        branch_at, branch_from, schedule = len(branch.choices), moment, None
    elif schedule_path is not None:
        schedule = _read_schedule(schedule_path)
        scenario = schedule_scenario(schedule, schedule_path, world_path)
    else:
        schedule = None
        scenario = scenario_for(branch, branch_from, world_path)
        if branch is None and seed is None:
            seed = scenario.seed
    try:
        result = world.run(scenario, seed=seed, strategy=strategy,
                           mutants=mutant_names if mutants else None, fault_kinds=fault_kinds,
                           replay=schedule or branch, replay_steps=branch_at)
    except ScheduleDiverged as err:
        click.echo(f"handoff: replay of {schedule_path or branch_from}: {err}", err=True)
        raise SystemExit(1) from None
    except Exception as exc:  # a model bug: the same finding explore reports for this seed
        invariant, requirement = explore_mod.CRASH
        click.echo(f"violation: {invariant} ({requirement}): {explore_mod.crash_message(exc)}",
                   err=True)
        raise SystemExit(1) from None
    if schedule is not None and len(result.schedule.choices) < len(schedule.choices):
        # The run made fewer choices than were recorded: it is not the run that was recorded.
        step = len(result.schedule.choices)
        diverged = ScheduleDiverged(step, f"the run ended with {len(schedule.choices) - step} "
                                    "recorded choice(s) left")
        click.echo(f"handoff: replay of {schedule_path}: {diverged}", err=True)
        raise SystemExit(1)
    summary = (f"seed {result.seed}: {len(result.trace)} records, ended {result.end_reason} at "
               f"{result.end_ms} ms, trace sha256 {result.trace.digest()[:16]}")
    if fmt == "html":
        from sim.cli import pages

        repro = (shlex.join(["handoff", "replay", "--schedule", schedule_path, "--format", "text"])
                 if schedule_path is not None else
                 repro_command(result.seed, world_path, mutant_names, fault_kinds, strategy,
                               branch_from, branch_at))
        title = f"handoff: {scenario.name}, seed {result.seed}"
        again = pages.Again(scenario, seed=seed, strategy=strategy,
                            mutants=mutant_names if mutants else None, fault_kinds=fault_kinds,
                            replay=schedule or branch, replay_steps=branch_at)
        side = pages.side_of(again, repro, schedule_path or schedule_out, trace_out,
                             saved=schedule_path is not None or schedule_out is not None)
        text = (pages.timeline(side, title=title, repro=repro, summary=summary)
                if compare is None else
                pages.compared(side, result, compare, title=title, repro=repro,
                               summary=summary, trace_out=trace_out, world_path=world_path,
                               faults=fault_kinds, strategy=strategy))
    else:
        text = render(result.trace.records, fmt)
    if trace_out:
        write_output(trace_out, "--trace-out", text)
    else:
        echo(text, nl=False)
    if schedule_out:
        write_output(schedule_out, "--schedule-out", json.dumps(result.schedule.to_json()) + "\n")
    click.echo(summary, err=True)
    if result.probes:
        hits = [f"{name} x{n}" for name, n in result.probes.items()]
        click.echo(f"probes hit: {len(hits)}: {listed(hits)}", err=True)
    for v in result.violations:
        echo(f"violation: {v.invariant} ({v.requirement}): {v.message} "
             f"[records {', '.join(map(str, v.records))}]", err=True)
    raise SystemExit(1 if result.violations else 0)
