"""Archive reads (FMT-6): a completed run's retained transcript, readable after cleanup deleted
its live session, paged within that run's archive even when the session key is reused. Pure."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

import attrs

from actors.history.sessions import HistoryResult, sessions_history
from actors.records.archive import ArchiveRecord

ARCHIVE_RECORD_LIMIT = 8 * 1024 * 1024

@attrs.frozen
class LiveSession:
    """A child session that still exists, with the metadata its normal sharing check uses."""

    session_key: str
    session_id: str
    requester_session_key: str


@attrs.frozen
class Reader:
    """Who asks. ``gateway_admin`` is session access that does not depend on child metadata;
    ``session_key`` is the reader's own session, used by the normal (metadata) check."""

    session_key: str | None = None
    gateway_admin: bool = False


@attrs.frozen
class ArchiveRead:
    status: Literal["ok", "unavailable", "forbidden", "not_found"]
    history: HistoryResult | None = None
    reason: str = ""
    # Unavailable archives stay unavailable: refreshing cannot shrink a retained record.
    retryable: bool = False


@attrs.frozen
class ArchiveStore:
    """Live child sessions plus retained run archives, as immutable data."""

    live: tuple[LiveSession, ...] = ()
    archives: tuple[ArchiveRecord, ...] = ()

    def with_live(self, session: LiveSession) -> ArchiveStore:
        kept = tuple(s for s in self.live if s.session_key != session.session_key)
        return attrs.evolve(self, live=(*kept, session))

    def delete_live(self, session_key: str) -> ArchiveStore:
        return attrs.evolve(self, live=tuple(s for s in self.live if s.session_key != session_key))

    def with_archive(self, record: ArchiveRecord) -> ArchiveStore:
        return attrs.evolve(self, archives=(*self.archives, record))

    def live_session(self, session_key: str) -> LiveSession | None:
        for session in self.live:
            if session.session_key == session_key:
                return session
        return None

    def generations(self, session_key: str) -> list[ArchiveRecord]:
        return sorted(
            (r for r in self.archives if r.session_key == session_key),
            key=lambda r: r.generation,
        )


def may_read(store: ArchiveStore, session_key: str, reader: Reader) -> bool:
    """Gateway-admin access never needs child metadata. Otherwise the normal sharing check
    needs the live session's metadata (its requester); once cleanup deleted the live session
    that metadata is gone, so a profile-scoped reader cannot regain access through it."""
    if reader.gateway_admin:
        return True
    live = store.live_session(session_key)
    return live is not None and reader.session_key == live.requester_session_key


def read_run_history(
    store: ArchiveStore,
    session_key: str,
    run_id: str,
    reader: Reader,
    *,
    limit: int | None = None,
    offset: int | None = None,
    include_tools: bool = False,
    mutants: frozenset[str] = frozenset(),
) -> ArchiveRead:
    """The retained transcript of ``run_id`` under ``session_key``, paged within that run's own
    archive even when later generations reused the key."""
    if not may_read(store, session_key, reader):
        return ArchiveRead("forbidden", reason="session access required")
    candidates = store.generations(session_key)
    # Size first, before any decoding, and for every generation: membership is inside the
    # record, so one unreadable generation means no unique match can be established.
    for record in candidates:
        if len(record.payload) > ARCHIVE_RECORD_LIMIT:
            return ArchiveRead(
                "unavailable",
                reason=(
                    f"archive record of generation {record.generation} exceeds "
                    f"{ARCHIVE_RECORD_LIMIT} bytes; task history unavailable"
                ),
            )
    matches: list[list[Mapping[str, Any]]] = []
    for record in candidates:
        decoded = json.loads(record.payload.decode("utf-8"))
        if isinstance(decoded, dict) and decoded.get("runId") == run_id:
            messages = decoded.get("messages")
            matches.append(messages if isinstance(messages, list) else [])
    if not matches:
        return ArchiveRead("not_found", reason=f"no archive for run {run_id}")
    if len(matches) > 1:
        return ArchiveRead("unavailable", reason=f"run {run_id} matches several archives")
    history = sessions_history(
        matches[0],
        limit=limit,
        offset=offset,
        include_tools=include_tools,
        session_key=session_key,
        mutants=mutants,
    )
    return ArchiveRead("ok", history=history)
