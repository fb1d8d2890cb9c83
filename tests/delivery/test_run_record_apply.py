"""``run_record.apply`` builds the next record positionally (it is on the core's hot path); it
must make exactly what ``attrs.evolve`` with the change's fields makes, for every change type."""

from __future__ import annotations

import itertools
from typing import Any

import attrs

from actors.delivery.run_record import CHANGE_TYPES, RunRecord, apply, columns
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


def test_every_change_writes_only_record_columns() -> None:
    fields = {f.name for f in attrs.fields(RunRecord)}
    for change_type in CHANGE_TYPES:
        assert set(columns(change_type)) <= fields, change_type.__name__
