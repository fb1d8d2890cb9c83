"""What the two stores (``actors/store/durable.py`` in memory, ``actors/store/sqlite.py`` in SQLite)
do the same way on top of their own rows: a run's end and correction as changes, the descendant
counts kept beside the rows, and a run's retained transcript found among its key's archives."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import attrs

from actors.records.archive import ArchiveRecord
from actors.records.run_record import Change, Corrected, RunEnded, RunRecord
from actors.states import DeliveryStatus, OutcomeStatus
from actors.store.cache import PendingTree


class StoreBase(ABC):
    """A store's rows are its own; these read and write through ``apply``, ``get``, ``archives``
    (each store's own, abstract here) and the ``_tree`` each store keeps as it registers, ends
    and cleans up runs."""

    _tree: PendingTree
    _order: int  # registrations asked for

    def next_run_id(self) -> str:
        """Run ids come from a counter (never from a clock or a random source)."""
        return f"run-{self._order + 1}"

    def _registered(self, record: RunRecord) -> RunRecord:
        """Count a registration (a failed one too) and give the record its stored form: a run
        nobody waits for has no delivery to make."""
        self._order += 1
        if record.required:
            return record
        return attrs.evolve(record, delivery_status=DeliveryStatus.NOT_REQUIRED)

    @abstractmethod
    def apply(self, run_id: str, change: Change,
              known: tuple[RunRecord, RunRecord] | None = None) -> None:
        ...

    @abstractmethod
    def get(self, run_id: str) -> RunRecord:
        ...

    @abstractmethod
    def archives(self, session_key: str) -> list[ArchiveRecord]:
        ...

    def record_end(
        self, run_id: str, ended_at_ms: int, status: OutcomeStatus, error: str | None,
        text: str | None, stop_reason: str | None = None, usage: tuple[int, int] | None = None,
    ) -> None:
        """The producer (the child's run) writes its terminal outcome, result and usage."""
        input_tokens, output_tokens = usage if usage is not None else (None, None)
        self.apply(run_id, RunEnded(ended_at_ms, status, error, text, stop_reason, input_tokens,
                                    output_tokens))

    def record_correction(self, run_id: str, at_ms: int, text: str | None) -> bool:
        """A further receipt of the same run with producer end time ``at_ms`` (DEL-12): it owns
        the reply only when newer than the one held (an equal end time keeps the first
        accepted, an older one never wins). Returns whether it was taken."""
        current = self.get(run_id).receipt_at_ms
        if current is not None and at_ms <= current:
            return False
        self.apply(run_id, Corrected(at_ms, text))
        return True

    def unsettled_descendants(self, record: RunRecord) -> tuple[int, int]:
        """Below the run: how many are not yet settled (cleaned up), how many still run (kept
        as runs register, end and clean up; a walk per open batch member after every message
        of the delivery actor grew faster than a big tree)."""
        return self._tree.below(record.run_id)

    def descendant_counts(self, run_ids: Sequence[str]) -> list[tuple[int, int]]:
        """:meth:`unsettled_descendants` of each of ``run_ids``, in that order."""
        return self._tree.below_each(run_ids)

    def pending_descendants(self, record: RunRecord) -> int:
        """How many runs below the run ``record`` (its children, theirs, ...) are not yet
        cleaned up (DEL-6). A run's children are the runs spawned by it (``requester_run_id``):
        an earlier or later run of the same session key does not count them."""
        return self._tree.pending_below(record.run_id)

    def run_transcript(self, session_key: str, run_id: str) -> list[Any] | None:
        """The retained transcript of ``run_id`` (its archive under ``session_key``), or None."""
        for record in self.archives(session_key):
            decoded = json.loads(record.payload.decode("utf-8"))
            if isinstance(decoded, dict) and decoded.get("runId") == run_id:
                messages = decoded.get("messages")
                return messages if isinstance(messages, list) else []
        return None
