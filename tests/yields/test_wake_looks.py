"""The delivery actor's batch looks (actors/delivery/wakes/delivery_wakes.py ``Wakes._look``) and
the claims it does not ask (actors/delivery/wakes/batch_handover.py ``unowned``), against the
plain code they replace: every open batch checked from freshly built members after every message,
every claim handed to the delivery core. Whole runs must be equal record for record, probe for probe
(counts, order and moments), and the shortcuts must actually be taken in the runs compared."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from actors import mutants
from actors.delivery import table
from actors.delivery.core import CoreState
from actors.delivery.edge import BatchClaim
from actors.delivery.shell import render, requester_kind
from actors.delivery.table import DeliveryCore
from actors.delivery.wakes import delivery_wakes
from actors.delivery.wakes.outbox_messages import Effect, WakeAckTimeout, WakeTimer
from actors.records.batch_record import BatchRow, BatchStatus
from actors.records.run_record import RunRecord
from actors.states import DeliveryStatus, OutcomeStatus
from actors.store.durable import RunStore
from sim.bench.detect import default_world
from sim.bench.scale import world_with
from sim.world import batch
from sim.world import core as world
from sim.world.result import RunResult


def _plain_look(self: delivery_wakes.Wakes, row: BatchRow, now: int) -> list[Effect]:
    """The reference: the outbox asked every time, from members built afresh."""
    return self.outbox.check(row, self.members(row), self.requester(row), now)


def _never_unowned(self: Any, run_id: str) -> bool:
    return False  # the reference: every claim goes to the core, which decides


def _fingerprint(result: RunResult | Exception) -> object:
    if isinstance(result, Exception):
        return repr(result)
    return ([record.jsonl() for record in result.trace], result.violations,
            list(result.probes.items()), list(result.moments.items()), result.steps,
            result.end_reason, result.end_ms, result.runs)


def _runs(seeds: range, extra_mutants: list[str] | None = None) -> list[object]:
    taken: list[object] = []
    batch.run_each(default_world(), list(seeds), lambda seed, result: taken.append(
        _fingerprint(result)), mutants=extra_mutants)
    return taken


def _tree_run(children: int) -> object:
    return _fingerprint(world.run(world_with(children, trees=True), seed=1))


_REAL_UNOWNED = CoreState.unowned


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Counts the looks answered from the last one and the claims not asked; and, once a test
    switches to the reference, checks that each claim the shortcut would not have asked is one
    the core refuses with no effect and no change to its memory."""
    counts: Counter[str] = Counter()
    look, handle = delivery_wakes.Wakes._look, table.DeliveryCore.handle
    poke = delivery_wakes.Wakes.poke

    def counting_look(self: delivery_wakes.Wakes, row: BatchRow, now: int) -> list[Effect]:
        last = self._last_look.get(row.batch_id)
        effects = look(self, row, now)
        if last is not None and self._last_look.get(row.batch_id) is last:
            counts["repeated"] += 1  # (answered from ``last``: the entry stays the same object)
        counts["looks"] += 1
        return effects

    def counting_unowned(self: Any, run_id: str) -> bool:
        unowned = _REAL_UNOWNED(self, run_id)
        counts["not asked"] += unowned
        return unowned

    def checking_handle(self: table.DeliveryCore[Any], event: Any, now_ms: int) -> list[Any]:
        if isinstance(event, BatchClaim) and _REAL_UNOWNED(self, event.run_id):
            before = self.snapshot()
            assert handle(self, event, now_ms) == []
            assert self.snapshot() == before
            counts["refused"] += 1
        return handle(self, event, now_ms)

    def noting_poke(self: delivery_wakes.Wakes) -> None:
        poke(self)
        # A closed batch is never looked at again: its last look is let go.
        open_ids = {row.batch_id for row in self.store.open_batches()}
        counts["kept"] += len(self._last_look)
        counts["kept closed"] += sum(batch_id not in open_ids for batch_id in self._last_look)

    monkeypatch.setattr(delivery_wakes.Wakes, "poke", noting_poke)
    monkeypatch.setattr(delivery_wakes.Wakes, "_look", counting_look)
    monkeypatch.setattr(CoreState, "unowned", counting_unowned)
    monkeypatch.setattr(table.DeliveryCore, "handle", checking_handle)
    yield counts


def _reference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(delivery_wakes.Wakes, "_look", _plain_look)
    monkeypatch.setattr(CoreState, "unowned", _never_unowned)


def test_the_looks_change_no_run_of_the_default_world(
        counted: Counter[str], monkeypatch: pytest.MonkeyPatch) -> None:
    seeds = range(1, 61)
    fast = _runs(seeds)
    # A broken variant that answers a batch from a look that read something else, replays no
    # probe, or drops a claim the core would take changes some run here.
    print(dict(counted))
    assert counted["repeated"] > 300 and counted["not asked"] > 100
    _reference(monkeypatch)
    assert _runs(seeds) == fast
    assert counted["refused"] == counted["not asked"]


