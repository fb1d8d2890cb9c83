"""Stop 43 triage, kills, resets and fallbacks (main 7bd57d7, seeds 20,001..100,000): each fix
keeps its regression scenario clean (scenarios/regressions/), and the same oracle still catches
the scenario's trace forged into the broken variant next to it (the fact its fix reads,
changed), or the model put back as it was."""

from __future__ import annotations

from collections.abc import Callable

import attrs
import pytest

from actors.messages import AbortRun
from actors.requester import shell, spawning
from actors.requester.actor import Requester
from sim.invariants.delivery.retries import transport_tries
from sim.trace import Record
from tests.invariants.regression_traces import check as _check
from tests.invariants.regression_traces import edit as _edit
from tests.invariants.regression_traces import trace as _trace


def _find(trace: list[Record], test: Callable[[Record], bool]) -> Record:
    return next(r for r in trace if test(r))


def _renumbered(trace: list[Record]) -> list[Record]:
    first = trace[0].seq
    return [attrs.evolve(r, seq=first + i) for i, r in enumerate(trace)]


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


def _abort_run_stopping_at_ended(req: Requester, message: AbortRun) -> None:
    """The cascade as it was before seed 49388's fix: an ended child's own children run on."""
    cancelled = [c.child_id for c in req.store.direct_children(message.run_id)
                 if c.ended_at_ms is None and c.child_id in req.scopes]
    for child_id in cancelled:
        spawning._kill(req.port, req.store, req.runs[child_id][0], req.scopes[child_id],
                       req.mutants)
        spawning._cascade(req.port, req.store, req.runs[child_id])


def test_a_kill_stops_the_running_child_of_a_child_that_has_ended(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # c1 is killed at 30000 ms; its child c4a (run-3) ends in that instant, and c4a's child
    # run-5 is still running: it is killed too (seed 49388).
    trace = _trace("kill-cascades-past-ended-child-seed-49388")
    for name in ("kill-suppresses", "abort-cascades"):
        assert _check(name, trace) == [], name
    end = _find(trace, lambda r: r.kind == "child.end" and r.data["run_id"] == "run-5")
    assert end.t_ms == 30000 and end.data["error"] == "subagent run terminated"
    # The model put back as it was: run-5 runs on, and both oracles see it.
    monkeypatch.setitem(shell.HANDLERS, AbortRun, _abort_run_stopping_at_ended)
    broken = _trace("kill-cascades-past-ended-child-seed-49388")
    assert any("run-5 had not ended when a kill of c1 reached it" in m
               for m in _check("kill-suppresses", broken))
    assert any("run-5 was still running when its ancestor c1 was aborted" in m
               for m in _check("abort-cascades", broken))


def test_the_kill_oracles_walk_the_tree_through_a_run_that_ended_before_the_kill() -> None:
    # Forged from seed 49388's run: c4a's end moved before the kill's answer (no tie left), and
    # run-5 running on to end ok later: still a descendant the kill had to stop.
    trace = _trace("kill-cascades-past-ended-child-seed-49388")
    answer = _find(trace, lambda r: r.kind == "abort" and r.data["killed"])
    middle = _find(trace, lambda r: r.kind == "child.end" and r.data["run_id"] == "run-3")
    end = _find(trace, lambda r: r.kind == "child.end" and r.data["run_id"] == "run-5")
    moved = [r for r in trace if r is not middle and r is not end]
    at = moved.index(answer)
    moved[at:at] = [attrs.evolve(middle, t_ms=answer.t_ms - 1)]
    moved.insert(len(moved) - 1, attrs.evolve(_edit(end, status="ok", error=None),
                                              t_ms=answer.t_ms + 60_000))
    forged = _renumbered(moved)
    assert any("run-5 was still running when its ancestor c1 was aborted" in m
               for m in _check("abort-cascades", forged))
    assert any("run-5 had not ended when a kill of c1 reached it" in m
               for m in _check("kill-suppresses", forged))


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
