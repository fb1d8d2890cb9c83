"""Yield batches and their wakes: the outbox row's keys, the scenarios, and every YLD oracle shown
catching a broken variant of the model (a monkeypatch or a built-in mutant)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

import actors.delivery.wakes.batch_wake
import actors.delivery.wakes.delivery_wakes
from actors.mutants import MUTANT_TWO_WAKES, MUTANT_WAIT_EARLIER_TURN, MUTANT_WAKE_INTO_BUSY_TURN
from actors.records.batch_record import BatchRow, BatchStatus
from actors.store.durable import RunStore
from sim import scenario
from sim.world import core as world
from tests.conftest import SCENARIOS


def _row(**kwargs: Any) -> BatchRow:
    fields: dict[str, Any] = dict(
        batch_id="b", requester="agent:main:main", agent_id="main", turn_run_id="turn:x",
        incarnation=1, members=("run-1", "run-2"), rearm_generation=2, frozen_at_ms=0)
    return BatchRow(**{**fields, **kwargs})


def test_wake_keys_name_the_sorted_batch_its_generation_and_each_retry() -> None:
    row = _row(attempt_count=1)
    assert row.attempt_key() == \
        "announce:requester-settle:main:agent:main:main:run-1,run-2:yield-2"
    assert _row(attempt_count=3).attempt_key().endswith(":yield-2:retry-2")
    # The private-completion hook: one unsuffixed key across attempts.
    assert _row(attempt_count=3, private=True).attempt_key() == row.attempt_key()
    assert not _row(status=BatchStatus.CLOSED).open


def _run(name: str, **kwargs: Any) -> world.RunResult:
    return world.run(scenario.load(SCENARIOS / name), **kwargs)


def _found(result: world.RunResult) -> set[str]:
    return {v.invariant for v in result.violations}


@pytest.mark.parametrize("name", ["yield-batch.toml", "yield-wake-retries.toml",
                                  "yield-restart-dispatching.toml", "yield-deferral-limit.toml",
                                  "yield-reset-during-wake.toml", "yield-turn-pending.toml"])
def test_yield_scenarios_pass(name: str) -> None:
    assert _run(name).violations == ()


def test_one_wake_per_batch_catches_two_wakes() -> None:
    assert "one-wake-per-batch" in _found(_run("yield-batch.toml", mutants=[MUTANT_TWO_WAKES]))


def test_wake_not_delayed_catches_a_batch_waiting_for_an_earlier_turn() -> None:
    result = _run("yield-batch.toml", mutants=[MUTANT_WAIT_EARLIER_TURN])
    assert "wake-not-delayed" in _found(result)


def test_wake_after_settle_catches_a_wake_before_a_descendant_settled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The broken store: no descendant is ever unsettled (both readers: a batch look reads its
    # members' counts in one call).
    monkeypatch.setattr(RunStore, "unsettled_descendants", lambda self, record: (0, 0))
    monkeypatch.setattr(RunStore, "descendant_counts", lambda self, ids: [(0, 0) for _ in ids])
    assert "wake-after-settle" in _found(_run("yield-batch.toml"))


def test_wake_budgets_catch_retries_sent_too_soon(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(actors.delivery.wakes.batch_wake, "RETRY_DELAYS_MS", (5_000, 10_000))
    assert "wake-budgets" in _found(_run("yield-wake-retries.toml"))


def test_wake_message_catches_findings_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(actors.delivery.wakes.delivery_wakes, "_announced", lambda record: True)
    assert "wake-message" in _found(_run("yield-batch.toml"))


def test_a_wake_after_a_reset_is_refused_and_the_batch_closes() -> None:
    result = _run("yield-reset-during-wake.toml")
    kinds = [r.kind for r in result.trace.records]
    assert "requester.wake_refused" in kinds and "requester.accept" not in kinds
    assert result.probes.get("batch.reset-during-wake") == 1


def test_a_busy_requester_defers_the_wake_on_the_same_key() -> None:
    result = _run("yield-turn-pending.toml")
    refused = [r for r in result.trace.records if r.kind == "requester.wake_refused"]
    sends = [r for r in result.trace.records if r.kind == "gateway.send"
             and r.data["run_id"].startswith("batch:")]
    assert [r.data["reason"] for r in refused] == ["requester_turn_pending"] * 3
    assert len({r.data["key"] for r in sends}) == 1  # no attempt spent
    accepted = [r for r in result.trace.records if r.kind == "requester.accept"]
    assert [r.t_ms for r in accepted] == [100_000]


def test_wake_between_turns_catches_a_wake_cutting_into_a_turn() -> None:
    result = _run("yield-turn-pending.toml", mutants=[MUTANT_WAKE_INTO_BUSY_TURN])
    assert "wake-between-turns" in _found(result)


def spend_refused_attempts(monkeypatch: pytest.MonkeyPatch) -> None:
    """A broken variant: a wake attempt refused by a busy requester counts against the budget."""
    real = actors.delivery.wakes.batch_wake.BatchWakeCore.acked

    def spent(self: Any, row: BatchRow, members: Any, ack: Any, now_ms: int) -> Any:
        effects = real(self, row, members, ack, now_ms)
        if ack.turn_pending:  # the bug: the refused attempt counts
            save = actors.delivery.wakes.batch_wake.SaveBatch
            effects = [attrs.evolve(e, row=attrs.evolve(e.row, attempt_count=row.attempt_count))
                       if isinstance(e, save) else e for e in effects]
        return effects

    monkeypatch.setattr(actors.delivery.wakes.batch_wake.BatchWakeCore, "acked", spent)


def test_wake_budgets_catch_an_attempt_spent_on_a_busy_requester(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spend_refused_attempts(monkeypatch)
    assert "wake-budgets" in _found(_run("yield-turn-pending.toml"))


def test_a_dead_processs_late_answer_of_a_wake_answers_nothing_after_a_restart() -> None:
    # Like a run's try (seed 89860), a batch wake's dispatch token is unique across incarnations
    # of the delivery process: the restarted process replays the same key, and the late refusal
    # of the dead process's dispatch of it must not read as the answer of the new one (§c17).
    from actors.delivery.edge import Send
    from actors.delivery.wakes.batch_wake import BatchWakeCore
    from actors.delivery.wakes.outbox_messages import Requester
    from actors.messages import SendRejected
    from actors.records.send_error import SendError

    def dispatched(core: BatchWakeCore, row: BatchRow) -> tuple[BatchRow, int]:
        effects = (core.check(row, [], Requester(1), 1_000) if row.status is BatchStatus.PENDING
                   else core.restore(row, [], Requester(1), 1_000))
        [send] = [e for e in effects if isinstance(e, Send)]
        [saved] = [e.row for e in effects if type(e).__name__ == "SaveBatch"]
        return saved, send.completion.dispatch

    row = _row(members=("run-1",), text="wake")
    dead = BatchWakeCore(lambda row, records: "wake", incarnation=1)
    live = BatchWakeCore(lambda row, records: "wake", incarnation=2)
    out, old = dispatched(dead, row)
    again, new = dispatched(live, out)
    assert out.status is BatchStatus.DISPATCHING and again.attempt_key() == out.attempt_key()
    assert old != new
    limited = SendError("rate limited: retry later")
    late = SendRejected(again.attempt_key(), row.batch_id, limited, dispatch=old)
    assert live.rejected(again, [], late, 2_000) == []
    own = SendRejected(again.attempt_key(), row.batch_id, limited, dispatch=new)
    assert live.rejected(again, [], own, 2_000) != []
