"""The shrinker's machinery, under its passes (shrinking/shrink.py lists them): running a
candidate (cached, counted against the budget), judging it smaller, and the edits every pass
builds on.

A candidate is a :class:`~sim.scenario.Scenario` whose ``replay`` holds the choices; its lists
are cached without their trailing zeros (past a list's end every choice is 0 anyway, so an edit
inside the zeros is the run already made and costs nothing), and the passes edit those stripped
lists, so none spends runs walking a tail of zeros.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

import attrs

from sim.choices import Span
from sim.explore.reaches import ProbeTally
from sim.explore.streams import Streams, _replace, _stream, _total, _without_trailing_zeros
from sim.explore.streams import streams_of as streams_of
from sim.scenario import Scenario
from sim.world import core as world

# How far a structural deletion may move a choice earlier to keep it on its target.
MAX_SHIFT = 16
# How many leading choices of a list a deep structural deletion tries deleting with it.
MAX_COMPANION = 24
# The harness names a nested child's requester session after its parent (DEL-4).
_SUBAGENT = ":subagent:"


class BudgetSpent(Exception):
    pass


@attrs.frozen
class Outcome:
    """One candidate's run, as the shrinker sees it."""

    interesting: bool
    records: int
    invariants: tuple[str, ...]  # distinct invariants violated, in the order found
    streams: Streams  # the choices the run actually made (clamped, cut at its end)
    spans: tuple[Span, ...]
    message: str  # the target violation's message, when interesting
    requirement: str
    probes: tuple[str, ...] = ()  # the code probes the run hit, in the order first hit
    # (child, parent) of each child the run spawned under another child, in spawn order.
    parents: tuple[tuple[str, str], ...] = ()


def structure(scenario: Scenario) -> tuple[int, ...]:
    """The scripted part of a candidate's size: fewer and earlier things are smaller (the
    run's end and heal last: a shorter run that records as much is still easier to read)."""
    workload = scenario.workload.children if scenario.workload is not None else 0
    times = (sum(c.spawn_at_ms for c in scenario.children)
             + sum(e.at_ms + e.delay_ms + (e.restart_after_ms or 0) for e in scenario.timeline))
    return (len(scenario.children), workload, len(scenario.timeline), len(scenario.faults.kinds),
            times, scenario.until_ms, scenario.faults.heal_at_ms)


def _parents(trace: Sequence[Any]) -> tuple[tuple[str, str], ...]:
    out = []
    for record in trace:
        if record.kind == "world.spawn" and _SUBAGENT in record.data.get("requester", ""):
            out.append((record.data["child"], record.data["requester"].rsplit(":", 1)[1]))
    return tuple(out)


