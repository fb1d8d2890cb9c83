"""``lost-answer-recovery`` owes recovery only once the registry can have heard the delivery:
a take whose every acknowledgement reached the delivery process while it was down (between a
crash and its restart) leaves none owed (seed 11263); the same take with the process up is
still judged."""

from __future__ import annotations

from tests.invariants.regression_traces import check, trace

NAME = "ack-reaches-dead-process-seed-11263"


def test_an_acknowledgement_that_reaches_a_dead_process_owes_no_recovery() -> None:
    assert check("lost-answer-recovery", trace(NAME)) == []


def test_the_same_take_heard_by_a_live_process_owes_recovery() -> None:
    records = trace(NAME)
    # Forged: the crash at 497 s never happened, so the held acknowledgement (506.499 s) reaches
    # a running process and tells the registry the (no output) landed.
    forged = [r for r in records if not (r.kind == "crash" and r.t_ms == 497_000)]
    assert len(forged) == len(records) - 1
    found = check("lost-answer-recovery", forged)
    assert found == ["run-6 answered nothing visible and its (no output) was delivered at "
                     "386500 ms, but lost-answer recovery never started"]
