"""A step's text streamed as deltas (actors/child/steps.py): ``_pieces`` cuts where splitting
at every space and joining thirds of the words cut (the plain statement, kept here), for any
text (Hypothesis: runs of spaces, leading and trailing spaces, multibyte characters)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from actors.child.steps import _pieces


def _by_words(text: str) -> list[str]:
    """The reference: every word split out, thirds joined back, a space after the first two."""
    words = text.split(" ")
    if len(words) < 3:
        return [text]
    third = len(words) // 3
    parts = [" ".join(words[:third]), " ".join(words[third:2 * third]),
             " ".join(words[2 * third:])]
    return [parts[0] + " ", parts[1] + " ", parts[2]]


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from([" ", "a", "b", "中", "\n", "\ud800"]), max_size=40))
def test_pieces_cut_where_the_words_do(text: str) -> None:
    assert _pieces(text) == _by_words(text)
    assert "".join(_pieces(text)) == text


def test_a_long_reply_is_cut_in_thirds_of_its_words() -> None:
    text = "&&<中文 " * 3000
    assert _pieces(text) == _by_words(text)
    assert [piece.count(" ") for piece in _pieces(text)] == [1000, 1000, 1000]
