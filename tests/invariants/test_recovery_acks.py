"""``lost-answer-recovery`` owes recovery only once the registry can have heard the delivery:
a take whose every acknowledgement reached the delivery process while it was down (between a
crash and its restart) leaves none owed (seed 11263); the same take with the process up is
still judged. An operator's redrive supersedes the older key's acknowledgements (seed 5479)."""

from __future__ import annotations

import attrs

from tests.invariants.regression_traces import check, edit, trace

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


REDRIVEN = "ack-after-redrive-seed-5479"


def test_an_acknowledgement_after_an_operators_redrive_is_of_a_superseded_generation() -> None:
    # run-2's tries timed out; an operator's redrive (17:55.163) started generation 2, which its
    # frozen batch owned and never sent; the takes of the older key were acknowledged after it.
    records = trace(REDRIVEN)
    assert check("lost-answer-recovery", records) == []
    redrive = next(r for r in records if r.kind == "world.operator" and r.data["run_id"] == "run-2")
    assert not any(r.kind == "gateway.send" and r.data["key"].endswith("run-2:g2")
                   for r in records)
    # Forged: no redrive; the late take's acknowledgement tells the registry it landed.
    gone = [edit(r, run_id="run-1") if r is redrive else r for r in records]
    assert any(m.startswith("run-2 answered nothing visible")
               for m in check("lost-answer-recovery", gone))
    # Forged: the request came while run-2's latest try was out (sent 60 s before it): the
    # registry refused it ("delivery in flight"), the generation stayed, the ack counts.
    last = max((r for r in records if r.kind == "gateway.send" and r.data["run_id"] == "run-2"
                and r.seq < redrive.seq), key=lambda r: r.seq)
    out = [attrs.evolve(r, t_ms=redrive.t_ms - 60_000) if r is last else r for r in records]
    assert any(m.startswith("run-2 answered nothing visible")
               for m in check("lost-answer-recovery", out))


def test_a_private_tries_acknowledgement_counts_only_until_its_windows_end() -> None:
    # run-8 is a private result its turn released at 851,001 ms (the registry heard it 58 s
    # later: a held TurnSettled), so its window ends at 2,651,001 ms at the earliest; the
    # registry gave it up at its end with the try sent at 2,617,334 ms still out, and the
    # take's ack, held 119,999 ms, came after that (seed 49518).
    name = "private-ack-after-window-seed-49518"
    records = trace(name)
    assert check("lost-answer-recovery", records) == []
    held = next(r for r in records if r.kind == "fault" and r.data.get("kind") == "delay"
                and r.data.get("message") == "CompletionAck" and r.data.get("run_id") == "run-8")
    assert held.t_ms + held.data["delay_ms"] > 2_651_001
    # Forged: the ack held 30 s, inside the window: the registry heard the (no output) landed.
    early = [edit(r, delay_ms=30_000) if r is held else r for r in records]
    assert any(m.startswith("run-8 answered nothing visible")
               for m in check("lost-answer-recovery", early))
    # Forged: one held to 1 ms before the window's earliest end still counts.
    late = [edit(r, delay_ms=2_651_000 - held.t_ms) if r is held else r for r in records]
    assert any(m.startswith("run-8 answered nothing visible")
               for m in check("lost-answer-recovery", late))
