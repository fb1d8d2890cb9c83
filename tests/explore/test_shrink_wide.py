"""Shrinking a wide batch (shrinking/shrink_wide.py): the optional choice that leaves a wide
child out (never made by a free run), the fault choices about a dropped child going with it, and
the shrinker's pass that leaves wide children out."""

from __future__ import annotations

import attrs

from sim import scenario
from sim.choices import Chooser
from sim.explore.shrinking.shrink import _Shrinker, streams_of
from sim.explore.shrinking.shrink_wide import kept_slots, wide_slots, without_wide
from sim.explore.streams import Streams, _stream
from sim.world import core as world
from sim.world.turns import WIDE_CHILDREN, WIDE_DROP

# Default-world seeds whose run has a wide batch, and the mutant each fails with.
WIDE_FAULT = (212, "delivered-ignores-correction")  # w74's send is refused for good
WIDE_SHORT = (212, "give-up-correction-sent")


# -- the optional choice ---------------------------------------------------------------------------


def test_an_optional_choice_is_made_only_by_a_guide() -> None:
    free = Chooser(1)
    assert free.optional("x", 2) == 0
    assert free.choose("a", 3) in range(3)
    assert [c[0] for c in free.schedule({}).choices] == [0]  # only "a": nothing moved
    assert free.schedule({}).subsystems == ("a",)

    guided = Chooser(1, guides={"x": [1], "a": [2]})
    assert guided.optional("x", 2) == 1
    assert guided.choose("a", 3) == 2
    assert guided.optional("x", 2) == 0  # past the list's end: the default, unrecorded
    recorded = guided.schedule({})
    assert [(recorded.subsystems[s], i) for s, _, i in recorded.choices] == [("x", 1), ("a", 2)]

    # A strict replay takes it where the schedule recorded it, and only there.
    replay = Chooser(1, replay=recorded)
    assert (replay.optional("x", 2), replay.choose("a", 3), replay.optional("x", 2)) == (1, 2, 0)
    replay_free = Chooser(1, replay=free.schedule({}))
    assert replay_free.optional("x", 2) == 0
    assert replay_free.choose("a", 3) == free.schedule({}).choices[0][2]


# -- the wide batch's children ---------------------------------------------------------------------


def _spawned(result: world.RunResult) -> dict[str, int]:
    return {r.data["child"]: r.t_ms for r in result.trace.records if r.kind == "world.spawn"}


def test_a_guide_leaves_wide_children_out_and_the_others_keep_their_ids_and_times(
        default_world: scenario.Scenario) -> None:
    seed, mutant = WIDE_SHORT
    free = world.run(default_world, seed=seed, mutants=[mutant])
    ids = wide_slots(free.spans)
    assert ids == [f"w{n + 1}" for n in range(WIDE_CHILDREN)]
    assert WIDE_DROP not in dict(streams_of(free.schedule))  # a free run never makes it
    spawned = _spawned(free)
    assert set(ids) <= set(spawned)

    drops = [1] * WIDE_CHILDREN
    drops[4] = drops[-1] = 0  # keep w5 and w80
    guided = attrs.evolve(default_world, mutants=(mutant,), replay=(
        *streams_of(free.schedule), (WIDE_DROP, tuple(drops))))
    again = world.run(guided)
    kept = {child: at for child, at in _spawned(again).items() if child.startswith("w")}
    assert kept == {"w5": spawned["w5"], "w80": spawned["w80"]}
    assert len(again.trace) < len(free.trace) // 4
    # The run's own choices, the drops among them, replay it exactly: as guides ...
    assert world.run(attrs.evolve(guided, replay=streams_of(again.schedule))).trace.records[1:] \
        == again.trace.records[1:]
    # ... and as a strict schedule.
    strict = world.run(default_world, seed=seed, mutants=[mutant], replay=again.schedule)
    assert strict.trace.records[1:] == again.trace.records[1:]


def _refused(result: world.RunResult, child: str) -> bool:
    return any(r.kind == "fault" and r.data["kind"] == "send-permanent"
               and f":subagent:{child}:" in r.data.get("key", "") for r in result.trace.records)


def test_dropping_wide_children_keeps_a_fault_on_the_child_it_struck(
        default_world: scenario.Scenario) -> None:
    seed, mutant = WIDE_FAULT
    free = world.run(default_world, seed=seed, mutants=[mutant])
    assert _refused(free, "w74")
    source = attrs.evolve(default_world, mutants=(mutant,), replay=streams_of(free.schedule))
    guided = world.run(source)  # a guided run, so it says which choices were about whom
    assert _refused(guided, "w74")
    streams = streams_of(guided.schedule)
    earlier = list(range(73))  # w1..w73
    moved = world.run(attrs.evolve(source, replay=without_wide(streams, guided.spans, earlier)))
    assert "w1" not in _spawned(moved) and "w74" in _spawned(moved)
    assert _refused(moved, "w74")
    # Without deleting the choices about the dropped children, the fault lands elsewhere.
    only_drops: Streams = (*streams, (WIDE_DROP, (1,) * 73))
    assert not _refused(world.run(attrs.evolve(source, replay=only_drops)), "w74")


def test_the_shrinker_leaves_wide_children_out(default_world: scenario.Scenario) -> None:
    seed, mutant = WIDE_SHORT
    free = world.run(default_world, seed=seed, mutants=[mutant])
    target = free.violations[0].invariant
    start = attrs.evolve(default_world, seed=seed, mutants=(mutant,),
                         expect=scenario.Expectation(), replay=streams_of(free.schedule))
    shrinker = _Shrinker(target, max_runs=100)
    first = shrinker.run(start)
    shrinker.best, shrinker.best_outcome = attrs.evolve(start, replay=first.streams), first
    assert len(kept_slots(first.streams, first.spans)) == WIDE_CHILDREN
    assert shrinker.drop_wide_children()
    best = shrinker.best_outcome
    assert best.interesting
    assert len(kept_slots(best.streams, best.spans)) < WIDE_CHILDREN // 2
    assert best.records * 2 < first.records
    assert shrinker.runs <= 100
    assert any(_stream(best.streams, WIDE_DROP))  # what it left out is in the choices saved
