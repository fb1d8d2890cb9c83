"""A child session's own run queue (actors/nesting/session_queue.py, docs/nesting.md): one run at a
time per child session, first spawned first started, composed with aborts, restarts and the
maxConcurrent lane; the oracle session-runs-serial is quiet on the model and catches the broken
variant (the session queue off), on the scenario and on a hand-made trace."""

from __future__ import annotations

from typing import Any

from actors.nesting.session_queue import SessionQueue
from sim import scenario
from sim.invariants.nesting.sessions import session_runs_serial
from sim.trace import Record
from sim.world import core as world
from tests.conftest import SCENARIOS


def _run(**kwargs: Any) -> world.RunResult:
    return world.run(scenario.load(SCENARIOS / "session-queue.toml"), **kwargs)


def test_a_session_hands_itself_over_in_spawn_order() -> None:
    queue = SessionQueue()
    assert queue.enter("k", "r1", "child:a") is None
    assert queue.enter("k", "r2", "child:b") == "r1"
    assert queue.enter("k", "r3", "child:c") == "r2"  # behind the last in line
    assert queue.enter("other", "r4", "child:d") is None  # another session is its own lane
    assert queue.leave("k", "r2") is None  # aborted while it waited: it leaves the line
    assert queue.holder("k") == "r1"
    assert queue.leave("k", "r1") == "child:c"
    assert queue.holder("k") == "r3"
    assert queue.leave("k", "r3") is None
    assert queue.holder("k") is None
    assert queue.enter("k", "r5", "child:e") is None  # idle again: starts at once


def test_a_reused_key_waits_for_the_earlier_run_and_the_lane() -> None:
    result = _run()
    assert result.violations == ()
    runs = {r.run_id: r.child_id for r in result.runs}
    by_child: dict[str, dict[str, int]] = {}
    for r in result.trace.records:
        if r.kind in ("spawn", "session.queued", "lane.queued", "lane.started", "child.end"):
            by_child.setdefault(runs[r.data["run_id"]], {}).setdefault(r.kind, r.t_ms)
    # c2 (another requester) and c3 wait behind c1; c3 is aborted in the queue and never runs.
    assert by_child["c2"]["session.queued"] == 20_000
    assert by_child["c3"]["session.queued"] == 25_000
    assert "lane.started" not in by_child["c3"]
    assert by_child["c3"]["child.end"] == 40_000
    # Handed the session when c1 ended, c2 held no lane slot: it waits for one (c6 took c1's).
    assert by_child["c1"]["child.end"] == by_child["c2"]["lane.queued"] == 60_000
    assert by_child["c6"]["lane.started"] == 60_000
    assert by_child["c2"]["lane.started"] == by_child["c6"]["child.end"] == 70_000
    assert by_child["c2"]["child.end"] == 130_000  # its full 60 s from its start
    row = {r.child_id: r for r in result.runs}["c2"]
    assert row.started_at_ms == 70_000


def test_session_runs_serial_catches_the_queue_off() -> None:
    result = _run(mutants=["session-queue-off"])
    found = [v for v in result.violations if v.invariant == "session-runs-serial"]
    assert found and "of the same session still ran" in found[0].message


def _record(seq: int, t_ms: int, kind: str, **data: Any) -> Record:
    return Record(seq=seq, t_ms=t_ms, actor="x", kind=kind, data=data)


def test_session_runs_serial_reads_the_requests_not_the_model() -> None:
    """Two top-level requesters asking for one label ask for one child session key; a run that
    streams before its session's earlier run ended overlaps it, whatever the model recorded."""
    trace = [
        _record(1, 0, "world.spawn", child="a", requester="agent:main:main", session="w"),
        _record(2, 0, "spawn", run_id="r1", child="a"),
        _record(3, 0, "child.start", run_id="r1"),
        _record(4, 5, "world.spawn", child="b", requester="agent:main:other", session="w"),
        _record(5, 5, "spawn", run_id="r2", child="b"),
        _record(6, 5, "session.queued", run_id="r2"),
        _record(7, 5, "child.start", run_id="r2"),
        _record(8, 9, "child.end", run_id="r1"),
        _record(9, 9, "lane.started", run_id="r2"),
    ]
    assert session_runs_serial(trace) == []
    early = [*trace[:7], _record(10, 6, "child.delta", run_id="r2"), *trace[7:]]
    found = session_runs_serial(early)
    assert len(found) == 1 and "r2 of child session agent:main:subagent:w" in found[0].message
