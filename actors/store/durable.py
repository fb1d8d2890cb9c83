"""The registry's durable store, kept in memory: the run records and the tables beside them.

In a simulation the store is the disk: it lives with the world, outside any actor, so it survives
a delivery-actor crash exactly as a database survives a process restart, while everything the
actor held in memory is lost; a restarted actor reads what was written. Each write is whole when
the call returns (as a committed statement). The rows are Python values: a run's frozen record,
batch rows as a read of the JSON the outbox writes gives them (``codec.stored_batch``, which
builds no JSON), archives as their encoded bytes, so every read returns
what the SQLite store (``actors/store/sqlite.py``, for a database file) returns for the same
writes; tests/store/test_store_backends.py runs the world on both and compares every trace. A
default-world step paid ~2 SQL statements through ``sqlite3`` for what is here a dict lookup.

The indexes (a session's runs, a run's children, a turn's runs, a child session's runs) are
lists in registration order on columns no change writes (``actors/records/run_record.py``), so a
big run's reads cost what its index scans cost in SQLite.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import attrs

from actors.records.archive import ArchiveRecord
from actors.records.batch_record import BatchRow
from actors.records.keys import is_subagent
from actors.records.retention import RunSummary, summarize
from actors.records.run_record import Change, RunRecord, apply
from actors.states import DeliveryStatus
from actors.store.cache import OpenBatches, PendingTree
from actors.store.codec import stored_archive, stored_batch, unpack
from actors.store.shared import StoreBase

_PENDING = DeliveryStatus.PENDING
_DELIVERED = DeliveryStatus.DELIVERED


@attrs.define
class _Batch:
    requester: str
    open: bool
    row: BatchRow  # as a read of its JSON payload gives it (``codec.stored_batch``)


class RunStore(StoreBase):
    def __init__(self) -> None:
        self._runs: dict[str, RunRecord] = {}  # in registration order
        # Indexes: run ids in registration order, by a column no change writes.
        self._by_requester: dict[str, list[str]] = {}
        self._by_parent: dict[str, list[str]] = {}
        self._by_session: dict[str, list[str]] = {}
        self._by_turn: dict[str, list[str]] = {}
        self._turn_requesters: dict[str, None] = {}  # sessions whose turns spawned, first seen
        self._transcripts: dict[str, int] = {}  # a live session's generation (its archive)
        self._archives: dict[str, dict[int, bytes]] = {}  # key -> generation -> stored payload
        self._generations: dict[str, int] = {}  # the last archive generation of each key
        self._archived = 0  # archives this store saved (DEFLATE_ARCHIVES_FROM)
        # A requester session's checkpoints: the newest of each run (the first taken of equal
        # end times) and of each child session (of equal end times, the least run id's first
        # taken: the order SQLite's index on (session, run) hands them to its sort), the two
        # lookups a delivery makes; the child's lookup is a bug's (see actors.mutants).
        self._newest_of_run: dict[tuple[str, str], tuple[str, int]] = {}
        self._newest_of_child: dict[tuple[str, str], tuple[int, str, str]] = {}
        self._sessions: dict[str, tuple[int, bool]] = {}
        self._deleted_sessions: dict[str, int] = {}
        self._batches: dict[str, _Batch] = {}  # in the order of each batch's first save
        self._batches_by_requester: dict[str, list[_Batch]] = {}
        self._open_batches = OpenBatches()
        self._batch_order = 0
        self._turn_states: dict[str, str] = {}
        self._recoveries: dict[str, tuple[int, str | None]] = {}  # in the order opened
        self._tree = PendingTree()
        self._order = 0  # registrations asked for
        # Each cleaned-up run's summary, with the record it was made from (records are never
        # changed in place: the same record makes the same summary).
        self._summaries: dict[str, tuple[RunRecord, RunSummary]] = {}

    def close(self) -> None:
        """Let go of every row: any later use raises, as a closed database connection does."""
        self.__dict__.clear()

    def register(self, record: RunRecord) -> None:
        """A requester spawned a child run (sessions_spawn registers it before it starts)."""
        record = self._registered(record)
        if is_subagent(record.child_session_key):  # spawning a session again re-creates it
            self._deleted_sessions.pop(record.child_session_key, None)
        run_id = record.run_id
        if run_id in self._runs:  # the primary key
            raise KeyError(f"run {run_id} is already registered")
        self._runs[run_id] = record
        self._by_requester.setdefault(record.requester, []).append(run_id)
        self._by_session.setdefault(record.child_session_key, []).append(run_id)
        if record.requester_run_id is not None:
            self._by_parent.setdefault(record.requester_run_id, []).append(run_id)
        if record.requester_turn_id is not None:
            self._by_turn.setdefault(record.requester_turn_id, []).append(run_id)
            self._turn_requesters.setdefault(record.requester, None)
        self._tree.add(run_id, record.requester_run_id)
        if record.cleaned_up_at_ms is not None:
            self._tree.clean(run_id)
        if record.ended_at_ms is not None:
            self._tree.end(run_id)

    def apply(self, run_id: str, change: Change,
              known: tuple[RunRecord, RunRecord] | None = None) -> None:
        """Make ``change`` durable: write the columns it names (no such run: nothing changes,
        as an UPDATE that matches no row). ``known``: (a record, that record after ``change``),
        as the writer computed it; when the row is that very record, the result is taken as
        it stands (``apply`` is pure: the same value, without building it again)."""
        record = self._runs.get(run_id)
        if record is not None:
            if known is not None and known[0] is record:
                self._runs[run_id] = known[1]
            else:
                self._runs[run_id] = apply(record, change)
        self._tree.changed(run_id, change)

    def record_checkpoint(self, session_key: str, child_session_key: str, run_id: str,
                          key: str, ended_at_ms: int) -> None:
        """A requester session's transcript took this receipt (a durable source-delivery fact)."""
        of_run = self._newest_of_run.get((session_key, run_id))
        if of_run is None or ended_at_ms > of_run[1]:
            self._newest_of_run[session_key, run_id] = (key, ended_at_ms)
        of_child = self._newest_of_child.get((session_key, child_session_key))
        if of_child is None or ended_at_ms > of_child[0] or (
                ended_at_ms == of_child[0] and run_id < of_child[1]):
            self._newest_of_child[session_key, child_session_key] = (ended_at_ms, run_id, key)

    def checkpoint(self, session_key: str, child_session_key: str, run_id: str | None
                   ) -> tuple[str, int] | None:
        """The newest receipt of ``run_id`` that ``session_key``'s transcript took, as (key,
        producer end time); ``run_id`` None: of any run of
        that child session (a bug's lookup, see actors.mutants)."""
        if run_id is None:
            of_child = self._newest_of_child.get((session_key, child_session_key))
            return None if of_child is None else (of_child[2], of_child[0])
        return self._newest_of_run.get((session_key, run_id))

    def save_transcript(self, session_key: str, run_id: str,
                        messages: list[dict[str, Any]]) -> ArchiveRecord:
        """A finished run's transcript: it becomes its session's live transcript (replacing
        what was there) and is retained as the next generation of that key (FMT-6)."""
        generation = self._generations[session_key] = self._generations.get(session_key, 0) + 1
        record = ArchiveRecord.encode(session_key, generation, run_id, messages)
        self._transcripts[session_key] = generation
        self._archived += 1
        self._archives.setdefault(session_key, {})[generation] = stored_archive(
            record.payload, self._archived)
        return record

    def transcript(self, session_key: str) -> list[dict[str, Any]]:
        """The live session's transcript, as ``sessions_history`` reads it ([] when none)."""
        generation = self._transcripts.get(session_key)
        stored = None if generation is None else \
            self._archives.get(session_key, {}).get(generation)
        messages: list[dict[str, Any]] = [] if stored is None else json.loads(
            unpack(stored))["messages"]
        return messages

    def delete_session(self, session_key: str) -> bool:
        """Cleanup deletes a live session (its transcript); retained archives stay."""
        return self._transcripts.pop(session_key, None) is not None

    def archives(self, session_key: str) -> list[ArchiveRecord]:
        kept = self._archives.get(session_key, {})
        return [ArchiveRecord(session_key, g, unpack(kept[g])) for g in sorted(kept)]

    def save_session(self, session_key: str, incarnation: int, deleted: bool) -> None:
        self._sessions[session_key] = (incarnation, deleted)

    def session(self, session_key: str) -> tuple[int, bool] | None:
        """A requester session's (incarnation, deleted), or None when it never had an entry."""
        return self._sessions.get(session_key)

    # -- the batch-wake outbox ---------------------------------------------------------------

    def save_batch(self, row: BatchRow) -> None:
        stored = stored_batch(row)
        self._batch_order += 1
        self._open_batches.saved(row.batch_id, self._batch_order, stored, row.open)
        kept = self._batches.get(row.batch_id)
        if kept is None:  # a new row keeps its requester and place; a save updates the rest
            kept = self._batches[row.batch_id] = _Batch(row.requester, row.open, stored)
            self._batches_by_requester.setdefault(row.requester, []).append(kept)
        else:
            kept.open, kept.row = row.open, stored

    def batch(self, batch_id: str) -> BatchRow | None:
        row = self._open_batches.get(batch_id)
        if row is not None:
            return row
        kept = self._batches.get(batch_id)
        return None if kept is None else kept.row

    def open_batches(self) -> list[BatchRow]:
        return self._open_batches.rows()

    def last_rearm_generation(self, requester: str) -> int:
        return max((row.rearm_generation for row in self.batches_of(requester)), default=0)

    def wave_candidates(self, requester: str) -> list[RunRecord]:
        """The required, public runs a turn of ``requester`` spawned that no yield froze, in
        registration order (the siblings of its unfrozen waves, before their turns' states)."""
        return [r for r in self._runs_of(self._by_requester, requester)
                if r.required and not r.private and r.requester_turn_id is not None
                and r.yield_batch is None]

    def turn_requesters(self) -> list[str]:
        """Every session some turn of which spawned a run, in the order first seen."""
        return list(self._turn_requesters)

    def batches_of(self, requester: str) -> list[BatchRow]:
        """Every batch row of the requester session, in the order they were first saved."""
        return [kept.row for kept in self._batches_by_requester.get(requester, ())]

    def has_open_batches(self) -> bool:
        return bool(self._open_batches)

    def batch_owner(self, run_id: str) -> str | None:
        """The open yield batch that owns this run's result, if any (YLD-2)."""
        if not self._open_batches:
            return None
        record = self._runs.get(run_id)
        owner = None if record is None else record.yield_batch
        if record is None or owner is None or owner not in self._open_batches:
            return None
        batch = self.batch(owner) if not record.private else None
        if batch is not None and batch.private:
            return None  # a public sibling in a private batch keeps its own delivery (PRV-5)
        return owner

    def get_many(self, run_ids: Sequence[str]) -> list[RunRecord]:
        """The records of ``run_ids``, in that order (a batch's members)."""
        return [self._runs[run_id] for run_id in run_ids]

    def save_turn(self, turn_run_id: str, state: str, at_ms: int) -> None:
        self._turn_states[turn_run_id] = state

    def turn_state(self, turn_run_id: str) -> str | None:
        return self._turn_states.get(turn_run_id)

    def retained_private(self, turn_run_id: str) -> list[RunRecord]:
        """The ended private runs of a requester turn whose delivery is still open (PRV-5)."""
        return [r for r in self._runs_of(self._by_turn, turn_run_id)
                if r.private and r.ended_at_ms is not None and r.cleaned_up_at_ms is None]

    def get(self, run_id: str) -> RunRecord:
        return self._runs[run_id]

    def open_deliveries(self) -> Iterator[RunRecord]:
        """Ended runs not yet cleaned up (their delivery pending, or resolved with the cleanup
        left undone), and reopened or to-be-reopened generations, in registration order."""
        # DEL-12: a reopened generation is pending again after its run's cleanup ran, and a
        # delivered run may hold a newer receipt no generation carries yet.
        return iter([r for r in self._runs.values() if r.ended_at_ms is not None and (
            r.cleaned_up_at_ms is None
            or (r.generation > 1 and r.delivery_status == _PENDING)
            or (r.delivery_status == _DELIVERED and r.receipt_ended_at_ms is not None
                and r.receipt_ended_at_ms > (r.evidence_ended_at_ms or 0)))])

    def open_recovery(self, run_id: str) -> None:
        """A lost-answer recovery is due for ``run_id`` (written before the run is recorded
        delivered, so a restart finds it)."""
        self._recoveries.setdefault(run_id, (0, None))

    def save_recovery(self, run_id: str, attempts: int, outcome: str | None) -> None:
        if run_id in self._recoveries:
            self._recoveries[run_id] = (attempts, outcome)

    def open_recoveries(self) -> list[tuple[str, int]]:
        """(run_id, attempts made) of every recovery not yet ended, oldest first."""
        return [(run_id, attempts) for run_id, (attempts, outcome) in self._recoveries.items()
                if outcome is None]

    def summaries(self) -> list[RunSummary]:
        """Every cleaned-up run as the in-memory registry keeps it (DEL-16): its lifecycle
        columns and a task preview; the full task and result text stay here. Each incarnation
        of the delivery actor loads them all: a summary is made once per record."""
        summaries = []
        for r in self._runs.values():
            if r.cleaned_up_at_ms is None:
                continue
            kept = self._summaries.get(r.run_id)
            if kept is None or kept[0] is not r:
                kept = self._summaries[r.run_id] = (r, summarize(r))
            summaries.append(kept[1])
        return summaries

    def suspended_rows(self) -> list[tuple[str, int]]:
        """Each suspended delivery and when it was suspended (the sweeper's due times)."""
        return [(r.run_id, r.suspended_at_ms) for r in self._runs.values()
                if r.delivery_status == DeliveryStatus.SUSPENDED and r.suspended_at_ms is not None]

    def archive_candidates(self) -> list[str]:
        """Delete-mode runs whose cleanup ran and that are not archived yet (the sweeper's)."""
        return [r.run_id for r in self._runs.values() if r.cleanup_mode == "delete"
                and r.archived_at_ms is None and r.cleaned_up_at_ms is not None]

    def payload_sizes(self) -> dict[str, tuple[int, int | None]]:
        """run_id -> (task characters, result characters or None): what the store retains."""
        return {run_id: (len(r.task), None if r.result_text is None else len(r.result_text))
                for run_id, r in self._runs.items()}

    def forget_result(self, run_id: str) -> None:
        """The known bug (mutant payload-dropped-early): a give-up drops the run's result."""
        record = self._runs.get(run_id)
        if record is not None:
            self._runs[run_id] = attrs.evolve(record, result_text=None)

    def direct_children(self, run_id: str) -> list[RunRecord]:
        """The runs the run ``run_id`` spawned, in registration order."""
        return self._runs_of(self._by_parent, run_id)

    def spawned_by_session(self, session_key: str) -> list[RunRecord]:
        """Every run the session ``session_key`` ever spawned, in registration order."""
        return self._runs_of(self._by_requester, session_key)

    def latest_run(self, session_key: str) -> RunRecord | None:
        """The latest run registered for the child session ``session_key`` (None: none)."""
        runs = self._by_session.get(session_key)
        return self._runs[runs[-1]] if runs else None

    def active_children(self, session_key: str) -> int:
        """How many runs the session ``session_key`` spawned have not ended (queued or
        running): what ``maxChildrenPerAgent`` counts (reference §c15)."""
        return sum(1 for r in self._runs_of(self._by_requester, session_key)
                   if r.ended_at_ms is None)

    def delete_requester_session(self, session_key: str, now_ms: int) -> None:
        """A nested requester's session is deleted (DEL-4): its entry and live transcript are
        gone. Its runs' rows stay (the model has no orphan sweeper, reference §c12), so its
        parent's findings and its children's fallback can still read them."""
        self._deleted_sessions.setdefault(session_key, now_ms)
        self._transcripts.pop(session_key, None)

    def session_deleted(self, session_key: str) -> bool:
        return session_key in self._deleted_sessions

    def all_runs(self) -> list[RunRecord]:
        return list(self._runs.values())

    def each_run(self) -> Iterator[RunRecord]:
        """Every run in registration order."""
        return iter(list(self._runs.values()))

    def _runs_of(self, index: dict[str, list[str]], key: str) -> list[RunRecord]:
        runs = self._runs
        return [runs[run_id] for run_id in index.get(key, ())]
