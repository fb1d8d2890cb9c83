"""Recorded schedules on the command line: reading one (``--schedule``, ``--from``; the file is
checked field by field), the world it replays in, and the branch a sweep or replay keeps (``--from
F --at N``, SIM-11). Shared by ``handoff replay``, ``handoff shrink`` and ``handoff explore``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import attrs
import click

from actors.inputs import Node, decode, json_document
from actors.inputs.files import MAX_SCHEDULE_BYTES, read_bounded
from sim import scenario as scenario_mod
from sim.choices import MAX_OPTIONS, MAX_SEED, STRATEGIES, Schedule, ScheduleDiverged, sha256
from sim.cli.args import load_world
from sim.cli.style import bad_input as _bad_input
from sim.scenario import Scenario


def branch_schedule(path: str | None, at: int | None, mutants: Sequence[str],
                    faults: str | None, strategy: str | None) -> Schedule | None:
    """The schedule a branching sweep or replay keeps the first ``at`` choices of."""
    if path is None:
        if at is not None:
            _bad_input("--at needs --from SCHEDULE")
        return None
    if at is None:
        _bad_input("--from needs --at STEP (how many of its choices to keep)")
    if mutants or faults is not None or strategy is not None:
        _bad_input("--mutant, --faults and --strategy cannot be used with --from "
                   "(the schedule records its own)")
    schedule = _read_schedule(path)
    if at > len(schedule.choices):
        _bad_input(f"--at: {path} has only {len(schedule.choices)} choices, cannot keep {at}")
    return schedule


def _read_schedule(path: str) -> Schedule:
    return load_schedule(path, decode(path, read_bounded(path, MAX_SCHEDULE_BYTES)))


# A schedule file's limits: far above any run the step bound (sim/world/core.py) lets finish
# (a choice's options: ``MAX_OPTIONS``, shared with scenarios' `[replay.choices]`).
MAX_CHOICES = 10_000_000
MAX_SUBSYSTEMS = 10_000
_MAX_SHARED = 100_000  # distinct choices kept for sharing (a huge run's many: start over)
_SURROGATE = re.compile("[\ud800-\udfff]")
_SCHEDULE_FIELDS = ("seed", "strategy", "versions", "mutants", "fault_kinds", "scenario",
                    "subsystems", "choices")


def load_schedule(path: str, text: str) -> Schedule:
    """A schedule file's text, checked field by field before anything runs (``InputError``)."""
    return _checked(json_document(path, text)[1])


def _checked(root: Node) -> Schedule:
    from actors.mutant_catalogue import MUTANTS
    from sim.faults.kinds import FAULT_KINDS

    root.check_keys(_SCHEDULE_FIELDS)
    versions = root.node("versions", None)
    if versions is not None:
        for key in versions.data:
            versions.text(key)
    mutants = root.strings("mutants", ())
    for index, name in enumerate(mutants):
        if name not in MUTANTS:
            raise root.fail_item("mutants", index,
                                 f"unknown mutant {name!r} (known: {', '.join(MUTANTS)})")
    fault_kinds = root.strings("fault_kinds", None)
    for index, kind in enumerate(fault_kinds or ()):
        if kind not in FAULT_KINDS:
            raise root.fail_item("fault_kinds", index, f"unknown fault kind {kind!r} "
                                 f"(known: {', '.join(FAULT_KINDS)})")
    scenario_path = scenario_text = None
    scenario = root.node("scenario", None)
    if scenario is not None:
        scenario.check_keys(("path", "sha256", "text"))
        scenario_path = scenario.text("path", None)
        scenario_text = scenario.text("text")
        if _SURROGATE.search(scenario_text):
            raise scenario.fail("text", "holds a lone surrogate (a \\udXXX escape that is not "
                                "text): not a scenario file's text")
        if scenario.text("sha256") != sha256(scenario_text):
            raise scenario.fail("sha256", "does not match the embedded scenario text "
                                "(the schedule was edited)")
    subsystems = root.strings("subsystems")
    if len(subsystems) > MAX_SUBSYSTEMS:
        raise root.fail("subsystems", f"must hold at most {MAX_SUBSYSTEMS:,} entries (the limit)")
    raw = root.array("choices", max_items=MAX_CHOICES)
    # Each parsed choice (a list) is let go as it is checked, and equal choices share one
    # tuple: 10,000,000 choices cost their parse (~1 GB) once, not twice (docs/inputs.md).
    shared: dict[tuple[int, int, int], tuple[int, int, int]] = {}
    choices: list[tuple[int, int, int]] = []
    for index, choice in enumerate(raw):
        raw[index] = None
        if (not isinstance(choice, list) or len(choice) != 3
                or not all(type(x) is int for x in choice)):
            raise root.fail_item("choices", index, "must be [subsystem, options, index], three "
                                 f"integers, not {json.dumps(choice)[:60]}")
        sub, n, picked = choice
        if not 0 <= sub < len(subsystems):
            raise root.fail_item("choices", index, f"subsystem {sub} is not an index into "
                                 f"subsystems (0..{len(subsystems) - 1})")
        if not 2 <= n <= MAX_OPTIONS:
            raise root.fail_item("choices", index, f"options {n} is not in 2..{MAX_OPTIONS:,}")
        if not 0 <= picked < n:
            raise root.fail_item("choices", index, f"index {picked} is not below options {n}")
        triple = (sub, n, picked)
        choices.append(shared.setdefault(triple, triple))
        if len(shared) > _MAX_SHARED:
            shared.clear()
    return Schedule(
        seed=root.integer("seed", maximum=MAX_SEED),
        strategy=root.text("strategy", choices=STRATEGIES),
        versions={} if versions is None else dict(versions.data),
        subsystems=subsystems,
        choices=tuple(choices),
        mutants=mutants,
        fault_kinds=fault_kinds,
        scenario_path=scenario_path,
        scenario_text=scenario_text,
    )


