"""Stop 43 triage, kills, resets and fallbacks (main 7bd57d7, seeds 20,001..100,000): each fix
keeps its regression scenario clean (scenarios/regressions/), and the same oracle still catches
the scenario's trace forged into the broken variant next to it (the fact its fix reads,
changed)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from sim import invariants, scenario
from sim.invariants.delivery.retries import transport_tries
from sim.trace import Record
from sim.world import core as world
from tests.conftest import SCENARIOS

REGRESSIONS = SCENARIOS / "regressions"


def _trace(name: str) -> list[Record]:
    return list(world.run(scenario.load(REGRESSIONS / f"{name}.toml")).trace)


def _check(name: str, trace: list[Record]) -> list[str]:
    return [v.message for v in invariants.BY_NAME[name].check(trace)]


def _edit(record: Record, **data: Any) -> Record:
    return attrs.evolve(record, data={**record.data, **data})


def _find(trace: list[Record], test: Callable[[Record], bool]) -> Record:
    return next(r for r in trace if test(r))


def test_requester_fallback_reads_a_transport_try_as_of_its_attempts_first_send() -> None:
    # c1 is deleted; generation 2 of run-4 goes to the fallback (main) at 659998 ms and fails;
    # c1 is spawned again at 661000 ms; try 2 of that attempt (664998 ms) goes to main and lands
    # (seed 83741).
    trace = _trace("fallback-try-keeps-attempt-target-seed-83741")
    assert _check("requester-fallback", trace) == []
    sends = [r for r in trace if r.kind == "gateway.send" and r.data["key"].endswith("run-4:g2")]
    assert [r.t_ms for r in sends] == [659998, 664998]
    assert sends[1].seq in transport_tries(trace) and sends[0].seq not in transport_tries(trace)
    # Had the copy that landed been its attempt's first send (no failed try before it), the
    # asked session was back by then: the fallback was wrong.
    fresh = [r for r in trace if r is not sends[0]]
    assert any("run-4 landed in agent:main:main, but the asked requester "
               "agent:main:subagent:c1" in m for m in _check("requester-fallback", fresh))


def test_reset_cascades_lets_a_descendant_end_on_its_own_in_the_resets_instant() -> None:
    # The reset of main kills run-5 at 385000 ms; its child run-6 ends ok in that very
    # instant, before the cascade reaches c5's session (seed 67601).
    trace = _trace("reset-tie-descendant-ends-itself-seed-67601")
    assert _check("reset-cascades", trace) == []
    end = _find(trace, lambda r: r.kind == "child.end" and r.data["run_id"] == "run-6")
    assert end.t_ms == 385000 and end.data["status"] == "ok"
    # Had it ended on its own a millisecond later, it ran on past the reset.
    late = [attrs.evolve(r, t_ms=r.t_ms + 1) if r is end else r for r in trace]
    assert any("run-6 was still running when its ancestor run-5 was killed" in m
               for m in _check("reset-cascades", late))


def test_a_run_spawned_under_a_killed_tree_in_the_kills_instant_may_be_killed_with_it() -> None:
    # c1 (run-5) is killed at 203000 ms; after the kill's answer, in that instant, c2a's run
    # spawns run-7 (required), and the cascade kills it too (seed 50495).
    trace = _trace("kill-stops-same-instant-spawn-seed-50495")
    for name in ("required-reaches-requester", "cleanup-once", "kill-suppresses"):
        assert _check(name, trace) == [], name
    answer = _find(trace, lambda r: r.kind == "abort" and r.data["killed"])
    spawn = _find(trace, lambda r: r.kind == "spawn" and r.data["run_id"] == "run-7")
    end = _find(trace, lambda r: r.kind == "child.end" and r.data["run_id"] == "run-7")
    assert answer.seq < spawn.seq and spawn.t_ms == end.t_ms == answer.t_ms
    # Had it ended on its own (not killed), nothing stopped it: it was owed its delivery.
    ran_on = [_edit(r, status="ok", error=None) if r is end else r for r in trace]
    assert any("run-7 was asked for with expectsCompletionMessage true" in m
               for m in _check("required-reaches-requester", ran_on))
    # Had it been spawned a millisecond later, the kill was over: killing it was wrong.
    later = [attrs.evolve(r, t_ms=r.t_ms + 1) if r is spawn else r for r in trace]
    assert any("run-7 was asked for with expectsCompletionMessage true" in m
               for m in _check("required-reaches-requester", later))


def test_a_steers_replacement_is_asked_as_the_steered_run_was() -> None:
    # c2's run-3 was asked without expectsCompletionMessage; a later ask of c2 (required) was
    # refused; the steer's replacement run-5 copies run-3: not required (seed 47522).
    trace = _trace("steer-replacement-keeps-ask-seed-47522")
    for name in ("required-reaches-requester", "cleanup-once"):
        assert _check(name, trace) == [], name
    ask = _find(trace, lambda r: r.kind == "world.spawn" and r.data["request"] == 4)
    assert ask.data["child"] == "c2" and ask.data["required"] is False
    # Had the steered run been asked to report back, so was its replacement.
    required = [_edit(r, required=True) if r is ask else r for r in trace]
    assert any("run-5 was asked for with expectsCompletionMessage true" in m
               for m in _check("required-reaches-requester", required))
