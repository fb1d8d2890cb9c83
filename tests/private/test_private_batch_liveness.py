"""Liveness oracles around private yield batches (seeds 3769, 4827, 4416 past the first 2,000):
each scenario (the first two shrunk from their seeds; 4416's case written by hand once a deleted
nested session kills its running children, reference §c17) passes, still sets up the case it was
saved for (a draw or model change can move a saved run off it), and trips the oracle's earlier
reading, so the fix is what makes it pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim import scenario
from sim.invariants.observations import asked_runs, rejection_class
from sim.invariants.private import turns as private_turns
from sim.invariants.yields import yield_batches as yields
from sim.world import core as world

SCENARIOS = Path(__file__).resolve().parent.parent.parent / "scenarios"
SIBLING_RETRIES = ("private-batch-public-sibling-retries.toml",
                   "private-batch-public-sibling-other-error.toml")
DEFERRAL_LIMIT = "private-status-check-batch-deferral-limit.toml"


def _run(name: str) -> world.RunResult:
    return world.run(scenario.load(SCENARIOS / name))


def _found(result: world.RunResult) -> set[str]:
    return {v.invariant for v in result.violations}


@pytest.mark.parametrize("name", SIBLING_RETRIES)
def test_a_public_sibling_of_a_private_batch_retries_and_the_wake_waits(name: str) -> None:
    result = _run(name)
    assert result.violations == ()
    trace = result.trace
    asked = asked_runs(trace)
    [batch] = yields.batches(trace)
    private = [m for m in batch.members
               if asked[m].request.data.get("completion_target") == "parent"]
    public = [m for m in batch.members if m not in private]
    assert private and public
    wake = next(r for r in trace if r.kind == "gateway.send" and yields.is_wake(r.data["key"]))
    # Some public sibling's last refusal before the wake was one it may retry after, more than
    # a recheck before the wake: read as a hand-over, the wake would look late.
    refusals = [r for r in trace if r.kind == "fault" and r.data.get("run_id") in public
                and r.seq < wake.seq and rejection_class(r) is not None]
    last = refusals[-1]
    assert rejection_class(last) not in ("permanent", "sent")
    assert wake.t_ms > last.t_ms + yields.RECHECK_MS


@pytest.mark.parametrize("name", SIBLING_RETRIES)
def test_reading_the_siblings_refusal_as_a_hand_over_flags_the_wait(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yields, "_is_private", lambda request: False)
    assert "wake-not-delayed" in _found(_run(name))


def test_a_checked_private_child_whose_batch_ran_out_of_deferrals_is_excused() -> None:
    result = _run(DEFERRAL_LIMIT)
    assert result.violations == ()
    trace = result.trace
    [batch] = yields.batches(trace)
    assert any(r.kind == "world.status_check" for r in trace)
    assert not any(r.kind == "gateway.send" and yields.key_runs(r.data["key"]) == batch.members
                   for r in trace)  # closed without a wake
    assert not yields.wake_owed(trace, batch)


def test_asking_a_wake_of_a_batch_the_deferral_limit_closed_flags_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(private_turns, "wake_owed", lambda trace, batch: True)
    assert "status-check-keeps-private" in _found(_run(DEFERRAL_LIMIT))
