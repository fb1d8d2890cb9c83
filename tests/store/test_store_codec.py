"""A batch row's payload is ``json.dumps`` of its fields byte for byte (its long text escaped
once and spliced in), and a read of it gives the row its JSON decodes to, also when the saved
row itself stands for that decoding (actors/store/codec.py)."""

from __future__ import annotations

import json
from typing import Any

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from actors.records.batch_record import BatchRow, BatchStatus
from actors.store import codec

_texts = st.one_of(st.none(), st.text(max_size=40),
                   # Long texts (spliced), with what JSON escapes: quotes, controls, non-ASCII,
                   # lone surrogates.
                   st.builds(lambda t, n: (t or "x") * n,
                             st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from(
                                 ['"', "\\", "\n", "\x00", "•", "\ud800", "\U0001f600"]),
                                 min_size=1, max_size=30),
                             st.integers(40, 200)))
_ids = st.text(max_size=12)


class _Label(str):
    """A string subclass: JSON gives back a plain ``str``."""


@st.composite
def _rows(draw: st.DrawFn) -> BatchRow:
    members: Any = tuple(draw(st.lists(_ids, max_size=4)))
    rendered: Any = tuple((draw(_ids), draw(st.integers(0, 10**9)))
                          for _ in range(draw(st.integers(0, 3))))
    requester: Any = draw(_ids)
    # Now and then a field not of its plain type: a list, a str subclass, a list pair.
    odd = draw(st.integers(0, 5))
    if odd == 1:
        members = list(members)
    elif odd == 2:
        requester = _Label(requester)
    elif odd == 3 and rendered:
        rendered = tuple(list(pair) for pair in rendered)
    return BatchRow(
        batch_id=draw(_ids), requester=requester, agent_id=draw(_ids),
        turn_run_id=draw(st.none() | _ids), incarnation=draw(st.integers(0, 5)),
        members=members, rearm_generation=draw(st.integers(0, 5)),
        frozen_at_ms=draw(st.integers(0, 10**9)), status=draw(st.sampled_from(BatchStatus)),
        attempt_count=draw(st.integers(0, 5)), next_attempt_at_ms=draw(st.none() | st.integers()),
        last_error=draw(_texts), outcome=draw(st.none() | _ids), key_ambiguous=draw(st.booleans()),
        private=draw(st.booleans()), text=draw(_texts), rendered=rendered)


def _decoded(payload: str) -> BatchRow:
    return codec._decode_batch(payload)


def _typed(row: BatchRow) -> list[tuple[str, Any]]:
    """A row's fields with the types of their values (and of the members' and pairs' items)."""
    out: list[tuple[str, Any]] = []
    for name, value in attrs.asdict(row, recurse=False).items():
        inner = tuple(type(item) for item in value) if isinstance(value, tuple | list) else ()
        out.append((name, (value, type(value), inner)))
    return out


@settings(max_examples=300, deadline=None)
@given(_rows())
def test_the_payload_is_json_dumps_and_reads_back_as_its_decoding(row: BatchRow) -> None:
    codec._DECODED_BATCHES.clear()
    plain = attrs.asdict(row, recurse=False, value_serializer=None)
    assert list(codec._fields(row).items()) == list(plain.items())  # in order, as themselves
    payload = codec.batch_payload(row)
    assert payload == json.dumps(attrs.asdict(row, recurse=False, value_serializer=None))
    read = codec.batch_row(payload)
    assert _typed(read) == _typed(_decoded(payload))


@settings(max_examples=300, deadline=None)
@given(_rows())
def test_the_stored_row_is_what_a_read_of_the_payload_gives(row: BatchRow) -> None:
    """The in-memory store keeps ``stored_batch(row)`` instead of the payload."""
    stored = codec.stored_batch(row)
    assert _typed(stored) == _typed(_decoded(json.dumps(
        attrs.asdict(row, recurse=False, value_serializer=None))))


def test_a_long_text_is_spliced_and_a_plain_row_needs_no_decoding() -> None:
    text = "• a reply \"quoted\" \ud800 " * 100
    row = BatchRow("b1", "agent:main:main", "main", "turn-1", 1, ("run-1", "run-2"), 1, 5,
                   text=text, rendered=(("run-1", 3), ("run-2", 4)))
    payload = codec.batch_payload(row)
    assert len(text) >= codec.SPLICED_TEXT_FROM
    assert payload == json.dumps(attrs.asdict(row, recurse=False, value_serializer=None))
    assert codec.batch_row(payload) is row  # remembered: the row is its own decoding
    odd = attrs.evolve(row, members=["run-1", "run-2"])  # a list: JSON gives back a tuple
    read = codec.batch_row(codec.batch_payload(odd))
    assert read is not odd and type(read.members) is tuple
    assert codec.stored_batch(row) is row  # kept as it is: it is its own decoding
    assert codec.stored_batch(odd) == read and type(codec.stored_batch(odd).members) is tuple
