"""The registry as a child run uses it: its end, its later receipts and its transcript. A
typing.Protocol, so the actor depends on these methods only; the world hands it
``actors.store``'s RunStore (or the SQLite store), which has them all.
"""

from __future__ import annotations

from typing import Any, Protocol

from actors.records.archive import ArchiveRecord
from actors.records.run_record import Change, RunRecord
from actors.states import OutcomeStatus


class ChildStore(Protocol):
    def apply(self, run_id: str, change: Change,
              known: tuple[RunRecord, RunRecord] | None = None) -> None: ...

    def record_correction(self, run_id: str, at_ms: int, text: str | None) -> bool: ...

    def record_end(
        self, run_id: str, ended_at_ms: int, status: OutcomeStatus, error: str | None,
        text: str | None, stop_reason: str | None = None, usage: tuple[int, int] | None = None,
    ) -> None: ...

    def save_transcript(self, session_key: str, run_id: str,
                        messages: list[dict[str, Any]]) -> ArchiveRecord: ...
