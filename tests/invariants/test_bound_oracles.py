"""Issue 36's count boundaries, one under the bound: a batch wake refused on its first two
attempts makes the third (``wake-attempts-used``), and lost-answer recovery refused twice hands
the answer over on its third attempt (``lost-answer-recovery``). Each oracle passes the model's
run, catches a forged trace that stops one attempt short, and lets the run that is refused at
the bound itself give up."""

from __future__ import annotations

from typing import Any

import attrs

from sim import invariants, scenario
from sim.trace import Record
from sim.world import core as world
from tests.conftest import SCENARIOS


def _run(name: str, **kwargs: Any) -> list[Record]:
    return list(world.run(scenario.load(SCENARIOS / name), **kwargs).trace.records)


def _check(records: list[Record], name: str) -> list[str]:
    return [v.message for v in invariants.check(records, [name])]


def _wake_sends(records: list[Record]) -> list[Record]:
    return [r for r in records if r.kind == "gateway.send" and r.data["run_id"].startswith(
        "batch:")]


def test_a_wake_stopping_after_two_refusals_is_caught() -> None:
    records = _run("wake-taken-on-last-attempt.toml")
    assert _check(records, "wake-attempts-used") == []
    third = _wake_sends(records)[2]
    # The forged variant: the third attempt never went out (nor anything it led to).
    short = [r for r in records if r.seq < third.seq or r.kind == "world.end"]
    assert any("attempt 2 of 3 and never sent again" in m
               for m in _check(short, "wake-attempts-used"))
    # At the budget: the third send refused too, the wake may close.
    refusal = next(r for r in records if r.kind == "fault" and r.data.get("kind")
                   == "send-transient")
    refused = [*short[:-1], third,
               attrs.evolve(refusal, seq=third.seq + 1, t_ms=third.t_ms,
                            data={**refusal.data, "key": third.data["key"]}), short[-1]]
    assert _check(refused, "wake-attempts-used") == []


def test_the_wake_mutant_one_attempt_short_is_caught() -> None:
    found = invariants.check(_run("wake-taken-on-last-attempt.toml",
                                  mutants=["wake-attempts-one-short"]))
    assert {v.invariant for v in found} == {"wake-attempts-used"}


def test_recovery_ending_after_two_refusals_is_caught() -> None:
    records = _run("recovery-last-attempt.toml")
    assert _check(records, "lost-answer-recovery") == []
    c1 = next(r.data["run_id"] for r in records if r.kind == "spawn"
              and r.data["child"] == "c1")
    # The forged variant: c1's answer never reached the requester after its two refusals.
    lost = [r for r in records if not (r.kind == "requester.recovered"
                                       and r.data["run_id"] == c1)]
    assert any(c1 in m and "2 refused" in m for m in _check(lost, "lost-answer-recovery"))
    # At the bound: a third refusal lets recovery end without it.
    refusal = next(r for r in records if r.kind == "fault" and r.data.get("kind")
                   == "recovery-fail" and r.data["run_id"] == c1)
    at = lost.index(refusal)
    assert _check([*lost[:at], refusal, *lost[at:]], "lost-answer-recovery") == []
    # A hand-off held on its way may have timed out: it counts as a failed attempt.
    held = attrs.evolve(refusal, data={"kind": "delay", "dst": "requester:agent:main:main",
                                       "message": "RecoveredAnswer", "delay_ms": 130_000,
                                       "run_id": c1, "key": f"x:{c1}:recovered"})
    assert _check([*lost[:at], held, *lost[at:]], "lost-answer-recovery") == []


def test_the_recovery_mutant_one_attempt_short_is_caught() -> None:
    found = invariants.check(_run("recovery-last-attempt.toml",
                                  mutants=["recovery-one-short"]))
    assert {v.invariant for v in found} == {"lost-answer-recovery"}


def _insert_after(records: list[Record], at: Record, new: Record) -> list[Record]:
    """``new`` right after ``at``, every later record's position moved one on."""
    i = records.index(at) + 1
    return [*records[:i], attrs.evolve(new, seq=at.seq + 1),
            *(attrs.evolve(r, seq=r.seq + 1) for r in records[i:])]


