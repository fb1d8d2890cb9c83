"""A private try has no answer timeout (stop 45): OpenClaw 2026.9.6 passes ``runAnnounceAgentCall``
``timeoutMs: parentOnly && isSubagentCompletion ? void 0 : announceTimeoutMs``, so an unanswered
private try waits until the registry's attempt deadline, the window's end (docs/fidelity.md, "A
private try's answer timeout"). The model does so, and ``retry-timing`` names the broken variant:
the model with the old 120 s timeout (mutant ``private-try-times-out``) and a forged trace."""

from __future__ import annotations

import attrs

from sim import invariants, scenario
from sim.trace import Record
from sim.world import core as world
from tests.conftest import SCENARIOS

WORLD = SCENARIOS / "private-try-waits-out-window.toml"
LATE = SCENARIOS / "private-answer-after-120s.toml"


def _check(name: str, records: list[Record]) -> list[str]:
    return [v.message for v in invariants.BY_NAME[name].check(records)]


def _sends(records: list[Record]) -> list[Record]:
    return [r for r in records if r.kind == "gateway.send" and r.data["run_id"] == "run-1"]


def test_an_unanswered_private_try_waits_until_its_window_ends() -> None:
    result = world.run(scenario.load(WORLD))
    records = list(result.trace)
    assert result.violations == ()
    assert len(_sends(records)) == 1  # no second try: nothing timed the first out
    released = next(r for r in records if r.kind == "world.turn_end")
    give_up = next(r for r in records if r.kind == "delivery.give_up")
    assert give_up.t_ms == released.t_ms + 30 * 60_000  # the window's end, to the millisecond
    assert give_up.data["reason"] == "expiry"


def test_the_old_120_s_timeout_is_named_by_retry_timing() -> None:
    result = world.run(scenario.load(WORLD), mutants=["private-try-times-out"])
    first, second = _sends(list(result.trace))[:2]
    assert second.t_ms - first.t_ms == 125_000  # the timeout, then the 5 s transport wait
    assert any("its private try at" in m and "has no answer timeout" in m
               for m in _check("retry-timing", list(result.trace)))


def test_a_forged_second_try_after_an_unanswered_private_one_is_named() -> None:
    records = list(world.run(scenario.load(WORLD)).trace)
    assert _check("retry-timing", records) == []
    send = _sends(records)[0]
    # The same key handed to the gateway again 125 s later, as a 120 s timeout would have done.
    again = attrs.evolve(send, t_ms=send.t_ms + 125_000, seq=len(records))
    forged = sorted([*records, again], key=lambda r: (r.t_ms, r.seq))
    forged = [attrs.evolve(r, seq=i) for i, r in enumerate(forged)]
    assert any("sent again 125000 ms later" in m for m in _check("retry-timing", forged))


def test_a_late_answer_of_a_private_try_is_its_answer() -> None:
    result = world.run(scenario.load(LATE))
    records = list(result.trace)
    assert result.violations == ()
    assert len(_sends(records)) == 1
    delivered = next(r for r in records if r.kind == "delivery.delivered")
    assert delivered.t_ms - _sends(records)[0].t_ms == 150_000
    late = world.run(scenario.load(LATE), mutants=["private-try-times-out"])
    assert any(v.invariant == "retry-timing" for v in late.violations)


def test_a_refused_private_hand_off_releases_its_sessions_lane() -> None:
    # Default world, seed 255: run-2's private hand-off reaches agent:main:main after its reset;
    # the session refuses it (requester.private_refused) and the gateway answers, so the mirror
    # of run-1's direct delivery 16 s later follows no queued work (DEL-8).
    from sim.explore.worlds import default_world_path

    records = list(world.run(scenario.load(default_world_path()), seed=255).trace)
    assert _check("mirror-after-queued-work", records) == []
    refusal = next(r for r in records if r.kind == "requester.private_refused")
    # Had the session not answered, run-2's input still held the lane when run-1's mirror came.
    silent = [r for r in records if r is not refusal]
    assert any("ahead of run-2's input" in m for m in _check("mirror-after-queued-work", silent))