def scenario_for(schedule: Schedule | None, schedule_path: str | None,
                 world_path: str | None) -> scenario_mod.Scenario:
    """The world a run (or a branch of a recorded one) runs in."""
    if schedule is None or schedule_path is None:
        return load_world(world_path)
    return schedule_scenario(schedule, schedule_path, world_path)


def schedule_scenario(schedule: Schedule, schedule_path: str,
                       world_path: str | None) -> scenario_mod.Scenario:
    """The scenario a schedule replays: its own; a --scenario given as well must be the same."""
    if schedule.scenario_text is None:  # a schedule from before schedules carried their scenario
        return load_world(world_path)
    recorded_path = schedule.scenario_path or "scenario"
    recorded = scenario_mod.loads(schedule.scenario_text,
                                  f"{schedule_path} (embedded {recorded_path})")
    if world_path is not None:
        given = scenario_mod.load(world_path)
        if given.source != schedule.scenario_text:
            _bad_input(f"--scenario: {world_path} is not the scenario {schedule_path} was "
                       f"recorded from ({recorded_path}): "
                       f"{_first_difference(given.source, schedule.scenario_text)}; leave out "
                       "--scenario to replay the recorded one")
    return recorded


def _first_difference(given: str, recorded: str) -> str:
    a, b = given.splitlines(), recorded.splitlines()
    for number, (x, y) in enumerate(zip(a, b, strict=False), start=1):
        if x != y:
            return f"line {number} differs ({x.strip()[:40]!r} here, {y.strip()[:40]!r} recorded)"
    if len(a) != len(b):
        return f"it has {len(a)} lines, the recorded one {len(b)}"
    return "their text differs in line endings"


def moment_schedule(scenario: Scenario, text: str, strategy: str | None,
                    mutants: tuple[str, ...] | None, fault_kinds: tuple[str, ...] | None
                    ) -> Schedule:
    """The schedule prefix a ``--moment`` chain names (sim/explore/guided.py), cut to the
    choices the chain keeps; exit 2 on a malformed chain, 1 if it no longer fits the world."""
    from sim.explore import guided as explore_guided
    from sim.explore.seed import Sweep

    try:
        chain = explore_guided.parse_chain(text)
    except ValueError as err:
        _bad_input(f"--moment: {err}")
    try:
        schedule = explore_guided.rebuild(Sweep(scenario, strategy, mutants, fault_kinds), chain)
    except (ValueError, ScheduleDiverged) as err:
        click.echo(f"handoff: --moment {text}: {err}", err=True)
        raise SystemExit(1) from None
    return attrs.evolve(schedule, choices=schedule.choices[:chain[-1][1]])
