"""The drawn workload's trees (sim/world/draws/trees.py) and the workload knob for big worlds."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from actors.inputs import InputError
from actors.messages import ChildSpec, StepSpec
from sim import scenario as scenario_mod
from sim.bench.scale import world_with
from sim.world import core as world
from sim.world.draws.trees import TreeBook, load_session


def _open_parents_by_scan(earlier: list[ChildSpec], max_depth: int,
                          max_fan_out: int) -> list[ChildSpec]:
    """The list the world drew parents from before the book: recomputed over every earlier
    child for each draw (O(n) per child)."""
    depth = {c.id: 1 for c in earlier}
    fan_out: dict[str, int] = {}
    for c in earlier:
        if c.parent is not None:
            depth[c.id] = depth[c.parent] + 1
            fan_out[c.parent] = fan_out.get(c.parent, 0) + 1
    runs_of = {c.id: 0 for c in earlier}
    for c in earlier:
        runs_of[c.id] += 1
    return [c for c in earlier if depth[c.id] < max_depth and runs_of[c.id] == 1
            and fan_out.get(c.id, 0) < max_fan_out and c.run_ms >= 2000]


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5), st.integers(1, 6),
       st.lists(st.tuples(st.booleans(), st.integers(0, 10**6), st.integers(0, 3),
                          st.booleans()), max_size=60))
def test_the_book_lists_the_parents_a_scan_would(
        max_depth: int, max_fan_out: int, draws: list[tuple[bool, int, int, bool]]) -> None:
    """Same members, same order, after every drawn child and re-run."""
    book = TreeBook(max_depth, max_fan_out)
    drawn: list[ChildSpec] = []
    for i, (nested, pick, seconds, rerun) in enumerate(draws):
        child = ChildSpec(f"c{i}", "agent:main:main", "t", 0, (StepSpec(1000 * seconds),))
        if nested and book.open_parents:
            parent = book.parent(pick % book.open_parents)
            child = attrs.evolve(child, parent=parent.id)
        for spec in [child, *([attrs.evolve(child, parent=None)] if rerun else [])]:
            drawn.append(spec)
            book.add(spec)
            expected = _open_parents_by_scan(drawn, max_depth, max_fan_out)
            assert [book.parent(k) for k in range(book.open_parents)] == expected
            # The lookups the tree draws make (sim/world/draws/tree.py), against scans of the draw.
            for c in drawn:
                assert book.children_of(c.id) == [d for d in drawn if d.parent == c.id]
                assert book.specs_of(c.id) == [d for d in drawn if d.id == c.id]
                key = c.session or c.id
                assert book.on_session(key) == [d for d in drawn if (d.session or d.id) == key]


def _default_world(extra: str) -> scenario_mod.Scenario:
    # The default world sets its own tree_share (sim/world/draws/tree.py); the knob's lines
    # replace it.
    source = "".join(line for line in world_with(8).source.splitlines(keepends=True)
                     if not line.startswith("tree_share = "))
    text = source.replace("run_max = 600", "run_max = 600\n" + extra)
    return scenario_mod.loads(text, "<test>")


def test_the_knob_spreads_children_over_sessions_and_grows_deep_wide_trees() -> None:
    big = world_with(300, trees=True)
    assert big.workload is not None and big.workload.sessions == 3
    result = world.run(big, seed=3)
    assert not result.violations and result.end_reason == "quiescent"
    spawns = [r.data for r in result.trace if r.kind == "world.spawn"]
    top = {s["requester"] for s in spawns if ":subagent:" not in s["requester"]}
    assert top == {load_session("agent:main:main", k) for k in range(3)}
    # A requester key names its lineage: depth is the number of sub-agent levels.
    assert max(s["requester"].count(":subagent:") for s in spawns) >= 3
    # Every session that spawned was running to receive its children's completions.
    accepted = {r.actor for r in result.trace if r.kind == "requester.accept"}
    assert {"requester:" + k for k in top} <= accepted


def test_the_knob_is_validated() -> None:
    loaded = _default_world("sessions = 4\ntree_share = 0.5\ntree_depth = 5\ntree_fan_out = 20")
    assert loaded.workload is not None
    assert (loaded.workload.sessions, loaded.workload.tree_share, loaded.workload.tree_depth,
            loaded.workload.tree_fan_out) == (4, 0.5, 5, 20)
    for bad, field in (("tree_depth = 6", "tree_depth"), ("tree_fan_out = 21", "tree_fan_out"),
                       ("tree_share = 1.5", "tree_share"), ("sessions = 0", "sessions")):
        with pytest.raises(InputError, match=field):
            _default_world(bad)


def test_a_parent_runs_again_under_its_own_requester() -> None:
    """A stale re-run of a parent (sim/world/draws/tree.py) in a world of many top-level sessions is
    asked of the requester that ran it first: the same child id under another session would run
    beside its first actor (the 1,000-child big-tree run crashed on it)."""
    result = world.run(world_with(1000, trees=True), seed=1)
    assert not result.violations and result.end_reason == "quiescent"
    requesters: dict[str, set[str]] = {}
    for r in result.trace:
        if r.kind == "world.spawn":
            requesters.setdefault(r.data["child"], set()).add(r.data["requester"])
    assert len(requesters) > 900
    assert all(len(asked) == 1 for asked in requesters.values())


@pytest.mark.slow
def test_the_4000_child_big_tree_run_ends_clean() -> None:
    # `python -m sim.bench.scale 4000`'s run (seed 1, big trees, no spawn limits). It once ended
    # with two redrive-from-retained findings: an operator's redrive asked while a take's
    # acknowledgement was held up in transit (scenarios/redrive-while-ack-delayed.toml).
    result = world.run(world_with(4000, trees=True), seed=1)
    assert result.end_reason == "quiescent"
    assert [(v.invariant, v.message) for v in result.violations] == []
