"""The store's counts of a run's descendants not yet cleaned up (DEL-6) and not yet ended (what a
yield batch's member waits for), kept as runs register, end and clean up, equal a recursive walk
of the runs table after every step (Hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from actors.records.run_record import CleanedUp, RunRecord
from actors.states import OutcomeStatus
from actors.store.sqlite import SqliteStore

# Each step: register a run under the run at this index (None: top-level), or clean one up.
_STEP = st.one_of(st.tuples(st.just("spawn"), st.none() | st.integers(0, 40)),
                  st.tuples(st.just("clean"), st.integers(0, 40)),
                  st.tuples(st.just("end"), st.integers(0, 40)))


def _walked(store: SqliteStore, run_id: str, column: str = "cleaned_up_at_ms") -> int:
    """The oracle: a recursive query over the table, not the store's own bookkeeping."""
    (count,) = store._db.execute(
        "WITH RECURSIVE below(run_id) AS ("
        " SELECT run_id FROM runs WHERE requester_run_id = ?"
        " UNION ALL SELECT r.run_id FROM runs r JOIN below b ON r.requester_run_id = b.run_id)"
        f" SELECT COUNT(*) FROM runs WHERE run_id IN below AND {column} IS NULL",
        [run_id]).fetchone()
    return int(count)


def _play(store: SqliteStore, steps: list[tuple[str, int | None]], runs: list[RunRecord]) -> None:
    for n, (what, index) in enumerate(steps):
        if what == "spawn":
            parent = None if index is None or not runs else runs[index % len(runs)]
            run_id = store.next_run_id()
            record = RunRecord(run_id, f"c{n}", f"agent:main:subagent:c{n}",
                               "agent:main:main" if parent is None else parent.child_session_key,
                               "task", True, n,
                               requester_run_id=None if parent is None else parent.run_id)
            store.register(record)
            runs.append(record)
        elif runs and what == "end":
            assert index is not None
            store.record_end(runs[index % len(runs)].run_id, n, OutcomeStatus.OK, None, "ok")
        elif runs:
            assert index is not None
            store.apply(runs[index % len(runs)].run_id, CleanedUp(n))
        for run in runs:
            assert store.pending_descendants(run) == _walked(store, run.run_id), (steps, run)
            assert store.unsettled_descendants(run) == (
                _walked(store, run.run_id), _walked(store, run.run_id, "ended_at_ms")), (steps, run)
        # All at once, as a batch look reads them (any order, a run twice, an unknown run).
        ids = [run.run_id for run in reversed(runs)] + [r.run_id for r in runs[:2]] + ["run-none"]
        assert store.descendant_counts(ids) == [
            (_walked(store, i), _walked(store, i, "ended_at_ms")) for i in ids], steps


@settings(max_examples=60, deadline=None)
@given(st.lists(_STEP, max_size=40))
def test_pending_descendants_match_a_walk(steps: list[tuple[str, int | None]]) -> None:
    store = SqliteStore()
    try:
        _play(store, steps, [])
    finally:
        store.close()
