"""The registry's SQLite store, and a delivery core restored from it after a crash."""

from __future__ import annotations

from pathlib import Path

from actors.delivery.edge import AttemptDue, Effect, Persist, Send, StartTimer
from actors.delivery.shell import render, requester_kind
from actors.delivery.table import DeliveryCore
from actors.messages import CompletionAck
from actors.records.run_record import AttemptStarted, RetryScheduled, RunRecord, completion_key
from actors.states import OutcomeStatus
from actors.store.durable import RunStore
from actors.store.sqlite import SqliteStore

OK = OutcomeStatus.OK


def _core(incarnation: int) -> DeliveryCore[object]:
    return DeliveryCore(incarnation, lambda: 0.0, render, requester_kind)


def _record(run_id: str = "run-1", required: bool = True) -> RunRecord:
    return RunRecord(run_id, "c1", "agent:main:subagent:c1", "agent:main:main", "task",
                     required, created_at_ms=0)


def _apply(store: RunStore, effects: list[Effect]) -> None:
    for effect in effects:
        if isinstance(effect, Persist):
            store.apply(effect.run_id, effect.change)


def test_a_file_store_survives_reopening(tmp_path: Path) -> None:
    path = str(tmp_path / "registry.sqlite")
    store = SqliteStore(path)
    store.register(_record())
    store.record_end("run-1", 5_000, OK, None, "the answer")
    store.close()
    reopened = SqliteStore(path)
    record = reopened.get("run-1")
    assert (record.ended_at_ms, record.outcome_status, record.result_text) == (5_000, "ok",
                                                                               "the answer")
    assert [r.run_id for r in reopened.open_deliveries()] == ["run-1"]
    reopened.close()


def test_not_required_runs_are_recorded_as_such_and_open_only_until_cleaned_up() -> None:
    store = RunStore()
    store.register(_record(required=False))
    store.record_end("run-1", 1, OK, None, "x")
    assert store.get("run-1").delivery_status == "not_required"
    # Nothing to deliver, but its cleanup is owed: a restarted core cleans it up, once.
    effects = _core(2).restore(store.open_deliveries(), 5)
    assert not [e for e in effects if isinstance(e, Send)]
    _apply(store, effects)
    assert store.get("run-1").cleaned_up_at_ms == 5
    assert list(store.open_deliveries()) == []


def test_restart_resumes_from_the_store_with_the_same_key() -> None:
    store = RunStore()
    store.register(_record())
    store.record_end("run-1", 10_000, OK, None, "the answer")
    first = _core(1)
    effects = first.child_ended(store.get("run-1"), 10_000)
    _apply(store, effects)
    sends = [e for e in effects if isinstance(e, Send)]
    assert len(sends) == 1
    # The process dies before the acknowledgement is recorded: only the store survives.
    second = _core(2)
    effects = second.restore(store.open_deliveries(), 20_000)
    resent = [e for e in effects if isinstance(e, Send)]
    assert [s.completion.key for s in resent] == [completion_key("agent:main:subagent:c1",
                                                                 "run-1")]
    assert resent[0].completion.key == sends[0].completion.key
    assert store.get("run-1").attempt_count == 1  # restore started attempt 2, persisted below
    _apply(store, effects)
    assert store.get("run-1").attempt_count == 2
    _apply(store, second.handle(CompletionAck(resent[0].completion.key, "run-1", False),
                                    21_000))
    assert store.get("run-1").delivery_status == "delivered"
    assert list(store.open_deliveries()) == []


def test_restore_honours_a_persisted_future_attempt_time() -> None:
    store = RunStore()
    store.register(_record())
    store.record_end("run-1", 0, OK, None, "x")
    store.apply("run-1", AttemptStarted(1))
    store.apply("run-1", RetryScheduled(60_000, "gateway timeout"))
    core = _core(2)
    effects = core.restore(store.open_deliveries(), 45_000)
    assert effects == [StartTimer(15_000, AttemptDue("run-1"))]


def test_the_sqlite_store_counts_its_statements() -> None:
    store = SqliteStore()
    opened = store.statements
    store.register(_record())  # the re-created session's DELETE, then the INSERT
    assert store.statements == opened + 2
    store.get("run-1")  # read from the table, then kept decoded
    store.get("run-1")  # a cached read runs nothing
    assert store.statements == opened + 3
    store.record_end("run-1", 5_000, OK, None, "the answer")
    assert store.statements == opened + 4
    store.close()
