"""The boundary draws (sim/world/draws/edges.py): sizes that land exactly on a limit."""

from __future__ import annotations

import pytest

from actors.messages import ChildSpec, StepSpec
from sim.world.draws import edges


@pytest.mark.parametrize("size", [102_399, 102_400, 102_401, 4_000])
@pytest.mark.parametrize("wide", [False, True])
def test_a_sized_text_is_exactly_that_many_bytes(size: int, wide: bool) -> None:
    text = edges.sized_text("c3 done.", size, wide)
    assert len(text.encode("utf-8")) == size
    assert text.startswith("c3 done.\n")
    assert wide == (len(text) < size)  # mostly 3-byte characters, or all ASCII


def test_earlier_steps_keep_the_run_as_long_as_drawn() -> None:
    child = ChildSpec("c1", "agent:main:main", "task", 0,
                      (StepSpec(4000, text="a", tool_calls=1), StepSpec(9000, text="done")))
    bent = edges._with_earlier(child, ["x" * 10, "y" * 10])
    assert bent.run_ms == child.run_ms
    assert [s.text for s in bent.steps] == ["a", "x" * 10, "y" * 10, "done"]
    assert all(s.tool_calls for s in bent.steps[:-1])