class ShrinkerCore:
    def __init__(self, target: str, max_runs: int) -> None:
        self.target = target
        self.max_runs = max_runs
        self.runs = 0
        self.crashes = 0
        self.first_crash: str | None = None
        self._cache: dict[Scenario, Outcome] = {}
        self.tally = ProbeTally()  # what [expect] reaches is chosen from
        self.best: Scenario
        self.best_outcome: Outcome
        self.deep = False  # the costly edits (see :meth:`_drop`) only once the cheap ones stall

    # -- running candidates ----------------------------------------------------------------------

    def run(self, candidate: Scenario) -> Outcome:
        if candidate.replay is not None:
            candidate = attrs.evolve(candidate, replay=_without_trailing_zeros(candidate.replay))
        cached = self._cache.get(candidate)
        if cached is not None:
            return cached
        if self.runs >= self.max_runs:
            raise BudgetSpent
        self.runs += 1
        try:
            result = world.run(candidate)
        except Exception as exc:  # not the same failure, but a finding: counted, reported
            self.crashes += 1
            if self.first_crash is None:
                self.first_crash = f"{type(exc).__name__}: {exc}"
            outcome = Outcome(False, 0, (), (), (), "", "")
        else:
            hits = [v for v in result.violations if v.invariant == self.target]
            outcome = Outcome(
                interesting=bool(hits), records=len(result.trace),
                invariants=tuple(dict.fromkeys(v.invariant for v in result.violations)),
                streams=streams_of(result.schedule),
                spans=tuple(result.spans), message=hits[0].message if hits else "",
                requirement=hits[0].requirement if hits else "", probes=tuple(result.probes),
                parents=_parents(result.trace.records))
            self.tally.count(outcome.interesting, outcome.probes)
        self._cache[candidate] = outcome
        return outcome

    def _key(self, scenario: Scenario, outcome: Outcome) -> tuple[object, ...]:
        return (outcome.records, len(outcome.invariants), _total(outcome.streams),
                tuple(sorted(outcome.streams)), structure(scenario))

    def consider(self, candidate: Scenario) -> bool:
        """Run ``candidate``; keep it, with the choices it really made, if it fails smaller."""
        outcome = self.run(candidate)
        if not outcome.interesting:
            return False
        normal = attrs.evolve(candidate, replay=outcome.streams)
        if self._key(normal, outcome) >= self._key(self.best, self.best_outcome):
            return False
        self.best, self.best_outcome = normal, outcome
        return True

    # -- edits -----------------------------------------------------------------------------------

    @property
    def streams(self) -> Streams:
        """The best run's choices as the passes edit them (without trailing zeros)."""
        return _without_trailing_zeros(self.best_outcome.streams)

    def with_streams(self, streams: Streams, **changes: Any) -> bool:
        return self.consider(attrs.evolve(self.best, replay=streams, **changes))

    def with_stream(self, name: str, values: Sequence[int]) -> bool:
        return self.with_streams(_replace(self.streams, name, values))

    def stream(self, name: str) -> tuple[int, ...]:
        return _stream(self.streams, name)

    def names(self) -> list[str]:
        return [name for name, _ in self.streams]

    def _drop(self, streams: Streams, kept: Collection[str] = (), **changes: Any) -> bool:
        """Try a structural deletion; if it fails, mend it in the lists it kept whole
        (``kept``) that the failed run read a different number of choices from than the best
        run did: some of their choices were drawn about what was deleted, outside its span (the
        chance that a dropped child opened a turn of its own, a share of the opportunities before
        the fault that mattered). In each: move its first non-default choice earlier, then
        delete one of its first :data:`MAX_COMPANION` choices. Deep (:attr:`deep`, once the
        cheap passes stall): every list in ``kept`` that has a non-default choice."""
        streams = _without_trailing_zeros(streams)
        if self.with_streams(streams, **changes):
            return True
        plain = self.run(attrs.evolve(self.best, replay=streams, **changes))
        made = self.best_outcome.streams
        moved = [name for name, _ in streams if name in kept and
                 len(_stream(plain.streams, name)) != len(_stream(made, name))]
        mend = list(dict.fromkeys(moved + [name for name, _ in streams
                                           if self.deep and name in kept]))
        for name in mend:
            values = _stream(streams, name)
            first = next((k for k, v in enumerate(values) if v), 0)
            tries = [values[:first - k] + values[first:]
                     for k in range(1, min(first, MAX_SHIFT) + 1)]
            tries += [values[:j] + values[j + 1:] for j in range(min(len(values), MAX_COMPANION))
                      if j == 0 or values[j] != values[j - 1]]  # of two equal neighbours, one
            for values in dict.fromkeys(tries):
                if self.with_streams(_replace(streams, name, values), **changes):
                    return True
        return False

    @staticmethod
    def minimize(value: int, attempt: Callable[[int], bool], unit: int = 1,
                 floor: int = 0) -> bool:
        """Binary search for a smaller value ``attempt`` accepts (``floor`` first), in steps
        of ``unit`` when ``value`` is a multiple of it."""
        if value <= floor:
            return False
        if attempt(floor):
            return True
        if value % unit or floor % unit:
            unit = 1
        lo, hi, improved = floor // unit, value // unit, False  # lo fails, hi is accepted
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if attempt(mid * unit):
                hi, improved = mid, True
            else:
                lo = mid
        return improved
