"""The world's clock (sim/world/clock.py) reads as ``MockClock(rate=0)`` did, jump for jump, and
a world run on it gives the trace it gave on a ``MockClock``."""

from __future__ import annotations

import math

import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st

from sim.bench.detect import default_world
from sim.world import core
from sim.world.clock import VirtualClock

# Seconds the kernel jumps (a millisecond count over 1000) or a later deadline's distance.
_SECONDS = st.integers(0, 10**9).map(lambda ms: ms / 1000)


@given(st.lists(_SECONDS, max_size=30), st.lists(st.floats(-1e9, 1e9) | st.just(math.inf),
                                                 min_size=1, max_size=5))
def test_it_reads_as_a_mock_clock_at_rate_zero(jumps: list[float], deadlines: list[float]) -> None:
    ours, mock = VirtualClock(), trio.testing.MockClock(rate=0)
    ours.start_clock()
    mock.start_clock()
    for seconds in jumps:
        ours.jump(seconds)
        mock.jump(seconds)
        assert ours.current_time() == mock.current_time()
        for deadline in deadlines:
            assert ours.deadline_to_sleep_time(deadline) == mock.deadline_to_sleep_time(deadline)


def test_it_never_goes_back() -> None:
    with pytest.raises(ValueError, match="backwards"):
        VirtualClock().jump(-0.001)


def test_a_world_on_it_runs_as_on_a_mock_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = default_world()
    ours = [core.run(scenario, seed=seed).trace.digest() for seed in range(1, 9)]
    monkeypatch.setattr(core, "VirtualClock", lambda: trio.testing.MockClock(rate=0))
    assert [core.run(scenario, seed=seed).trace.digest() for seed in range(1, 9)] == ours
