"""Swarm over features (TigerBeetle's VOPR swarm testing, Groce et al. 2012): each run of a
world whose ``[workload]`` says ``swarm = true`` draws which of the world's features are on and
how many of its children it runs, as the fault plan draws which fault kinds are on.

Why: a feature that is always on can mask a bug (a yield that wakes the requester early hides a
late delivery; chunked sends hide a whole-message path), and every feature costs steps in every
run. With each feature off in about half the runs, a bug that needs only a few features shows up
in runs without the rest, which are cheaper. Each feature is one recorded choice on its own
stream (``swarm:feature:NAME``; index 1 is on), so the draw is part of the run's schedule,
``replay`` shows it (the ``world.start`` record's ``features``), and the shrinker, which moves
choices toward 0, turns features off. A world without the swarm runs every feature, every child.
"""

from __future__ import annotations

import attrs

from sim.choices import Chooser

# The features a run may turn off, each with what it stands for. Order is the draw order.
FEATURES: dict[str, str] = {
    "nesting": "children spawn children (trees, stale re-runs, sessions deleted under them)",
    "turns": "the requester's turns group its children and yield for them (batch wakes, "
             "resets, status checks, message-tool replies)",
    "private": "private completion: spawn options that keep a result out of the channel",
    "chunks": "the requester's channel splits a long completion into chunks",
    "archive": "session keys reused, archived transcripts read, sessions cleaned up",
    "forks": "children forked from their parent's answer or continuing an earlier epoch",
    "reruns": "a child's session spawned again later (a new run id)",
    "routes": "the requester's routing facts drawn (origin, stored route, binding, hook)",
    "limits": "smaller spawn limits drawn (refusals, a busy lane)",
}
# How often each feature is on, and how often a run keeps the workload's full child count
# (otherwise it draws 1..that many). Lower shares (0.5, 0.75) made runs cheaper still but lost
# more than they saved: the built-in mutants and the rare probes need several features and
# children together (measured: benchmarks/README.md). The operator's redrives are not swarmed:
# off in a tenth of the runs, their rarest probe fell below tests/test_probes.py's floor.
FEATURE_SHARE = 0.9
ALL_CHILDREN_SHARE = 0.9


@attrs.frozen
class Features:
    """What one run has on: feature names and how many of the workload's children it draws."""

    on: frozenset[str]
    children: int

    def __contains__(self, name: object) -> bool:
        assert name in FEATURES, name
        return name in self.on

    def names(self) -> list[str]:
        """The features on, in catalogue order (for the trace)."""
        return [name for name in FEATURES if name in self.on]


def every(children: int) -> Features:
    """A world without the swarm: everything on."""
    return Features(frozenset(FEATURES), children)


def draw(chooser: Chooser, children: int) -> Features:
    """The swarm's draw for one run (each choice on its own stream, so one feature's draw never
    shifts another's)."""
    on = frozenset(name for name in FEATURES
                   if chooser.chance(f"swarm:feature:{name}", FEATURE_SHARE))
    count = children
    if children > 1 and not chooser.chance("swarm:children", ALL_CHILDREN_SHARE):
        count = 1 + chooser.choose("swarm:children", children)
    return Features(on, count)
