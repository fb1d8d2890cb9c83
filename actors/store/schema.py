"""The SQLite store's tables: the schema, a run row's columns and their decoding, and the
in-memory databases a process recycles (``actors/store/sqlite.py``)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from typing import Any

import attrs

from actors.records.run_record import CHANGE_TYPES, RunRecord, columns
from actors.states import ClaimPhase, DeliveryStatus, EvidenceKind, OutcomeStatus

FIELDS = tuple(f.name for f in attrs.fields(RunRecord))
# Per change type: its columns and the UPDATE that writes them.
UPDATES = {
    t: (columns(t), "UPDATE runs SET " + ", ".join(f"{c} = ?" for c in columns(t))
        + " WHERE run_id = ?")
    for t in CHANGE_TYPES
}
_SQL_TYPES = {"int": "INTEGER", "bool": "INTEGER", "str": "TEXT"}


def _column(field: attrs.Attribute[Any]) -> str:
    type_name = str(field.type).split("|")[0].strip()
    sql = _SQL_TYPES.get(type_name, "TEXT")
    return f"{field.name} {sql}" + (" PRIMARY KEY" if field.name == "run_id" else "")


# The schema, one statement each; a new table goes here (every table is emptied on reuse).
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS runs ("
    + ", ".join(_column(f) for f in attrs.fields(RunRecord)) + ", row_order INTEGER)",
    # A live session's transcript: its latest run's record, which is also that run's archive
    # (FMT-6), so the row names the archive's generation instead of holding a second copy of
    # the payload (a big run's transcripts were a quarter of its database). The primary key
    # keeps saving and reading one lookup.
    "CREATE TABLE IF NOT EXISTS transcripts (session_key TEXT PRIMARY KEY, generation INTEGER)",
    # Without it, restoring open deliveries scans every row: a run with n children would
    # cost O(n^2). A run stays open (uncleaned) until its obligations resolved and its
    # cleanup ran, so pending deliveries are a subset.
    "CREATE INDEX IF NOT EXISTS runs_open ON runs (cleaned_up_at_ms, row_order)",
    "CREATE INDEX IF NOT EXISTS runs_by_requester ON runs (requester, created_at_ms)",
    # Nesting (docs/nesting.md): a run's direct children, and a session's runs.
    "CREATE INDEX IF NOT EXISTS runs_by_requester_run ON runs (requester_run_id, row_order)",
    "CREATE INDEX IF NOT EXISTS runs_by_session ON runs (child_session_key, row_order)",
    # Nested requester sessions deleted (DEL-4): their completions fall back upwards.
    "CREATE TABLE IF NOT EXISTS deleted_sessions "
    "(session_key TEXT PRIMARY KEY, deleted_at_ms INTEGER)",
    # FMT-6: retained transcripts, one record per generation of a session key; run
    # membership lives inside the still-encoded payload. Read rarely, but without the index
    # each read scans every archive: a run with n children read O(n) times cost O(n^2).
    "CREATE TABLE IF NOT EXISTS archives (session_key TEXT, generation INTEGER, payload BLOB)",
    "CREATE INDEX IF NOT EXISTS archives_by_key ON archives (session_key, generation)",
    # Lost-answer recovery (DEL-2, actors/delivery/recovery.py): its durable attempt count and
    # outcome.
    "CREATE TABLE IF NOT EXISTS recoveries "
    "(run_id TEXT PRIMARY KEY, attempts INTEGER, outcome TEXT)",
    # A requester session's checkpoints: each completion receipt its transcript took, by run
    # (its source-delivery facts; DEL-13 reconciliation reads them after a restart).
    "CREATE TABLE IF NOT EXISTS checkpoints (session_key TEXT, child_session_key TEXT, "
    "run_id TEXT, key TEXT, ended_at_ms INTEGER)",
    "CREATE INDEX IF NOT EXISTS checkpoints_by_run ON checkpoints (session_key, run_id)",
    # The session store's entry of each requester session: its incarnation (lifecycle
    # revision, bumped by /new or a delete) and whether the entry is deleted.
    "CREATE TABLE IF NOT EXISTS sessions "
    "(session_key TEXT PRIMARY KEY, incarnation INTEGER, deleted INTEGER)",
    # The batch-wake outbox (requesterSettleWake): one JSON row per batch (batch_record.py).
    "CREATE TABLE IF NOT EXISTS batches (batch_id TEXT PRIMARY KEY, "
    "requester TEXT, open INTEGER, row_order INTEGER, payload TEXT)",
)

# In-memory databases are recycled within a process: a seed sweep opens one per run, and a new
# connection costs its set-up plus compiling the schema and every statement again (sqlite3
# keeps prepared statements per connection). A closed store's database is emptied, table by
# table as sqlite_master lists them, and the next store takes it; nothing of a run survives
# into the next one. A forked worker starts with none (a connection must not cross a fork).
SPARE: list[sqlite3.Connection] = []
SPARE_MAX = 4
CLOSED = sqlite3.connect(":memory:")
CLOSED.close()  # what a closed store holds: any use raises, as a closed connection does
os.register_at_fork(after_in_child=SPARE.clear)


def open_db(path: str) -> sqlite3.Connection:
    if path == ":memory:" and SPARE:
        return SPARE.pop()
    db = sqlite3.connect(path, isolation_level=None)
    for statement in SCHEMA:
        db.execute(statement)
    return db


def recycle(db: sqlite3.Connection) -> bool:
    """Empty an in-memory database and keep it for the next store (False: it was not kept)."""
    if db.in_transaction or len(SPARE) >= SPARE_MAX:
        return False
    tables = [name for (name,) in db.execute(  # sqlite_sequence too: AUTOINCREMENT restarts
        "SELECT name FROM sqlite_master WHERE type = 'table' "
        "AND (name NOT LIKE 'sqlite_%' OR name = 'sqlite_sequence')")]
    for name in tables:
        db.execute(f'DELETE FROM "{name}"')
    SPARE.append(db)
    return True


def decode_record(row: tuple[Any, ...]) -> RunRecord:
    """A run's row as its record (columns in RunRecord's field order; positional, one dict
    lookup per enum column: ~120 decodes per default-world seed)."""
    values = list(row)
    for index, decode in _DECODE:
        value = values[index]
        if value is not None:
            values[index] = decode(value)
    return RunRecord(*values)


def _enum_of(enum: type[DeliveryStatus | OutcomeStatus | ClaimPhase | EvidenceKind]
             ) -> Callable[[Any], Any]:
    return {member.value: member for member in enum}.__getitem__


# The columns that are not stored as themselves: booleans as integers, enums by value.
_DECODE: tuple[tuple[int, Callable[[Any], Any]], ...] = tuple(
    (FIELDS.index(name), decode) for name, decode in (
        ("required", bool), ("private", bool), ("announce_suppressed", bool),
        ("delivery_status", _enum_of(DeliveryStatus)),
        ("outcome_status", _enum_of(OutcomeStatus)),
        ("claim_phase", _enum_of(ClaimPhase)),
        ("evidence_kind", _enum_of(EvidenceKind))))
