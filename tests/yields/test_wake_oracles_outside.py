"""The YLD oracles read only what was asked and what an outsider saw (issue 12): each one still
catches its broken variant on a trace stripped of the registry's own records (settle, hand-over,
give-up, cleanup, the outbox's records) and of what the session said of itself (a wake's
``visible_reply``, a refusal's ``reason``), here replaced by lies so that reading them would
change the verdict."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import pytest

import actors.delivery.wakes.batch_wake
from actors.mutants import MUTANT_TWO_WAKES, MUTANT_WAVE_NEVER_WOKEN
from actors.store.durable import RunStore
from sim import scenario
from sim.invariants.yields.wake_budgets import wake_budgets
from sim.invariants.yields.wave_liveness import wave_woken
from sim.invariants.yields.yield_batches import one_wake_per_batch, wake_after_settle
from sim.trace import Record
from sim.world import core as world
from tests.conftest import SCENARIOS
from tests.yields.test_yields import spend_refused_attempts

REGISTRY = ("delivery.", "batch.", "run.cleanup", "private.")


def _outside(records: Sequence[Record], visible: bool) -> list[Record]:
    """The trace as an outsider has it: no registry record; every wake accept claiming
    ``visible`` and every refusal giving no reason."""
    out = []
    for r in records:
        if r.kind.startswith(REGISTRY):
            continue
        if r.kind == "requester.accept":
            r = attrs.evolve(r, data={**r.data, "visible_reply": visible})
        elif r.kind == "requester.wake_refused":
            r = attrs.evolve(r, data={**r.data, "reason": "unknown"})
        out.append(r)
    return out


def _run(name: str, **kwargs: Any) -> list[Record]:
    return world.run(scenario.load(SCENARIOS / name), **kwargs).trace.records


@pytest.mark.parametrize("visible", [True, False])
def test_wake_after_settle_reads_no_cleanup(monkeypatch: pytest.MonkeyPatch,
                                            visible: bool) -> None:
    assert wake_after_settle(_outside(_run("yield-batch.toml"), visible)) == []
    # The broken store: no descendant is ever unsettled (both readers: a batch look reads its
    # members' counts in one call).
    monkeypatch.setattr(RunStore, "unsettled_descendants", lambda self, record: (0, 0))
    monkeypatch.setattr(RunStore, "descendant_counts", lambda self, ids: [(0, 0) for _ in ids])
    assert wake_after_settle(_outside(_run("yield-batch.toml"), visible))


def test_one_wake_per_batch_reads_the_conversation_not_visible_reply() -> None:
    assert one_wake_per_batch(_outside(_run("yield-batch.toml"), visible=False)) == []
    broken = _outside(_run("yield-batch.toml", mutants=[MUTANT_TWO_WAKES]), visible=False)
    assert one_wake_per_batch(broken)


def test_wake_budgets_read_no_visible_reply_nor_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("yield-wake-retries.toml", "yield-turn-pending.toml"):
        assert wake_budgets(_outside(_run(name), visible=False)) == []
    monkeypatch.setattr(actors.delivery.wakes.batch_wake, "RETRY_DELAYS_MS", (5_000, 10_000))
    assert wake_budgets(_outside(_run("yield-wake-retries.toml"), visible=False))


def test_wake_budgets_catch_an_attempt_spent_on_a_refusing_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spend_refused_attempts(monkeypatch)
    assert wake_budgets(_outside(_run("yield-turn-pending.toml"), visible=True))


def test_wave_woken_catches_a_wave_never_woken_from_outside() -> None:
    assert wave_woken(_outside(_run("wave-overlapping.toml"), visible=True)) == []
    broken = _run("wave-overlapping.toml", mutants=[MUTANT_WAVE_NEVER_WOKEN])
    found = wave_woken(_outside(broken, visible=True))
    # Both of its waves: {a, b} of t1 and {d, e} of t3 (c alone is consumed, owed nothing).
    assert len(found) == 2
