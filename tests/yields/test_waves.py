"""Unfrozen waves (reference §c9): the pure wave rule, the scenarios, and the wave oracle shown
catching the built-in broken variant."""

from __future__ import annotations

from typing import Any

import pytest

from actors.delivery.wakes.delivery_waves import top_level, turn_session
from actors.mutants import MUTANT_WAVE_STALE_SIBLING
from actors.records.run_record import RunRecord
from actors.states import DeliveryStatus
from actors.yields import waves
from sim import scenario
from sim.world import core as world
from tests.conftest import SCENARIOS


def _sibling(run_id: str, start: int, end: int | None, *, settled: bool = True,
             delivered: bool = True, pending: int = 0) -> waves.Sibling:
    record = RunRecord(run_id=run_id, child_id=run_id, child_session_key=f"s:{run_id}",
                       requester="agent:main:main", task="t", required=True,
                       created_at_ms=start, started_at_ms=start, ended_at_ms=end,
                       delivery_status=DeliveryStatus.DELIVERED if delivered
                       else DeliveryStatus.SUSPENDED)
    return waves.Sibling(record, settled, pending)


def test_a_wave_is_the_connected_overlapping_set() -> None:
    a, b, c = _sibling("a", 0, 10), _sibling("b", 5, 20), _sibling("c", 15, 30)
    d = _sibling("d", 30, 40)  # starts as c ends: touching is not overlapping
    e = _sibling("e", 50, None, settled=False)  # still running: no end yet
    found = waves.components([s.record for s in (d, c, a, e, b)])
    assert [[r.run_id for r in comp] for comp in found] == [["a", "b", "c"], ["d"], ["e"]]
    # The known bug: one set, the long-settled, non-overlapping ones included.
    assert [[r.run_id for r in comp] for comp in waves.components(
        [a.record, d.record], frozenset({MUTANT_WAVE_STALE_SIBLING}))] == [["a", "d"]]


def test_what_a_wave_owes() -> None:
    a, b = _sibling("a", 0, 10), _sibling("b", 5, 20)
    assert waves.due([a, b], frozenset()) == waves.Wave(("a", "b"), waves.Verdict.WAKE, False)
    # One already-delivered child: consumed; one whose result did not reach it: a wake.
    assert waves.due([a], frozenset()) == waves.Wave(("a",), waves.Verdict.CONSUMED, False)
    lost = _sibling("x", 0, 10, delivered=False)
    assert waves.due([lost], frozenset()).verdict is waves.Verdict.WAKE  # type: ignore[union-attr]
    # A late joiner: what an earlier wave carried is not carried again.
    c = _sibling("c", 8, 30)
    assert waves.due([a, b, c], frozenset({"a", "b"})) == \
        waves.Wave(("c",), waves.Verdict.CONSUMED, True)
    assert waves.due([a, b], frozenset({"a", "b"})) is None
    # A sibling not settled: wait; a member's descendants unsettled: just return.
    running = _sibling("r", 5, None, settled=False)
    assert waves.due([a, running], frozenset()) is None
    nested = _sibling("n", 5, 20, pending=1)
    assert waves.due([a, nested], frozenset()) is None
    assert waves.descendants_wait([a, nested], frozenset())
    assert not waves.descendants_wait([a, running], frozenset())


def test_which_sessions_get_waves() -> None:
    assert top_level("agent:main:main")
    assert not top_level("agent:main:subagent:c1")
    assert not top_level("agent:main:cron:nightly")
    assert turn_session("turn:agent:main:main:2:t1") == "agent:main:main"


def _run(name: str, **kwargs: Any) -> world.RunResult:
    return world.run(scenario.load(SCENARIOS / name), **kwargs)


@pytest.mark.parametrize("name", ["wave-overlapping.toml", "wave-joined-late.toml",
                                  "requester-turns.toml"])
def test_wave_scenarios_pass(name: str) -> None:
    result = _run(name)
    assert result.violations == ()


def test_wave_oracle_catches_a_wave_that_ignores_the_overlap_rule() -> None:
    broken = _run("mutant-wave-stale-sibling.toml")
    assert {v.invariant for v in broken.violations} == {"wave-is-overlapping-set"}
    assert _run("mutant-wave-stale-sibling.toml", mutants=[]).violations == ()


def test_wave_wakes_go_out_once_and_say_results_were_announced() -> None:
    result = _run("wave-overlapping.toml")
    wakes = [r for r in result.trace if r.kind == "requester.accept"
             and r.data["key"].startswith("announce:requester-settle:")]
    assert [w.data["key"].rsplit(":", 1)[-1] for w in wakes] == ["run-1,run-2", "run-4,run-5"]
    assert all(":yield-" not in w.data["key"] for w in wakes)
    assert all("Child results were announced individually." in w.data["text"] for w in wakes)
    frozen = [r for r in result.trace if r.kind == "batch.wave"]
    assert [(r.data["members"], r.data["consumed"]) for r in frozen] == [
        (["run-1", "run-2"], None), (["run-3"], "one delivered child"),
        (["run-4", "run-5"], None)]


def test_one_wake_per_batch_catches_a_wave_woken_twice() -> None:
    from actors.mutants import MUTANT_TWO_WAKES

    result = _run("wave-overlapping.toml", mutants=[MUTANT_TWO_WAKES])
    assert "one-wake-per-batch" in {v.invariant for v in result.violations}


def test_a_wave_frozen_before_a_crash_owes_no_sibling_whose_turn_ended_after() -> None:
    # Seed 1119 with children drawn 1..8: the wave run-1,run-2,run-3 is frozen at its first
    # dispatch, the delivery process dies before the send, run-5's turn finishes, and the
    # restarted process replays the frozen row (reference §c9, §c11); run-5 joins late.
    from sim.invariants.observations import is_delivery_crash
    from sim.invariants.yields.waves import wave_is_overlapping_set

    result = _run("regressions/wave-frozen-before-crash-seed-1119.toml")
    assert result.violations == ()
    frozen = [(r.data["members"], r.data["joined_late"]) for r in result.trace
              if r.kind == "batch.wave"]
    assert frozen == [(["run-1", "run-2", "run-3"], False), (["run-5"], True)]
    # Without the crash between them the freeze and the send are one step: run-5's turn then
    # ended before the wave was decided, and leaving it out is the violation.
    uncrashed = [r for r in result.trace if not is_delivery_crash(r)]
    found = wave_is_overlapping_set(uncrashed)
    assert found and all("leaves out run-5" in v.message for v in found)
