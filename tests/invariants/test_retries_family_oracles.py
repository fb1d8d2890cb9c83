"""Stop 43, the delivery-retries family (seeds 20,001..100,000 of main 7bd57d7): each fix keeps
its regression scenario clean (scenarios/regressions/), and the same oracle still catches the
scenario's trace forged into the broken variant next to it (the fact its fix reads, changed), or
the model with its fix undone."""

from __future__ import annotations

import attrs
import pytest

from actors.delivery.wakes import batch_wake
from sim import scenario
from sim.trace import Record
from sim.world import core as world
from tests.invariants.regression_traces import REGRESSIONS, edit
from tests.invariants.regression_traces import check as _check
from tests.invariants.regression_traces import recorded as _recorded
from tests.invariants.regression_traces import trace as _trace


def _sends(trace: list[Record], run_id: str) -> list[Record]:
    return [r for r in trace if r.kind == "gateway.send" and r.data["run_id"] == run_id]


def test_a_try_in_the_yields_instant_is_the_runs_own() -> None:
    # run-4's try 2 goes out in the instant of the yield (seed 23986): the requester froze the
    # batch after it, the refusal handed run-4 over, and the batch's close gave it up.
    trace = _trace("try-before-yield-same-instant-seed-23986")
    assert _check("retry-timing", trace) == []
    assert _check("expiry-ends-attempts", trace) == []
    yielded = next(r for r in trace if r.kind == "world.turn_end" and r.data["how"] == "yield")
    assert any(r.t_ms == yielded.t_ms for r in _sends(trace, "run-4"))
    # Had the yield come a millisecond earlier, that try was the run's own since the freeze,
    # and the batch's close of it is an early give-up.
    earlier = [attrs.evolve(r, t_ms=r.t_ms - 1) if r is yielded else r for r in trace]
    assert any("run-4 was given up at" in m and "before its expiry" in m
               for m in _check("retry-timing", earlier))


def test_a_correction_after_a_taken_wake_is_the_batchs_while_the_wake_is_sent_again() -> None:
    # run-3 was delivered on its own after the yield; the batch's wake is taken but its turn
    # gives no visible reply, and run-3's correction comes before the wake's retries: the
    # batch, still open, owns it, and its close gives it up (seed 49067).
    # Since stop 45 the session answers a private hand-off bound to its earlier incarnation
    # (run-2's), which moves this replay off the case: the trace it replayed before is kept.
    trace = _recorded("correction-after-busy-wake-seed-49067")
    assert _check("retry-timing", trace) == []
    correction = next(r for r in trace
                      if r.kind == "child.correction" and r.data["run_id"] == "run-3")
    retries = [r for r in trace if r.kind == "gateway.send" and r.seq > correction.seq
               and ":yield-" in r.data["key"] and "run-3" in r.data["key"]]
    assert retries
    # Had the batch not sent its wake again, the taken wake delivered it: the correction was
    # run-3's own, and giving it up with the batch is early.
    delivered = [r for r in trace if not any(r is w for w in retries)]
    assert any("run-3 was given up at" in m for m in _check("retry-timing", delivered))


def test_a_deleted_sessions_late_refusal_answers_the_send_before_the_fallback() -> None:
    # run-7's completion, delayed on its way to c5, is refused by that deleted session after
    # the fallback's send to agent:main:main, whose own answer says part of it went out
    # (seed 77546).
    # Since stop 45 a private try (run-2's) waits with no answer timeout, which reorders this
    # replay's instants: the trace it replayed before is kept, as an outsider recorded it.
    trace = _recorded("stale-gone-after-fallback-seed-77546")
    assert _check("retry-timing", trace) == []
    gone = next(r for r in trace if r.kind == "requester.gone" and r.data["run_id"] == "run-7")
    last = max((r for r in _sends(trace, "run-7") if r.seq < gone.seq), key=lambda r: r.seq)
    assert gone.actor != last.data["requester"]
    # Had the fallback's own session refused it, that refusal was the answer, and the give-up
    # on a retryable refusal is early.
    own = [attrs.evolve(r, actor=last.data["requester"]) if r is gone else r for r in trace]
    assert any("run-7 was given up at" in m for m in _check("retry-timing", own))


