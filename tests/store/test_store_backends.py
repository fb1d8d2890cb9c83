"""The in-memory store (actors/store/durable.py, what the world runs on) and the SQLite store
(actors/store/sqlite.py, a database file) are the same store: the same operations give the same
reads (a Hypothesis state machine drives both with every write and compares every read after each
step), and the world run on either gives the same trace, violations and probes, seed for seed."""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

import sim.world.core
from actors.records.batch_record import BatchRow, BatchStatus
from actors.records.run_record import (
    CHANGE_TYPES,
    CleanedUp,
    Corrected,
    Delivered,
    Reopened,
    RunEnded,
    RunRecord,
    YieldFrozen,
)
from actors.states import DeliveryStatus, OutcomeStatus
from actors.store.durable import RunStore
from actors.store.sqlite import SqliteStore
from sim import scenario
from sim.world.core import run

SCENARIOS = Path(__file__).resolve().parent.parent.parent / "scenarios"
SESSIONS = ["agent:main:main", "agent:main:subagent:a", "agent:main:subagent:b"]


def _fingerprint(result: sim.world.core.RunResult) -> str:
    return hashlib.sha256(repr((result.trace.digest(), result.end_ms, tuple(result.probes),
                                [(v.invariant, v.message) for v in result.violations])
                               ).encode()).hexdigest()


def _both(monkeypatch: pytest.MonkeyPatch, world: scenario.Scenario, **options: Any
          ) -> tuple[str, str]:
    in_memory = _fingerprint(run(world, **options))
    with monkeypatch.context() as patched:
        patched.setattr(sim.world.core, "RunStore", SqliteStore)
        in_sqlite = _fingerprint(run(world, **options))
    return in_memory, in_sqlite


