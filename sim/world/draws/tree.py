"""The default world's trees (DEL-4, DEL-6, reference §c15): who spawns whom, when a nested
requester's session is deleted, and which spawn limits a seed runs under.

Draws on their own streams (``workload:tree``, ``workload:limits``, ``fault:delete-session``)
so that turning them on leaves the other draws where they were.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from actors import addresses
from actors.messages import ChildSpec, NestedSessionDeleted
from actors.nesting.session_queue import SessionQueue
from actors.nesting.spawn_limits import SpawnLimits
from actors.requester.session import child_session_key
from actors.store.durable import RunStore
from sim.choices import Chooser
from sim.kernel import Kernel
from sim.scenario import nested_requester
from sim.world.draws.trees import TreeBook

# Of nested children, the share that reuse an earlier sibling's session (a later row of the same
# child session in one run's findings).
SIBLING_REUSE_SHARE = 0.5
# Of nested children, the share whose parent's session runs again soon and re-spawns a sibling's
# session (a stale row in the first run's findings).
STALE_SHARE = 0.6
# How often a seed runs under smaller limits than the world's (refusals, a busy lane).
SMALL_LIMITS_SHARE = 0.2
# A drawn deletion comes this long (at most) after the nested requester's run should end.
DELETE_AFTER_MS = 120_000


def draw_tree(chooser: Chooser, child: ChildSpec, earlier: list[ChildSpec], trees: TreeBook,
              share: float) -> ChildSpec:
    """Some children are spawned by an earlier child while it runs (trees of the workload's
    depth and fan-out; the open parents kept by sim/world/draws/trees.py). Now and then a nested
    child reuses an earlier sibling's session once that sibling should be done."""
    sub = "workload:tree"
    if not len(trees) or not chooser.chance(sub, share) or not trees.open_parents:
        return child
    parent = trees.parent(chooser.choose(sub, trees.open_parents))
    spawn_at_ms = parent.spawn_at_ms + 1000 * chooser.choose(sub, parent.run_ms // 1000)
    child = attrs.evolve(child, parent=parent.id, requester=nested_requester(parent),
                         spawn_at_ms=spawn_at_ms)
    end_ms = parent.spawn_at_ms + parent.run_ms
    # A sibling of this run, or of an earlier run of the same session (whose row then goes
    # stale: the session now belongs to this run).
    assert len(trees) == len(earlier), "the tree book must have seen every earlier spec"
    siblings = [c for c in trees.children_of(parent.id)
                if c.spawn_at_ms + c.run_ms + 1000 < end_ms]
    if siblings and chooser.chance(sub, SIBLING_REUSE_SHARE):
        sibling = siblings[chooser.choose(sub, len(siblings))]
        free_ms = max(sibling.spawn_at_ms + sibling.run_ms + 1000, parent.spawn_at_ms)
        spawn_at_ms = free_ms + 1000 * chooser.choose(sub, max(1, (end_ms - free_ms) // 1000))
        child = attrs.evolve(child, session=sibling.session or sibling.id,
                             spawn_at_ms=spawn_at_ms)
    return child


def draw_stale_rerun(chooser: Chooser, child: ChildSpec, earlier: list[ChildSpec],
                     draw_rerun: Callable[[], ChildSpec], trees: TreeBook,
                     share: float | None = None) -> list[ChildSpec]:
    """Now and then the session of ``child``'s parent runs again soon after its first run, and
    that second run spawns again the session of a sibling the first run had: while the first
    run still waits for ``child``, the sibling's row of the first run goes stale (reference
    §c8: the session now belongs to a newer run). Returns the extra specs (none, or the
    parent's second run and its child). ``share``: how often, when it can (None: ``STALE_SHARE``;
    an aimed draw's, sim/world/draws/reach.py)."""
    sub = "workload:tree"
    # (The earlier specs are looked up in the tree book, which holds them all in draw order.)
    assert len(trees) == len(earlier), "the tree book must have seen every earlier spec"
    specs = trees.specs_of(child.parent) if child.parent is not None else []
    parent = specs[0] if specs else None
    if parent is None or parent.parent is not None or not chooser.chance(
            sub, STALE_SHARE if share is None else share):
        return []
    if len(specs) > 1:
        return []  # already runs twice
    end_ms = parent.spawn_at_ms + parent.run_ms
    siblings = [c for c in trees.children_of(parent.id) if c is not child
                and c.spawn_at_ms + c.run_ms < end_ms]
    if not siblings:
        return []
    sibling = siblings[chooser.choose(sub, len(siblings))]
    # The parent's own requester runs it again: a big world's re-drawn child would otherwise
    # land on another top-level session, which would run the same child id beside the first.
    second = attrs.evolve(draw_rerun(), session=parent.session, requester=parent.requester,
                          spawn_at_ms=end_ms + 1000 * (1 + chooser.choose(sub, 30)))
    if child.spawn_at_ms + child.run_ms <= second.spawn_at_ms + 1000:
        return []  # the first run would be done waiting: nothing goes stale
    again = attrs.evolve(sibling, id=f"{sibling.id}b", requester=nested_requester(second),
                         session=sibling.session or sibling.id,
                         spawn_at_ms=second.spawn_at_ms + 1000)
    # Only a session no other child reuses (FMT-6's archive draws, decided before this one):
    # a run of another child on it could overlap the second run, and a session runs one at once.
    reused = any(c.id not in (parent.id, sibling.id)
                 for key in dict.fromkeys((parent.session or parent.id, again.session))
                 if key is not None for c in trees.on_session(key))
    return [second, again] if second.run_ms > 1000 and not reused else []


def draw_limits(chooser: Chooser, limits: SpawnLimits) -> SpawnLimits:
    """Now and then smaller limits than the world's: a shallow tree, few children per session,
    a narrow lane."""
    sub = "workload:limits"
    if not chooser.chance(sub, SMALL_LIMITS_SHARE):
        return limits
    return SpawnLimits(max_spawn_depth=1 + chooser.choose(sub, 3),
                       max_children_per_agent=2 + chooser.choose(sub, 5),
                       max_concurrent=3 + chooser.choose(sub, 6))


def deletion_at(chooser: Chooser, parent: ChildSpec, child: ChildSpec) -> int:
    """When a drawn deletion of ``parent``'s session comes: after its run should have ended,
    mostly before ``child`` (spawned by it) should end."""
    start = parent.spawn_at_ms + parent.run_ms
    window = max(DELETE_AFTER_MS, child.spawn_at_ms + child.run_ms - start)
    return start + 1000 * chooser.choose("fault:delete-session", window // 1000 + 1)


def delete_session(kernel: Kernel, store: RunStore, specs: Sequence[ChildSpec],
                   child_id: str, sessions: SessionQueue) -> None:
    """A nested requester's session is deleted (DEL-4): as an operator would, straight in the
    store; only once its run is over (a running session is not deleted under it; nor one that
    still holds a run, whose later run in line was aborted and ended first). The session is
    told, and kills the child runs it spawned that are still running (reference §c17)."""
    spec = next(c for c in specs if c.id == child_id)
    key = child_session_key(spec.requester, spec.session or spec.id)
    run = store.latest_run(key)
    if run is None or run.ended_at_ms is None or sessions.holder(key) is not None:
        kernel.emit(addresses.HARNESS, "timeline.noop", {
            "fault": "delete-session",
            "why": "the session has no run" if run is None else "the session has a run not ended"})
        return
    store.delete_requester_session(key, kernel.now_ms)
    kernel.emit(addresses.HARNESS, "world.delete-session", {"child": child_id, "session": key})
    # The session kills the child runs it spawned that have not ended (reference §c17).
    if any(c.requester == key for c in specs):  # a session that spawns has an actor
        kernel.send(addresses.TIMELINE, addresses.requester(key), NestedSessionDeleted())
