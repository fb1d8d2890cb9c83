"""YLD-2 (reference §b, §c12): a taken yield wake releases a member whose own delivery gave up
before the batch woke; `wake-releases-suspended` catches a model that leaves it suspended."""

from __future__ import annotations

from typing import Any

from actors.states import DeliveryStatus
from sim import scenario
from sim.world import core as world
from tests.conftest import SCENARIOS


def _run(name: str, **kwargs: Any) -> world.RunResult:
    return world.run(scenario.load(SCENARIOS / name), **kwargs)


def test_the_wake_releases_the_suspended_member_it_carried() -> None:
    result = _run("yield-wake-releases-suspended-member.toml")
    assert result.violations == ()
    runs = {r.child_id: r for r in result.runs}
    assert runs["broken"].delivery_status == DeliveryStatus.DELIVERED
    assert result.probes.get("batch.released-suspended-member") == 1
    records = result.trace.records
    gave_up = next(r for r in records if r.kind == "delivery.give_up"
                   and r.data["run_id"] == runs["broken"].run_id)
    wake = next(r for r in records if r.kind == "requester.accept" and ":yield-" in r.data["key"])
    assert gave_up.data["status"] == DeliveryStatus.SUSPENDED and gave_up.seq < wake.seq
    assert "Three files still point at the old schema" in wake.data["text"]


def test_the_oracle_catches_a_wake_that_leaves_it_suspended() -> None:
    result = _run("mutant-wake-keeps-suspended.toml")
    assert {v.invariant for v in result.violations} == {"wake-releases-suspended"}
    runs = {r.child_id: r for r in result.runs}
    assert runs["broken"].delivery_status == DeliveryStatus.SUSPENDED
    assert _run("mutant-wake-keeps-suspended.toml", mutants=[]).violations == ()
