"""run_digest spells the repr of its summary out (sim/explore/seed.py): the same digest."""

from __future__ import annotations

import hashlib
from types import SimpleNamespace
from typing import Any, cast

from hypothesis import given
from hypothesis import strategies as st

from sim.explore import seed as explore_seed
from sim.explore.seed import run_digest

_triples = st.tuples(st.integers(0, 90), st.integers(2, 5_000), st.integers(0, 5_000))


def _stated(result: Any) -> str:
    """run_digest's statement: the SHA-256 of the repr of its summary."""
    schedule = result.schedule
    summary = (schedule.subsystems, schedule.choices, len(result.trace), result.end_ms,
               tuple((v.invariant, v.message) for v in result.violations))
    return hashlib.sha256(repr(summary).encode()).hexdigest()[:16]


@given(subsystems=st.lists(st.text(max_size=12), max_size=5).map(tuple),
       choices=st.lists(_triples, max_size=6).map(tuple),
       records=st.integers(0, 10**6), end_ms=st.integers(-1, 10**9),
       violations=st.lists(st.tuples(st.text(max_size=8), st.text(max_size=20)), max_size=3))
def test_run_digest_is_the_digest_of_its_summarys_repr(
        subsystems: tuple[str, ...], choices: tuple[tuple[int, int, int], ...], records: int,
        end_ms: int, violations: list[tuple[str, str]]) -> None:
    result = SimpleNamespace(
        schedule=SimpleNamespace(subsystems=subsystems, choices=choices),
        trace=range(records), end_ms=end_ms,
        violations=[SimpleNamespace(invariant=i, message=m) for i, m in violations])
    assert run_digest(cast(Any, result)) == _stated(result)


def test_the_kept_texts_start_over_past_their_limit(monkeypatch: Any) -> None:
    texts = explore_seed._Texts()
    monkeypatch.setattr(explore_seed._Texts, "LIMIT", 3)
    for i in range(10):
        assert texts[(i, 2, 1)] == repr((i, 2, 1))
        assert len(texts) <= 3
