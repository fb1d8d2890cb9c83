"""What a store keeps beside its rows, so hot reads skip the query, the decode or the walk: the
SQLite store's decoded run records (``actors/store/sqlite.py``), and both stores' open batch rows
and each run's counts of unsettled descendants.

The delivery actor looks at every open yield batch after each message it handles (a member may
have settled), reading each batch's member records and their descendants: over a default-world
sweep that was ~260 record decodes per seed, a tenth of a seed's CPU time (docs/performance-log.md).
Both caches are exact: every write to a run's row drops that run's decoded record first
(``SqliteStore.register``, ``forget_result``) or applies the same change to it (``apply``), and a
batch row is decoded from the same JSON the table holds when it is saved, so a read returns a
value equal to what decoding the row would give. Records and batch rows are frozen, so sharing
one decoded value is safe. Nothing here is iterated in an order that matters except the open
batches, which keep the table's order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from actors.records.batch_record import BatchRow
from actors.records.run_record import Change, CleanedUp, RunEnded, RunRecord, apply

# A bound on the decoded records kept (each may hold a run's task and result text, which the
# database holds too): the cache is emptied when full, so a big run's memory does not grow with it.
RECORD_LIMIT = 1024


class RecordCache:
    """Decoded run records by run id."""

    def __init__(self, decode: Callable[[tuple[Any, ...]], RunRecord], run_id_index: int) -> None:
        self._decode = decode
        self._index = run_id_index
        self._records: dict[str, RunRecord] = {}

    def get(self, run_id: str) -> RunRecord | None:
        return self._records.get(run_id)

    def decode(self, row: tuple[Any, ...]) -> RunRecord:
        """The record of a row just read (no write may come between the read and this call)."""
        run_id = row[self._index]
        record = self._records.get(run_id)
        if record is None:
            if len(self._records) >= RECORD_LIMIT:
                self._records.clear()
            record = self._records[run_id] = self._decode(row)
        return record

    def decode_all(self, rows: Sequence[tuple[Any, ...]]) -> list[RunRecord]:
        return [self.decode(row) for row in rows]

    def changed(self, run_id: str, change: Change) -> None:
        """The run's row is about to take ``change``: a decoded record takes it too (``apply``
        writes the same columns the UPDATE writes, and a column reads back as the value
        written), so the next read of a run whose row changed skips the query and the decode."""
        record = self._records.get(run_id)
        if record is not None:
            self._records[run_id] = apply(record, change)

    def forget(self, run_id: str) -> None:
        """The run's row is about to change (or a registration may have replaced it)."""
        self._records.pop(run_id, None)


class OpenBatches:
    """The open batch-wake rows, decoded, in the table's row order (each batch's first save)."""

    def __init__(self) -> None:
        self._rank: dict[str, int] = {}  # batch id -> the order of its first save
        self._open: dict[str, BatchRow] = {}

    def load(self, batch_id: str, rank: int, row: BatchRow | None) -> None:
        """A row as the table holds it, decoded if open (a store opened on an existing
        database)."""
        self._rank.setdefault(batch_id, rank)
        if row is not None:
            self._open[batch_id] = row

    def saved(self, batch_id: str, rank: int, row: BatchRow, is_open: bool) -> None:
        """The row was written and reads back as ``row``; ``rank`` is its order if it is new."""
        self._rank.setdefault(batch_id, rank)
        if is_open:
            self._open[batch_id] = row
        else:
            self._open.pop(batch_id, None)

    def __contains__(self, batch_id: object) -> bool:
        return batch_id in self._open

    def __bool__(self) -> bool:
        return bool(self._open)

    def get(self, batch_id: str) -> BatchRow | None:
        return self._open.get(batch_id)

    def rows(self) -> list[BatchRow]:
        # Sorted by id through the rank's own lookup, not a Python key function per row: the
        # delivery shell reads them after each of its messages while a batch is open.
        rows = self._open
        return [rows[batch_id] for batch_id in sorted(rows, key=self._rank.__getitem__)]


class PendingTree:
    """Each run's count of descendants not yet cleaned up, kept as runs are registered and
    cleaned (a run's parent is its ``requester_run_id``, which never changes). Walking the
    subtree at every attempt instead cost a query per spawning descendant: a deferred parent
    rechecks every few seconds, so a big tree's walks were a tenth of its run and grew faster
    than the tree (docs/performance-log.md)."""

    def __init__(self) -> None:
        self._parent: dict[str, str | None] = {}
        self._pending: dict[str, int] = {}
        self._cleaned: set[str] = set()
        # The same for descendants not yet ended (a yield batch's members wait for them).
        self._active: dict[str, int] = {}
        self._ended: set[str] = set()

    def add(self, run_id: str, parent: str | None) -> None:
        self._parent[run_id] = parent
        self._bump(self._pending, parent, 1)
        self._bump(self._active, parent, 1)

    def clean(self, run_id: str) -> None:
        if run_id in self._cleaned or run_id not in self._parent:
            return
        self._cleaned.add(run_id)
        self._bump(self._pending, self._parent[run_id], -1)

    def end(self, run_id: str) -> None:
        if run_id in self._ended or run_id not in self._parent:
            return
        self._ended.add(run_id)
        self._bump(self._active, self._parent[run_id], -1)

    def changed(self, run_id: str, change: Change) -> None:
        """The run's row took ``change``: an end or a cleanup counts here."""
        if isinstance(change, CleanedUp):
            self.clean(run_id)
        elif isinstance(change, RunEnded):
            self.end(run_id)

    def pending_below(self, run_id: str) -> int:
        return self._pending.get(run_id, 0)

    def below(self, run_id: str) -> tuple[int, int]:
        """(:meth:`pending_below`, :meth:`active_below`) in one call: a batch look asks it of
        every member of every open batch after each message of the delivery actor."""
        return self._pending.get(run_id, 0), self._active.get(run_id, 0)

    def below_each(self, run_ids: Sequence[str]) -> list[tuple[int, int]]:
        """:meth:`below` of each run, with no Python call per run: a batch look reads them for
        every member to tell whether anything changed since its last look."""
        pending, active = self._pending.get, self._active.get
        return [(pending(run_id, 0), active(run_id, 0)) for run_id in run_ids]

    def active_below(self, run_id: str) -> int:
        return self._active.get(run_id, 0)

    def _bump(self, counts: dict[str, int], ancestor: str | None, by: int) -> None:
        while ancestor is not None:
            counts[ancestor] = counts.get(ancestor, 0) + by
            ancestor = self._parent.get(ancestor)
