"""The boundary draws (sim/world/draws/edges.py): sizes that land exactly on a limit."""

from __future__ import annotations

from typing import Any, cast

import pytest

from actors.gateway.core import cut_edges, split_chunks
from actors.messages import ChildSpec, StepSpec
from sim.choices import Chooser
from sim.faults.kinds import FaultKind
from sim.faults.plan import FaultPlan
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


@pytest.mark.parametrize(("line", "probe"), [
    (699, "gateway.chunk-break-one-under-limit"), (700, "gateway.chunk-break-at-limit"),
    (701, "gateway.chunk-break-one-over-limit")])
def test_chunk_lines_put_each_cut_at_the_limits_edge(line: int, probe: str) -> None:
    # As the block carries them: a header with line breaks of its own, then the answer.
    text = "header\nsession_key: c1\n<prompt-data>\nc1 done.\n" + edges.chunk_lines(
        "c1", line, 3) + "</prompt-data>\nStats: runtime 1m"
    assert all(len(row) == line for row in edges.chunk_lines("c1", line, 3).splitlines(True))
    chunks = split_chunks(text, 700)
    assert "".join(chunks) == text and max(map(len, chunks)) <= 700
    assert set(cut_edges(text, chunks, 700)) == {probe}


def test_a_tie_spawns_and_ends_with_its_twin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(edges.SHARES, "tie", 1.0)
    twin = ChildSpec("c1", "agent:main:main", "task", 4000, (StepSpec(30_000, text="done"),))
    child = ChildSpec("c2", "agent:main:main", "task", 9000,
                      (StepSpec(5000, text="a"), StepSpec(50_000, text="done")))
    tied = edges.tie(Chooser(1), child, [twin])
    assert (tied.spawn_at_ms, tied.run_ms) == (twin.spawn_at_ms, twin.run_ms)
    assert [s.text for s in tied.steps] == ["a", "done"]
    nested = ChildSpec("c3", "agent:main:main", "task", 9000, (StepSpec(1000, text="x"),),
                       parent="c9")
    assert edges.tie(Chooser(1), nested, [twin]) is nested  # no sibling of its parent run


def test_tries_arm_one_under_at_or_one_over_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(edges.SHARES, "tries", 1.0)
    counts = set()
    child = ChildSpec("c1", "agent:main:main", "task", 0, (StepSpec(1000, text="done"),))
    for seed in range(1, 40):
        armed: list[Any] = []
        plan = cast(FaultPlan, type("Plan", (), {
            "rates": {FaultKind.SEND_TRANSIENT: 0.02}, "armed": armed})())
        edges.tries(Chooser(seed), plan, child)
        assert [a.event.fault for a in armed] == [FaultKind.SEND_TRANSIENT]
        counts.add(armed[0].remaining)
    assert counts == {3, 4, 5}
    off = cast(FaultPlan, type("Plan", (), {"rates": {}, "armed": []})())
    edges.tries(Chooser(1), off, child)
    assert off.armed == []  # the seed turned transient refusals off
