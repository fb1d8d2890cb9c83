"""How the store keeps what is not a run row as itself: batch rows as JSON, archives as encoded
(or, in a big run, deflated) bytes, and a task's preview. Shared by the in-memory store
(``actors/store/durable.py``) and the SQLite one (``actors/store/sqlite.py``), so both hold and hand
back the same values."""

from __future__ import annotations

import json
import zlib

import attrs

from actors.delivery.retention import ELLIPSIS, PREVIEW_CHARS
from actors.yields.batch_record import BatchRow, BatchStatus


def batch_payload(row: BatchRow) -> str:
    """A batch row as the outbox keeps it; a read decodes it again (``batch_row``), so a saved
    row reads back as its JSON round trip, whichever store holds it."""
    return json.dumps(attrs.asdict(row, recurse=False, value_serializer=None))


def batch_row(payload: str) -> BatchRow:
    """A batch row from its JSON; equal payloads decode to equal rows, and a row is frozen, so
    one decoded row serves every read of the same payload (a wave check reads every row of its
    session: ~30 decodes per default-world seed)."""
    row = _DECODED_BATCHES.get(payload)
    if row is None:
        if len(_DECODED_BATCHES) >= _DECODED_BATCHES_MAX:
            _DECODED_BATCHES.clear()
        row = _DECODED_BATCHES[payload] = _decode_batch(payload)
    return row


_DECODED_BATCHES: dict[str, BatchRow] = {}
_DECODED_BATCHES_MAX = 1024


def _decode_batch(payload: str) -> BatchRow:
    values = json.loads(payload)
    values["members"] = tuple(values["members"])
    values["rendered"] = tuple((run_id, ended) for run_id, ended in values.get("rendered", ()))
    values["status"] = BatchStatus(values["status"])
    return BatchRow(**values)


# A store deflates the archives it saves from this many on: a big run's retained transcripts
# were over a third of its database (JSON, the child's answer in each); a default-world seed
# saves about eight, where deflating cost ~2 % of its CPU and saved nothing that matters.
DEFLATE_ARCHIVES_FROM = 200


def pack(payload: bytes) -> bytes:
    """An archive's payload as its row keeps it when deflated (a zlib stream starts with
    0x78; an encoded archive is a JSON object, ``{``). Readers get the payload byte for byte."""
    return zlib.compress(payload, 1)


def unpack(stored: bytes) -> bytes:
    return bytes(stored) if stored[:1] == b"{" else zlib.decompress(stored)


def stored_archive(payload: bytes, saved: int) -> bytes:
    """The archive as a store keeps it, when it is the ``saved``-th the store saved."""
    return pack(payload) if saved > DEFLATE_ARCHIVES_FROM else payload


def preview(task: str) -> str:
    """A cleaned-up run's task as the in-memory registry keeps it (DEL-16): whole up to
    ``PREVIEW_CHARS`` characters, else cut to one less and marked with the ellipsis."""
    return task if len(task) <= PREVIEW_CHARS else task[:PREVIEW_CHARS - 1] + ELLIPSIS
