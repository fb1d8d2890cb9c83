"""Runs a time-limit end found unended (issue 38 item 5): ``eventually-resolved`` excuses a run
only when its plan, read from the spawn request, and the transcripts show it may legitimately
still be running or waiting (sim/invariants/unended.py); a run whose model hung (it
stops streaming, or its queue never hands it the session or a lane slot) is still stuck."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest

import actors.child.shell
import actors.nesting.lane
import actors.nesting.session_queue
from sim import scenario
from sim.invariants.delivery.reached import eventually_resolved
from sim.invariants.nesting.queue_start import start_observed, start_span
from sim.invariants.unended import advance, horizon_ms, remaining_ms, unended_runs
from sim.trace import Record
from sim.world import core as world

_SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
_SCENARIO = _SCENARIOS / "unended-at-time-limit.toml"


def _trace(text: str) -> list[Record]:
    return list(world.run(scenario.loads(text)).trace)


def _stuck(trace: Sequence[Record]) -> list[str]:
    return [v.message for v in eventually_resolved(trace)]


# One requester, a time limit of 10 min; children appended per test.
_HEAD = """
name = "hang"
description = "a hung run"
covers = []
until = 600
[[sessions]]
key = "agent:main:main"
"""


def test_the_edge_scenario_passes_and_says_why() -> None:
    trace = list(world.run(scenario.load(_SCENARIO)).trace)
    assert _stuck(trace) == []
    why = {run_id: (u.excused, u.why) for run_id, u in unended_runs(trace).items()}
    assert len(why) == 4 and all(excused for excused, _ in why.values())
    reasons = sorted(text.split(" ")[0] for _, text in why.values())
    assert reasons == ["free", "free", "waits", "waits"]


def test_the_excuses_read_no_queue_record_of_the_model() -> None:
    trace = list(world.run(scenario.load(_SCENARIO)).trace)
    stripped = [r for r in trace if r.kind not in ("lane.queued", "lane.started",
                                                   "session.queued", "delivery.start")]
    assert _stuck(stripped) == []


def test_a_run_that_stops_streaming_is_stuck(monkeypatch: pytest.MonkeyPatch) -> None:
    original = actors.child.shell._Run.stream

    async def stream(self: Any, step: Any, n: int, attempt: int, fraction: float = 1.0) -> None:
        if self.spec.id == "hangs" and n == 2:
            await self.port.sleep(10**12)  # the model hangs in its second step
        await original(self, step, n, attempt, fraction)

    monkeypatch.setattr(actors.child.shell._Run, "stream", stream)
    text = _HEAD + """
[[children]]
id = "hangs"
steps = [{ duration = 30, text = "Looking.", tool_calls = 1 }, { duration = 30, text = "Done." }]
"""
    stuck = _stuck(_trace(text))
    assert len(stuck) == 1 and "never ended" in stuck[0]
    assert "from its last logged step end at 30000 ms its plan (and deadline) end at 60000 ms" \
        in stuck[0]


def test_a_run_that_never_streams_is_stuck(monkeypatch: pytest.MonkeyPatch) -> None:
    async def stream(self: Any, step: Any, n: int, attempt: int, fraction: float = 1.0) -> None:
        await self.port.sleep(10**12)  # the model hangs before its first chunk

    monkeypatch.setattr(actors.child.shell._Run, "stream", stream)
    stuck = _stuck(_trace(_HEAD + '[[children]]\nid = "hangs"\nrun_for = 30\n'))
    assert len(stuck) == 1
    assert "free to start from 0 ms, it would have logged its first step's end by 30000 ms " \
        "(no lane limit)" in stuck[0]


def test_a_session_queue_that_never_hands_on_is_stuck(monkeypatch: pytest.MonkeyPatch) -> None:
    def leave(self: Any, key: str, run_id: str) -> str | None:
        self.holders.pop(key, None)  # the holder leaves, nobody is handed the session
        return None

    text = _HEAD + """
