"""A seeded workload's children, drawn one by one with everything that hangs on each: its tree,
archive use, correction, private completion, operator, aimed faults, deletions and re-runs. The
run's features (sim/world/draws/features.py) decide which of these are drawn at all."""

from __future__ import annotations

import functools
from typing import Protocol

import attrs

from actors.messages import ChildSpec, HistoryRead
from actors.nesting.spawn_limits import SpawnLimits
from sim.choices import Chooser
from sim.faults.plan import FaultPlan, TimelineEvent
from sim.kernel import Kernel
from sim.scenario import Scenario, WorkloadDef
from sim.world import observe as world_observe
from sim.world.control import Control, ControlDesk
from sim.world.draws import child as world_child
from sim.world.draws import edges as world_edges
from sim.world.draws import lifecycle as world_lifecycle
from sim.world.draws import permissions as world_permissions
from sim.world.draws import reach as world_reach
from sim.world.draws import receipts as world_receipts
from sim.world.draws import tree as world_tree
from sim.world.draws.features import Features
from sim.world.draws.private import draw_private, refused
from sim.world.draws.trees import TreeBook, spread
from sim.world.redrive import OperatorDesk

# The label of a drawn child's span of choices (the shrinker drops it whole by it).
CHILD_SPAN = "child:"


class _World(Protocol):
    """What the draws below use of the world they draw for (sim/world/core.py's ``World``),
    stated here so this module does not import the world that imports it."""

    chooser: Chooser
    plan: FaultPlan
    kernel: Kernel
    features: Features
    limits: SpawnLimits
    operator: OperatorDesk
    desk: ControlDesk
    scenario: Scenario

    def _draw_child(self, workload: WorkloadDef, child_id: str, i: int) -> ChildSpec: ...
    def _send_at(self, at_ms: int, child: ChildSpec, message: Control) -> None: ...
    def _schedule_abort(self, at_ms: int, requester: str, child_id: str) -> None: ...
    def _crash_parked(self) -> None: ...
    def _schedule_fault(self, event: TimelineEvent) -> None: ...
    def _delete_session(self, child_id: str) -> None: ...


# The share of drawn children whose session is spawned again later (a new run id).
RERUN_SHARE = 0.1
# Of those re-runs, the share spawned while the first run should still run (a user who asks
# again before the answer came): the re-run waits in the session's queue, and a later reuse of
# that busy session (sim/world/draws/child.py's worker session) waits behind it, the corner
# where a session queue's order shows. On a stream of its own, so other re-runs keep still.
RERUN_EARLY_SHARE = 0.2


