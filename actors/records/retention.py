"""What the registry keeps in memory once a run's obligations resolved (DEL-16). Pure.

Seed 002: once cleanup and the requester's obligations are resolved, the in-memory registry keeps
a short task preview and lifecycle metadata; the full task and result text stay in the store and are
loaded for the reads that need them (history, a redrive, lost-answer recovery, aggregation).
Pending, paused, cancelled and abandoned work keeps its payload until its obligations resolve:
in this model a run in flight keeps its whole record in the delivery core, and the store keeps
every run's full task and result text, whatever its delivery status.

The preview is cut as reference §c6 caps a field value: at most 256 characters, the last one
``…`` when it was cut.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from actors.records.run_record import RunRecord

PREVIEW_CHARS = 256
ELLIPSIS = "…"
# The fields a resolved run keeps in memory (and nothing else: no task, no result text).
SUMMARY_FIELDS = ("run_id", "child_session_key", "requester", "task_preview", "required",
                  "outcome_status", "delivery_status", "created_at_ms", "ended_at_ms",
                  "delivered_at_ms", "cleaned_up_at_ms", "generation", "receipt_ended_at_ms")


def preview(task: str) -> str:
    """A short task preview: the task itself when short, else its head and ``…``."""
    if len(task) <= PREVIEW_CHARS:
        return task
    return task[:PREVIEW_CHARS - 1] + ELLIPSIS


@attrs.frozen
class RunSummary:
    """A resolved run as the in-memory registry holds it: a preview and lifecycle metadata."""

    run_id: str
    child_session_key: str
    requester: str
    task_preview: str
    required: bool
    outcome_status: str | None
    delivery_status: str
    created_at_ms: int
    ended_at_ms: int | None
    delivered_at_ms: int | None
    cleaned_up_at_ms: int | None
    # Receipts (DEL-12): the delivery generation it resolved in and the producer end time of
    # the receipt that generation carried (a later correction is compared with it).
    generation: int = 1
    receipt_ended_at_ms: int | None = None

    def to_json(self) -> dict[str, Any]:
        # ``{"held": "summary", **attrs.asdict(self)}`` spelled out: ``asdict`` asks of every
        # value whether it is an attrs instance or a collection to recurse into, and a memory
        # dump writes every resolved run (tests/delivery/test_retention.py compares the two).
        return {"held": "summary", "run_id": self.run_id,
                "child_session_key": self.child_session_key, "requester": self.requester,
                "task_preview": self.task_preview, "required": self.required,
                "outcome_status": self.outcome_status, "delivery_status": self.delivery_status,
                "created_at_ms": self.created_at_ms, "ended_at_ms": self.ended_at_ms,
                "delivered_at_ms": self.delivered_at_ms,
                "cleaned_up_at_ms": self.cleaned_up_at_ms, "generation": self.generation,
                "receipt_ended_at_ms": self.receipt_ended_at_ms}


def summarize(record: RunRecord) -> RunSummary:
    return RunSummary(
        record.run_id, record.child_session_key, record.requester, preview(record.task),
        record.required, None if record.outcome_status is None else str(record.outcome_status),
        str(record.delivery_status), record.created_at_ms, record.ended_at_ms,
        record.delivered_at_ms, record.cleaned_up_at_ms, record.generation,
        record.receipt_at_ms)


def held_in_full(record: RunRecord) -> dict[str, Any]:
    """A run whose obligations are open, as memory holds it: its whole record (the payload)."""
    return {"held": "payload", **{name: _json(value) for name, value in
                                  attrs.asdict(record, recurse=False).items()}}


def _json(value: object) -> object:
    return value if value is None or isinstance(value, (bool, int, str)) else str(value)


def memory_dump(resolved: Mapping[str, RunSummary | RunRecord],
                in_flight: Iterable[RunRecord]) -> dict[str, dict[str, Any]]:
    """The registry's memory, run by run, as an observer would dump it."""
    held = {run_id: (entry.to_json() if isinstance(entry, RunSummary) else held_in_full(entry))
            for run_id, entry in resolved.items()}
    held.update((record.run_id, held_in_full(record)) for record in in_flight)
    return held


class ResolvedRuns:
    """The registry's memory of its resolved runs: a summary each, or (the bug, ``full_text``)
    the whole record."""

    def __init__(self, full_text: bool = False) -> None:
        self._runs: dict[str, RunSummary | RunRecord] = {}
        self._full_text = full_text

    def load(self, summaries: Iterable[RunSummary]) -> None:
        self._runs.update((summary.run_id, summary) for summary in summaries)

    def keep(self, record: RunRecord) -> None:
        self._runs[record.run_id] = record if self._full_text else summarize(record)

    def dump(self, in_flight: Iterable[RunRecord]) -> dict[str, dict[str, Any]]:
        return memory_dump(self._runs, in_flight)
