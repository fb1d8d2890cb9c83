"""Aimed draws: the default world's reach into corners that its plain draws hit only by luck.

Each corner here needs two things to coincide (a stream error in a step after a retried attempt;
a deletion of a nested session while a completion travels to it; a ``/new`` while a batch wake
travels; a run that waited for its session and then finds the lane full; an abort while a run
waits for its session). Drawn independently they meet in a handful of seeds in 2,000 and in none
of the first 200, so a bug there goes unseen by a short sweep. Each aim is a small probability on
its own Chooser subsystem (so the other draws keep still where they can). Each aim needs the
fault kinds of its corner on in the seed (``--faults`` narrows them), except the transit delay
an aim arms for the message it races (as sim/world/draws/private.py's aimed reset does): a race
against a message needs the message in flight. Issue 12; docs/scenarios.md "Aimed draws".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from actors.messages import ChildSpec, StepSpec
from actors.nesting.spawn_limits import SpawnLimits
from actors.states import StepFinish
from actors.yields.turns import TurnEnd, turn_run_id
from sim.choices import Chooser
from sim.faults.errors import OTHER_ERRORS, TRANSIENT_ERRORS
from sim.faults.kinds import FaultKind
from sim.faults.plan import (
    OUTAGE_MINUTES,
    ArmedFault,
    FaultPlan,
    TimelineEvent,
)
from sim.replies import big_answer
from sim.scenario import nested_requester
from sim.scenario.turns import LifecycleDef, TurnDef
from sim.world.draws.private import ResetRace, refused
from sim.world.draws.trees import TreeBook

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
FINDINGS_ROWS_SHARE = 0.2
STALE_ROW_SHARE = 0.6
# The aimed findings: the run lasts this long at least; a stale row's child ends this long
# (40 s and up to two minutes more) after the run, past its session's second run's spawn.
FINDINGS_PARENT_MIN_MS = 6000
STALE_CHILD_AFTER_S = (40, 300)
FINDINGS_MIN_LANE = 6
# Of drawn children that owe a public completion, the share an operator redrives while its
# delivery is paused in the registry's backoff (its first four tries refused, transiently:
# ``delivery.redrive-paused``) or once it failed (its first send refused for good:
# ``delivery.redrive-failed``; after its correction, if it corrects:
# ``delivery.redrive-corrected-payload``). The four tries go at 0, 5, 15 and 35 s after the
# end, the next attempt some 15 s later.
OPERATOR_AIM_SHARE = 0.06
PAUSED_AT_S = (36, 48)
FAILED_AFTER_S = (2, 60)
# Of the children whose stream breaks (child-error) and that owe a public completion, the share
# an operator redrives once its first send was refused for good (it fails: an error run).
OPERATOR_FAILED_SHARE = 0.5
# Of drawn children, the share whose first acknowledgement comes back past the 120 s announce
# timeout (``delivery.late-ack``); of those that correct their answer, a larger share: the ack of
# the first generation then arrives after the correction reopened it
# (``delivery.older-generation-ack``).
SLOW_ACK_SHARE = 0.1
SLOW_ACK_CORRECTED_SHARE = 0.3
SLOW_ACK_LATE_S = 4  # an uncorrected child's slow ack: 121 to 124 s
# The share of seeds where the last child to end of a turn that finishes (one that runs long
# enough) spawns a child whose correction is still being delivered when it settles: the turn's
# wave then waits for that descendant (``wave.descendants-pending``). The descendant ends this
# long before its parent.
WAVE_DESCENDANT_SHARE = 0.8
WAVE_DESCENDANT_BEFORE_S = (20, 40)
# The share of seeds (with a yielded batch member that should end after its yield) where that
# member answers past the 160,000-character cap, so the batch's wake cuts it
# (``batch.findings-truncated``).
BIG_FINDING_SHARE = 0.05
# Of nested children of a top-level run, the share whose completion is refused (transiently) its
# first STUCK_SENDS times, minutes on end: a yielded batch holding that run waits for it, its
# deferrals counted, and closes at the limit (``batch.deferral-limit``).
STUCK_DESCENDANT_SHARE = 0.2
STUCK_SENDS = 24
# The share of seeds with send-outage on but no outage drawn that get the longest outage, from
# the first minutes on: runs' 30-minute expiries, backoffs run past them, batch wakes out of
# attempts or deferrals (``delivery.expiry``, ``batch.attempts-exhausted``, ...).
LONG_OUTAGE_SHARE = 0.05
LONG_OUTAGE_START_S = 300


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
        # 31 s after the end, sim/world/draws/tree.py), its timeout dropped so it does.
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


def operator_aim(chooser: Chooser, plan: FaultPlan, child: ChildSpec) -> int | None:
    """When an aimed operator redrives ``child`` (None: not aimed); arms the refusals that
    pause or fail its delivery (only when the seed turns those refusals on)."""
    sub = "aim:operator"
    if child.completion_target is not None or not child.expects_completion or \
            not chooser.chance(sub, OPERATOR_AIM_SHARE):
        return None
    end_ms = child.spawn_at_ms + child.run_ms
    if chooser.chance(sub, 0.5):
        if FaultKind.SEND_TRANSIENT not in plan.rates:
            return None
        plan.armed.append(ArmedFault(TimelineEvent(0, FaultKind.SEND_TRANSIENT, child=child.id),
                                     4))
        low, high = PAUSED_AT_S
        return end_ms + 1000 * (low + chooser.choose(sub, high - low + 1))
    if FaultKind.SEND_PERMANENT not in plan.rates:
        return None
    plan.armed.append(ArmedFault(TimelineEvent(0, FaultKind.SEND_PERMANENT, child=child.id), 1))
    low, high = FAILED_AFTER_S
    return end_ms + (child.correction_after_ms or 0) + 1000 * (
        low + chooser.choose(sub, high - low + 1))


def operator_aim_failed(chooser: Chooser, plan: FaultPlan, child: ChildSpec) -> int | None:
    """When an aimed operator redrives ``child``, a run whose stream breaks, once its delivery
    failed (None: not aimed): its first send is refused for good, so it fails, not suspends
    (``delivery.redrive-failed``). Killed runs fed this corner until a kill became silent
    (reference §c18); a stream of its own, so the other draws do not move."""
    sub = "aim:operator-failed"
    if child.error is None or child.completion_target is not None \
            or not child.expects_completion or FaultKind.SEND_PERMANENT not in plan.rates \
            or not chooser.chance(sub, OPERATOR_FAILED_SHARE):
        return None
    plan.armed.append(ArmedFault(TimelineEvent(0, FaultKind.SEND_PERMANENT, child=child.id), 1))
    low, high = FAILED_AFTER_S
    return child.spawn_at_ms + child.run_ms + 1000 * (low + chooser.choose(sub, high - low + 1))


def slow_ack(chooser: Chooser, plan: FaultPlan, child: ChildSpec) -> None:
    """Maybe (ack-slow on) ``child``'s first acknowledgement comes back late."""
    share = SLOW_ACK_SHARE if child.correction_after_ms is None else SLOW_ACK_CORRECTED_SHARE
    if FaultKind.ACK_SLOW in plan.rates and chooser.chance("aim:slow-ack", share):
        # Without a correction: inside the 5 s wait before the timed-out send's next try, so
        # the ack lands while none is awaited (a reset kills some children this would have
        # slowed, reference §c17, so each aimed one must count).
        delay_ms = 0 if child.correction_after_ms is not None else \
            1000 * (121 + chooser.choose("aim:slow-ack", SLOW_ACK_LATE_S))
        plan.armed.append(ArmedFault(TimelineEvent(0, FaultKind.ACK_SLOW, child=child.id,
                                                   delay_ms=delay_ms), 1))


