"""The registry check against the released openclaw package (``pytest -m conform``; skipped with
one line when Node 24 or the package is not installed, required in .ci/run): a simulator run's
events replayed on OpenClaw's real subagent registry, each row compared after every event."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from sim.conform import differences, install
from sim.conform.driver import Driver, manifest_path
from sim.conform.registry.check import (
    WorldOutcome,
    replay_world,
    run_scenarios,
    run_seeds,
    scenario_files,
)
from sim.conform.registry.compare import divergences
from sim.conform.registry.translate import translate
from sim.scenario.loader import load
from sim.world.core import run

pytestmark = pytest.mark.conform

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
SEEDS = range(1, 101)  # the CI's share; `handoff conform` replays 500


@pytest.fixture(scope="module")
def driver() -> Iterator[Driver]:
    installed = install.find_installed(install.PINNED_OPENCLAW)
    if installed is None:
        pytest.fail(f"openclaw {install.PINNED_OPENCLAW} and Node >= 24.16 are not installed "
                    f"in {install.cache_root()} (run `handoff conform` once)")
    manifest = manifest_path(install.PINNED_OPENCLAW)
    assert manifest is not None
    with Driver(installed, manifest) as running:
        yield running


def _snapshots(driver: Driver, name: str, mutants: tuple[str, ...] = ()) -> tuple:
    replay = translate(run(load(SCENARIOS / name), mutants=mutants).trace.records)
    return replay, driver.request("registryReplay", **replay.request())


def test_spawn_end_ok_transient_then_acknowledged_matches_openclaw_row_by_row(
        driver: Driver) -> None:
    replay, snapshots = _snapshots(driver, "transient-then-success.toml")
    assert list(replay.runs) == ["run-1"] and not replay.skipped
    assert [e.kind for e in replay.expects] == ["spawn", "child.end", "delivery.delivered"]
    assert divergences(replay.expects, snapshots) == {}
    assert snapshots[-1]["status"] == "delivered"
    assert [h["result"] for h in snapshots[-1]["handed"]] == [
        "Build is green; two flaky tests quarantined."]


def test_retries_match_openclaw_attempt_count_and_next_attempt_time(driver: Driver) -> None:
    replay, snapshots = _snapshots(driver, "expiry.toml")
    retries = [(e, s) for e, s in zip(replay.expects, snapshots, strict=True)
               if e.kind == "delivery.retry"]
    assert len(retries) >= 8
    # Every retry, the window's last one too: OpenClaw's own backoff, given the model's jitter,
    # waited whole past the 30-minute deadline (issue 34) ...
    for expect, snapshot in retries:
        assert snapshot["attempts"] == expect.fields["attempts"]
        assert snapshot["nextAttemptAt"] == expect.fields["nextAttemptAt"]
    assert retries[-1][0].fields["nextAttemptAt"] > 10_000 + 30 * 60_000
    # ... and the resume it ends in gives up then, suspended, on both sides.
    assert divergences(replay.expects, snapshots) == {}
    assert snapshots[-1]["status"] == "suspended"


@pytest.mark.parametrize("name", ["restart-after-confirmed-send.toml",
                                  "crash-between-send-and-record.toml",
                                  "restart-between-evidence-and-claim.toml"])
def test_a_restarted_delivery_process_restores_the_row_and_announces_again(
        driver: Driver, name: str) -> None:
    # The process dies during the attempt; a new one on the same state folder restores the row
    # from SQLite and calls the announce flow again, which finds the completion delivered.
    replay, snapshots = _snapshots(driver, name)
    assert list(replay.runs) == ["run-1"] and not replay.skipped
    assert [s["kind"] for s in replay.request()["steps"]].count("restart") == 1
    assert divergences(replay.expects, snapshots) == {}
    assert snapshots[-1]["status"] == "delivered" and len(snapshots[-1]["handed"]) == 2


def test_an_announce_skip_is_one_announce_call_that_leaves_the_row_delivered(
        driver: Driver) -> None:
    replay, snapshots = _snapshots(driver, "announce-skip.toml")
    assert not replay.skipped  # the skip, and the delivery process's crash before its cleanup
    skip = [s for e, s in zip(replay.expects, snapshots, strict=True)
            if e.kind == "delivery.announce_skip"]
    assert skip and skip[0]["status"] == "delivered" and len(skip[0]["handed"]) == 1
    # Only the trimmed frozen text differs (the seed keeps the child's answer as written).
    outcome = replay_world(driver, run(load(SCENARIOS / "announce-skip.toml")).trace.records,
                           differences.load(), "announce-skip", "-")
    assert not outcome.undocumented and set(outcome.documented.values()) <= {
        "registry-frozen-trimmed"}


def _outcome(driver: Driver, name: str) -> WorldOutcome:
    return replay_world(driver, run(load(SCENARIOS / name)).trace.records, differences.load(),
                        name, "-")


def test_redrives_kills_and_corrections_diverge_only_where_the_table_says(
        driver: Driver) -> None:
    # A paused run's redrive is refused by OpenClaw (only a suspended one is taken).
    assert _outcome(driver, "redrive-new-generation.toml").documented.get("run-2") == \
        "registry-redrive-only-suspended"
    # A killed run: never announced either way; OpenClaw's row stays pending.
    killed = _outcome(driver, "aborted-child.toml")
    assert killed.documented.get("run-1") == "registry-killed-run-delivery-pending"
    # A correction after delivery: the row takes the corrected result (compared, equal), but
    # OpenClaw never announces it.
    for name in ("receipt-correction-supersedes.toml", "receipt-out-of-order.toml"):
        corrected = _outcome(driver, name)
        assert corrected.documented == {"run-1": "registry-correction-not-reannounced"}
    assert not killed.undocumented


def test_a_suspended_run_s_redrive_is_taken_by_openclaw(driver: Driver) -> None:
    replay = translate(run(load(SCENARIOS / "permanent-rejection.toml")).trace.records)
    request = replay.request()
    request["steps"] += [{"t": 60_000, "kind": "redrive", "run": "run-1"},
                         {"t": 60_000, "kind": "check", "run": "run-1", "expect": -1}]
    snapshots = driver.request("registryReplay", **request)
    assert snapshots[-2]["status"] == "suspended"
    assert snapshots[-1]["redriven"] is True and snapshots[-1]["status"] == "pending"


def test_a_broken_model_is_an_undocumented_divergence(driver: Driver) -> None:
    # The built-in mutant doubles the backoff without its 300 s cap: OpenClaw's row says when
    # the next attempt really is, and no row of the table explains the difference.
    records = run(load(SCENARIOS / "expiry.toml"), mutants=("backoff-uncapped",)).trace.records
    outcome = replay_world(driver, records, differences.load(), "expiry (mutant)", "-")
    assert outcome.undocumented, outcome
    assert outcome.undocumented[0].field == "nextAttemptAt"


def test_a_wrong_expectation_is_reported_with_both_sides(driver: Driver) -> None:
    replay, snapshots = _snapshots(driver, "transient-then-success.toml")
    last = replay.expects[-1]
    replay.expects[-1] = attrs.evolve(last, fields={**last.fields, "status": "failed"})
    found = divergences(replay.expects, snapshots)["run-1"]
    assert (found.field, found.model, found.openclaw) == ("status", "failed", "delivered")
    assert "model 'failed', openclaw 'delivered'" in found.line()


def test_every_translatable_scenario_has_no_undocumented_divergence(driver: Driver) -> None:
    files = scenario_files(SCENARIOS)
    outcomes, not_translated = run_scenarios(driver, differences.load(), files, lambda _: None)
    assert len(outcomes) + len(not_translated) == len(files)
    assert len(outcomes) >= 40
    assert [d.line() for o in outcomes for d in o.undocumented] == []
    # Every reason a run or scenario is not replayed is named in docs/fidelity.md.
    doc = (SCENARIOS.parent / "docs" / "fidelity.md").read_text(encoding="utf-8")
    reasons = {why for o in outcomes for why in o.skipped.values()}
    reasons |= {why for joined in not_translated.values() for why in joined.split("; ")}
    for why in sorted(reasons):
        phrase = why.split(":")[0].split(" (")[0]
        assert ("record kind" if phrase.startswith("record kind ") else phrase) in doc, why


def test_default_world_seeds_have_no_undocumented_divergence(driver: Driver) -> None:
    outcomes = run_seeds(driver, differences.load(), SEEDS, lambda _: None)
    assert sum(o.runs for o in outcomes) >= 30
    assert [(o.source, d.line()) for o in outcomes for d in o.undocumented] == []


def test_seeds_past_the_ci_share_diverge_only_where_the_table_says(driver: Driver) -> None:
    outcomes = {o.source: o for o in run_seeds(driver, differences.load(), [148, 172, 301],
                                               lambda _: None)}
    # 148: run-4's first attempt, out when a correction came, was handed the first answer (the
    # correction reaches OpenClaw at the model's reopen, and is then never announced).
    assert outcomes["seed 148"].documented.get("run-4") == "registry-correction-not-reannounced"
    # 172: run-2's row is retired when its delivery settles (run-7 of the same child session
    # was registered at 170 s).
    assert outcomes["seed 172"].documented.get("run-2") == "registry-superseded-row-retired"
    # 301: run-4's retries, each backoff with its own jitter while run-8's announce calls
    # interleave with its attempts.
    assert "run-4" not in outcomes["seed 301"].documented
    # registry-late-ack-between-attempts was seed 374's run-4 on e274043 (a late acknowledgement
    # while the model waits out its backoff); stop 45's new draws moved that seed, and no seed of
    # 1..500 reaches the case on 490f01d. Its explainer is held by the near variants of
    # tests/conform/test_registry_translate.py.
    assert [d.line() for o in outcomes.values() for d in o.undocumented] == []


def test_the_command_replays_a_scenario_and_a_seed_and_names_what_it_cannot() -> None:
    skipped = SCENARIOS / "frozen-cap-shared.toml"  # a yield batch: not driven
    done = subprocess.run([sys.executable, "-m", "sim", "conform", "--json", "--check",
                           "registry", "--scenario", str(SCENARIOS / "chunked-partial-send.toml"),
                           "--scenario", str(skipped), "--seed", "36"],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    registry = json.loads(done.stdout)["registry"]
    assert (registry["scenarios"], registry["scenarios_replayed"], registry["seeds"]) == (2, 1, 1)
    assert registry["undocumented"] == 0 and registry["first"] is None
    assert registry["documented"] == {"registry-empty-reply-unfrozen": 1,
                                      "registry-partial-send-retried": 1}
    assert list(registry["not_translated"]) == [str(skipped)]
