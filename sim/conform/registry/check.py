"""The registry check over scenarios and default-world seeds: each world run once by the model,
its trace translated, replayed on OpenClaw's registry in one driver call, and every translated
run's rows compared after each of its events. A divergence a ``registry`` row of
``differences.toml`` explains is documented; any other is reported with both sides and the
command that shows it again."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import attrs

from sim.conform.differences import Difference
from sim.conform.driver import Driver
from sim.conform.registry.compare import Divergence, divergences
from sim.conform.registry.explain import explain
from sim.conform.registry.scope import lost_answers
from sim.conform.registry.translate import translate
from sim.scenario import Scenario
from sim.trace import Record


@attrs.define
class WorldOutcome:
    """One world (a scenario, or a default-world seed) replayed."""

    source: str  # "scenarios/x.toml" or "seed 12"
    repro: str  # the command that replays it again
    runs: int = 0  # runs replayed
    events: int = 0  # trace records about them
    checks: int = 0  # rows compared
    skipped: dict[str, str] = attrs.field(factory=dict)  # run -> why not replayed
    documented: dict[str, str] = attrs.field(factory=dict)  # run -> difference id
    undocumented: list[Divergence] = attrs.field(factory=list)


def replay_world(driver: Driver, records: Sequence[Record], table: Sequence[Difference],
                 source: str, repro: str) -> WorldOutcome:
    replay = translate(records)
    outcome = WorldOutcome(source, repro, skipped=dict(replay.skipped))
    if not replay.runs:
        return outcome
    snapshots: list[dict[str, Any]] = driver.request("registryReplay", **replay.request())
    outcome.runs = len(replay.runs)
    outcome.checks = len(replay.expects)
    outcome.events = sum(1 for r in records if r.data.get("run_id") in replay.runs)
    spawn_of = {r.data["run_id"]: r for r in records if r.kind == "spawn"}
    lost = lost_answers(records)
    for run_id, divergence in divergences(replay.expects, snapshots).items():
        context = {"divergence": divergence, "run": [r for r in records
                                                     if r.data.get("run_id") == run_id],
                   "spawn": spawn_of.get(run_id),
                   "duplicated_end": run_id in replay.duplicated_ends,
                   "crashed_calls": sum(1 for a in replay.runs[run_id].attempts
                                        if a["outcome"] == "crashed"),
                   "answer_lost": run_id in spawn_of
                   and str(spawn_of[run_id].data.get("child")) in lost,
                   "newer_runs": newer_runs(spawn_of, run_id, replay.runs)}
        reason = explain(table, context, divergence.model, divergence.openclaw)
        if reason is None:
            outcome.undocumented.append(divergence)
        else:
            outcome.documented[run_id] = reason
    return outcome


def newer_runs(spawn_of: dict[str, Record], run_id: str,
               replayed: Collection[str]) -> list[Record]:
    """Spawns of later replayed runs in ``run_id``'s child session: each is a newer generation
    of that session in OpenClaw's registry from its spawn on."""
    own = spawn_of.get(run_id)
    if own is None:
        return []
    key = own.data.get("child_session_key")
    return [spawn for other, spawn in spawn_of.items()
            if other != run_id and other in replayed and spawn.seq > own.seq
            and spawn.data.get("child_session_key") == key]


def scenario_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.toml"))


def untranslatable_scenario(scenario: Scenario) -> str | None:
    """Why a whole scenario is not replayed (before running it), or None."""
    if scenario.mutants:
        return "runs a built-in mutant: the model is broken on purpose there"
    return None


Progress = Callable[[str], None]


def run_scenarios(driver: Driver, table: Sequence[Difference], files: Sequence[Path],
                  progress: Progress) -> tuple[list[WorldOutcome], dict[str, str]]:
    from sim.scenario.loader import load
    from sim.world.core import run

    outcomes: list[WorldOutcome] = []
    not_translated: dict[str, str] = {}
    for path in files:
        scenario = load(path)
        why = untranslatable_scenario(scenario)
        if why is not None:
            not_translated[str(path)] = why
            continue
        result = run(scenario)
        outcome = replay_world(driver, result.trace.records, table, str(path),
                               f"handoff conform --check registry --scenario {path}")
        if outcome.runs == 0:
            reasons = sorted(set(outcome.skipped.values()))
            not_translated[str(path)] = "; ".join(reasons) or "no runs"
            continue
        outcomes.append(outcome)
    progress(f"registry: {len(outcomes)} of {len(files)} scenarios replayed")
    return outcomes, not_translated


def run_seeds(driver: Driver, table: Sequence[Difference], seeds: Sequence[int],
              progress: Progress) -> list[WorldOutcome]:
    from sim.explore.worlds import default_world_path
    from sim.scenario.loader import load
    from sim.world.core import run

    world = load(default_world_path())
    outcomes = []
    for seed in seeds:
        result = run(world, seed=seed)
        outcomes.append(replay_world(driver, result.trace.records, table, f"seed {seed}",
                                     f"handoff conform --check registry --seed {seed}"))
    progress(f"registry: {len(seeds)} default-world seeds replayed")
    return outcomes