def wave_descendant(chooser: Chooser, plan: FaultPlan, limits: SpawnLimits,
                    children: Sequence[ChildSpec], turns: Sequence[TurnDef],
                    draw: Callable[[str, int], ChildSpec]
                    ) -> tuple[list[ChildSpec], TimelineEvent | None]:
    """``children``, maybe with a child ``draw``n (under the id and index given) for the last
    child to end of a turn that finishes by then: it ends a while before its parent, then
    corrects its answer just before its parent ends, the correction's acknowledgement slow (the
    armed ``ack-slow`` returned), so its newer generation is still open when its parent
    settles. Only with ack-slow on."""
    sub = "aim:wave-descendant"
    if FaultKind.ACK_SLOW not in plan.rates or not _at_least(limits.max_spawn_depth, 2) or \
            not chooser.chance(sub, WAVE_DESCENDANT_SHARE):
        return list(children), None
    finish = {(t.session, t.id): t.end_ms for t in turns
              if t.ends is TurnEnd.FINISH and t.end_ms is not None}
    ids = [c.id for c in children]
    # Its turn's other children should be done by its end (a wave waits for its every member).
    last_end: dict[tuple[str, str | None], list[int]] = {}
    for c in children:
        if c.parent is None:
            last_end.setdefault((c.requester, c.turn), []).append(c.spawn_at_ms + c.run_ms)
    low, high = WAVE_DESCENDANT_BEFORE_S
    candidates = [n for n, c in enumerate(children) if c.parent is None and c.turn is not None
                  and c.completion_target is None and c.expects_completion
                  and c.run_ms >= 1000 * (high + 5) and ids.count(c.id) == 1
                  and f"{c.id}d" not in ids
                  and (finish.get((c.requester, c.turn)) or 2**62) <= c.spawn_at_ms + c.run_ms
                  and max(last_end[(c.requester, c.turn)]) == c.spawn_at_ms + c.run_ms]
    if not candidates:
        return list(children), None
    n = candidates[chooser.choose(sub, len(candidates))]
    parent = children[n]
    parent_end = parent.spawn_at_ms + parent.run_ms
    before_s = low + chooser.choose(sub, high - low + 1)
    end_ms = parent_end - 1000 * before_s
    drawn = draw(f"{parent.id}d", n)
    spawn_ms = parent.spawn_at_ms + 1000
    per_step = max(1, (end_ms - spawn_ms) // len(drawn.steps))
    # Corrected from two seconds after its end to five seconds before its parent's end.
    correction_ms = 1000 * (2 + chooser.choose(sub, before_s - 6))
    descendant = attrs.evolve(drawn, parent=parent.id, requester=nested_requester(parent),
                              spawn_at_ms=spawn_ms, session=None, timeout_ms=None,
                              expects_completion=True, correction_after_ms=correction_ms,
                              error=None, answer_lost=False,  # it answers, so it corrects
                              steps=tuple(attrs.evolve(s, duration_ms=per_step,
                                                       finish=StepFinish.AUTO)
                                          for s in drawn.steps))
    slow = TimelineEvent(spawn_ms + descendant.run_ms + 1000, FaultKind.ACK_SLOW,
                         child=descendant.id)
    return [*children, descendant], slow


def big_finding(chooser: Chooser, children: Sequence[ChildSpec], turns: Sequence[TurnDef]
                ) -> list[ChildSpec]:
    """``children``, maybe one member of a yielded batch (that should end after the yield)
    answering past the cap."""
    sub = "aim:big-finding"
    if not chooser.chance(sub, BIG_FINDING_SHARE):
        return list(children)
    yields = {(t.session, t.id): t.end_ms for t in turns
              if t.ends is TurnEnd.YIELD and t.end_ms is not None}
    members = [n for n, c in enumerate(children) if c.turn is not None and c.expects_completion
               and c.completion_target is None and c.error is None
               and c.spawn_at_ms + c.run_ms > (yields.get((c.requester, c.turn)) or 2**62)]
    if not members:
        return list(children)
    n = members[chooser.choose(sub, len(members))]
    child = children[n]
    last = child.steps[-1]
    text = big_answer(chooser, sub, child.id, last.text)
    big = attrs.evolve(child, steps=(*child.steps[:-1], attrs.evolve(last, text=text)))
    return [*children[:n], big, *children[n + 1:]]


def long_outage(chooser: Chooser, plan: FaultPlan) -> None:
    """Maybe (send-outage on, none drawn) the longest outage, early in the seed."""
    sub = "aim:long-outage"
    if FaultKind.SEND_OUTAGE not in plan.rates or plan.outage is not None or \
            not chooser.chance(sub, LONG_OUTAGE_SHARE):
        return
    start = 1000 * chooser.choose(sub, LONG_OUTAGE_START_S + 1)
    errors = TRANSIENT_ERRORS + OTHER_ERRORS
    plan.outage = (start, start + 60_000 * OUTAGE_MINUTES[-1],
                   errors[chooser.choose(sub, len(errors))])


def stuck_descendant(chooser: Chooser, plan: FaultPlan, child: ChildSpec, trees: TreeBook
                     ) -> None:
    """Maybe (send-transient on) the completion of ``child``, spawned by a top-level run, is
    refused for minutes."""
    parents = trees.specs_of(child.parent) if child.parent is not None else []
    if not parents or parents[0].parent is not None or not child.expects_completion or \
            FaultKind.SEND_TRANSIENT not in plan.rates or \
            not chooser.chance("aim:stuck-descendant", STUCK_DESCENDANT_SHARE):
        return
    plan.armed.append(ArmedFault(TimelineEvent(0, FaultKind.SEND_TRANSIENT, child=child.id),
                                 STUCK_SENDS))
