"""``run_record.apply`` builds the next record positionally (it is on the core's hot path); it
must make exactly what ``attrs.evolve`` with the change's fields makes, for every change type."""

from __future__ import annotations

import itertools
from typing import Any

import attrs
import pytest

from actors.records.run_record import CHANGE_TYPES, RunRecord, apply, columns
from sim import scenario
from sim.cli.args import default_world_path
from sim.world import core as world


def _records() -> list[RunRecord]:
    default = scenario.load(default_world_path())
    return [r for seed in (1, 2, 3) for r in world.run(default, seed=seed).runs][:40]


def test_apply_equals_evolve_with_the_change_fields() -> None:
    records = _records()
    for change_type in CHANGE_TYPES:
        # Each change takes its values from another real record's columns of the same names.
        required = [f.name for f in attrs.fields(change_type) if f.default is attrs.NOTHING]
        for record, source in itertools.islice(itertools.product(records, repeat=2), 300):
            values: dict[str, Any] = {name: getattr(source, name) for name in required}
            change = change_type(**values)
            expected = attrs.evolve(record, **{name: getattr(change, name)
                                               for name in columns(change_type)})
            after = apply(record, change)
            assert after == expected, change_type.__name__
            assert type(after) is RunRecord
    # The built record is as frozen as one ``RunRecord(...)`` makes.
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        after.task = "changed"  # type: ignore[misc]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        del after.task  # type: ignore[misc]
    assert hash(after) == hash(attrs.evolve(after))


def test_every_change_writes_only_record_columns() -> None:
    fields = {f.name for f in attrs.fields(RunRecord)}
    for change_type in CHANGE_TYPES:
        assert set(columns(change_type)) <= fields, change_type.__name__


def test_persisted_carries_the_applied_record_and_a_store_takes_it_only_for_its_own_row() -> None:
    """``persisted`` is ``apply`` plus the effect; the store takes the carried result only when
    its row is the very record it was computed from, and applies the change itself otherwise."""
    from actors.delivery.edge import Persist, persisted
    from actors.records.run_record import CleanedUp, Delivered
    from actors.store.durable import RunStore

    record = _records()[0]
    change = Delivered(123)
    after, persist = persisted(record, change)
    assert after == apply(record, change)
    assert persist == Persist(record.run_id, change)  # the carried records are not its value
    assert persist.known == (record, after)

    store = RunStore()
    store.register(record)
    row = store.get(record.run_id)
    taken, from_row = persisted(row, change)
    store.apply(record.run_id, change, from_row.known)
    assert store.get(record.run_id) is taken  # its own row: the result as it stands
    # A result computed from another record (equal in value, or not) is not taken.
    stale = attrs.evolve(row, task="another task")
    _, from_stale = persisted(stale, CleanedUp(7))
    store.apply(record.run_id, CleanedUp(7), from_stale.known)
    assert store.get(record.run_id) == apply(taken, CleanedUp(7))
    assert store.get(record.run_id).task == record.task