def test_a_confirmation_one_ms_before_the_answer_timeout_is_judged_at_it_not() -> None:
    """handoff-stays-delivered judges a confirmation that came less than 120,000 ms after its
    send (the try cannot have timed out), and not one in the timeout's very instant (the
    scheduler orders the timer and the answer there, as Node's event loop does)."""
    records = _run("ack-at-answer-timeout.toml")
    assert _check(records, "handoff-stays-delivered") == []
    callback = next(r for r in records if r.kind == "gateway.callback_failed")
    send = next(r for r in records if r.kind == "gateway.send"
                and r.data["run_id"] == callback.data["run_id"])
    assert callback.t_ms - send.t_ms == 119_999
    failed = next(r for r in records if r.kind == "delivery.send_failed")
    timed_out = attrs.evolve(failed, t_ms=callback.t_ms, data={
        **failed.data, "run_id": callback.data["run_id"]})
    # The forged variant: the try timed out after the confirmation one ms before the timeout.
    assert any("only its receive callback failed" in m for m in _check(
        _insert_after(records, callback, timed_out), "handoff-stays-delivered"))
    # The same at the timeout's instant: not judged.
    at = attrs.evolve(callback, t_ms=callback.t_ms + 1)
    forged = _insert_after([at if r is callback else r for r in records], at,
                           attrs.evolve(timed_out, t_ms=at.t_ms))
    assert _check(forged, "handoff-stays-delivered") == []



def test_the_answer_timeout_one_ms_early_is_caught() -> None:
    found = invariants.check(_run("mutant-answer-timeout-early.toml"))
    assert {v.invariant for v in found} == {"retry-timing"}


def test_a_private_window_ends_exactly_thirty_minutes_after_its_release() -> None:
    """The reviewer's window runs from its release at 60 s (its turn's finish) to 1,860 s: a
    give-up one ms before is caught (private-window-from-release), one at the instant is the
    rule; an attempt started at the instant (the mutant expiry-inclusive) is caught too."""
    records = _run("private-window-at-its-instant.toml")
    assert _check(records, "private-window-from-release") == []
    give_up = next(r for r in records if r.kind == "delivery.give_up")
    assert give_up.t_ms == 60_000 + 30 * 60_000
    early = [attrs.evolve(r, t_ms=r.t_ms - 1) if r is give_up else r for r in records]
    assert any("before its window of 30 minutes" in m
               for m in _check(early, "private-window-from-release"))
    found = invariants.check(_run("private-window-at-its-instant.toml",
                                  mutants=["expiry-inclusive"]))
    assert "expiry-ends-attempts" in {v.invariant for v in found}


def test_a_wake_taken_visibly_owes_no_send_after_its_replay_is_refused() -> None:
    """Seed 6241 (stop 44): the yielded turn took the wake and answered visibly, the take's
    acknowledgement came back slow, the replay of the key was refused, then the late
    acknowledgement closed the wake done. Only a visible take excuses the refused replay."""
    records = list(world.run(scenario.load(
        SCENARIOS / "regressions" / "wake-taken-then-replay-refused-seed-6241.toml")).trace.records)
    assert _check(records, "wake-attempts-used") == []
    take = next(r for r in records if r.kind == "requester.accept"
                and r.data["run_id"].startswith("batch:"))
    turn = take.data["run_id"].removeprefix("batch:")
    # Forged: the turn took the wake but gave no visible reply (a fresh key is then owed).
    silent = [r for r in records if not (r.kind == "conversation.reply"
                                         and r.data["turn_run_id"] == turn)]
    assert any("attempt 1 of 3 and never sent again" in m
               for m in _check(silent, "wake-attempts-used"))
    # Forged: nothing took it at all.
    untaken = [r for r in silent if r is not take]
    assert any("attempt 1 of 3 and never sent again" in m
               for m in _check(untaken, "wake-attempts-used"))
