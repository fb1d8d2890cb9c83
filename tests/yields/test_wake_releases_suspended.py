"""YLD-2 (seed 002; reference §b, §c12): a taken yield wake releases a member whose own delivery
gave up before the batch woke; the refusal that suspended it is final for its own delivery
generation only, so a later correction is a new delivery (DEL-10, DEL-12, DEL-16 restated per
generation). Each oracle is shown catching a model that breaks it."""

from __future__ import annotations

from typing import Any

from actors.states import DeliveryStatus
from sim import scenario
from sim.world import core as world
from tests.conftest import SCENARIOS


def _run(name: str, **kwargs: Any) -> world.RunResult:
    return world.run(scenario.load(SCENARIOS / name), **kwargs)


def _names(result: world.RunResult) -> set[str]:
    return {v.invariant for v in result.violations}


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
    assert _names(result) == {"wake-releases-suspended"}
    runs = {r.child_id: r for r in result.runs}
    assert runs["broken"].delivery_status == DeliveryStatus.SUSPENDED
    assert _run("mutant-wake-keeps-suspended.toml", mutants=[]).violations == ()


def test_a_released_member_corrected_later_goes_out_as_a_new_generation() -> None:
    result = _run("yield-wake-released-then-corrected.toml")
    assert result.violations == ()
    records = result.trace.records
    sends = [r.data["key"] for r in records
             if r.kind == "gateway.send" and r.data["run_id"] == "run-1"]
    # The refused first generation, then the correction's own: never the refused key again.
    assert sends == ["announce:v1:agent:main:subagent:c1:run-1",
                     "announce:v1:agent:main:subagent:c1:run-1:g2"]
    refusal = next(r for r in records if r.kind == "fault" and r.data["run_id"] == "run-1")
    assert refusal.data["error"]["message"] == "chat not found"


def test_the_generation_rule_still_catches_a_resend_of_the_refused_generation() -> None:
    # The correction of the released row reopened under the refused key (the bug
    # reopen-keeps-key): the refusal is final for that generation, so the restated DEL-10
    # oracles catch it.
    result = _run("yield-wake-released-then-corrected.toml", mutants=["reopen-keeps-key"])
    assert {"permanent-stops-retries", "terminal-not-resent"} <= _names(result)
    # Kept suspended by the wake (wake-keeps-suspended), the row's correction only updates
    # its payload: nothing is sent, and the row left suspended is what the YLD-2 oracle flags.
    kept = _run("yield-wake-released-then-corrected.toml", mutants=["wake-keeps-suspended"])
    assert _names(kept) == {"wake-releases-suspended"}
    assert not any(r.kind == "gateway.send" and r.data["key"].endswith(":g2")
                   for r in kept.trace.records)
    # Released, but its correction never sent (delivered-ignores-correction): the wake carried
    # the older receipt, so DEL-12's oracle judges the row by the newer one.
    ignored = _run("yield-wake-released-then-corrected.toml",
                   mutants=["delivered-ignores-correction"])
    assert _names(ignored) == {"delivered-is-newest"}


def test_a_correction_after_an_unreleased_give_up_still_waits_for_the_operator() -> None:
    # No wake carried it: the new generation the bug sends is DEL-16's, no longer DEL-10's
    # (the refusal was final for the first generation only).
    result = _run("mutant-give-up-correction-sent.toml")
    assert _names(result) == {"given-up-waits-for-operator"}
