"""The PRV oracles (sim/invariants/private/completion.py), each shown catching a broken variant: a
trace of what a broken model would show, next to the correct one, and the mutants found in
simulation."""

from __future__ import annotations

from typing import Any

import pytest

from sim import scenario
from sim.invariants.private import completion as private
from sim.trace import Record
from sim.world import core as world
from tests.conftest import SCENARIOS

SESSION = "agent:main:main"
ACTOR = f"requester:{SESSION}"
KEY = "announce:v1:agent:main:subagent:c1:run-1"
DEFAULT_OPTIONS = {"runtime": "native", "collect": False, "visible": False, "thread": False,
                   "mode": "run"}


class Trace:
    def __init__(self) -> None:
        self.records: list[Record] = []

    def add(self, t_ms: int, actor: str, kind: str, /, **data: Any) -> Trace:
        self.records.append(Record(len(self.records), t_ms, actor, kind, data))
        return self

    def spawn(self, t_ms: int = 0, target: str | None = "parent", turn: str | None = "t1",
              required: bool = True, incarnation: int = 1, refused: str | None = None,
              **options: Any) -> Trace:
        self.add(t_ms, "harness", "world.spawn", child="c1", requester=SESSION, actor=ACTOR,
                 required=required, task="t", turn=turn, incarnation=incarnation,
                 completion_target=target, options={**DEFAULT_OPTIONS, **options})
        if refused is not None:
            return self.add(t_ms, ACTOR, "spawn.refused", child="c1", requester=SESSION,
                            reason=refused)
        return self.add(t_ms, ACTOR, "spawn", run_id="run-1", child="c1",
                        child_session_key="agent:main:subagent:c1", child_session_id="s",
                        requester=SESSION, required=required, task="t")

    def turn(self, t_ms: int, incarnation: int = 1) -> Trace:
        return self.add(t_ms, "harness", "world.turn", session=SESSION, turn="t1",
                        incarnation=incarnation)

    def turn_end(self, t_ms: int, how: str = "finish") -> Trace:
        return self.add(t_ms, "harness", "world.turn_end", session=SESSION, turn="t1", how=how,
                        incarnation=1)

    def end(self, t_ms: int) -> Trace:
        return self.add(t_ms, "child:c1", "child.end", run_id="run-1", status="ok", error=None,
                        stop_reason="completed", result="r", usage=None, archive={})

    def accept(self, t_ms: int, text: str = "block", key: str = KEY) -> Trace:
        return self.add(t_ms, ACTOR, "requester.accept", run_id="run-1", key=key,
                        status="ok", text=text)


def _names(violations: list[Any]) -> list[str]:
    return [v.invariant for v in violations]


def test_spawn_refusals_catches_a_forbidden_spawn_that_ran() -> None:
    ran = Trace().turn(0).spawn(collect=True)
    assert _names(private.spawn_refusals(ran.records)) == ["spawn-refusals"]
    refused = Trace().turn(0).spawn(
        collect=True, refused='completionTarget "parent" cannot be combined with collect: true')
    assert private.spawn_refusals(refused.records) == []


def test_spawn_refusals_catches_a_vague_refusal_and_a_wrong_one() -> None:
    vague = Trace().spawn(thread=True, mode="session", refused="not allowed: thread: true")
    [violation] = private.spawn_refusals(vague.records)
    assert "does not name session" in violation.message
    wrong = Trace().spawn(refused='completionTarget "parent" is not available')
    assert _names(private.spawn_refusals(wrong.records)) == ["spawn-refusals"]
    # A refusal for the spawn limits is spawn-limits' to judge (reference §c15).
    limited = Trace().spawn(refused="sessions_spawn has reached max active children (5)")
    assert private.spawn_refusals(limited.records) == []
    untouched = Trace().spawn(target=None, collect=True)  # no target: the default mode
    assert private.spawn_refusals(untouched.records) == []
    other_target = Trace().spawn(target="channel")
    assert _names(private.spawn_refusals(other_target.records)) == ["spawn-refusals"]


def test_never_to_channel_catches_a_chunk_of_a_private_run() -> None:
    leaked = Trace().spawn().end(10).add(10, "gateway", "gateway.send", run_id="run-1",
                                         key=KEY, requester=ACTOR, text_sha256="a")
    leaked.add(10, "gateway", "gateway.chunk", channel="telegram", session=SESSION,
               run_id="run-1", key=KEY, index=0, total=1, text="block")
    assert _names(private.private_never_to_channel(leaked.records)) == [
        "private-never-to-channel"]
    public = Trace().spawn(target=None).end(10).add(
        10, "gateway", "gateway.chunk", channel="telegram", session=SESSION, run_id="run-1",
        key=KEY, index=0, total=1, text="block")
    assert private.private_never_to_channel(public.records) == []


