"""The registry's SQLite store, and a delivery core restored from it after a crash."""

from __future__ import annotations

from pathlib import Path

from actors.messages import CompletionAck
from actors.registry import (
    AttemptDue,
    DeliveryCore,
    Persist,
    RunRecord,
    Send,
    StartTimer,
    completion_key,
)
from actors.store import RunStore


def _record(run_id: str = "run-1", required: bool = True) -> RunRecord:
    return RunRecord(run_id, "c1", "agent:main:subagent:c1", "agent:main:main", "task",
                     required, created_at_ms=0)


def _apply(store: RunStore, effects: list) -> None:
    for effect in effects:
        if isinstance(effect, Persist):
            store.update(effect.run_id, effect.changes)


def test_a_file_store_survives_reopening(tmp_path: Path) -> None:
    path = str(tmp_path / "registry.sqlite")
    store = RunStore(path)
    store.register(_record())
    store.record_end("run-1", 5_000, "ok", None, "the answer")
    store.close()
    reopened = RunStore(path)
    record = reopened.get("run-1")
    assert (record.ended_at_ms, record.outcome_status, record.result_text) == (5_000, "ok",
                                                                               "the answer")
    assert [r.run_id for r in reopened.open_deliveries()] == ["run-1"]
    reopened.close()


def test_not_required_runs_are_recorded_as_such_and_never_open() -> None:
    store = RunStore()
    store.register(_record(required=False))
    store.record_end("run-1", 1, "ok", None, "x")
    assert store.get("run-1").delivery_status == "not_required"
    assert list(store.open_deliveries()) == []


def test_restart_resumes_from_the_store_with_the_same_key() -> None:
    store = RunStore()
    store.register(_record())
    store.record_end("run-1", 10_000, "ok", None, "the answer")
    first = DeliveryCore(incarnation=1, jitter=lambda: 0.0)
    effects = first.child_ended(store.get("run-1"), 10_000)
    _apply(store, effects)
    sends = [e for e in effects if isinstance(e, Send)]
    assert len(sends) == 1
    # The process dies before the acknowledgement is recorded: only the store survives.
    second = DeliveryCore(incarnation=2, jitter=lambda: 0.0)
    effects = second.restore(store.open_deliveries(), 20_000)
    resent = [e for e in effects if isinstance(e, Send)]
    assert [s.completion.key for s in resent] == [completion_key("agent:main:subagent:c1",
                                                                 "run-1")]
    assert resent[0].completion.key == sends[0].completion.key
    assert store.get("run-1").attempt_count == 1  # restore started attempt 2, persisted below
    _apply(store, effects)
    assert store.get("run-1").attempt_count == 2
    _apply(store, second.on_message(CompletionAck(resent[0].completion.key, "run-1", False),
                                    21_000))
    assert store.get("run-1").delivery_status == "delivered"
    assert list(store.open_deliveries()) == []


def test_restore_honours_a_persisted_future_attempt_time() -> None:
    store = RunStore()
    store.register(_record())
    store.record_end("run-1", 0, "ok", None, "x")
    store.update("run-1", {"next_attempt_at_ms": 60_000, "attempt_count": 1})
    core = DeliveryCore(incarnation=2, jitter=lambda: 0.0)
    effects = core.restore(store.open_deliveries(), 45_000)
    assert effects == [StartTimer(15_000, AttemptDue("run-1"))]
