"""``single_line`` remembers the fields it made (actors/announce/labels.py): a remembered answer
is the plain function's answer for that value and fallback."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from actors.announce.labels import CONTEXT_BEGIN_MARKER, CONTEXT_END_MARKER, single_line

# Whitespace runs, the block's markers, lone surrogates, values over the 256-character cap.
_pieces = st.sampled_from([" ", "\n", "\t", "\u2028", "a", "b", "…", "\ud800",
                           CONTEXT_BEGIN_MARKER, CONTEXT_END_MARKER, "x" * 250])
_values = st.none() | st.lists(_pieces, max_size=12).map("".join)


@given(st.lists(st.tuples(_values, st.sampled_from(["unknown", "task", ""])), max_size=8))
def test_a_remembered_field_is_the_plain_one(calls: list[tuple[str | None, str]]) -> None:
    plain = single_line.__wrapped__
    for value, fallback in calls + calls:  # each asked again: remembered by then
        made = single_line(value, fallback)
        assert made == plain(value, fallback) and type(made) is str


def test_the_fallback_is_part_of_what_is_remembered() -> None:
    assert single_line("  ", "unknown") == "unknown"
    assert single_line("  ", "task") == "task"
