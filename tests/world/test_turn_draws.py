"""The default world's turns (sim/world/turns.py): no drawn turn outlasts the agent timeout."""

from __future__ import annotations

import pytest

from actors.messages import ChildSpec
from sim.choices import Chooser
from sim.world import turns

DAY_MS = 86_400_000


def _children(spread_ms: int, count: int) -> list[ChildSpec]:
    return [ChildSpec(f"c{n}", "agent:main:main", f"task {n}", spread_ms * n // count, ())
            for n in range(count)]


@pytest.mark.parametrize("seed", range(1, 41))
def test_no_turn_outlasts_the_agent_timeout_in_a_world_of_weeks(seed: int) -> None:
    children = _children(30 * DAY_MS, 300)
    bound, drawn, _ = turns.draw(Chooser(seed), "agent:main:main", children, 30 * DAY_MS,
                                 until_ms=70 * DAY_MS)
    by_id = {t.id: t for t in drawn}
    for turn in drawn:
        assert turn.end_ms is not None  # every turn ends, at the latest when it times out
        assert turn.end_ms - turn.start_ms <= turns.AGENT_TIMEOUT_MS
    for child in bound:
        if child.turn is not None and child.turn in by_id:
            turn = by_id[child.turn]
            assert turn.start_ms <= child.spawn_at_ms < (turn.end_ms or 2**62)


def test_a_turn_drawn_to_stay_open_times_out_in_a_world_that_outlasts_the_timeout() -> None:
    """The last turn, drawn to stay open, ends at its start + 48 h, finished, once the world
    runs that long; in a shorter world it stays open (the harness finishes it at the end)."""
    children = _children(30 * DAY_MS, 300)
    seen = 0
    for seed in range(1, 200):
        _, short, _ = turns.draw(Chooser(seed), "agent:main:main", children, 30 * DAY_MS,
                                 until_ms=DAY_MS)
        _, long, _ = turns.draw(Chooser(seed), "agent:main:main", children, 30 * DAY_MS,
                                until_ms=70 * DAY_MS)
        if short and short[-1].end_ms is None:
            seen += 1
            assert long[-1].end_ms == long[-1].start_ms + turns.AGENT_TIMEOUT_MS
            assert long[-1].ends is turns.TurnEnd.FINISH
    assert seen >= 3
