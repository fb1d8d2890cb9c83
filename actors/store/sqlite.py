"""The registry's store in SQLite (stdlib ``sqlite3``): a database file that outlives the process.

The same store as ``actors/store/durable.py`` (every method, the same values back), kept in a
database: what a user opens with a path, and the reference the in-memory store is checked against
(tests/store/test_store_backends.py runs the world on both and compares the traces). Each write
commits at once. ``:memory:`` databases are recycled within a process (emptied, never shared by
two runs).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from actors.records.archive import ArchiveRecord
from actors.records.batch_record import BatchRow
from actors.records.keys import is_subagent
from actors.records.retention import ELLIPSIS, PREVIEW_CHARS, RunSummary
from actors.records.run_record import Change, RunRecord
from actors.states import DeliveryStatus
from actors.store.cache import OpenBatches, PendingTree, RecordCache
from actors.store.codec import batch_payload, batch_row, stored_archive, unpack
from actors.store.schema import CLOSED, FIELDS, UPDATES, decode_record, open_db, recycle
from actors.store.shared import StoreBase


class SqliteStore(StoreBase):
    def __init__(self, path: str = ":memory:") -> None:
        self._db = open_db(path)
        self._in_memory = path == ":memory:"
        # The SQL statements this store ran since it opened: what a registry on SQLite pays per
        # run (the in-memory store, what the world runs on, runs none; its trace is the same).
        self.statements = 0
        # Decoded beside the tables, for the hot reads (actors/store/cache.py).
        self._records = RecordCache(decode_record, FIELDS.index("run_id"))
        self._open_batches = OpenBatches()
        for batch_id, rank, payload, is_open in self._run(
                "SELECT batch_id, row_order, payload, open FROM batches ORDER BY row_order"):
            self._open_batches.load(batch_id, rank, batch_row(payload) if is_open else None)
        # Each requester turn's state (open, finished, yielded, abandoned): what the delivery
        # side reads to retain a private result while its spawning turn is open (PRV-5).
        self._run("CREATE TABLE IF NOT EXISTS turn_states "
                         "(turn_run_id TEXT PRIMARY KEY, state TEXT, at_ms INTEGER)")
        self._order = 0
        self._archived = 0  # archives this store saved (DEFLATE_ARCHIVES_FROM)
        # The runs that spawned children (only membership is asked, never iterated).
        self._spawning_runs: set[str] = set() if self._in_memory else set(
            key for (key,) in self._run(
                "SELECT DISTINCT requester_run_id FROM runs WHERE requester_run_id IS NOT NULL"))
        self._tree = PendingTree()
        if not self._in_memory:
            for run_id, parent, cleaned, ended in self._run(
                    "SELECT run_id, requester_run_id, cleaned_up_at_ms, ended_at_ms FROM runs "
                    "ORDER BY row_order"):
                self._tree.add(run_id, parent)
                if cleaned is not None:
                    self._tree.clean(run_id)
                if ended is not None:
                    self._tree.end(run_id)
        self._batch_order = 0
        # The last archive generation of each session key (the archives table's maximum, kept
        # beside it so retaining a run costs one write; a fresh database has none).
        self._generations: dict[str, int] = {} if self._in_memory else dict(self._run(
            "SELECT session_key, MAX(generation) FROM archives GROUP BY session_key").fetchall())

    def close(self) -> None:
        db, self._db = self._db, CLOSED
        if not (self._in_memory and recycle(db)):
            db.close()

    def register(self, record: RunRecord) -> None:
        """A requester spawned a child run (sessions_spawn registers it before it starts)."""
        record = self._registered(record)
        if record.requester_run_id is not None:
            self._spawning_runs.add(record.requester_run_id)
        values = [getattr(record, name) for name in FIELDS]
        if is_subagent(record.child_session_key):  # spawning a session again re-creates it
            self._run("DELETE FROM deleted_sessions WHERE session_key = ?",
                             [record.child_session_key])
        placeholders = ", ".join("?" for _ in range(len(FIELDS) + 1))
        self._records.forget(record.run_id)
        self._run(
            f"INSERT INTO runs ({', '.join(FIELDS)}, row_order) VALUES ({placeholders})",
            [*values, self._order],
        )
        # After the insert: a run id already taken fails there and must not touch the tree.
        self._tree.add(record.run_id, record.requester_run_id)
        if record.cleaned_up_at_ms is not None:
            self._tree.clean(record.run_id)
        if record.ended_at_ms is not None:
            self._tree.end(record.run_id)

    def apply(self, run_id: str, change: Change,
              known: tuple[RunRecord, RunRecord] | None = None) -> None:
        """Make ``change`` durable: write the columns it names (``known``, the writer's own
        result, is not needed: the statement writes the columns)."""
        names, sql = UPDATES[type(change)]
        self._run(sql, [*(getattr(change, name) for name in names), run_id])
        self._records.changed(run_id, change)  # after the write: a failed one changes nothing
        self._tree.changed(run_id, change)

    def _run(self, sql: str, parameters: Sequence[Any] = ()) -> sqlite3.Cursor:
        """Run one statement, counted."""
        self.statements += 1
        return self._db.execute(sql, parameters)

    def record_checkpoint(self, session_key: str, child_session_key: str, run_id: str,
                          key: str, ended_at_ms: int) -> None:
        """A requester session's transcript took this receipt (a durable source-delivery fact)."""
        self._run("INSERT INTO checkpoints VALUES (?, ?, ?, ?, ?)",
                         [session_key, child_session_key, run_id, key, ended_at_ms])

    def checkpoint(self, session_key: str, child_session_key: str, run_id: str | None
                   ) -> tuple[str, int] | None:
        """The newest receipt of ``run_id`` that ``session_key``'s transcript took, as (key,
        producer end time); ``run_id`` None: of any run of that child session (a bug's lookup,
        see actors.mutants)."""
        if run_id is None:
            row = self._run(
                "SELECT key, ended_at_ms FROM checkpoints WHERE session_key = ? AND "
                "child_session_key = ? ORDER BY ended_at_ms DESC LIMIT 1",
                [session_key, child_session_key]).fetchone()
        else:
            row = self._run(
                "SELECT key, ended_at_ms FROM checkpoints WHERE session_key = ? AND run_id = ? "
                "ORDER BY ended_at_ms DESC LIMIT 1", [session_key, run_id]).fetchone()
        return None if row is None else (str(row[0]), int(row[1]))

    def save_transcript(self, session_key: str, run_id: str,
                        messages: list[dict[str, Any]]) -> ArchiveRecord:
        """A finished run's transcript: it becomes its session's live transcript (replacing
        what was there) and is retained as the next generation of that key (FMT-6)."""
        generation = self._generations[session_key] = self._generations.get(session_key, 0) + 1
        record = ArchiveRecord.encode(session_key, generation, run_id, messages)
        self._run("INSERT OR REPLACE INTO transcripts (session_key, generation) "
                         "VALUES (?, ?)", [session_key, generation])
        self._archived += 1
        stored = stored_archive(record.payload, self._archived)
        self._run("INSERT INTO archives (session_key, generation, payload) "
                         "VALUES (?, ?, ?)", [session_key, generation, stored])
        return record

    def transcript(self, session_key: str) -> list[dict[str, Any]]:
        """The live session's transcript, as ``sessions_history`` reads it ([] when none)."""
        row = self._run(
            "SELECT payload FROM transcripts JOIN archives USING (session_key, generation) "
            "WHERE session_key = ?", [session_key]).fetchone()
        messages: list[dict[str, Any]] = [] if row is None else json.loads(
            unpack(row[0]))["messages"]
        return messages

    def delete_session(self, session_key: str) -> bool:
        """Cleanup deletes a live session (its transcript); retained archives stay."""
        cursor = self._run("DELETE FROM transcripts WHERE session_key = ?",
                                  [session_key])
        return cursor.rowcount > 0

    def archives(self, session_key: str) -> list[ArchiveRecord]:
        cursor = self._run("SELECT generation, payload FROM archives WHERE session_key = ? "
                                  "ORDER BY generation", [session_key])
        return [ArchiveRecord(session_key, g, unpack(p)) for g, p in cursor.fetchall()]

    def save_session(self, session_key: str, incarnation: int, deleted: bool) -> None:
        self._run("INSERT OR REPLACE INTO sessions VALUES (?, ?, ?)",
                         [session_key, incarnation, int(deleted)])

    def session(self, session_key: str) -> tuple[int, bool] | None:
        """A requester session's (incarnation, deleted), or None when it never had an entry."""
        row = self._run("SELECT incarnation, deleted FROM sessions WHERE session_key = ?",
                               [session_key]).fetchone()
        return None if row is None else (int(row[0]), bool(row[1]))

    # -- the batch-wake outbox ---------------------------------------------------------------

    def save_batch(self, row: BatchRow) -> None:
        payload = batch_payload(row)
        self._batch_order += 1
        self._open_batches.saved(row.batch_id, self._batch_order, batch_row(payload), row.open)
        self._run("INSERT INTO batches VALUES (?, ?, ?, ?, ?) ON CONFLICT(batch_id) DO "
                         "UPDATE SET open = excluded.open, payload = excluded.payload",
                         [row.batch_id, row.requester, int(row.open), self._batch_order,
                          payload])

    def batch(self, batch_id: str) -> BatchRow | None:
        row = self._open_batches.get(batch_id)
        if row is not None:
            return row
        found = self._run("SELECT payload FROM batches WHERE batch_id = ?",
                                 [batch_id]).fetchone()
        return None if found is None else batch_row(found[0])

    def open_batches(self) -> list[BatchRow]:
        return self._open_batches.rows()

    def last_rearm_generation(self, requester: str) -> int:
        rows = self._run("SELECT payload FROM batches WHERE requester = ?",
                                [requester]).fetchall()
        return max((batch_row(p).rearm_generation for (p,) in rows), default=0)

    def wave_candidates(self, requester: str) -> list[RunRecord]:
        """The required, public runs a turn of ``requester`` spawned that no yield froze, in
        registration order (the siblings of its unfrozen waves, before their turns' states)."""
        rows = self._run(
            f"SELECT {', '.join(FIELDS)} FROM runs WHERE requester = ? AND required = 1 "
            "AND private = 0 AND requester_turn_id IS NOT NULL AND yield_batch IS NULL "
            "ORDER BY row_order", [requester]).fetchall()
        return self._records.decode_all(rows)

    def turn_requesters(self) -> list[str]:
        """Every session some turn of which spawned a run, in the order first seen."""
        rows = self._run(
            "SELECT requester FROM runs WHERE requester_turn_id IS NOT NULL "
            "GROUP BY requester ORDER BY MIN(row_order)").fetchall()
        return [str(row[0]) for row in rows]

    def batches_of(self, requester: str) -> list[BatchRow]:
        """Every batch row of the requester session, in the order they were first saved."""
        rows = self._run("SELECT payload FROM batches WHERE requester = ? "
                                "ORDER BY row_order", [requester]).fetchall()
        return [batch_row(payload) for (payload,) in rows]

    def has_open_batches(self) -> bool:
        return bool(self._open_batches)

    def batch_owner(self, run_id: str) -> str | None:
        """The open yield batch that owns this run's result, if any (YLD-2)."""
        if not self._open_batches:
            return None
        row = self._run("SELECT yield_batch, private FROM runs WHERE run_id = ?",
                               [run_id]).fetchone()
        owner: str | None = None if row is None else row[0]
        if owner is None or owner not in self._open_batches:
            return None
        batch = self.batch(owner) if not row[1] else None
        if batch is not None and batch.private:
            return None  # a public sibling in a private batch keeps its own delivery (PRV-5)
        return owner

    def get_many(self, run_ids: Sequence[str]) -> list[RunRecord]:
        """The records of ``run_ids``, in that order, in one query (a batch's members)."""
        found = {run_id: record for run_id in run_ids
                 if (record := self._records.get(run_id)) is not None}
        missing = [run_id for run_id in run_ids if run_id not in found]
        if missing:
            rows = self._run(
                f"SELECT {', '.join(FIELDS)} FROM runs WHERE run_id IN "
                f"({', '.join('?' for _ in missing)})", missing).fetchall()
            found.update((record.run_id, record) for record in self._records.decode_all(rows))
        return [found[run_id] for run_id in run_ids]

    def save_turn(self, turn_run_id: str, state: str, at_ms: int) -> None:
        self._run("INSERT OR REPLACE INTO turn_states VALUES (?, ?, ?)",
                         [turn_run_id, state, at_ms])

    def turn_state(self, turn_run_id: str) -> str | None:
        row = self._run("SELECT state FROM turn_states WHERE turn_run_id = ?",
                               [turn_run_id]).fetchone()
        return None if row is None else str(row[0])

    def retained_private(self, turn_run_id: str) -> list[RunRecord]:
        """The ended private runs of a requester turn whose delivery is still open (PRV-5)."""
        cursor = self._run(
            f"SELECT {', '.join(FIELDS)} FROM runs WHERE requester_turn_id = ? AND private = 1 "
            "AND ended_at_ms IS NOT NULL AND cleaned_up_at_ms IS NULL ORDER BY row_order",
            [turn_run_id])
        return self._records.decode_all(cursor.fetchall())

    def get(self, run_id: str) -> RunRecord:
        cached = self._records.get(run_id)
        if cached is not None:
            return cached
        row = self._run(
            f"SELECT {', '.join(FIELDS)} FROM runs WHERE run_id = ?", [run_id]
        ).fetchone()
        if row is None:
            raise KeyError(run_id)
        return self._records.decode(row)

    def open_deliveries(self) -> Iterator[RunRecord]:
        """Ended runs not yet cleaned up (their delivery pending, or resolved with the cleanup
        left undone), and reopened or to-be-reopened generations, in registration order."""
        # DEL-12: a reopened generation is pending again after its run's cleanup ran, and a
        # delivered run may hold a newer receipt no generation carries yet.
        cursor = self._run(
            f"SELECT {', '.join(FIELDS)} FROM runs WHERE ended_at_ms IS NOT NULL AND "
            "(cleaned_up_at_ms IS NULL OR (generation > 1 AND delivery_status = 'pending') "
            "OR (delivery_status = 'delivered' "
            "AND receipt_ended_at_ms > COALESCE(evidence_ended_at_ms, 0))) ORDER BY row_order")
        return iter(self._records.decode_all(cursor.fetchall()))

    def open_recovery(self, run_id: str) -> None:
        """A lost-answer recovery is due for ``run_id`` (written before the run is recorded
        delivered, so a restart finds it)."""
        self._run("INSERT OR IGNORE INTO recoveries (run_id, attempts) VALUES (?, 0)",
                         [run_id])

    def save_recovery(self, run_id: str, attempts: int, outcome: str | None) -> None:
        self._run("UPDATE recoveries SET attempts = ?, outcome = ? WHERE run_id = ?",
                         [attempts, outcome, run_id])

    def open_recoveries(self) -> list[tuple[str, int]]:
        """(run_id, attempts made) of every recovery not yet ended, oldest first."""
        return [(run_id, attempts) for run_id, attempts in self._run(
            "SELECT run_id, attempts FROM recoveries WHERE outcome IS NULL ORDER BY rowid")]

    def suspended_rows(self) -> list[tuple[str, int]]:
        """Each suspended delivery and when it was suspended (the sweeper's due times)."""
        cursor = self._run("SELECT run_id, suspended_at_ms FROM runs WHERE delivery_status = ? "
                           "AND suspended_at_ms IS NOT NULL ORDER BY row_order",
                           [str(DeliveryStatus.SUSPENDED)])
        return [(run_id, at) for run_id, at in cursor.fetchall()]

    def archive_candidates(self) -> list[str]:
        """Delete-mode runs whose cleanup ran and that are not archived yet (the sweeper's)."""
        return [run_id for (run_id,) in self._run(
            "SELECT run_id FROM runs WHERE cleanup_mode = 'delete' AND archived_at_ms IS NULL "
            "AND cleaned_up_at_ms IS NOT NULL ORDER BY row_order")]

    def summaries(self) -> list[RunSummary]:
        """Every cleaned-up run as the in-memory registry keeps it (DEL-16): its lifecycle
        columns and a task preview; the full task and result text stay here."""
        cut = PREVIEW_CHARS - 1
        cursor = self._run(
            "SELECT run_id, child_session_key, requester, CASE WHEN length(task) <= ? THEN task "
            "ELSE substr(task, 1, ?) || ? END, required, outcome_status, delivery_status, "
            "created_at_ms, ended_at_ms, delivered_at_ms, cleaned_up_at_ms, generation, "
            "COALESCE(receipt_ended_at_ms, ended_at_ms) FROM runs "
            "WHERE cleaned_up_at_ms IS NOT NULL ORDER BY row_order",
            [PREVIEW_CHARS, cut, ELLIPSIS])
        return [RunSummary(run_id, key, requester, task, bool(required), outcome, delivery,
                           created, ended, delivered, cleaned, generation, receipt)
                for (run_id, key, requester, task, required, outcome, delivery, created, ended,
                     delivered, cleaned, generation, receipt) in cursor.fetchall()]

    def payload_sizes(self) -> dict[str, tuple[int, int | None]]:
        """run_id -> (task characters, result characters or None): what the store retains."""
        return {run_id: (task, result) for run_id, task, result in self._run(
            "SELECT run_id, length(task), length(result_text) FROM runs")}

    def forget_result(self, run_id: str) -> None:
        """The known bug (mutant payload-dropped-early): a give-up drops the run's result."""
        self._records.forget(run_id)
        self._run("UPDATE runs SET result_text = NULL WHERE run_id = ?", [run_id])
    def direct_children(self, run_id: str) -> list[RunRecord]:
        """The runs the run ``run_id`` spawned, in registration order."""
        if run_id not in self._spawning_runs:
            return []  # most runs spawn nothing: no query
        rows = self._run(
            f"SELECT {', '.join(FIELDS)} FROM runs WHERE requester_run_id = ? "
            "ORDER BY row_order", [run_id]).fetchall()
        return self._records.decode_all(rows)

    def spawned_by_session(self, session_key: str) -> list[RunRecord]:
        """Every run the session ``session_key`` ever spawned, in registration order."""
        rows = self._run(
            f"SELECT {', '.join(FIELDS)} FROM runs WHERE requester = ? ORDER BY row_order",
            [session_key]).fetchall()
        return self._records.decode_all(rows)

    def latest_run(self, session_key: str) -> RunRecord | None:
        """The latest run registered for the child session ``session_key`` (None: none)."""
        row = self._run(
            f"SELECT {', '.join(FIELDS)} FROM runs WHERE child_session_key = ? "
            "ORDER BY row_order DESC LIMIT 1", [session_key]).fetchone()
        return None if row is None else self._records.decode(row)

    def active_children(self, session_key: str) -> int:
        """How many runs the session ``session_key`` spawned have not ended (queued or
        running): what ``maxChildrenPerAgent`` counts (reference §c15)."""
        (count,) = self._run(
            "SELECT COUNT(*) FROM runs WHERE requester = ? AND ended_at_ms IS NULL",
            [session_key]).fetchone()
        return int(count)

    def delete_requester_session(self, session_key: str, now_ms: int) -> None:
        """A nested requester's session is deleted (DEL-4): its entry and live transcript are
        gone. Its runs' rows stay (the model has no orphan sweeper, reference §c12), so its
        parent's findings and its children's fallback can still read them."""
        self._run("INSERT OR IGNORE INTO deleted_sessions VALUES (?, ?)",
                         [session_key, now_ms])
        self._run("DELETE FROM transcripts WHERE session_key = ?", [session_key])

    def session_deleted(self, session_key: str) -> bool:
        return self._run("SELECT 1 FROM deleted_sessions WHERE session_key = ?",
                                [session_key]).fetchone() is not None

    def all_runs(self) -> list[RunRecord]:
        return list(self.each_run())

    def each_run(self) -> Iterator[RunRecord]:
        """Every run in registration order, decoded one row at a time: a big run's end reads
        every row, and a list of them all was a peak of its own (docs/performance-log.md)."""
        cursor = self._run(f"SELECT {', '.join(FIELDS)} FROM runs ORDER BY row_order")
        for row in cursor:
            yield decode_record(row)
