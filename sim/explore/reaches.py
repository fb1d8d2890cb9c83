"""Which moments a shrunk failure's saved file says its run must reach (``[expect] reaches``).

A saved run replays recorded choices; a later change to the world's draws or the model can move
that replay off the timeline it was saved for, and a file that expects no violation (a fixed bug,
an oracle false positive) would then pass without testing anything. So the file names a few code
probes (actors/probes.py) its run hits, and ``handoff run`` fails it when one is not reached
(sim/expect.py).

The rule, deterministic and free (it reads only runs the shrinker made anyway): of the probes
that every failing run the shrinker saw hit (the original's replay and every candidate that
still failed; the saved run is one of them, so it reaches them all), those the fewest passing
candidates hit come first, ties in the order the saved run first hit them; at most
:data:`MAX_REACHES`. When no probe survived every failing run (a run shrunk to a few records
may share none with the original), the saved run's own probes, ranked the same way. A probe
every run hits, failing or not, says nothing of this timeline; one that only the failing runs
hit marks it. Shrinking does not steer by them: the set is what
survived every step, never a wish the saved run might miss.
"""

from __future__ import annotations

from collections.abc import Sequence

# A few moments that mark the timeline, short enough for a reader to check against the trace.
MAX_REACHES = 3


class ProbeTally:
    """Probe hits of a shrinker's runs, failing and passing."""

    def __init__(self) -> None:
        # Probes every failing run hit, in the first one's order (None: no failing run yet).
        self._always: dict[str, None] | None = None
        self._passing: dict[str, int] = {}  # probe -> passing runs that hit it

    def count(self, failing: bool, probes: Sequence[str]) -> None:
        if not failing:
            for name in probes:
                self._passing[name] = self._passing.get(name, 0) + 1
        elif self._always is None:
            self._always = dict.fromkeys(probes)
        else:
            self._always = {name: None for name in self._always if name in probes}

    def reaches(self, saved: Sequence[str]) -> tuple[str, ...]:
        """The moments the saved run (its probes ``saved``, in first-hit order) must reach."""
        always = self._always or {}
        # A run shrunk far enough can share no probe with every failing run before it (the
        # original's big run hit others): then its own probes, ranked the same way.
        order = [name for name in saved if name in always]
        if not order and self._always is not None:
            order = list(saved)
        ranked = sorted(enumerate(order), key=lambda at: (self._passing.get(at[1], 0), at[0]))
        return tuple(name for _, name in ranked[:MAX_REACHES])
