"""Tunes of the oracles' own work, each against the statement it replaced (Hypothesis):
stats-line's compact token counts rounded as JavaScript's ``toFixed(1)`` (integer arithmetic
on the double's exact ratio instead of ``Fraction``), and chunk-fits-channel's cuts found in place
in the joined text instead of cutting the rest off after each chunk."""

from __future__ import annotations

import math
from fractions import Fraction

from hypothesis import example, given, settings
from hypothesis import strategies as st

from sim.invariants.child.announce import _compact
from sim.invariants.gateway.chunk_limits import cut_end


def _plain_compact(count: int) -> str:
    if count <= 0:
        return "0"
    if count < 1000:
        return str(count)

    def to_fixed(quotient: float) -> str:
        tenths = math.floor(Fraction(quotient) * 10 + Fraction(1, 2))
        return f"{tenths // 10}.{tenths % 10}"

    thousands = to_fixed(count / 1000)
    if count < 1_000_000 and float(thousands) < 1000:
        return thousands + "k"
    return to_fixed(count / 1_000_000) + "m"


@settings(max_examples=2000, deadline=None)
@given(st.one_of(st.integers(-5, 10**13), st.integers(0, 10**4).map(lambda n: n * 50),
                 st.integers(0, 10**6).map(lambda n: n * 50_000 + 50)))
@example(1150)  # 1.15 is stored a hair below: 1.1k
@example(1050)
@example(999_950)  # 1000.0k: written in millions
@example(2**53 + 1)
def test_compact_counts_round_as_stated(count: int) -> None:
    assert _compact(count) == _plain_compact(count)


def _plain_cuts(text: str, limit: int) -> list[str]:
    """The chunks as first stated: the next one cut from the rest, then the rest cut off."""
    chunks = []
    rest = text
    while rest:
        if len(rest) <= limit:
            want = rest
        else:
            cut = rest.rfind("\n", 0, limit) + 1
            want = rest[:cut if cut > 0 else limit]
        chunks.append(want)
        rest = rest[len(want):]
    return chunks


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(["a", "bc", "\n", "\n\n", "é", "xyz"]), max_size=40).map("".join),
       st.integers(1, 12))
@example("ab\ncd\nef", 5)
@example("\nabcdef", 3)  # a break at the chunk's first character
def test_the_cuts_in_place_are_the_cuts_of_the_rest(text: str, limit: int) -> None:
    chunks, at = [], 0
    while at < len(text):
        end = cut_end(text, at, limit)
        assert end > at, f"a chunk ending at {end}, before or at its start {at}"
        chunks.append(text[at:end])
        at = end
    assert chunks == _plain_cuts(text, limit)
