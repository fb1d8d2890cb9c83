"""Draws of a run's lifecycle from outside (reference §c18), each on a stream of its own so the
other draws do not move.

Kills that come after the run should have ended: the seeded ``abort`` fault mostly kills running
runs; a kill of an ended run must change nothing, and the interesting one is a kill while the
run's completion is still in flight (retried, delayed, or waiting for descendants), so a share of
children gets a kill aimed just past its planned end.

Run timeouts: a share of spawns ask a ``runTimeoutSeconds``, mostly inside the run (so it ends
``timeout`` at the floored deadline), often with a fraction of a second (which the deadline
floors away), now and then 0 (no deadline).
"""

from __future__ import annotations

import attrs

from actors.messages import ChildSpec
from sim.choices import Chooser
from sim.faults.plan import FaultPlan

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