[[children]]
id = "first"
session = "shared"
run_for = 60
[[children]]
id = "second"
session = "shared"
spawn_at = 10
run_for = 60
"""
    assert _stuck(_trace(text)) == []
    monkeypatch.setattr(actors.nesting.session_queue.SessionQueue, "leave", leave)
    stuck = _stuck(_trace(text))
    assert len(stuck) == 1 and "run-2" in stuck[0]
    assert "free to start from 60000 ms, it would have logged its first step's end by " \
        "120000 ms" in stuck[0]


def test_a_lane_that_never_hands_on_is_stuck(monkeypatch: pytest.MonkeyPatch) -> None:
    def leave(self: Any, run_id: str) -> str | None:
        self.running.pop(run_id, None)  # the slot frees, nobody is handed it
        return None

    text = _HEAD + """
[limits]
max_concurrent = 1
[[children]]
id = "first"
run_for = 60
[[children]]
id = "second"
spawn_at = 10
run_for = 60
"""
    assert _stuck(_trace(text)) == []
    monkeypatch.setattr(actors.nesting.lane.Lane, "leave", leave)
    stuck = _stuck(_trace(text))
    assert len(stuck) == 1 and "(0 of the lane's 1 slots held when the world stopped)" in stuck[0]


def test_a_run_behind_a_stuck_run_is_stuck_too(monkeypatch: pytest.MonkeyPatch) -> None:
    async def stream(self: Any, step: Any, n: int, attempt: int, fraction: float = 1.0) -> None:
        await self.port.sleep(10**12)  # the model hangs before its first chunk

    monkeypatch.setattr(actors.child.shell._Run, "stream", stream)
    text = _HEAD + """
[[children]]
id = "first"
session = "shared"
run_for = 60
[[children]]
id = "second"
session = "shared"
spawn_at = 10
run_for = 60
"""
    stuck = _stuck(_trace(text))
    assert len(stuck) == 2
    assert "waits in child session agent:main:subagent:shared behind run-1, itself stuck" \
        in stuck[1]


@pytest.mark.parametrize(("plan", "step", "failed", "left"), [
    ([[10, "auto", 1], [20, "auto", 0], [40, "auto", 0]], 0, False, 30),  # a stop ends the turn
    ([[10, "auto", 1], [20, "error", 1], [40, "stop", 0]], 1, False, 80),  # the retry doubles
    ([[10, "auto", 1], [20, "error", 1], [40, "stop", 0]], 2, True, 60),  # after attempt 1
    ([[10, "auto", 1], [21, "stream-error", 1], [40, "stop", 0]], 1, False, 10),  # half, last
    ([[10, "max-tokens", 2], [40, "stop", 0]], 0, False, 10),  # a token-limit cut is the last
    ([[10, "stream-error", 0]], 1, True, 0),  # a broken stream ends the run
])
def test_remaining_plan(plan: list[list[Any]], step: int, failed: bool, left: int) -> None:
    assert remaining_ms(plan, step, failed) == left


def test_outages_are_no_run_time() -> None:
    assert advance(0, 100, [(50, 80)]) == 130  # paused 30
    assert advance(0, 100, [(100, 130)]) == 130  # an outage in the instant it ends: the latest
    assert advance(0, 100, [(101, 130)]) == 100
    assert advance(60, 100, [(0, 90)]) == 190  # started while down: it waits
    assert advance(0, 100, [(10, 20), (15, 40), (50, 60)]) == 140  # overlapping outages merge


def test_a_run_past_its_deadline_is_stuck(monkeypatch: pytest.MonkeyPatch) -> None:
    text = _HEAD + """