def test_a_give_up_recorded_for_an_older_generation_does_not_cover_the_next() -> None:
    # run-2's first generation was given up and recorded; its correction's generation was
    # refused for good (part sent), the process died before recording it and sent once more
    # (seed 33520).
    trace = _trace("crash-before-g2-give-up-seed-33520")
    assert _check("permanent-stops-retries", trace) == []
    resend = _sends(trace, "run-2")[-1]
    crash = max((r for r in trace if r.kind == "crash" and r.actor == "delivery"
                 and r.seq < resend.seq), key=lambda r: r.seq)
    # Without that crash, the live process knew the refusal: the resend breaks DEL-10.
    alive = [r for r in trace if r is not crash]
    assert any("run-2 was rejected permanently at" in m and "yet it was sent again" in m
               for m in _check("permanent-stops-retries", alive))


@pytest.mark.parametrize(("name", "run_id"), [
    ("private-batch-close-spares-sibling-seed-69144", "run-7"),
    ("wave-close-spares-redriven-seed-99401", "run-1"),
])
def test_a_batch_close_leaves_a_member_it_does_not_own_to_its_own_delivery(
        name: str, run_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # A public sibling of a private batch (seed 69144), a wave's member (seed 99401), redriven
    # while the wake was out: its own delivery runs on when the wake closes.
    result = world.run(scenario.load(REGRESSIONS / f"{name}.toml"))
    assert result.violations == ()
    trace = list(result.trace)
    assert not any(r.kind == "delivery.give_up" and r.data["run_id"] == run_id
                   and r.data["reason"] == "batch_closed" for r in trace)
    assert any(r.kind == "delivery.delivered" and r.data["run_id"] == run_id
               and r.data["key"].endswith(":g2") for r in trace)
    # The bug: the close resolves every pending member, also one it never owned.
    monkeypatch.setattr(batch_wake, "_owns", lambda row, record: record.run_id in row.members)
    broken = world.run(scenario.load(REGRESSIONS / f"{name}.toml"))
    assert any(v.invariant == "retry-timing" and f"{run_id} was given up at" in v.message
               for v in broken.violations)


def test_a_refusal_after_the_answer_timeout_is_stale() -> None:
    # run-5's completion, delayed 121 s on its way to its deleted requester, is refused 1 s
    # after the 120 s answer timeout; try 2 follows the timeout by 5 s (seed 74027).
    trace = _trace("refusal-after-answer-timeout-seed-74027")
    assert _check("retry-timing", trace) == []
    first = _sends(trace, "run-5")[0]
    gone = next(r for r in trace if r.kind == "requester.gone" and r.data["run_id"] == "run-5")
    assert gone.t_ms > first.t_ms + 120_000
    # Had the refusal come before the timeout, it was the answer: an error of no known class,
    # after which the next attempt waits the registry backoff, not 5 s.
    answered = [attrs.evolve(r, t_ms=first.t_ms + 119_000) if r is gone else r for r in trace]
    assert any("run-5: attempt 1 ended in an error of no known class" in m
               for m in _check("retry-timing", answered))


def test_unsent_attempts_of_a_run_whose_requester_is_gone_count_their_backoffs() -> None:
    # run-3's requester session and then its fallback were deleted: attempts with no route
    # start and end unsent (retryable, reference §c2), and the next send comes after their
    # backoffs in a row (seed 61501).
    trace = _trace("unrouted-attempts-seed-61501")
    assert _check("retry-timing", trace) == []
    # Had no session been deleted, every attempt had its route: a send after two backoffs
    # skipped an attempt.
    kept = [r for r in trace if r.kind != "world.delete-session"
            and not (r.kind == "world.lifecycle" and r.data.get("event") == "delete")]
    assert any("run-3: attempt" in m and "outside the backoff" in m
               for m in _check("retry-timing", kept))


def test_retryable_keeps_trying_leaves_a_batch_abandoned_by_its_requester_to_it() -> None:
    # run-3 was refused only with retryable errors, then frozen into its requester's yield;
    # the requester was reset or deleted, and the batch closed without a wake, keeping the
    # result for a redrive (docs/yield.md "Reset and delete"; seed 65647).
    trace = _trace("abandoned-batch-member-seed-65647")
    assert _check("retryable-keeps-trying", trace) == []
    lifecycle = [r for r in trace if r.kind == "world.lifecycle"
                 and r.data.get("event") in ("reset", "delete")]
    assert lifecycle
    # Had the user not started over, the batch owed run-3's result to its requester.
    kept = [r for r in trace if not any(r is x for x in lifecycle)]
    assert any("run-3 was refused only with retryable errors" in m
               for m in _check("retryable-keeps-trying", kept))


def test_blocked_warning_reads_a_deleted_sessions_refusal_after_a_fallback_as_stale() -> None:
    # run-7's completion to c6 is refused by that deleted session in the instant the fallback
    # sent it to agent:main:main, whose own refusal the warning carries (seed 92622).
    trace = _trace("gone-refusal-after-fallback-seed-92622")
    assert _check("blocked-warning", trace) == []
    gone = next(r for r in trace if r.kind == "requester.gone" and r.data["run_id"] == "run-7")
    last = max((r for r in _sends(trace, "run-7") if r.seq < gone.seq), key=lambda r: r.seq)
    assert gone.actor != last.data["requester"]
    # Had the fallback's session refused it, that was the latest refusal: the warning is wrong.
    own = [attrs.evolve(r, actor=last.data["requester"]) if r is gone else r for r in trace]
    assert any("the warning for run-7 says" in m for m in _check("blocked-warning", own))


def test_blocked_warning_reads_a_refusal_of_a_dead_processs_try_as_stale() -> None:
    # run-9's try to c6 goes out, the delivery process dies, and the deleted session's refusal
    # reaches the new process, which never issued that try (§c17; seed 97011).
    trace = _trace("refusal-after-restart-seed-97011")
    assert _check("blocked-warning", trace) == []
    gone = next(r for r in trace if r.kind == "requester.gone" and r.data["run_id"] == "run-9")
    last = max((r for r in _sends(trace, "run-9") if r.seq < gone.seq), key=lambda r: r.seq)
    restart = [r for r in trace if r.actor == "delivery" and r.kind in ("crash", "delivery.start")
               and last.seq < r.seq < gone.seq]
    assert restart
    # Had the process lived, the refusal answered its try: the warnings after it are wrong.
    alive = [r for r in trace if not any(r is x for x in restart)]
    assert any("the warning for run-9 says" in m for m in _check("blocked-warning", alive))


def test_a_redrive_after_a_batchs_deferral_close_is_blocked_on_the_timeout() -> None:
    # run-2's batch closed after ten deferrals; a redrive's tries then go unanswered, so its
    # warning is blocked on the announce timeout, not on the close (no send was refused: 4399).
    trace = _trace("batch-close-error-not-carried-seed-4399")
    assert _check("blocked-warning", trace) == []
    warnings = [r for r in trace if r.kind == "delivery.warning" and r.data["run_id"] == "run-2"]
    assert warnings and all(r.data["error"] == "gateway timeout" for r in warnings)
    assert any(r.kind == "delivery.give_up" and r.data["run_id"] == "run-2"
               and r.data["error"] == batch_wake.DEFERRAL_ERROR for r in trace)
    # The model's old bug, the close's error carried into the redrive, is still named.
    forged = [edit(r, error=batch_wake.DEFERRAL_ERROR) if r in warnings else r for r in trace]
    assert any("the warning for run-2 says" in m for m in _check("blocked-warning", forged))


def test_a_closed_turn_refusal_of_an_older_generation_is_stale() -> None:
    # run-2's first generation and its correction's second were sent in one instant; the first
    # was refused for a closed turn, the second with "chat not found", which the registry
    # recorded as its permanent failure (seed 61169).
    trace = _trace("closed-turn-of-older-generation-seed-61169")
    assert _check("closed-turn-final", trace) == []
    closed = next(r for r in trace if r.kind == "fault" and r.data.get("run_id") == "run-2"
                  and r.data.get("kind") == "send-permanent" and "transcript" in str(r.data))
    newer = next(r for r in trace if r.kind == "gateway.send" and r.data["run_id"] == "run-2"
                 and r.data["key"].endswith(":g2"))
    assert closed.data["key"] != newer.data["key"]
    # Forged: the closed-turn refusal answers the latest key: the registry's record is wrong.
    forged = [edit(r, key=newer.data["key"]) if r is closed else r for r in trace]
    assert any("run-2 was refused for a closed turn" in m
               for m in _check("closed-turn-final", forged))
