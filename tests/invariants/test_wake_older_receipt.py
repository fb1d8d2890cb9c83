"""``wake-releases-suspended``: a wake that carried a member's older receipt leaves the newer one
owed its own delivery (DEL-12, seed 20305); a wake that showed the correction released it whole,
and a new generation after it is still named."""

from __future__ import annotations

from sim.invariants.yields.released import _escaped
from tests.invariants.regression_traces import check, edit, recorded, trace

NAME = "wake-carried-older-receipt-seed-20305"


def test_a_correction_the_wake_did_not_carry_is_delivered_on_its_own() -> None:
    assert check("wake-releases-suspended", trace(NAME)) == []


def test_a_new_generation_after_a_wake_that_showed_the_correction_is_named() -> None:
    # Since stop 45 a private try waits with no answer timeout, which moves this replay's
    # instants: the trace it replayed before is kept (tests/invariants/traces/).
    records = recorded(NAME)
    correction = next(r for r in records if r.kind == "child.correction")
    run_id = correction.data["run_id"]
    take = next(r for r in records if r.kind == "requester.accept"
                and r.data["key"].startswith("announce:requester-settle:")
                and run_id in r.data["key"])
    shown = edit(take, text=take.data["text"] + _escaped(correction.data["result"]))
    forged = [shown if r is take else r for r in records]
    found = check("wake-releases-suspended", forged)
    assert len(found) == 1 and "handed over again as a new generation" in found[0]