def test_the_looks_change_no_run_under_the_earlier_turns_mutant(
        counted: Counter[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The bug's batch reads more runs than its members (its ids are read at every look)."""
    seeds = range(1, 31)
    fast = _runs(seeds, [mutants.MUTANT_WAIT_EARLIER_TURN])
    print(dict(counted))
    assert counted["repeated"] > 0
    _reference(monkeypatch)
    assert _runs(seeds, [mutants.MUTANT_WAIT_EARLIER_TURN]) == fast


def test_the_looks_change_no_big_tree_run(
        counted: Counter[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A big tree's batches (the scale runs' shape): members whose result a private batch does
    not own are claimed after every message while they wait out their own backoff."""
    fast = _tree_run(300)
    print(dict(counted))
    assert counted["repeated"] > 1000 and counted["not asked"] > 100
    assert counted["kept"] > 0 and counted["kept closed"] == 0
    _reference(monkeypatch)
    assert _tree_run(300) == fast
    assert counted["refused"] == counted["not asked"]


# -- one batch, looked at directly ---------------------------------------------------------------


class _Port:
    """What a look uses of the delivery actor's port: the time and the probes."""

    def __init__(self) -> None:
        self.now_ms = 0
        self.hits: list[str] = []

    def probe(self, name: str) -> None:
        self.hits.append(name)


def _wakes(*records: RunRecord, **row: Any) -> tuple[delivery_wakes.Wakes, BatchRow]:
    store = RunStore()
    for record in records:
        store.register(record)
    store.save_session("agent:main:main", 1, False)
    batch_row = BatchRow(**{**dict(
        batch_id="b", requester="agent:main:main", agent_id="main", turn_run_id="turn:x",
        incarnation=1, members=("run-1",), rearm_generation=1, frozen_at_ms=0), **row})
    store.save_batch(batch_row)
    core: DeliveryCore[object] = DeliveryCore(1, lambda: 0.0, render, requester_kind,
                                              batch_of=store.batch_owner)
    wakes = delivery_wakes.Wakes(_Port(), store, core, frozenset(), lambda effects: None,
                                 lambda record: None)  # type: ignore[arg-type,return-value]
    return wakes, store.batch("b") or batch_row


def _delivered(run_id: str, parent: str | None = None, ended: bool = True) -> RunRecord:
    return RunRecord(run_id, "c1", f"agent:main:subagent:{run_id}", "agent:main:main", "task",
                     True, created_at_ms=0, ended_at_ms=1_000 if ended else None,
                     outcome_status=OutcomeStatus.OK if ended else None, result_text="done",
                     delivery_status=DeliveryStatus.DELIVERED if ended
                     else DeliveryStatus.PENDING, requester_run_id=parent)


def test_a_look_past_the_batch_deadline_is_asked_again() -> None:
    """A deferred batch (a descendant still running) reads the same before and at its
    recheck's deadline; only the time tells the outbox to defer again. A look that left the
    deadline out of what it read would answer the second from the first (nothing)."""
    wakes, row = _wakes(_delivered("run-1"), _delivered("run-1a", parent="run-1", ended=False),
                        next_attempt_at_ms=30_000)
    assert wakes._look(row, 10_000) == []
    assert wakes._look(row, 20_000) == []  # (answered from the last)
    deferred = wakes._look(row, 30_000)
    assert [type(effect).__name__ for effect in deferred] == \
        ["SaveBatch", "WakeDeferred", "WakeTimer"]


def test_a_look_that_dispatches_is_never_answered_from_the_last() -> None:
    """A dispatch moves the outbox's answer-timeout tokens: the same reads dispatch again
    with the next token (here the effects are not performed, so the row stays pending)."""
    wakes, row = _wakes(_delivered("run-1"))
    first, second = wakes._look(row, 5_000), wakes._look(row, 5_000)
    timers = [effect.payload for effect in [*first, *second] if isinstance(effect, WakeTimer)]
    # Incarnation 1's range of tokens (each incarnation starts its own: reference §c17).
    first_token = (1 << 32) + 1
    assert [timer.token for timer in timers if isinstance(timer, WakeAckTimeout)] == [
        first_token, first_token + 1]


def test_a_look_answered_from_the_last_hits_its_probes_again() -> None:
    """A dispatching batch whose members all settled hits ``batch.coalesced-settle`` at every
    look (probe counts are part of a run's result)."""
    wakes, row = _wakes(_delivered("run-1"), status=BatchStatus.DISPATCHING, attempt_count=1)
    port = wakes.port
    assert isinstance(port, _Port)
    for _ in range(3):
        assert wakes._look(row, 5_000) == []
    assert port.hits == ["batch.coalesced-settle"] * 3
