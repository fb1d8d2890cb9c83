"""The pages ``handoff replay --format html`` writes: a run's timeline, each record with the
command that branches from it, or the run and another aligned (``--compare OTHER``).

A page's run is run once more, counting per record the choices made before it
(sim/world/branch_points.py): the same run (runs are deterministic), one call per record dearer.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from pathlib import Path

import attrs

from sim.choices import Schedule
from sim.cli.args import check_mutants, load_world, repro_command
from sim.cli.schedules import _read_schedule, schedule_scenario
from sim.cli.style import bad_input
from sim.html.compare import compare_page
from sim.html.timeline import Side, assemble, page, with_schedule_out
from sim.scenario import Scenario
from sim.world.branch_points import run_with_branch_points
from sim.world.result import RunResult


@attrs.frozen
class Again:
    """How to run a run again (``world.run``'s arguments)."""

    scenario: Scenario
    seed: int | None = None
    strategy: str | None = None
    mutants: Sequence[str] | None = None
    fault_kinds: Sequence[str] | None = None
    replay: Schedule | None = None
    replay_steps: int | None = None

    def run(self) -> tuple[RunResult, list[int]]:
        return run_with_branch_points(
            self.scenario, seed=self.seed, strategy=self.strategy, mutants=self.mutants,
            fault_kinds=self.fault_kinds, replay=self.replay, replay_steps=self.replay_steps)


def _schedule_name(trace_out: str | None, label: str) -> str:
    stem = Path(trace_out).with_suffix("") if trace_out else Path("run")
    return f"{stem}{'-' + label if label else ''}.schedule.json"


def side_of(again: Again, repro: str, schedule: str | None, trace_out: str | None, *,
            saved: bool, label: str = "") -> Side:
    """A page's run: its records, violations and where a branch from each record starts (the
    schedule file, and when the user has none yet, the command that writes it)."""
    result, steps = again.run()
    schedule = schedule or _schedule_name(trace_out, label)
    return Side(result.trace.records, result.violations, steps, schedule,
                None if saved else with_schedule_out(repro, schedule), label)


def timeline(side: Side, *, title: str, repro: str, summary: str) -> str:
    return page(assemble([side], title=title, repro=repro, summary=summary))


def compared(side: Side, result: RunResult, other: str, *, title: str, repro: str,
             summary: str, trace_out: str | None, world_path: str | None,
             faults: Sequence[str] | None, strategy: str | None = None) -> str:
    """This run (A) and OTHER (B) on one page; OTHER as ``replay --compare``'s help says."""
    schedule: str | None = None
    if other.endswith(".json"):
        recorded = _read_schedule(other)
        again = Again(schedule_scenario(recorded, other, None), replay=recorded)
        other_repro, schedule = shlex.join(["handoff", "replay", "--schedule", other,
                                            "--format", "text"]), other
    elif other.endswith(".toml"):
        again = Again(load_world(other))
        other_repro = shlex.join(["handoff", "replay", "--scenario", other, "--format", "text"])
    else:
        found = re.fullmatch(r"(\d+)|plain|mutant:([\w,-]+)", other)
        if found is None:
            bad_input(f"--compare: {other!r} is none of a schedule (.json), a scenario (.toml), "
                      "a seed, 'plain' or mutant:NAME[,NAME]")
        seed = int(found.group(1)) if found.group(1) else result.seed
        mutants = (check_mutants(found.group(2).split(",")) if found.group(2) else
                   () if other == "plain" else result.mutants)
        again = Again(result.scenario, seed=seed, strategy=result.strategy, mutants=mutants,
                      fault_kinds=faults)
        other_repro = repro_command(seed, world_path, mutants, faults, strategy)
    b = side_of(again, other_repro, schedule, trace_out, saved=schedule is not None, label="B")
    a = attrs.evolve(side, label="A",
                     save=side.save and with_schedule_out(repro, _schedule_name(trace_out, "A")),
                     schedule=side.schedule if not side.save else _schedule_name(trace_out, "A"))
    return compare_page(a, b, titles=(repro, other_repro), title=f"{title} against {other}",
                        repro=repro, summary=summary)
