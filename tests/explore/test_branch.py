"""Branching from a moment (SIM-11) and what ``explore --json`` says about a sweep (digests,
violating seeds per invariant)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from sim import scenario
from sim.cli.root import main
from sim.cli.schedules import load_schedule
from sim.invariants import BY_NAME
from sim.world import core as world

STEP = 60


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def record(tmp_path: Path, seed: int = 7, *extra: str) -> tuple[Path, dict[str, Any]]:
    path = tmp_path / "moment.json"
    result = invoke("replay", "--seed", str(seed), "--schedule-out", str(path), *extra)
    assert result.exit_code in (0, 1), result.output
    return path, json.loads(path.read_text(encoding="utf-8"))


def test_branching_keeps_the_first_choices_and_the_futures_differ(
        tmp_path: Path, default_world: scenario.Scenario) -> None:
    path, recorded = record(tmp_path)
    schedule = load_schedule(str(path), path.read_text(encoding="utf-8"))
    futures = [world.run(default_world, seed=k, replay=schedule, replay_steps=STEP)
               for k in (1, 2, 3, 4)]
    kept = [list(c) for c in recorded["choices"][:STEP]]
    for future in futures:
        choices = future.schedule.to_json()["choices"]
        assert isinstance(choices, list)
        subsystems = future.schedule.subsystems
        # The same choices, by subsystem name (a future may number its subsystems alike).
        assert [(subsystems[s], n, i) for s, n, i in choices[:STEP]] == \
            [(recorded["subsystems"][s], n, i) for s, n, i in kept]
    tails = {tuple(tuple(c) for c in f.schedule.choices[STEP:]) for f in futures}
    assert len(tails) == len(futures)
    assert len({f.trace.digest() for f in futures}) == len(futures)


def test_explore_from_a_moment_reports_futures_that_replay(tmp_path: Path) -> None:
    # A restart after the claim was cleared but before the evidence was saved sends again.
    path, _ = record(tmp_path, 11, "--mutant", "claim-cleared-first", "--faults", "crash")
    result = invoke("explore", "--from", str(path), "--at", str(STEP), "--seeds", "12",
                    "--jobs", "1", "--json")
    assert result.exit_code in (0, 1), result.output
    doc = json.loads(result.stdout)
    assert doc["branch"] == {"from": str(path), "at": STEP}
    assert doc["seeds"] == 12
    assert len(set(doc["seed_digests"].values())) == 12
    assert doc["violations"], "the mutant's futures should fail somewhere"
    for v in doc["violations"][:3]:
        assert v["repro"] == (f"handoff replay --from {path} --at {STEP} --seed {v['seed']} "
                              "--format text")
        replayed = invoke(*shlex.split(v["repro"])[1:])
        assert replayed.exit_code == 1
        assert f"violation: {v['invariant']} ({v['requirement']}): {v['message']}" in \
            replayed.stderr
    again = invoke("explore", "--from", str(path), "--at", str(STEP), "--seeds", "12",
                   "--jobs", "2", "--force", "--json")
    assert json.loads(again.stdout)["digest"] == doc["digest"]


def test_branch_bad_input(tmp_path: Path) -> None:
    path, recorded = record(tmp_path)
    n = len(recorded["choices"])
    cases = [
        (["explore", "--at", "3"], "handoff: --at needs --from SCHEDULE"),
        (["explore", "--from", str(path)], "handoff: --from needs --at STEP (how many of its "
                                           "choices to keep)"),
        (["explore", "--from", str(path), "--at", str(n + 1)],
         f"handoff: --at: {path} has only {n} choices, cannot keep {n + 1}"),
        (["explore", "--from", str(path), "--at", "3", "--mutant", "fresh-key-after-restart"],
         "handoff: --mutant, --faults and --strategy cannot be used with --from "
         "(the schedule records its own)"),
        (["replay", "--from", str(path), "--at", "3", "--schedule", str(path)],
         "handoff: --from and --schedule cannot be used together"),
    ]
    for args, message in cases:
        result = invoke(*args)
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr == message + "\n"


def test_a_branch_of_another_world_is_refused(tmp_path: Path) -> None:
    # The schedule carries the world it was recorded in; another one given is bad input.
    path, _ = record(tmp_path)
    other = Path(__file__).resolve().parents[2] / "scenarios" / "expiry.toml"
    result = invoke("explore", "--from", str(path), "--at", "10", "--seeds", "2",
                    "--scenario", str(other))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"handoff: --scenario: {other} is not the scenario {path} "
                                    "was recorded from")


def test_a_branch_of_another_world_diverges_inside_the_kept_steps(tmp_path: Path) -> None:
    # A schedule without its scenario (written before schedules carried one) runs where it is
    # told, and stops at the first choice that does not fit.
    path, doc = record(tmp_path)
    doc["scenario"] = None
    path.write_text(json.dumps(doc), encoding="utf-8")
    other = Path(__file__).resolve().parents[2] / "scenarios" / "expiry.toml"
    result = invoke("explore", "--from", str(path), "--at", "10", "--seeds", "2",
                    "--scenario", str(other))
    assert result.exit_code == 1
    assert result.stderr.startswith(f"handoff: branch from {path}: schedule diverged at step 0")


# -- explore --json: digests and counts per invariant ----------------------------------------------


def test_explore_json_counts_violating_seeds_per_invariant_and_digests_runs() -> None:
    # 40 seeds: the receipts' and recovery's draws put its first at-most-once seed past 20.
    args = ("explore", "--seeds", "40", "--mutant", "fresh-key-after-restart", "--json")
    serial = json.loads(invoke(*args, "--jobs", "1").stdout)
    parallel = json.loads(invoke(*args, "--jobs", "2", "--force").stdout)
    assert {"seeds", "violations", "seeds_per_second", "invariants", "digest",
            "seed_digests"} <= set(serial)
    assert list(serial["invariants"]) == list(BY_NAME)
    for name, entry in serial["invariants"].items():
        assert entry == {"seeds": len({v["seed"] for v in serial["violations"]
                                       if v["invariant"] == name})}
    assert serial["invariants"]["at-most-once"]["seeds"] > 0
    assert list(serial["seed_digests"]) == [str(s) for s in range(1, 41)]
    assert len(set(serial["seed_digests"].values())) == 40
    assert parallel["seed_digests"] == serial["seed_digests"]
    assert parallel["digest"] == serial["digest"]
    other = json.loads(invoke("explore", "--seeds", "40", "--json", "--jobs", "1").stdout)
    assert other["digest"] != serial["digest"]


def test_a_future_shrinks_and_saves_like_any_failure(tmp_path: Path) -> None:
    # A restart after the claim was cleared but before the evidence was saved sends again.
    path, _ = record(tmp_path, 11, "--mutant", "claim-cleared-first", "--faults", "crash")
    folder = tmp_path / "saved"
    result = invoke("explore", "--from", str(path), "--at", str(STEP), "--seeds", "4",
                    "--jobs", "1", "--save-failures", str(folder), "--max-runs", "100", "--json")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    first = doc["saved"][0]
    assert Path(first["path"]).name == (f"claim-cleared-first-at-{STEP}-seed-"
                                        f"{first['seed']}-{first['invariant']}.toml")
    saved = scenario.load(first["path"])
    assert f"as a future of {path} from step {STEP}" in saved.description
    assert first["invariant"] in [v.invariant for v in world.run(saved).violations]
    # handoff shrink on the same future gives the same file.
    again = invoke("shrink", "--from", str(path), "--at", str(STEP), "--seed",
                   str(first["seed"]), "--invariant", first["invariant"], "--max-runs", "100")
    assert again.exit_code == 1
    assert again.stdout == Path(first["path"]).read_text(encoding="utf-8")