def draw_children(world: _World, workload: WorkloadDef, first: int) -> list[ChildSpec]:
    """The workload's children, each drawn in a span of its own (so a shrinker can drop one
    whole), with the features and seeded faults of this run bending them."""
    drawn: list[ChildSpec] = []
    trees = TreeBook(workload.tree_depth, workload.tree_fan_out)
    features = world.features
    for i in range(features.children):
        child_id = f"c{first + i + 1}"
        # A span of its own, so a shrinker can drop the child whole (with the fault choices
        # about it: its label names it).
        with world.chooser.span(f"{CHILD_SPAN}{child_id}"):
            child = spread(world.chooser, workload, world._draw_child(workload, child_id, i))
            findings = world_reach.FindingsAim(child)
            if "nesting" in features:
                child = world_tree.draw_tree(world.chooser, child, drawn, trees,
                                             workload.tree_share)
                findings = world_reach.findings_rows(
                    world.chooser, world.limits, child, trees,
                    functools.partial(world._draw_child, workload, i=i))
            child = findings.child
            if findings.sibling is not None:
                drawn.append(findings.sibling)
                trees.add(findings.sibling)
            child = world_edges.tie(world.chooser, child, drawn)
            if "archive" in features:
                child = world_child.draw_archive_use(world.chooser, world._send_at, child,
                                                     drawn, trees)
            queued_abort = world_reach.abort_in_queue(world.chooser, world.plan, child, trees)
            if queued_abort is not None:
                world._schedule_abort(queued_abort, child.requester, child.id)
            child = world_receipts.draw_correction(world.chooser, world.plan, child)
            if "private" in features:
                child = draw_private(world.chooser, child)
            crash_at = world_receipts.aim_at_frozen_findings(world.chooser, world.plan, child)
            if crash_at is not None:
                world.kernel.at(crash_at, "crash delivery after a correction",
                               world._crash_parked)
            if child.parent is not None:
                child = world_receipts.hold_frozen_findings(
                    world.chooser, world.plan, child,
                    next(c for c in reversed(drawn) if c.id == child.parent))
            world.operator.draw(world.chooser, child)
            redrive_at = world_reach.operator_aim(world.chooser, world.plan, child)
            if redrive_at is None:
                redrive_at = world_reach.operator_aim_failed(world.chooser, world.plan, child)
            if redrive_at is not None:
                world.operator.ask(redrive_at, "redrive", child.id)
            late_at = world_lifecycle.late_redrive(world.chooser, child)  # around its expiry
            if late_at is not None:
                world.operator.ask_late(late_at, child.id)
            child, read_at = world_lifecycle.draw_cleanup(world.chooser, child,
                                                          world.scenario.archive_after_minutes)
            if read_at is not None:  # sessions_history once the run should be archived
                world._send_at(read_at, child, HistoryRead(child.id))
            world_reach.slow_ack(world.chooser, world.plan, child)
            world_reach.stuck_descendant(world.chooser, world.plan, child, trees)
            world_edges.tries(world.chooser, world.plan, child)
            world_edges.recovery(world.chooser, world.plan, child)
            world_edges.ack(world.chooser, world.plan, child)
            world_edges.window(world.chooser, world.plan, child)
            world_edges.expiry(world.chooser, world.plan, child)
            child = world_edges.draw(world.chooser, child, world._send_at,
                                     None if child.parent is not None
                                     else world.desk.chunk_chars(child.requester))
            if redrive_at is None:  # an aimed redrive needs the run to end as drawn
                child = world_lifecycle.draw_run_timeout(world.chooser, child)
            steer = world_lifecycle.draw_steer(world.chooser, child)
            if steer is not None:
                world.desk.steer(steer[0], child, steer[1],
                                 world_lifecycle.STEERED_REPLY.format(child=child.id),
                                 outside_turns=True)
            drawn.append(child)
            trees.add(child, may_parent=not refused(child))
            if child.parent is not None and world.plan.strikes("delete-session"):
                parent = next(c for c in reversed(drawn) if c.id == child.parent)
                at, transit = world_reach.gone_in_transit(
                    world.chooser, parent, child,
                    world_tree.deletion_at(world.chooser, parent, child))
                if transit is not None:
                    world._schedule_fault(transit)
                world.kernel.at(at, f"delete session of {parent.id}",
                               functools.partial(world._delete_session, parent.id))
            if child.parent is not None and "reruns" in features:
                extra = world_tree.draw_stale_rerun(
                    world.chooser, child, drawn,
                    functools.partial(world._draw_child, workload, child.parent, i), trees,
                    findings.rerun_share)
                drawn += extra
                for spec in extra:
                    trees.add(spec)
            if world.plan.strikes("abort"):
                at = child.spawn_at_ms + 1000 * world.chooser.choose(
                    "fault:abort", child.run_ms // 1000 + 1)
                world._schedule_abort(at, child.requester, child.id)
            kill_at = world_lifecycle.kill_after_end(world.chooser, world.plan, child)
            if kill_at is not None:
                world._schedule_abort(kill_at, child.requester, child.id)
            if world.plan.strikes("unauthorised"):
                at, attempt = world_permissions.draw_attempt(world.chooser, child)
                world.desk.control(at, f"unauthorised {child.id}", child.requester, attempt,
                              attempt.caller)
            if world.plan.strikes("compaction"):  # DEL-7: while its result is in flight
                world_observe.compact_at(world.kernel, child.spawn_at_ms + child.run_ms + 1000
                                         * world.chooser.choose("fault:compaction", 300),
                                         child.requester, child.id)
            # A nested child is not re-run (its id would name a top-level child too).
            if child.parent is None and "reruns" in features and world.chooser.chance(
                    "workload:rerun", RERUN_SHARE):
                # The same child session runs again once its first run is surely over.
                rerun = attrs.evolve(world._draw_child(workload, child.id, i),
                                     requester=child.requester)
                at = (child.spawn_at_ms + 2 * child.run_ms + (child.correction_after_ms or 0)
                      + 1000 * (1 + world.chooser.choose("workload:rerun", 60)))
                if world.chooser.chance("workload:rerun-early", RERUN_EARLY_SHARE):
                    # At least a second after the first spawn: two requests for one child id
                    # at one instant are not a re-run (the first has no outcome yet).
                    at = child.spawn_at_ms + 1000 * (1 + world.chooser.choose(
                        "workload:rerun-early", max(1, child.run_ms // 1000 - 1)))
                drawn.append(attrs.evolve(rerun, spawn_at_ms=at))
                trees.add(drawn[-1])
    return drawn
