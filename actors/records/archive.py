"""A retained transcript as the registry stores it (FMT-6): one generation of a session key, still
encoded. The store keeps these rows; ``actors.history`` reads them."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs


@attrs.frozen
class ArchiveRecord:
    """One retained transcript of one generation of a session key.

    ``payload`` is the stored, still-encoded record. Run membership (``runId``) lives inside it,
    so a reader must decode a record to learn which run it belongs to."""

    session_key: str
    generation: int
    payload: bytes

    @staticmethod
    def encode(
        session_key: str, generation: int, run_id: str, messages: Sequence[Mapping[str, Any]]
    ) -> ArchiveRecord:
        body = json.dumps({"runId": run_id, "messages": list(messages)}, ensure_ascii=False)
        # Lone surrogates (JSON logs may carry them) are written as JSON escapes, never an error.
        return ArchiveRecord(session_key, generation, body.encode("utf-8", "backslashreplace"))
