"""Requester turns: the pure turn core, the scenario keys, the harness's driver, and the
turn-binding oracle shown catching a broken binding."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from actors.errors import InputError
from actors.yields.turns import Binding, TurnCore, TurnEnd, TurnState
from sim import scenario
from sim.world import core as world
from tests.conftest import SCENARIOS


def test_a_turn_binds_its_children_until_it_ends() -> None:
    core = TurnCore("agent:main:main")
    turn = core.start("t1")
    assert core.bind("t1", "run-1") == Binding(turn.run_id, 1)
    assert core.bind(None, "run-2") == Binding(None, 1)
    assert core.end("t1", TurnEnd.YIELD) is turn and turn.state is TurnState.YIELDED
    assert core.bind("t1", "run-3") == Binding(None, 1)  # the turn is over
    assert turn.children == ["run-1"]
    assert core.yielded(turn.run_id)


def test_a_reset_abandons_open_and_yielded_turns_and_starts_an_incarnation() -> None:
    core = TurnCore("agent:main:main")
    yielded = core.start("t1")
    core.end("t1", TurnEnd.YIELD)
    opened = core.start("t2")
    assert core.reset() == [yielded, opened]
    assert core.incarnation == 2 and core.open_turn is None
    assert core.end("t2", TurnEnd.FINISH) is None
    assert core.start("t3").run_id.startswith("turn:agent:main:main:2:")
    assert core.resume(yielded.run_id) is None


def _load(body: str) -> scenario.Scenario:
    return scenario.loads(textwrap.dedent(body), "t.toml")


_WORLD = """
    [[sessions]]
    key = "agent:main:main"
    [[turns]]
    id = "t1"
    start = 0
    end = 10
    ends = "yield"
"""


def test_turns_load_and_children_name_them() -> None:
    loaded = _load(_WORLD + """
    [[children]]
    id = "c1"
    turn = "t1"
    spawn_at = 5
    """)
    assert loaded.turns[0].ends is TurnEnd.YIELD and loaded.turns[0].end_ms == 10_000
    assert loaded.children[0].turn == "t1"


@pytest.mark.parametrize(("extra", "message"), [
    ("[[children]]\nid = \"c1\"\nturn = \"t9\"\n", "turn: 't9' is not one of the [[turns]]"),
    ("[[children]]\nid = \"c1\"\nturn = \"t1\"\nspawn_at = 10\n", "spawn_at: a child of turn"),
    ("[[turns]]\nid = \"t2\"\nstart = 5\n", "overlaps turn 't1'"),
    ("[[turns]]\nid = \"t2\"\nstart = 20\nends = \"yield\"\n", "ends: needs an end"),
    ("[[lifecycle]]\nat = 1\nevent = \"rename\"\n", "event"),
])
def test_bad_turns_are_one_line_errors(extra: str, message: str) -> None:
    body = textwrap.dedent(_WORLD) + extra
    if "[[children]]" not in extra:
        body += "[[children]]\nid = \"c0\"\n"
    with pytest.raises(InputError) as caught:
        scenario.loads(body, "t.toml")
    assert message in str(caught.value)
    assert str(caught.value).startswith("t.toml:")


def test_the_harness_asks_nothing_more_of_a_turn_a_reset_abandoned() -> None:
    result = world.run(scenario.load(SCENARIOS / "requester-turns.toml"))
    asked = [r.data["child"] for r in result.trace.records if r.kind == "world.spawn"]
    assert "c4" not in asked and "c5" in asked
    incarnations = {r.data["child"]: r.data["incarnation"] for r in result.trace.records
                    if r.kind == "spawn"}
    assert incarnations == {"c1": 1, "c2": 1, "c3": 1, "c5": 2}


def test_turn_binding_catches_a_spawn_bound_to_the_wrong_incarnation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    original = TurnCore.bind

    def stale(self: TurnCore, turn: str | None, run_id: str) -> Any:
        binding = original(self, turn, run_id)
        return Binding(binding.turn_run_id, 1)  # the bug: the first incarnation, always

    monkeypatch.setattr(TurnCore, "bind", stale)
    result = world.run(scenario.load(SCENARIOS / "requester-turns.toml"))
    assert "turn-binding" in {v.invariant for v in result.violations}
