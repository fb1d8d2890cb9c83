"""A resolved run's summary as a memory dump writes it (DEL-16)."""

from __future__ import annotations

import attrs
from hypothesis import given
from hypothesis import strategies as st

from actors.records.retention import SUMMARY_FIELDS, RunSummary

_texts = st.text(max_size=12)
_times = st.none() | st.integers(min_value=0, max_value=10**12)

summaries = st.builds(
    RunSummary, _texts, _texts, _texts, _texts, st.booleans(), st.none() | _texts, _texts,
    st.integers(min_value=0, max_value=10**12), _times, _times, _times,
    st.integers(min_value=1, max_value=9), _times)


@given(summaries)
def test_to_json_is_the_plain_asdict(summary: RunSummary) -> None:
    """The spelled-out dict equals ``asdict``'s, key order included (the dump is JSON)."""
    plain = {"held": "summary", **attrs.asdict(summary)}
    written = summary.to_json()
    assert written == plain
    assert list(written) == list(plain)


def test_summary_fields_are_the_record_fields() -> None:
    assert tuple(field.name for field in attrs.fields(RunSummary)) == SUMMARY_FIELDS
