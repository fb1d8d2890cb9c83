"""The trace's records: ``Trace.append`` builds them past attrs' ``__init__`` (sim/trace.py), so
each must be exactly the frozen ``Record`` that ``Record(...)`` makes."""

from __future__ import annotations

import attrs
import pytest

from sim import trace as trace_module
from sim.trace import Record, Trace


def test_an_appended_record_is_the_frozen_record_its_fields_make() -> None:
    trace = Trace()
    data = {"run_id": "run-1", "text": "é\ud800"}
    trace.append(5, "delivery", "child.end", {})
    record = trace.append(7, "delivery", "delivery.sent", data)
    made = Record(1, 7, "delivery", "delivery.sent", data)
    assert type(record) is Record
    assert record == made
    assert (record.seq, record.t_ms, record.actor, record.kind, record.data) == \
        (1, 7, "delivery", "delivery.sent", data)
    assert record.jsonl() == made.jsonl()
    assert attrs.evolve(record) == record
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        record.kind = "other"  # type: ignore[misc]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        del record.kind  # type: ignore[misc]
    assert list(trace) == [Record(0, 5, "delivery", "child.end", {}), made]


@pytest.mark.parametrize("limit", [0, 1, 3])
def test_a_trace_holds_its_limit_and_no_more_even_when_it_is_moved(limit: int) -> None:
    """``append`` looks at the limit (and at sharing) only past ``min(limit, sharing)``
    records: the limit is kept exactly, also when set after the trace was made, as the world
    sets it."""
    for moved in (False, True):
        trace = Trace(limit=100) if moved else Trace(limit=limit)
        if moved:
            trace.limit = limit
        for seq in range(limit):
            trace.append(seq, "a", "k", {})
        with pytest.raises(OverflowError, match=f"exceeded {limit} records"):
            trace.append(limit, "a", "k", {})
        assert len(trace) == limit and trace.limit == limit


def test_long_strings_are_shared_from_the_sharing_threshold_on(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace_module, "SHARE_STRINGS_FROM", 2)
    trace = Trace()
    texts = ["x" * 30 + str(n % 1) for n in range(4)]  # equal, separate strings
    assert len({id(t) for t in texts}) == 4
    records = [trace.append(n, "a", "k", {"text": text}) for n, text in enumerate(texts)]
    assert [r.data["text"] is texts[n] for n, r in enumerate(records)] == \
        [True, True, True, False]  # the third is the first the trace keeps; the fourth gets it
    assert records[3].data["text"] is texts[2]
