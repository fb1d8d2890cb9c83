"""The registry as the delivery actor uses it: the rows it reads and writes (its shell and its
side of yield batches and waves). A typing.Protocol, so the actor depends on these methods only;
the world hands it ``actors.store``'s RunStore (or the SQLite store), which has them all.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from actors.private.rules import Hold, private_hold
from actors.records.batch_record import BatchRow
from actors.records.keys import is_subagent
from actors.records.retention import RunSummary
from actors.records.run_record import Change, RunRecord
from actors.yields.turns import TurnState


class DeliveryStore(Protocol):
    def apply(self, run_id: str, change: Change,
              known: tuple[RunRecord, RunRecord] | None = None) -> None: ...

    def batch(self, batch_id: str) -> BatchRow | None: ...

    def batch_owner(self, run_id: str) -> str | None: ...

    def batches_of(self, requester: str) -> list[BatchRow]: ...

    def checkpoint(self, session_key: str, child_session_key: str, run_id: str | None
                   ) -> tuple[str, int] | None: ...

    def descendant_counts(self, run_ids: Sequence[str]) -> list[tuple[int, int]]: ...

    def direct_children(self, run_id: str) -> list[RunRecord]: ...

    def forget_result(self, run_id: str) -> None: ...

    def get(self, run_id: str) -> RunRecord: ...

    def get_many(self, run_ids: Sequence[str]) -> list[RunRecord]: ...

    def has_open_batches(self) -> bool: ...

    def latest_run(self, session_key: str) -> RunRecord | None: ...

    def open_batches(self) -> list[BatchRow]: ...

    def open_deliveries(self) -> Iterator[RunRecord]: ...

    def open_recoveries(self) -> list[tuple[str, int]]: ...

    def open_recovery(self, run_id: str) -> None: ...

    def pending_descendants(self, record: RunRecord) -> int: ...

    def retained_private(self, turn_run_id: str) -> list[RunRecord]: ...

    def run_transcript(self, session_key: str, run_id: str) -> list[Any] | None: ...

    def save_batch(self, row: BatchRow) -> None: ...

    def save_recovery(self, run_id: str, attempts: int, outcome: str | None) -> None: ...

    def session(self, session_key: str) -> tuple[int, bool] | None: ...

    def session_deleted(self, session_key: str) -> bool: ...

    def spawned_by_session(self, session_key: str) -> list[RunRecord]: ...

    def summaries(self) -> list[RunSummary]: ...

    def suspended_rows(self) -> list[tuple[str, int]]: ...

    def archive_candidates(self) -> list[str]: ...

    def delete_session(self, session_key: str) -> bool: ...

    def turn_requesters(self) -> list[str]: ...

    def turn_state(self, turn_run_id: str) -> str | None: ...

    def unsettled_descendants(self, record: RunRecord) -> tuple[int, int]: ...

    def wave_candidates(self, requester: str) -> list[RunRecord]: ...


def private_hold_in(store: DeliveryStore, record: RunRecord) -> Hold:
    """What the store says about a private run: its spawning turn's state and the requester
    session's current incarnation (None once its entry, or a nested requester's session, is
    deleted)."""
    turn = None if record.requester_turn_id is None else store.turn_state(record.requester_turn_id)
    session = store.session(record.requester)
    current = record.requester_incarnation if session is None else (
        None if session[1] else session[0])
    if store.session_deleted(record.requester):
        current = None  # a deleted nested requester: never handed to a fallback (PRV-3)
    return private_hold(None if turn is None else TurnState(turn), record.requester_incarnation,
                        current)


def fallback_route(store: DeliveryStore, record: RunRecord) -> str | None:
    """The session a run's completion goes to (DEL-4, reference §c2): its requester; when that
    is a nested session that was deleted and whose run is over, that session's own requester,
    one level up, as OpenClaw's flow does. None: that one is gone too (or unknown), so no
    fallback exists and the completion stays retryable."""
    requester = record.requester
    if not is_subagent(requester) or not store.session_deleted(requester):
        return requester
    owner = store.latest_run(requester)
    if owner is None:
        return None
    if owner.ended_at_ms is None:
        return requester  # its run is still active: the session is still the parent
    if is_subagent(owner.requester) and store.session_deleted(owner.requester):
        return None
    return owner.requester