[[children]]
id = "timed"
run_timeout_seconds = 120
steps = [{ duration = 60, text = "Looking.", tool_calls = 1 }, { duration = 3600, text = "." }]
"""
    assert _stuck(_trace(text)) == []  # it ends timeout at 120 s
    # A model that forgets the deadline runs its two-hour step past the time limit: its plan
    # would excuse it, its deadline (read back from its first step's end at 60 s) does not.
    monkeypatch.setattr(actors.child.shell, "budget_ms", lambda *args: None)
    stuck = _stuck(_trace(text))
    assert len(stuck) == 1 and "(and deadline) end at 120000 ms" in stuck[0]


# -- queue-start-observed: the model's queue records checked from outside --------------------

_LANE = _HEAD + """
[limits]
max_concurrent = 1
[[children]]
id = "first"
run_for = 60
[[children]]
id = "second"
spawn_at = 10
run_for = 30
"""


def _starts(trace: Sequence[Record]) -> list[str]:
    return [v.message for v in start_observed(trace)]


def test_a_start_the_transcript_reads_back_is_clean() -> None:
    trace = _trace(_LANE)
    assert [r.t_ms for r in trace if r.kind == "lane.started"] == [60_000]
    assert _starts(trace) == []
    restarted = list(world.run(scenario.load(_SCENARIOS / "gateway-restart.toml")).trace)
    assert _starts(restarted) == [] and start_span(75_000, 60_000, [(20_000, 35_000)]) == \
        (0, 0)
    assert start_span(50_000, 15_000, [(20_000, 35_000)]) == (20_000, 35_000)  # held while down


def test_a_forged_lane_start_is_caught() -> None:
    trace = _trace(_LANE)
    early = [attrs.evolve(r, t_ms=59_999) if r.kind == "lane.started" else r for r in trace]
    assert _starts(early) == ["run-2 logged its first step's end at 90000 ms, which a 30000 ms "
                              "first step reaches from 60000 ms; the model recorded its start at "
                              "59999 ms (lane.started)"]
    untold = [r for r in trace if r.kind not in ("lane.queued", "lane.started")]
    assert "recorded its start at 10000 ms (child.start)" in _starts(untold)[0]


def test_a_model_that_records_its_start_while_it_waits_is_caught() -> None:
    # The built-in mutant queue-start-early: the start recorded as the run begins to wait.
    trace = list(world.run(scenario.loads(_LANE), mutants=["queue-start-early"]).trace)
    assert "recorded its start at 10000 ms (lane.started)" in _starts(trace)[0]


def test_the_horizon_of_a_world_stopped_short() -> None:
    def end(reason: str, until: int | None = 5_000) -> Record:
        return Record(9, 4_000, "harness", "world.end",
                      {"reason": reason, "steps": 1, "until_ms": until})
    assert horizon_ms(end("time-limit")) == 5_000  # nothing due after the limit ran
    assert horizon_ms(end("step-limit")) == 3_999  # work due in its last instant may not have
    assert horizon_ms(end("quiescent")) is None  # a world with nothing left excuses nothing
    assert horizon_ms(end("time-limit", None)) is None


_BATCH = _HEAD.replace("until = 600", "until = 4000") + """
[[turns]]
id = "t1"
start = 0
end = 10
ends = "yield"
[[children]]
id = "quick"
turn = "t1"
spawn_at = 1
run_for = 60
[[children]]
id = "slow"
turn = "t1"
spawn_at = 2
run_for = RUN
"""


def test_a_batch_member_waits_for_its_legitimately_running_sibling(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # quick ended at 61 s; its yielded batch is woken only once slow settles (reference §c9),
    # and slow's 2-hour step runs past the limit (4,000 s, past quick's 40-minute bound):
    # neither is stuck.
    assert _stuck(_trace(_BATCH.replace("RUN", "7200"))) == []
    # slow asked for 2 minutes but its model hangs: both are reported.
    async def stream(self: Any, step: Any, n: int, attempt: int, fraction: float = 1.0) -> None:
        if self.spec.id == "slow":
            await self.port.sleep(10**12)
        await original(self, step, n, attempt, fraction)

    original = actors.child.shell._Run.stream
    monkeypatch.setattr(actors.child.shell._Run, "stream", stream)
    stuck = _stuck(_trace(_BATCH.replace("RUN", "120")))
    assert len(stuck) == 2 and "run-1" in stuck[0] and "still pending" in stuck[0]
