"""How the store keeps what is not a run row as itself: batch rows as JSON, archives as encoded
(or, in a big run, deflated) bytes. Shared by the in-memory store
(``actors/store/durable.py``) and the SQLite one (``actors/store/sqlite.py``), so both hold and hand
back the same values."""

from __future__ import annotations

import json
import operator
import zlib
from json.encoder import encode_basestring_ascii
from typing import Any

import attrs

from actors.records.batch_record import BatchRow, BatchStatus


def batch_payload(row: BatchRow) -> str:
    """A batch row as the outbox keeps it: ``json.dumps`` of its fields, byte for byte; a read
    decodes it again (``batch_row``), so a saved row reads back as its JSON round trip,
    whichever store holds it.

    A wake's text (rendered once, then kept with its row through every save: ~35,000 characters
    per default-world seed over ~7 saves) is escaped once, not at every save, and spliced in
    where ``json.dumps`` writes it; and a row whose every field holds its plain type is the
    very row its payload decodes to, so the first read of the payload needs no decoding.
    Encoding and decoding those texts was ~3 % of a seed's instructions (docs/performance-log.md,
    wave 10b); ``tests/store/test_store_codec.py`` compares both with the plain round trip."""
    values = _fields(row)
    text = values["text"]
    if type(text) is str and len(text) >= SPLICED_TEXT_FROM:
        head = {name: value for name, value in values.items() if name not in _FROM_TEXT}
        rest = {name: values[name] for name in _FROM_TEXT[1:]}
        payload = (json.dumps(head)[:-1] + ', "text": ' + _escaped(text)
                   + (", " + json.dumps(rest)[1:] if rest else "}"))
    else:
        payload = json.dumps(values)
    if _plain(values):
        _remember(payload, row)
    return payload


def stored_batch(row: BatchRow) -> BatchRow:
    """What a read of ``row``'s saved payload gives, without the payload: the row itself when
    its fields hold their plain types (the payload decodes to an equal row of the same types),
    else the JSON round trip. The in-memory store keeps this: building a wake's payload (~35,000
    characters a default-world seed, ~17 saves) and hashing it to find its decoding again was
    ~2 % of a seed's instructions (wave 11b in docs/performance-log.md); the SQLite store writes the
    payload itself, and ``tests/store/test_store_backends.py`` compares the two."""
    if _plain(_fields(row)):
        return row
    return _decode_batch(batch_payload(row))


# Texts at least this long are escaped once (``_ESCAPED_TEXTS``) and spliced into the payload.
SPLICED_TEXT_FROM = 1_024
# ``text`` and the fields after it, in the order ``json.dumps`` writes them.
_FIELD_NAMES = tuple(field.name for field in attrs.fields(BatchRow))
_FROM_TEXT = _FIELD_NAMES[_FIELD_NAMES.index("text"):]
_ESCAPED_TEXTS: dict[str, str] = {}
_FIELD_VALUES = operator.attrgetter(*_FIELD_NAMES)


def _fields(row: BatchRow) -> dict[str, Any]:
    """``attrs.asdict(row, recurse=False)``, fields in order, read in one C call: ``asdict``
    asks its filter and serializer about every field of every save (tests/store/
    test_store_codec.py compares the payload with ``json.dumps`` of ``asdict``)."""
    return dict(zip(_FIELD_NAMES, _FIELD_VALUES(row), strict=True))


# A wake text is saved again within a few steps of its last save; a few suffice, and each is
# up to ~75,000 characters (more once escaped): a big run must not keep dozens of them.
_ESCAPED_TEXTS_MAX = 8


def _escaped(text: str) -> str:
    """``text`` as ``json.dumps`` writes it (quoted, escaped to ASCII); equal texts once."""
    escaped = _ESCAPED_TEXTS.get(text)
    if escaped is None:
        if len(_ESCAPED_TEXTS) >= _ESCAPED_TEXTS_MAX:
            _ESCAPED_TEXTS.clear()
        escaped = _ESCAPED_TEXTS[text] = encode_basestring_ascii(text)
    return escaped


def _plain(values: dict[str, object]) -> bool:
    """Whether these fields come back from their JSON as they are: plain strings, integers,
    booleans and None, the status as itself, the members a tuple of strings and the rendered
    receipts a tuple of (run id, end time) pairs (a subclass, a list or a float does not)."""
    for name, value in values.items():
        if name == "status":
            if type(value) is not BatchStatus:
                return False
        elif name == "members":
            if type(value) is not tuple or any(type(m) is not str for m in value):
                return False
        elif name == "rendered":
            if type(value) is not tuple or any(
                    type(pair) is not tuple or len(pair) != 2 or type(pair[0]) is not str
                    or type(pair[1]) not in _PLAIN for pair in value):
                return False
        elif type(value) not in _PLAIN:
            return False
    return True


_PLAIN = (str, int, bool, type(None))


def _remember(payload: str, row: BatchRow) -> None:
    if len(_DECODED_BATCHES) >= _DECODED_BATCHES_MAX:
        _DECODED_BATCHES.clear()
    _DECODED_BATCHES[payload] = row


def batch_row(payload: str) -> BatchRow:
    """A batch row from its JSON; equal payloads decode to equal rows, and a row is frozen, so
    one decoded row serves every read of the same payload (a wave check reads every row of its
    session: ~30 decodes per default-world seed)."""
    row = _DECODED_BATCHES.get(payload)
    if row is None:
        row = _decode_batch(payload)
        _remember(payload, row)
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