@pytest.mark.parametrize("mutant", [None, "fresh-key-after-restart", "payload-dropped-early"])
def test_the_default_world_runs_the_same_on_both_stores(
        monkeypatch: pytest.MonkeyPatch, mutant: str | None) -> None:
    world = scenario.load(str(resources.files("sim").joinpath("default_world.toml")))
    for seed in range(1, 16):
        memory, sqlite = _both(monkeypatch, world, seed=seed,
                               mutants=None if mutant is None else (mutant,))
        assert memory == sqlite, (seed, mutant)


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.toml")), ids=lambda p: p.stem)
def test_every_scenario_runs_the_same_on_both_stores(
        monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    memory, sqlite = _both(monkeypatch, scenario.load(str(path)))
    assert memory == sqlite


def _record(run_id: str, requester: str, parent: str | None, turn: str | None,
            key: str, required: bool, private: bool, task: str) -> RunRecord:
    return RunRecord(run_id=run_id, child_id=run_id.replace("run", "c"), child_session_key=key,
                     requester=requester, task=task, required=required, created_at_ms=0,
                     requester_run_id=parent, requester_turn_id=turn, private=private)


_TEXT = st.sampled_from(["", "ok", "é" * 5, "x" * 300])
_CHANGES = st.one_of(
    st.builds(RunEnded, st.integers(1, 50), st.sampled_from(list(OutcomeStatus)),
              st.none() | _TEXT, st.none() | _TEXT, st.none() | st.just("stop"),
              st.none() | st.integers(0, 9), st.none() | st.integers(0, 9)),
    st.builds(CleanedUp, st.integers(1, 50)),
    st.builds(Delivered, st.integers(1, 50)),
    st.builds(Corrected, st.integers(1, 60), st.none() | _TEXT),
    st.builds(Reopened, st.integers(2, 4)),
    st.builds(YieldFrozen, st.sampled_from(["b1", "b2"])),
)


class SameReads(RuleBasedStateMachine):
    """Every write to both stores; after each, every read of both compared."""

    def __init__(self) -> None:
        super().__init__()
        self.memory = RunStore()
        self.sqlite = SqliteStore()
        self.runs: list[str] = []

    def teardown(self) -> None:
        self.memory.close()
        self.sqlite.close()

    def _both(self, method: str, *args: Any) -> None:
        for store in (self.memory, self.sqlite):
            getattr(store, method)(*args)

    @rule(requester=st.sampled_from(SESSIONS), parent=st.integers(0, 8), turn=st.booleans(),
          key=st.sampled_from(SESSIONS[1:]), required=st.booleans(), private=st.booleans(),
          task=_TEXT)
    def register(self, requester: str, parent: int, turn: bool, key: str, required: bool,
                 private: bool, task: str) -> None:
        run_id = self.memory.next_run_id()
        assert run_id == self.sqlite.next_run_id()
        above = self.runs[parent] if parent < len(self.runs) else None
        self._both("register", _record(run_id, requester, above, "t1" if turn else None, key,
                                       required, private, task))
        self.runs.append(run_id)

    @rule(index=st.integers(0, 8), change=_CHANGES)
    def apply(self, index: int, change: Any) -> None:
        assert type(change) in CHANGE_TYPES
        run_id = self.runs[index] if index < len(self.runs) else "run-none"
        self._both("apply", run_id, change)

    @rule(index=st.integers(0, 8))
    def forget_result(self, index: int) -> None:
        if index < len(self.runs):
            self._both("forget_result", self.runs[index])

    @rule(session=st.sampled_from(SESSIONS), child=st.sampled_from(SESSIONS[1:]),
          index=st.integers(0, 8), key=st.sampled_from(["k1", "k2"]), ended=st.integers(0, 3))
    def checkpoint(self, session: str, child: str, index: int, key: str, ended: int) -> None:
        run_id = self.runs[index] if index < len(self.runs) else "run-none"
        self._both("record_checkpoint", session, child, run_id, key, ended)

    @rule(key=st.sampled_from(SESSIONS), text=_TEXT)
    def save_transcript(self, key: str, text: str) -> None:
        messages = [{"role": "assistant", "content": [{"type": "text", "text": text}]}]
        assert self.memory.save_transcript(key, "run-1", messages) == \
            self.sqlite.save_transcript(key, "run-1", messages)

    @rule(key=st.sampled_from(SESSIONS))
    def delete_session(self, key: str) -> None:
        assert self.memory.delete_session(key) == self.sqlite.delete_session(key)

    @rule(key=st.sampled_from(SESSIONS), now=st.integers(0, 9))
    def delete_requester_session(self, key: str, now: int) -> None:
        self._both("delete_requester_session", key, now)

    @rule(key=st.sampled_from(SESSIONS), incarnation=st.integers(1, 3), deleted=st.booleans())
    def save_session(self, key: str, incarnation: int, deleted: bool) -> None:
        self._both("save_session", key, incarnation, deleted)

    @rule(batch=st.sampled_from(["b1", "b2"]), requester=st.sampled_from(SESSIONS),
          members=st.lists(st.integers(0, 8), max_size=3),
          st_status=st.sampled_from(list(BatchStatus)),
          private=st.booleans(), rearm=st.integers(0, 3))
    def save_batch(self, batch: str, requester: str, members: list[int], st_status: BatchStatus,
                   private: bool, rearm: int) -> None:
        ids = tuple(self.runs[i] for i in members if i < len(self.runs))
        row = BatchRow(batch_id=batch, requester=requester, agent_id="main", turn_run_id="t1",
                       incarnation=1, members=ids, rearm_generation=rearm, frozen_at_ms=0,
                       private=private, status=st_status)
        self._both("save_batch", row)

    @rule(turn=st.sampled_from(["t1", "t2"]), state=st.sampled_from(["open", "finished"]))
    def save_turn(self, turn: str, state: str) -> None:
        self._both("save_turn", turn, state, 0)

    @rule(index=st.integers(0, 8), attempts=st.integers(0, 3),
          outcome=st.none() | st.just("done"), opening=st.booleans())
    def recovery(self, index: int, attempts: int, outcome: str | None, opening: bool) -> None:
        run_id = self.runs[index] if index < len(self.runs) else "run-none"
        if opening:
            self._both("open_recovery", run_id)
        else:
            self._both("save_recovery", run_id, attempts, outcome)

    @invariant()
    def same_reads(self) -> None:
        m, s = self.memory, self.sqlite
        assert m.all_runs() == s.all_runs() == list(s.each_run()) == list(m.each_run())
        assert m.get_many(self.runs) == s.get_many(self.runs)
        assert list(m.open_deliveries()) == list(s.open_deliveries())
        assert m.summaries() == s.summaries()
        assert m.payload_sizes() == s.payload_sizes()
        assert m.turn_requesters() == s.turn_requesters()
        assert m.open_batches() == s.open_batches()
        assert m.has_open_batches() == s.has_open_batches()
        assert m.open_recoveries() == s.open_recoveries()
        for run_id in [*self.runs, "run-none"]:
            assert m.batch_owner(run_id) == s.batch_owner(run_id)
            assert m.direct_children(run_id) == s.direct_children(run_id)
        ids = [record.run_id for record in m.all_runs()]
        assert m.descendant_counts(ids) == s.descendant_counts(ids)
        for record in m.all_runs():
            assert m.unsettled_descendants(record) == s.unsettled_descendants(record)
            assert m.pending_descendants(record) == s.pending_descendants(record)
        for key in SESSIONS:
            assert m.wave_candidates(key) == s.wave_candidates(key)
            assert m.batches_of(key) == s.batches_of(key)
            assert m.last_rearm_generation(key) == s.last_rearm_generation(key)
            assert m.spawned_by_session(key) == s.spawned_by_session(key)
            assert m.latest_run(key) == s.latest_run(key)
            assert m.active_children(key) == s.active_children(key)
            assert m.session_deleted(key) == s.session_deleted(key)
            assert m.session(key) == s.session(key)
            assert m.transcript(key) == s.transcript(key)
            assert m.archives(key) == s.archives(key)
            assert m.run_transcript(key, "run-1") == s.run_transcript(key, "run-1")
            for child in SESSIONS[1:]:
                for asked in [*self.runs, None]:
                    assert m.checkpoint(key, child, asked) == s.checkpoint(key, child, asked)
        for batch in ("b1", "b2", "b3"):
            assert m.batch(batch) == s.batch(batch)
        for turn in ("t1", "t2"):
            assert m.turn_state(turn) == s.turn_state(turn)
            assert m.retained_private(turn) == s.retained_private(turn)


SameReads.TestCase.settings = settings(max_examples=150, stateful_step_count=30, deadline=None)
test_both_stores_read_the_same = SameReads.TestCase


def test_delivered_status_reads_back_as_written() -> None:
    """A sanity check of the comparison itself: the stores differ when a write differs."""
    memory, sqlite = RunStore(), SqliteStore()
    for store in (memory, sqlite):
        store.register(_record("run-1", SESSIONS[0], None, None, SESSIONS[1], True, False, "t"))
    memory.apply("run-1", Delivered(5))
    assert memory.get("run-1").delivery_status == DeliveryStatus.DELIVERED
    assert memory.all_runs() != sqlite.all_runs()
    memory.close()
    sqlite.close()


def test_equal_end_times_of_a_child_session_pick_the_least_run_id() -> None:
    """The ``run_id`` None lookup's tie between runs (found by the state machine): SQLite's sort
    takes the rows in its index's (session, run) order, so the least run id's receipt wins."""
    memory, sqlite = RunStore(), SqliteStore()
    for store in (memory, sqlite):
        store.record_checkpoint(SESSIONS[0], SESSIONS[1], "run-none", "k1", 0)
        store.record_checkpoint(SESSIONS[0], SESSIONS[1], "run-1", "k2", 0)
        store.record_checkpoint(SESSIONS[0], SESSIONS[1], "run-1", "k3", 0)
    assert memory.checkpoint(SESSIONS[0], SESSIONS[1], None) == ("k2", 0)
    assert sqlite.checkpoint(SESSIONS[0], SESSIONS[1], None) == ("k2", 0)
    assert memory.checkpoint(SESSIONS[0], SESSIONS[1], "run-1") == ("k2", 0)
    assert sqlite.checkpoint(SESSIONS[0], SESSIONS[1], "run-1") == ("k2", 0)
    memory.close()
    sqlite.close()
