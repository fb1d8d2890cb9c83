"""Aimed draws: the default world's reach into corners that its plain draws hit only by luck.

Each corner here needs two things to coincide (a stream error in a step after a retried attempt;
a deletion of a nested session while a completion travels to it; a ``/new`` while a batch wake
travels; a run that waited for its session and then finds the lane full; an abort while a run
waits for its session). Drawn independently they meet in a handful of seeds in 2,000 and in none
of the first 200, so a bug there goes unseen by a short sweep. Each aim is a small probability on
its own Chooser subsystem (so the other draws keep still where they can). Each aim needs the
fault kinds of its corner on in the seed (``--faults`` narrows them), except the transit delay
an aim arms for the message it races (as sim/world_private.py's aimed reset does): a race
against a message needs the message in flight. Issue 12; docs/scenarios.md "Aimed draws".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from actors.messages import ChildSpec, StepSpec
from actors.spawn_limits import SpawnLimits
from actors.states import StepFinish
from actors.turns import TurnEnd, turn_run_id
from sim.choices import Chooser
from sim.faults import FaultPlan, TimelineEvent
from sim.scenario import nested_requester
from sim.scenario.turns import LifecycleDef, TurnDef
from sim.world_private import ResetRace, refused
from sim.world_trees import TreeBook

# Of children whose stream breaks (child-error) with two steps or more, the share that also had
# an attempt fail and retried in an earlier step (``child.stream-error-after-retry``).
RETRY_BEFORE_ERROR_SHARE = 0.6
# Of children with a failed and retried attempt, the share whose timeout comes right after the
# failure, before the retry streams (``child.timeout-before-retry``; the plain draw aims at it
# only when child-timeout already struck that child).
TIMEOUT_BEFORE_RETRY_SHARE = 0.25
# Of drawn deletions of a nested requester's session, the share timed while its child's
# completion travels to it, the completion held up in transit (``requester.session-gone``).
GONE_IN_TRANSIT_SHARE = 0.6
TRANSIT_DELAY_S = (5, 30)
# The share of seeds (with a yielded batch) where the requester is reset, or deleted, around the
# moment its batch's wake should leave, the wake held up in transit (``batch.reset-during-wake``
# when the reset lands while it travels, ``batch.reset-before-wake`` or
# ``batch.requester-deleted`` when just before).
WAKE_RACE_SHARE = 0.15
WAKE_DELAY_S = (20, 90)
WAKE_RACE_DELETE_SHARE = 0.3
# The share of seeds that run under a lane of two (and the world's other limits): a run that
# waited for its session's earlier run then finds the lane's slots taken
# (``child.lane-queued-after-session``).
NARROW_LANE_SHARE = 0.16
NARROW_LANE = 2
# Of runs spawned into a session whose earlier run should still run (and the abort fault on),
# the share aborted while they wait for it (``child.aborted-in-session-queue``).
ABORT_IN_QUEUE_SHARE = 0.6
# Of nested children of a top-level run that runs once (under limits that let it spawn two and
# a lane that seldom queues it), the share given a short earlier sibling, so that the run's
# findings hold two rows: then either (STALE_ROW_SHARE) the run's session runs again and
# re-spawns the sibling's session while the first run still waits for this child
# (``delivery.findings-stale-row``), or this child reuses the sibling's session
# (``delivery.findings-older-row``).
FINDINGS_ROWS_SHARE = 0.3
STALE_ROW_SHARE = 0.6
# The aimed findings: the run lasts this long at least; a stale row's child ends this long
# (40 s and up to two minutes more) after the run, past its session's second run's spawn.
FINDINGS_PARENT_MIN_MS = 6000
STALE_CHILD_AFTER_S = (40, 160)
FINDINGS_MIN_LANE = 6


def retry_before_error(chooser: Chooser, plan: FaultPlan, steps: list[StepSpec],
                       retried: int | None) -> tuple[list[StepSpec], int | None]:
    """A child whose last step's stream breaks: maybe an earlier step's attempt fails and is
    retried first (when attempt-retry is on). Returns the steps and the retried step."""
    if retried is not None and retried < len(steps) - 1:
        return steps, retried  # already so
    if "attempt-retry" not in plan.rates or len(steps) < 2 or not chooser.chance(
            "aim:retry-before-error", RETRY_BEFORE_ERROR_SHARE):
        return steps, retried
    k = chooser.choose("aim:retry-before-error", len(steps) - 1)
    steps = [*steps[:k], attrs.evolve(steps[k], finish=StepFinish.ERROR), *steps[k + 1:]]
    return steps, k


def timeout_before_retry(chooser: Chooser, plan: FaultPlan, steps: Sequence[StepSpec],
                         retried: int | None, timeout_ms: int | None) -> int | None:
    """A child with a retried attempt and no timeout: maybe (child-timeout on) a timeout that
    comes just after the failed attempt, before its retry streams."""
    if retried is None or timeout_ms is not None or "child-timeout" not in plan.rates or \
            not chooser.chance("aim:timeout-before-retry", TIMEOUT_BEFORE_RETRY_SHARE):
        return timeout_ms
    step_ms = steps[0].duration_ms
    return (retried + 1) * step_ms + 1


def gone_in_transit(chooser: Chooser, parent: ChildSpec, child: ChildSpec, at_ms: int
                    ) -> tuple[int, TimelineEvent | None]:
    """A drawn deletion of ``parent``'s session (the nested requester of ``child``): maybe moved
    to just after ``child`` should end, while its completion is held up on its way (an armed
    delay on its run). Only where the parent's run should be over by then (a session is deleted
    only once its run ended) and a completion is owed."""
    parent_end = parent.spawn_at_ms + parent.run_ms
    child_end = child.spawn_at_ms + child.run_ms
    if not child.expects_completion or child_end < parent_end + 2000 or not chooser.chance(
            "aim:gone-in-transit", GONE_IN_TRANSIT_SHARE):
        return at_ms, None
    low, high = TRANSIT_DELAY_S
    delay_ms = 1000 * (low + chooser.choose("aim:gone-in-transit", high - low + 1))
    at_ms = child_end + 1 + chooser.choose("aim:gone-in-transit", delay_ms - 1)
    return at_ms, TimelineEvent(child.spawn_at_ms, "delay", child=child.id, delay_ms=delay_ms)


def wake_race(chooser: Chooser, children: Sequence[ChildSpec], turns: Sequence[TurnDef],
              lifecycle: Sequence[LifecycleDef]) -> ResetRace:
    """Maybe a ``/new`` (or a delete) of a session around the moment a yielded batch of its
    should wake, its wake held up in transit (an armed delay on the batch's run id, which the
    fault plan matches like a child's). Only for a yield no earlier lifecycle event touched, so
    the harness knows the incarnation (and the batch id) the yield froze."""
    sub = "aim:wake-race"
    if not chooser.chance(sub, WAKE_RACE_SHARE):
        return ResetRace()
    candidates: list[tuple[TurnDef, int, int]] = []
    for turn in turns:
        if turn.ends is not TurnEnd.YIELD or turn.end_ms is None:
            continue
        members = [c for c in children if c.requester == turn.session and c.turn == turn.id
                   and c.expects_completion and not refused(c)]
        events = [e for e in lifecycle if e.session == turn.session]
        if not members or any(turn.start_ms <= e.at_ms <= turn.end_ms for e in events):
            continue
        incarnation = 1 + sum(1 for e in events if e.at_ms < turn.start_ms)
        settle_ms = max([turn.end_ms] + [c.spawn_at_ms + c.run_ms for c in members])
        candidates.append((turn, incarnation, settle_ms))
    if not candidates:
        return ResetRace()
    turn, incarnation, settle_ms = candidates[chooser.choose(sub, len(candidates))]
    low, high = WAKE_DELAY_S
    delay_ms = 1000 * (low + chooser.choose(sub, high - low + 1))
    event = "delete" if chooser.chance(sub, WAKE_RACE_DELETE_SHARE) else "reset"
    # From a little before the batch should settle (a reset just before the wake leaves) to the
    # end of the held-up transit.
    at_ms = max(turn.end_ms or 0, settle_ms - 5000) + chooser.choose(sub, delay_ms + 5000)
    batch = f"batch:{turn_run_id(turn.session, turn.id, incarnation)}"
    return ResetRace((LifecycleDef(at_ms, turn.session, event),),
                     (TimelineEvent(turn.end_ms or 0, "delay", child=batch, delay_ms=delay_ms),))


def narrow_lane(chooser: Chooser, limits: SpawnLimits) -> SpawnLimits:
    """Now and then a lane of two, the world's other limits kept."""
    if not chooser.chance("aim:narrow-lane", NARROW_LANE_SHARE):
        return limits
    lane = limits.max_concurrent
    return attrs.evolve(limits, max_concurrent=NARROW_LANE if lane is None
                        else min(lane, NARROW_LANE))


def abort_in_queue(chooser: Chooser, plan: FaultPlan, child: ChildSpec, trees: TreeBook
                   ) -> int | None:
    """When to abort ``child`` while it waits for its session's earlier run (None: not aimed):
    a top-level child spawned into a reused session whose earlier run should still run."""
    if child.session is None or child.parent is not None or "abort" not in plan.rates:
        return None
    earlier = trees.on_session(child.session)
    if not earlier:
        return None
    free_ms = max(c.spawn_at_ms + c.run_ms for c in earlier)
    if free_ms <= child.spawn_at_ms + 1 or not chooser.chance("aim:abort-in-queue",
                                                              ABORT_IN_QUEUE_SHARE):
        return None
    return child.spawn_at_ms + 1 + chooser.choose("aim:abort-in-queue",
                                                  free_ms - child.spawn_at_ms - 1)


@attrs.frozen
class FindingsAim:
    """``child`` as aimed, the sibling to spawn before it (None: not aimed), and the share of the
    stale re-run draw for it (None: the plain draw's)."""

    child: ChildSpec
    sibling: ChildSpec | None = None
    rerun_share: float | None = None


def findings_rows(chooser: Chooser, limits: SpawnLimits, child: ChildSpec, trees: TreeBook,
                  draw: Callable[[str], ChildSpec]) -> FindingsAim:
    """Maybe a short sibling (``draw``n under the id given) for the nested ``child`` of a
    top-level run, and ``child`` moved to make a stale or an older row of the run's findings.
    Plain draws need two nested children of one run, the right one ending first: a few seeds
    in 2,000."""
    sub = "aim:findings-rows"
    specs = trees.specs_of(child.parent) if child.parent is not None else []
    if len(specs) != 1 or specs[0].parent is not None:
        return FindingsAim(child)
    parent = specs[0]
    if (parent.run_ms < FINDINGS_PARENT_MIN_MS or not _at_least(limits.max_spawn_depth, 2)
            or not _at_least(limits.max_children_per_agent, 3)
            or not _at_least(limits.max_concurrent, FINDINGS_MIN_LANE)
            or len(trees.on_session(parent.session or parent.id)) != 1
            or not chooser.chance(sub, FINDINGS_ROWS_SHARE)):
        return FindingsAim(child)
    parent_end = parent.spawn_at_ms + parent.run_ms
    # The sibling: spawned a second into the run, done at least three seconds before it ends.
    spawn_ms = parent.spawn_at_ms + 1000
    run_ms = 1000 * (1 + chooser.choose(sub, (parent_end - 3000 - spawn_ms) // 1000))
    drawn = draw(f"{child.id}a")
    per_step = max(1, run_ms // len(drawn.steps))
    sibling = attrs.evolve(drawn, parent=parent.id, requester=nested_requester(parent),
                           spawn_at_ms=spawn_ms, session=None, timeout_ms=None,
                           steps=tuple(attrs.evolve(s, duration_ms=per_step)
                                       for s in drawn.steps))
    if chooser.chance(sub, STALE_ROW_SHARE):
        # Still running well after the run ends, past its session's second run's spawn (up to
        # 31 s after the end, sim/world_tree.py), its timeout dropped so it does.
        low, high = STALE_CHILD_AFTER_S
        end_ms = parent_end + 1000 * (low + chooser.choose(sub, high - low + 1))
        if child.spawn_at_ms + child.run_ms < end_ms:
            last = child.steps[-1]
            child = attrs.evolve(child, timeout_ms=None, steps=(*child.steps[:-1], attrs.evolve(
                last, duration_ms=last.duration_ms + end_ms - child.spawn_at_ms
                - child.run_ms)))
        return FindingsAim(child, sibling, 1.0)
    # A later run of the sibling's session, spawned by the same run once the sibling is done.
    sibling_end = spawn_ms + sibling.run_ms
    return FindingsAim(attrs.evolve(child, session=sibling.id,
                                    spawn_at_ms=max(child.spawn_at_ms, sibling_end + 1000)),
                       sibling, 0.0)


def _at_least(limit: int | None, n: int) -> bool:
    return limit is None or limit >= n  # None: no limit
