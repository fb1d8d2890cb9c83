"""Aimed draws of a run's lifecycle from outside (reference §c18): kills that come after the
run should have ended. The seeded ``abort`` fault mostly kills running runs; a kill of an ended
run must change nothing, and the interesting one is a kill while the run's completion is still
in flight (retried, delayed, or waiting for descendants), so a share of children gets a kill
aimed just past its planned end, on a stream of its own (the other draws do not move)."""

from __future__ import annotations

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