def test_handoff_stable_catches_a_retry_with_other_input_and_usage_stats() -> None:
    def send(t: Trace, t_ms: int, digest: str) -> Trace:
        return t.add(t_ms, "gateway", "gateway.send", run_id="run-1", key=KEY, requester=ACTOR,
                     text_sha256=digest)

    changed = send(send(Trace().spawn().end(10), 10, "aaa"), 20, "bbb")
    assert _names(private.private_handoff_stable(changed.records)) == ["private-handoff-stable"]
    same = send(send(Trace().spawn().end(10), 10, "aaa"), 20, "aaa").accept(20)
    assert private.private_handoff_stable(same.records) == []
    # A correction of the run between the sends is new input, not a retry (DEL-12).
    corrected = send(Trace().spawn().end(10), 10, "aaa").add(
        15, "child:c1", "child.correction", run_id="run-1", ended_at=15, result="r2")
    assert private.private_handoff_stable(send(corrected, 20, "bbb").records) == []
    stats = Trace().spawn().end(10).accept(
        10, "x\n\nStats: runtime 10s • tokens unknown • sessionKey k • sessionId s\n")
    assert _names(private.private_handoff_stable(stats.records)) == ["private-handoff-stable"]


def test_bound_to_incarnation_catches_a_result_handed_after_a_reset() -> None:
    reset = Trace().turn(0).spawn(1).end(10).add(
        20, ACTOR, "requester.lifecycle", what="reset", incarnation=2, abandoned=[])
    assert _names(private.private_bound_to_incarnation(reset.accept(30).records)) == [
        "private-bound-to-incarnation"]
    # In a batch wake too: the key names its members.
    wake = "announce:requester-settle:main:agent:main:main:run-1,run-2:yield-1"
    reset_wake = Trace().turn(0).spawn(1).end(10).add(
        20, ACTOR, "requester.lifecycle", what="delete", incarnation=2, abandoned=[])
    assert _names(private.private_bound_to_incarnation(
        reset_wake.accept(30, key=wake).records)) == ["private-bound-to-incarnation"]
    kept = Trace().turn(0).spawn(1).end(10).accept(30)
    assert private.private_bound_to_incarnation(kept.records) == []
    # Never to another session either (a deleted nested requester's fallback, DEL-4).
    fallback = Trace().turn(0).spawn(1).end(10).add(
        30, "requester:agent:other:main", "requester.accept", run_id="run-1", key=KEY,
        status="ok", text="block")
    assert _names(private.private_bound_to_incarnation(fallback.records)) == [
        "private-bound-to-incarnation"]


def test_carried_runs_reads_keys_as_an_outsider() -> None:
    # A tuple: each key's reading is kept (several oracles ask) and must not be changed.
    assert private.carried_runs(KEY) == ("run-1",)
    assert private.carried_runs(
        "announce:requester-settle:main:agent:main:main:run-1,run-12:yield-2:retry-1") == (
        "run-1", "run-12")


def test_retained_until_turn_catches_a_result_handed_while_the_turn_is_open() -> None:
    early = Trace().turn(0).spawn(1).end(10).accept(11).turn_end(50)
    assert _names(private.private_retained_until_turn_settles(early.records)) == [
        "private-retained-until-turn-settles"]
    on_time = Trace().turn(0).spawn(1).end(10).turn_end(50).accept(50)
    assert private.private_retained_until_turn_settles(on_time.records) == []


GIVE_UP: dict[str, Any] = {"run_id": "run-1", "status": "suspended", "reason": "expiry",
                           "error": None}
MIN = 60_000


def test_window_from_release_catches_a_window_counted_from_the_end() -> None:
    # The child ended at 1 min, its turn finished at 40 min: the window runs to 70 min.
    from_end = Trace().turn(0).spawn(1).end(MIN).turn_end(40 * MIN)
    from_end.add(41 * MIN, "delivery", "delivery.give_up", **GIVE_UP)
    assert _names(private.private_window_from_release(from_end.records)) == [
        "private-window-from-release"]
    while_open = Trace().turn(0).spawn(1).end(MIN).add(31 * MIN, "delivery",
                                                        "delivery.give_up", **GIVE_UP)
    assert _names(private.private_window_from_release(while_open.records)) == [
        "private-window-from-release"]
    right = Trace().turn(0).spawn(1).end(MIN).turn_end(40 * MIN)
    right.add(70 * MIN, "delivery", "delivery.give_up", **GIVE_UP)
    assert private.private_window_from_release(right.records) == []


@pytest.mark.parametrize("name", ["mutant-private-to-channel", "mutant-private-usage-stats",
                                  "mutant-private-after-reset"])
def test_each_private_mutant_scenario_is_caught(name: str) -> None:
    loaded = scenario.load(SCENARIOS / f"{name}.toml")
    found = {v.invariant for v in world.run(loaded).violations}
    assert set(loaded.expect.violations) <= found
    clean = world.run(loaded, mutants=[])
    assert clean.violations == ()
