"""The SQLite store's in-memory database is recycled within a process (actors/store/sqlite.py):
a closed store's tables, including any a later change adds, are empty for the next store, and a
closed store cannot be used."""

from __future__ import annotations

import sqlite3

import pytest

from actors.records.run_record import RunRecord
from actors.store import schema as store_schema
from actors.store.sqlite import SqliteStore


def _record(run_id: str) -> RunRecord:
    return RunRecord(run_id=run_id, child_id="c1", child_session_key="agent:main:subagent:c1",
                     requester="agent:main:main", task="t", required=True, created_at_ms=0)


def test_a_recycled_database_is_empty_and_keeps_every_table() -> None:
    store_schema.SPARE.clear()
    first = SqliteStore()
    first.register(_record("run-1"))
    first.save_transcript("agent:main:subagent:c1", "run-1", [{"role": "user", "content": []}])
    # A table some later change adds (with AUTOINCREMENT) is found in sqlite_master and emptied.
    first._db.execute("CREATE TABLE extra (n INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT)")
    first._db.execute("INSERT INTO extra (v) VALUES ('x')")
    db = first._db
    first.close()
    assert store_schema.SPARE == [db]
    second = SqliteStore()
    assert second._db is db
    assert second.all_runs() == []
    assert second.transcript("agent:main:subagent:c1") == []
    assert second.archives("agent:main:subagent:c1") == []
    assert db.execute("SELECT COUNT(*) FROM extra").fetchone() == (0,)
    db.execute("INSERT INTO extra (v) VALUES ('y')")
    assert db.execute("SELECT n FROM extra").fetchall() == [(1,)]
    second.register(_record("run-1"))  # the same run id again: nothing of the first survived
    assert [r.run_id for r in second.all_runs()] == ["run-1"]
    second.close()


def test_a_closed_store_cannot_be_used() -> None:
    store = SqliteStore()
    store.close()
    with pytest.raises(sqlite3.ProgrammingError):
        store.all_runs()
