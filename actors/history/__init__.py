"""What a requester reads of a child's transcript: ``sessions_history`` (FMT-5) in ``sessions``,
archive reads after cleanup (FMT-6) in ``archive``. Re-exported here as one API."""

from __future__ import annotations

from actors.history.archive import (
    ARCHIVE_RECORD_LIMIT,
    ArchiveRead,
    ArchiveStore,
    LiveSession,
    Reader,
    may_read,
    read_run_history,
)
from actors.history.sessions import (
    BYTE_CAP,
    DROPPED_FIELDS,
    OMITTED_MESSAGE,
    REDACTED,
    SIGNATURE_FIELDS,
    TEXT_FIELD_LIMIT,
    TEXT_FIELDS,
    TOOL_ROLES,
    TRUNCATION_SUFFIX,
    HistoryResult,
    json_bytes,
    message_seq,
    redact_credentials,
    sanitize_message,
    sessions_history,
    truncate_text_field,
    utf16_length,
)
from actors.records.archive import ArchiveRecord

__all__ = [
    "ARCHIVE_RECORD_LIMIT",
    "BYTE_CAP",
    "DROPPED_FIELDS",
    "OMITTED_MESSAGE",
    "REDACTED",
    "SIGNATURE_FIELDS",
    "TEXT_FIELDS",
    "TEXT_FIELD_LIMIT",
    "TOOL_ROLES",
    "TRUNCATION_SUFFIX",
    "ArchiveRead",
    "ArchiveRecord",
    "ArchiveStore",
    "HistoryResult",
    "LiveSession",
    "Reader",
    "json_bytes",
    "may_read",
    "message_seq",
    "read_run_history",
    "redact_credentials",
    "sanitize_message",
    "sessions_history",
    "truncate_text_field",
    "utf16_length",
]
