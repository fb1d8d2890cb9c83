"""The store's decoded caches (actors/store/cache.py) are exact: in real runs of the default world
(yield batches, restarts, corrections, nested trees), every cached read equals what decoding the
table's rows gives at that moment."""

from __future__ import annotations

from importlib import resources
from typing import Any

import pytest

import sim.world.core
from actors.records.batch_record import BatchRow
from actors.records.run_record import RunRecord
from actors.store import cache as store_cache
from actors.store import codec as store_codec
from actors.store import schema as store_schema
from actors.store.sqlite import SqliteStore
from sim import scenario

_COLUMNS = ", ".join(store_schema.FIELDS)


def _fresh(store: SqliteStore, run_id: str) -> RunRecord:
    row = store._db.execute(f"SELECT {_COLUMNS} FROM runs WHERE run_id = ?", [run_id]).fetchone()
    return store_schema.decode_record(row)


def _fresh_open_batches(store: SqliteStore) -> list[BatchRow]:
    rows = store._db.execute("SELECT payload FROM batches WHERE open = 1 ORDER BY row_order")
    return [store_codec.batch_row(payload) for (payload,) in rows]


class CheckedStore(SqliteStore):
    """Compares each cached read with the table (reads only: nothing here writes)."""

    reads = 0

    def get(self, run_id: str) -> RunRecord:
        record = super().get(run_id)
        assert record == _fresh(self, run_id)
        CheckedStore.reads += 1
        return record

    def get_many(self, run_ids: list[str]) -> list[RunRecord]:
        records = super().get_many(run_ids)
        assert records == [_fresh(self, run_id) for run_id in run_ids]
        CheckedStore.reads += len(records)
        return records

    def direct_children(self, run_id: str) -> list[RunRecord]:
        children = super().direct_children(run_id)
        assert children == [_fresh(self, child.run_id) for child in children]
        return children

    def open_batches(self) -> list[BatchRow]:
        rows = super().open_batches()
        assert rows == _fresh_open_batches(self)
        return rows

    def batch(self, batch_id: str) -> BatchRow | None:
        row = super().batch(batch_id)
        found = self._db.execute("SELECT payload FROM batches WHERE batch_id = ?",
                                 [batch_id]).fetchone()
        assert row == (None if found is None else store_codec.batch_row(found[0]))
        return row


@pytest.mark.parametrize("limit", [store_cache.RECORD_LIMIT, 3])
def test_cached_reads_equal_the_table(monkeypatch: Any, limit: int) -> None:
    monkeypatch.setattr(sim.world.core, "RunStore", CheckedStore)
    monkeypatch.setattr(store_cache, "RECORD_LIMIT", limit)  # 3: the cache empties often
    text = resources.files("sim").joinpath("default_world.toml").read_text(encoding="utf-8")
    world = scenario.loads(text, "default_world.toml")
    CheckedStore.reads = 0
    for seed in range(1, 41):
        sim.world.core.run(world, seed=seed)
    assert CheckedStore.reads > 1000
