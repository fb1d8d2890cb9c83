"""The in-memory store makes a cleaned-up run's summary once per record (actors/store/durable.py):
in real runs of the default world (restarts load every summary; corrections and redrives change
a cleaned-up run's row), every summary it hands out equals one made from the row as it stands."""

from __future__ import annotations

from importlib import resources
from typing import Any

import sim.world.core
from actors.records.retention import RunSummary, preview
from actors.store.durable import RunStore
from sim import scenario


def _made_now(store: RunStore) -> list[RunSummary]:
    """The summaries made from the rows as they stand (no record kept between calls)."""
    return [RunSummary(
        r.run_id, r.child_session_key, r.requester, preview(r.task), r.required,
        None if r.outcome_status is None else r.outcome_status.value,
        r.delivery_status.value, r.created_at_ms, r.ended_at_ms, r.delivered_at_ms,
        r.cleaned_up_at_ms, r.generation,
        r.ended_at_ms if r.receipt_ended_at_ms is None else r.receipt_ended_at_ms)
        for r in store.each_run() if r.cleaned_up_at_ms is not None]


class CheckedStore(RunStore):
    calls = 0
    changed_since = 0  # summaries asked again after their run's row changed

    def summaries(self) -> list[RunSummary]:
        before = dict(self._summaries)
        summaries = super().summaries()
        assert summaries == _made_now(self)
        CheckedStore.calls += bool(summaries)
        CheckedStore.changed_since += sum(
            1 for run_id, (record, _) in before.items() if self._runs[run_id] is not record)
        return summaries


def test_summaries_equal_the_rows_as_they_stand(monkeypatch: Any) -> None:
    monkeypatch.setattr(sim.world.core, "RunStore", CheckedStore)
    text = resources.files("sim").joinpath("default_world.toml").read_text(encoding="utf-8")
    world = scenario.loads(text, "default_world.toml")
    for seed in range(1, 61):
        sim.world.core.run(world, seed=seed)
    assert CheckedStore.calls > 50 and CheckedStore.changed_since > 0
