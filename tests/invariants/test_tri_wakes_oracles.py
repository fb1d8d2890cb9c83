"""Stop-43 triage, the batch-wake family: each fix keeps its regression scenario clean
(scenarios/regressions/), and the oracle still catches the broken variant next to it: the
scenario's trace forged (the fact the oracle's fix reads, changed), or the model's fix undone."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from actors.delivery.wakes.batch_wake import BatchWakeCore
from actors.records.batch_record import BatchStatus
from sim import scenario
from sim.explore.worlds import default_world_path
from sim.trace import Record
from sim.world import core as world
from tests.invariants.regression_traces import check as _check
from tests.invariants.regression_traces import trace as _trace


def test_wake_not_delayed_reads_a_redrive_after_a_deferred_close_as_the_members_own() -> None:
    # The batch's members settle at 32 s; its descendant run-2's delivery never settles
    # through the outage, so the batch closes at its deferral limit (302 s) unwoken: run-1
    # suspended, run-3 (timed out) failed. An operator asks to redrive run-3 at 427 s, and
    # run-2 settles at 665 s: no wake was owed (seed 30564). The saved run once took that
    # redrive (g2 taken at 427 s); since issue 34 a failed run is refused (only a suspended
    # completion is redriven, OpenClaw 2026.9.6), so the redrive the oracle reads is forged
    # onto run-1, the member the close suspended, whose redrive the released code takes.
    trace = _trace("redrive-after-deferred-close-seed-30564")
    assert _check("wake-not-delayed", trace) == []
    request = next(r for r in trace if r.kind == "world.operator" and r.t_ms == 427_000)
    spawn = next(r for r in trace if r.kind == "spawn" and r.data["run_id"] == "run-1")
    end = next(r for r in trace if r.kind == "child.end" and r.data["run_id"] == "run-1")
    send = next(r for r in trace if r.kind == "gateway.send" and r.data["run_id"] == "run-2")
    accept = next(r for r in trace if r.kind == "requester.accept"
                  and r.data["run_id"] == "run-2")
    key = f"announce:v1:{spawn.data['child_session_key']}:run-1:g2"
    own = {"run_id": "run-1", "key": key, "ended_at": end.t_ms}
    # g2 of run-1 sent and taken at 427 s, in the refused request's place.
    g2 = [attrs.evolve(r, t_ms=request.t_ms, seq=request.seq, data={**r.data, **own})
          for r in (send, accept)]

    def asked_at(t_ms: int) -> list[Record]:
        asked = attrs.evolve(request, t_ms=t_ms, data={**request.data, "run_id": "run-1",
                                                       "child": spawn.data["child"]})
        kept = [x for r in trace if r.kind != "delivery.operator_refused"
                for x in (g2 if r is request else [r])]
        return sorted([*kept, asked], key=lambda r: (r.t_ms, r.seq))

    assert _check("wake-not-delayed", asked_at(request.t_ms)) == []
    # Had the redrive been asked before the deferral limit could close the batch (302 s),
    # the batch waited for the member's new delivery (taken at 427 s) and then for run-2
    # (665 s): the deferral limit could no longer have closed it first, and the wake was
    # owed. Asked at the close's very instant, it comes too late to hold it.
    assert _check("wake-not-delayed", asked_at(302_000)) == []
    assert any("had settled by 665026 ms, yet its wake was never sent" in m
               for m in _check("wake-not-delayed", asked_at(301_999)))


def test_wake_sends_budget_reads_an_answer_at_the_timeout_as_maybe_unseen() -> None:
    # The busy session's refusal of the wave's 12:54 send is held 120 s on its way back, to the
    # very instant of the answer timeout: the process timed the send out first (the key counts
    # as ambiguous), so after the gateway's next refusal it replays the key (seed 85684).
    trace = _trace("wake-answer-at-timeout-seed-85684")
    assert _check("wake-sends-budget", trace) == []
    [held] = [r for r in trace if r.kind == "fault" and r.data.get("kind") == "delay"
              and r.data.get("message") == "CompletionAck" and r.data["delay_ms"] == 120_000]
    # Held a millisecond less, the refusal was surely had in time: nothing left the key
    # ambiguous, so the gateway's refusal spent the attempt and a fresh key was owed.
    sooner = [attrs.evolve(r, data={**r.data, "delay_ms": 119_999}) if r is held else r
              for r in trace]
    assert any("again" in m and "every earlier send of it was answered" in m
               for m in _check("wake-sends-budget", sooner))


def _stale_answers_answer_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Undo the model's fix: every answer of a dispatch no longer out is dropped, a take too."""
    acked = BatchWakeCore.acked

    def old(self: BatchWakeCore, row: Any, members: Any, ack: Any, now_ms: int) -> Any:
        if row.status != BatchStatus.DISPATCHING or ack.key != row.attempt_key() or \
                ack.dispatch != self._tokens.get(row.batch_id):
            return []
        return acked(self, row, members, ack, now_ms)

    monkeypatch.setattr(BatchWakeCore, "acked", old)


def test_a_taken_copy_of_a_refused_wake_completes_the_batch(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The busy session refused the wake at 9:43.530; the network's copy of that send, arriving
    # after the turn ended, was taken at 9:47.530. Its acknowledgement reaches the outbox as
    # the answer of a dispatch no longer out: it is the wake done (seed 28414).
    name = "wake-copy-taken-after-refusal-seed-28414"
    trace = _trace(name)
    assert _check("one-wake-per-batch", trace) == []
    # Dropped as a stale answer, the wake went again on a fresh key and woke the turn twice.
    _stale_answers_answer_nothing(monkeypatch)
    assert any("woke its requester 2 times" in m
               for m in _check("one-wake-per-batch", _trace(name)))


def test_one_wake_per_batch_excuses_a_second_wake_after_a_take_no_live_process_heard() -> None:
    # The busy session refused the wake at 10:38.998; the network's copy of that send was taken
    # at 10:46.998, while the delivery process was down (10:45.001 to 11:05.001): nobody heard
    # the take, and the key's retry after the gateway's refusal woke the turn again (seed 59278).
    trace = _trace("wake-copy-taken-while-down-seed-59278")
    assert _check("one-wake-per-batch", trace) == []
    # Had the process been up (no crash), it heard the take: a second wake is one too many.
    [crash] = [r for r in trace if r.kind == "crash" and r.t_ms == 645_001]
    up = [r for r in trace if r is not crash]
    assert any("woke its requester 2 times (at 646998, 698998 ms)" in m
               for m in _check("one-wake-per-batch", up))


def test_wake_sends_budget_owes_nothing_after_the_wake_was_taken() -> None:
    # Seed 1468 of the default world: the wake taken at 10:04 (its acknowledgement slowed
    # 140 s), the process restarts and replays the key into a busy turn (refused at 11:55);
    # the take's late acknowledgement then closes the batch delivered: nothing is owed again.
    trace = list(world.run(scenario.load(default_world_path()), seed=1468).trace)
    assert _check("wake-sends-budget", trace) == []
    # Without that take the busy session's refusal left the wake armed: it was owed again.
    key = "announce:requester-settle:main:agent:main:main:run-1,run-2,run-3,run-4:yield-1"
    [take] = [r for r in trace if r.kind == "requester.accept" and r.data["key"] == key]
    untaken = [r for r in trace if r is not take]
    assert any(f"was never sent again after requester:agent:main:main refused {key}" in m
               for m in _check("wake-sends-budget", untaken))
