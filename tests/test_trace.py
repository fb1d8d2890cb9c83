"""The trace's records: ``Trace.append`` builds them past attrs' ``__init__`` (sim/trace.py), so
each must be exactly the frozen ``Record`` that ``Record(...)`` makes."""

from __future__ import annotations

import attrs
import pytest

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
