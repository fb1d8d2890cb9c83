"""Draws of a run's lifecycle from outside (reference §c18), each on a stream of its own so the
other draws do not move.

Kills that come after the run should have ended: the seeded ``abort`` fault mostly kills running
runs; a kill of an ended run must change nothing, and the interesting one is a kill while the
run's completion is still in flight (retried, delayed, or waiting for descendants), so a share of
children gets a kill aimed just past its planned end.

Run timeouts: a share of spawns ask a ``runTimeoutSeconds``, mostly inside the run (so it ends
``timeout`` at the floored deadline), often with a fraction of a second (which the deadline
floors away), now and then 0 (no deadline).

Gateway restarts: now and then the Gateway restarts while a drawn child should run: every
streaming run is interrupted, resumed when it is back, a share of them with their context lost.

Steers: a share of children is steered while it should run (now and then after its end, which
steers nothing): its run is aborted unannounced and a replacement run answers in its session.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from actors.messages import ChildSpec
from sim.choices import Chooser
from sim.faults.plan import FaultPlan
from sim.world.restart import RESTART_STREAM, RestartDesk

# Of the children drawn while kills are on, the share that also gets a kill after its end.
KILL_ENDED_SHARE = 0.3
# How long after the planned end that kill comes, at most (seconds): inside the first backoff
# steps and delays, while a completion is often still pending.
KILL_ENDED_WITHIN_S = 40


def kill_after_end(chooser: Chooser, plan: FaultPlan, child: ChildSpec) -> int | None:
    """When to kill ``child`` after its planned end (None: not aimed)."""
    if "abort" not in plan.rates or not chooser.chance("aim:kill-ended", KILL_ENDED_SHARE):
        return None
    return child.spawn_at_ms + child.run_ms + 1000 * chooser.choose("aim:kill-ended",
                                                                    KILL_ENDED_WITHIN_S)


# Of drawn children, the share whose spawn asks a runTimeoutSeconds; of those, the share asking 0.
RUN_TIMEOUT_SHARE = 0.12
RUN_TIMEOUT_ZERO_SHARE = 0.1
# The fraction of a second added to the whole seconds asked (ms): none, a half, nine tenths.
RUN_TIMEOUT_FRACTIONS_MS = (0, 500, 900)


def draw_run_timeout(chooser: Chooser, child: ChildSpec) -> ChildSpec:
    """``child``, maybe with a runTimeoutSeconds on its spawn: whole seconds from 1 to its
    planned run (a run that lasts longer ends ``timeout``), plus a drawn fraction."""
    sub = "aim:run-timeout"
    if child.correction_after_ms is not None or child.receipts:
        return child  # it must end ok to correct its answer (DEL-12): the aim is elsewhere
    if not chooser.chance(sub, RUN_TIMEOUT_SHARE):
        return child
    if chooser.chance(sub, RUN_TIMEOUT_ZERO_SHARE):
        return attrs.evolve(child, run_timeout_ms=0)
    whole_s = 1 + chooser.choose(sub, max(1, child.run_ms // 1000))
    fraction = RUN_TIMEOUT_FRACTIONS_MS[chooser.choose(sub, len(RUN_TIMEOUT_FRACTIONS_MS))]
    return attrs.evolve(child, run_timeout_ms=1000 * whole_s + fraction)


# The replacement's answer when a steer names none.
STEERED_REPLY = "{child}: the steered answer."
# Of drawn top-level children (public ones: a private result's replacement is not modelled, nor
# whose findings a nested child's replacement joins: docs/fidelity.md), the share steered; when,
# in seconds after the spawn (up to the planned run and a little past it); how long the
# replacement runs, in seconds.
STEER_SHARE = 0.08
STEER_PAST_END_S = 10
STEER_RUN_S = (5, 90)


def draw_steer(chooser: Chooser, child: ChildSpec) -> tuple[int, int] | None:
    """When to steer ``child`` and how long its replacement runs (ms), or None."""
    sub = "aim:steer"
    if child.completion_target is not None or child.parent is not None \
            or not chooser.chance(sub, STEER_SHARE):
        return None
    at_ms = child.spawn_at_ms + 1000 * chooser.choose(
        sub, child.run_ms // 1000 + STEER_PAST_END_S)
    low, high = STEER_RUN_S
    return at_ms, 1000 * (low + chooser.choose(sub, high - low + 1))


# Retention (reference §c18): a suspended result is kept 7 days from its suspension. Of drawn
# children, the share an operator redrives about 7 days after its end, in a span around that
# mark (seconds): a result suspended soon after its end (a refusal) has expired by then; one
# suspended by its 30-minute expiry has not yet.
LATE_REDRIVE_SHARE = 0.1
LATE_REDRIVE_AROUND_S = (-2400, 3600)
WEEK_S = 7 * 24 * 3600


def late_redrive(chooser: Chooser, child: ChildSpec) -> int | None:
    """When an operator redrives ``child`` about a week after its end (None: not drawn)."""
    sub = "aim:retention"
    if not chooser.chance(sub, LATE_REDRIVE_SHARE):
        return None
    low, high = LATE_REDRIVE_AROUND_S
    ends_ms = child.spawn_at_ms + child.run_ms + (child.correction_after_ms or 0)
    return ends_ms + 1000 * (WEEK_S + low + chooser.choose(sub, high - low + 1))


# Cleanup modes (reference §c18): of drawn children, the share spawned with cleanup "delete"
# (archived by the registry's sweeper at its end + the world's archiveAfterMinutes, once its
# completion resolved); of those, the share whose session is read with sessions_history a little
# after that deadline (seconds after it), when the live session should be gone.
DELETE_SHARE = 0.3
READ_AFTER_ARCHIVE_SHARE = 0.5
READ_AFTER_ARCHIVE_S = (1, 900)


def draw_cleanup(chooser: Chooser, child: ChildSpec, archive_after_minutes: int
                 ) -> tuple[ChildSpec, int | None]:
    """``child``, maybe spawned with cleanup "delete", and when to read its session after its
    archive deadline (None: no read)."""
    sub = "aim:cleanup"
    if not chooser.chance(sub, DELETE_SHARE):
        return child, None
    child = attrs.evolve(child, cleanup="delete")
    if not archive_after_minutes or not chooser.chance(sub, READ_AFTER_ARCHIVE_SHARE):
        return child, None
    low, high = READ_AFTER_ARCHIVE_S
    ends_ms = child.spawn_at_ms + child.run_ms + (child.correction_after_ms or 0)
    return child, ends_ms + 60_000 * archive_after_minutes + 1000 * (
        low + chooser.choose(sub, high - low + 1))


# Gateway restarts (reference §c18): of worlds whose seeded faults include crashes, the share
# whose Gateway restarts once, while a drawn child should run; how long it stays down (s); of
# the runs it interrupts, the share whose execution context is lost; how many resumed notices
# fail (0, 1 or 2: retried each time).
RESTART_SHARE = 0.3
RESTART_DOWN_S = (1, 30)
RESTART_LOST_SHARE = 0.25
RESTART_NOTICE_FAILS = 3
# The share of restarts aimed within this long (ms) before the drawn child's planned end.
RESTART_NEAR_END_SHARE = 0.4
RESTART_NEAR_END_MS = 5000


def draw_gateway_restart(chooser: Chooser, plan: FaultPlan, children: Sequence[ChildSpec],
                         desk: RestartDesk) -> None:
    """Maybe a Gateway restart, on its own stream (other draws keep still)."""
    if "crash" not in plan.rates or not children \
            or not chooser.chance(RESTART_STREAM, RESTART_SHARE):
        return
    child = children[chooser.choose(RESTART_STREAM, len(children))]
    at_ms = child.spawn_at_ms + chooser.choose(RESTART_STREAM, max(1, child.run_ms))
    if chooser.chance(RESTART_STREAM, RESTART_NEAR_END_SHARE):
        # Just before its end: resumed, it ends soon, often before a failed notice's retry.
        at_ms = max(child.spawn_at_ms, child.spawn_at_ms + child.run_ms
                    - chooser.choose(RESTART_STREAM, RESTART_NEAR_END_MS))
    low, high = RESTART_DOWN_S
    down_ms = 1000 * (low + chooser.choose(RESTART_STREAM, high - low + 1))
    desk.schedule(at_ms, down_ms, notice_fails=chooser.choose(RESTART_STREAM,
                                                              RESTART_NOTICE_FAILS),
                  lost_share=RESTART_LOST_SHARE)
