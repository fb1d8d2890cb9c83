"""Shrinking a failing run to a small one that fails the same invariant (SIM-7).

As Hypothesis shrinks: a run is a function of its choices, so the shrinker edits them and keeps
an edit only if the run it gives still violates the same invariant and is smaller. The choices are
kept as one list per subsystem and followed leniently (sim/choices.py: each choice takes its
subsystem's next value clamped to its range; past the end every choice is 0, the default), so
every edit is a valid run, and an edit to one subsystem's list does not shift another's. Passes,
repeated until none helps or the run budget is spent:

- structure: drop a drawn child whole (its span of choices, the fault choices about it and one
  from ``[workload] children``),
  drop a scripted child (with the timeline entries naming it), drop a timeline entry, drop a fault
  kind (with its choices), bring scripted times (spawns, timeline instants, delays) down, leave
  children of a wide batch out (with the fault choices about them: sim/explore/shrink_wide.py);
- choices, in each subsystem's list: delete blocks of 8, 4, 2 and 1 choices, set blocks to 0,
  lower single values by binary search towards 0.

The saved file also names the moments its run must reach (``[expect] reaches``, chosen by
sim/explore/reaches.py), so a later change that moves the replay off that timeline fails it.

"Smaller" is the order of (trace records, other invariants violated, number of choices, the
choices themselves, the scripted structure): shorter traces first, as a user reads a trace. The
candidate is a :class:`~sim.scenario.Scenario` whose ``replay`` holds the choices, which is exactly
what is saved, so what was checked is what ``handoff run`` runs. No wall clock and no randomness:
the same failure and budget give the same result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from sim.choices import Schedule, Span
from sim.explore.reaches import ProbeTally
from sim.explore.shrink_wide import WIDE_BLOCKS, about, cut, kept_slots, without_wide
from sim.explore.streams import Streams as Streams
from sim.explore.streams import _replace, _stream, _total, _without_trailing_zeros
from sim.explore.streams import streams_of as streams_of
from sim.scenario import _REQUIREMENT_ID, Expectation, Scenario, loads
from sim.scenario.write import dumps
from sim.world import core as world
from sim.world.draws.workload import CHILD_SPAN

DEFAULT_MAX_RUNS = 2_000
BLOCK_SIZES = (8, 4, 2, 1)
# Scripted times are lowered in whole seconds when they are whole seconds: a saved scenario reads
# "at = 12", not "at = 12.207".
SECOND = 1000
# How far a structural deletion may move a choice earlier to keep it on its target.
MAX_SHIFT = 16


class NothingToShrink(Exception):
    """The run does not violate the invariant it was asked to shrink."""


class NotReproduced(Exception):
    """Following the run's own choices did not fail the same way: the failure is flaky."""


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


@attrs.frozen
class Shrunk:
    scenario: Scenario  # ready to save: replay choices, expectations, provenance
    invariant: str
    requirement: str
    message: str
    original_records: int
    records: int
    original_choices: int
    choices: int
    runs: int  # world runs the shrinker spent (cache hits are free)
    # Candidate runs that raised instead of finishing. Every guided run is a run some seed could
    # make, so each is a model bug in its own right (SIM-10), reported rather than hidden.
    crashes: int = 0
    first_crash: str | None = None


class _BudgetSpent(Exception):
    pass


def shrink(
    scenario: Scenario,
    *,
    seed: int,
    strategy: str | None = None,
    mutants: Sequence[str] | None = None,
    fault_kinds: Sequence[str] | None = None,
    invariant: str | None = None,
    max_runs: int = DEFAULT_MAX_RUNS,
    source: str | None = None,
    replay: Schedule | None = None,
    replay_steps: int | None = None,
) -> Shrunk:
    """Shrink seed ``seed``'s run of ``scenario`` to a small one violating ``invariant``.

    ``invariant`` defaults to the first one the run violates. ``source`` names the world in the
    saved scenario's description. ``replay``/``replay_steps``: the run is a branch of that
    schedule (its configuration then comes from the schedule).
    """
    original = world.run(scenario, seed=seed, strategy=strategy, mutants=mutants,
                         fault_kinds=fault_kinds, replay=replay, replay_steps=replay_steps)
    if replay is not None:
        fault_kinds = replay.fault_kinds
    found = [v.invariant for v in original.violations]
    if not found or (invariant is not None and invariant not in found):
        wanted = invariant or "any invariant"
        raise NothingToShrink(f"seed {seed} does not violate {wanted}"
                              + (f" (it violates {', '.join(dict.fromkeys(found))})"
                                 if found else ""))
    target = invariant or found[0]
    faults = scenario.faults
    if fault_kinds is not None:
        faults = attrs.evolve(faults, kinds=tuple(fault_kinds))
    start = attrs.evolve(
        scenario, seed=seed, strategy=original.strategy, mutants=original.mutants, faults=faults,
        expect=Expectation(), replay=streams_of(original.schedule))
    shrinker = _Shrinker(target, max_runs)
    first = shrinker.run(start)
    if not first.interesting:
        raise NotReproduced(f"seed {seed}: replaying its own {len(original.schedule.choices)} "
                            f"choices did not violate {target} again")
    shrinker.best, shrinker.best_outcome = attrs.evolve(start, replay=first.streams), first
    shrinker.shrink()
    best, outcome = shrinker.best, shrinker.best_outcome
    saved_streams = _without_trailing_zeros(outcome.streams)
    choices = _total(saved_streams)
    saved = attrs.evolve(
        best, replay=saved_streams,
        name=f"shrunk: {target} (seed {seed}{_mutant_words(best.mutants)})",
        description=(
            f"Shrunk by handoff shrink from seed {seed} of {source or scenario.path}"
            f"{_mutant_words(best.mutants)}: {len(original.trace)} trace records -> "
            f"{outcome.records}, {len(original.schedule.choices)} choices -> {choices}. "
            f"{target} ({outcome.requirement}): {outcome.message}"),
        covers=_covers(outcome.requirement, best.mutants),
        # With a known-bug variant on, finding the violation is the regression (as the
        # scenarios/mutant-*.toml); without one it is a bug in the model, and the scenario fails
        # until the bug is fixed, then guards against its return.
        expect=Expectation(violations=outcome.invariants if best.mutants else (),
                           reaches=shrinker.tally.reaches(outcome.probes)),
    )
    # What is saved is checked: the file's text, loaded back, must fail the same way.
    again = world.run(loads(dumps(saved), "<shrunk>"))
    if target not in {v.invariant for v in again.violations}:
        raise NotReproduced(f"seed {seed}: the shrunk scenario did not violate {target} again")
    if any(name not in again.probes for name in saved.expect.reaches):
        raise NotReproduced(f"seed {seed}: the shrunk scenario did not reach "
                            f"{', '.join(saved.expect.reaches)} again")
    return Shrunk(saved, target, outcome.requirement, outcome.message, len(original.trace),
                  outcome.records, len(original.schedule.choices), choices, shrinker.runs,
                  shrinker.crashes, shrinker.first_crash)


def _mutant_words(mutants: Sequence[str]) -> str:
    return f", mutant {', '.join(mutants)}" if mutants else ""


def _covers(requirement: str, mutants: Sequence[str]) -> tuple[str, ...]:
    covers = [requirement] if _REQUIREMENT_ID.match(requirement) else []
    covers.append("SIM-7")
    if mutants:
        covers.append("SIM-8")
    return tuple(covers)


def _structure(scenario: Scenario) -> tuple[int, ...]:
    """The scripted part of a candidate's size: fewer and earlier things are smaller."""
    workload = scenario.workload.children if scenario.workload is not None else 0
    times = (sum(c.spawn_at_ms for c in scenario.children)
             + sum(e.at_ms + e.delay_ms + (e.restart_after_ms or 0) for e in scenario.timeline))
    return (len(scenario.children), workload, len(scenario.timeline), len(scenario.faults.kinds),
            times)


class _Shrinker:
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

    # -- running candidates ----------------------------------------------------------------------

    def run(self, candidate: Scenario) -> Outcome:
        cached = self._cache.get(candidate)
        if cached is not None:
            return cached
        if self.runs >= self.max_runs:
            raise _BudgetSpent
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
                requirement=hits[0].requirement if hits else "", probes=tuple(result.probes))
            self.tally.count(outcome.interesting, outcome.probes)
        self._cache[candidate] = outcome
        return outcome

    def _key(self, scenario: Scenario, outcome: Outcome) -> tuple[object, ...]:
        return (outcome.records, len(outcome.invariants), _total(outcome.streams),
                tuple(sorted(outcome.streams)), _structure(scenario))

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

    def with_streams(self, streams: Streams, **changes: Any) -> bool:
        return self.consider(attrs.evolve(self.best, replay=streams, **changes))

    def with_stream(self, name: str, values: Sequence[int]) -> bool:
        return self.with_streams(_replace(self.best_outcome.streams, name, values))

    def stream(self, name: str) -> tuple[int, ...]:
        return _stream(self.best_outcome.streams, name)

    def names(self) -> list[str]:
        return [name for name, _ in self.best_outcome.streams]

    # -- the passes ----------------------------------------------------------------------------

    def shrink(self) -> None:
        passes: tuple[Callable[[], bool], ...] = (
            self.drop_wide_children, self.drop_drawn_children, self.drop_scripted_children,
            self.drop_timeline_entries, self.drop_fault_kinds, self.drop_channels,
            self.lower_times, self.delete_blocks, self.zero_blocks, self.lower_choices)
        try:
            improved = True
            while improved:
                improved = False
                for one_pass in passes:
                    improved = one_pass() or improved
        except _BudgetSpent:
            pass

    def drop_drawn_children(self) -> bool:
        improved = False
        i = len(self.best_outcome.spans) - 1
        while i >= 0:
            workload = self.best.workload
            spans = [s for s in self.best_outcome.spans if s[0].startswith(CHILD_SPAN)]
            if workload is None or workload.children <= 1:
                break
            if i < len(spans):
                label, ranges = spans[i]
                streams = cut(self.best_outcome.streams, ranges + tuple(about(
                    self.best_outcome.spans, [label.removeprefix(CHILD_SPAN)])))
                fewer = attrs.evolve(workload, children=workload.children - 1)
                improved = self._drop(streams, workload=fewer) or improved
            i -= 1
        return improved

    def drop_wide_children(self) -> bool:
        improved = False
        for size in WIDE_BLOCKS:
            kept = kept_slots(self.best_outcome.streams, self.best_outcome.spans)
            for end in range(len(kept), 0, -size):
                best = self.best_outcome
                block = kept[max(0, end - size):end]
                improved = self.with_streams(without_wide(best.streams, best.spans, block)) \
                    or improved
        return improved

    def drop_channels(self) -> bool:
        """Reach each session by internal injection only: no chunks to record (and no routing
        facts drawn for the workload's requester)."""
        improved = False
        workload = self.best.workload
        if workload is not None and workload.draw_routes:
            improved = self._drop(self.best_outcome.streams,
                                  workload=attrs.evolve(workload, draw_routes=False))
        for i, session in enumerate(self.best.sessions):
            if (session.channel, session.route, session.binding, session.hook) != (None,) * 4:
                sessions = list(self.best.sessions)
                sessions[i] = attrs.evolve(session, channel=None, chunk_chars=None, to=None,
                                           thread=None, route=None, binding=None, hook=None)
                streams = self.best_outcome.streams
                improved = self._drop(streams, sessions=tuple(sessions)) or improved
        return improved

    def _drop(self, streams: Streams, **changes: Any) -> bool:
        """Try a structural deletion; if it fails, try it with each stream's first non-default
        choice moved earlier (a dropped child also took its share of, say, the crash points
        before the one that mattered; the choice that struck there must move with it)."""
        if self.with_streams(streams, **changes):
            return True
        for name, values in streams:
            first = next((k for k, v in enumerate(values) if v), 0)
            for k in range(1, min(first, MAX_SHIFT) + 1):
                if self.with_streams(_replace(streams, name, values[:first - k] + values[first:]),
                                     **changes):
                    return True
        return False

    def drop_scripted_children(self) -> bool:
        improved = False
        for child in reversed(self.best.children):
            best = self.best
            if len(best.children) == 1 and best.workload is None:
                break  # a world needs a child
            if child not in best.children:
                continue
            improved = self._drop(
                self.best_outcome.streams,
                children=tuple(c for c in best.children if c is not child),
                timeline=tuple(e for e in best.timeline if e.child != child.id)) or improved
        return improved

    def drop_timeline_entries(self) -> bool:
        improved = False
        for i in reversed(range(len(self.best.timeline))):
            timeline = self.best.timeline
            if i < len(timeline):
                improved = self.with_streams(self.best_outcome.streams,
                                             timeline=timeline[:i] + timeline[i + 1:]) or improved
        return improved

    def drop_fault_kinds(self) -> bool:
        improved = False
        for kind in reversed(self.best.faults.kinds):
            # With the kind off the run makes none of its choices: drop their lists too.
            own = (f"swarm:{kind}", f"swarm:{kind}:rate", f"fault:{kind}")
            streams = tuple(s for s in self.best_outcome.streams if s[0] not in own)
            faults = attrs.evolve(self.best.faults,
                                  kinds=tuple(k for k in self.best.faults.kinds if k != kind))
            improved = self.with_streams(streams, faults=faults) or improved
        return improved

    def lower_times(self) -> bool:
        improved = False
        for i in range(len(self.best.children)):
            def child_at(ms: int, i: int = i) -> bool:
                children = list(self.best.children)
                children[i] = attrs.evolve(children[i], spawn_at_ms=ms)
                return self.with_streams(self.best_outcome.streams, children=tuple(children))
            improved = self._minimize(self.best.children[i].spawn_at_ms, child_at,
                                      SECOND) or improved
        for i in range(len(self.best.timeline)):
            for field in ("at_ms", "delay_ms", "restart_after_ms"):
                def event_at(ms: int, i: int = i, field: str = field) -> bool:
                    timeline = list(self.best.timeline)
                    changes: dict[str, Any] = {field: ms}
                    timeline[i] = attrs.evolve(timeline[i], **changes)
                    return self.with_streams(self.best_outcome.streams, timeline=tuple(timeline))
                value = getattr(self.best.timeline[i], field)
                if value is not None:
                    improved = self._minimize(value, event_at, SECOND) or improved
        return improved

    def delete_blocks(self) -> bool:
        return self._each_block(lambda values, i, size: values[:i] + values[i + size:]
                                if i + size <= len(values) else None)

    def zero_blocks(self) -> bool:
        # A block already all zeros cannot get simpler.
        return self._each_block(lambda values, i, size: values[:i] + (0,) * size + values[i + size:]
                                if any(values[i:i + size]) else None)

    def _each_block(self, change: Callable[[tuple[int, ...], int, int], tuple[int, ...] | None],
                    ) -> bool:
        """Try ``change`` on every block of every stream, from the end back (so an accepted
        change leaves the blocks still to try where they were); True if any was kept."""
        improved = False
        for name in self.names():
            for size in BLOCK_SIZES:
                i = len(self.stream(name)) - size
                while i >= 0:
                    values = self.stream(name)
                    changed = change(values, i, size)
                    if changed is not None and self.with_stream(name, changed):
                        improved = True
                    i -= 1
        return improved

    def lower_choices(self) -> bool:
        improved = False
        for name in self.names():
            for i in reversed(range(len(self.stream(name)))):
                def set_to(value: int, i: int = i, name: str = name) -> bool:
                    values = list(self.stream(name))
                    if i >= len(values):
                        return False
                    values[i] = value
                    return self.with_stream(name, values)
                if i < len(self.stream(name)):
                    improved = self._minimize(self.stream(name)[i], set_to) or improved
        return improved

    @staticmethod
    def _minimize(value: int, attempt: Callable[[int], bool], unit: int = 1) -> bool:
        """Binary search for a smaller value ``attempt`` accepts (0 first), in steps of ``unit``
        when ``value`` is a multiple of it."""
        if value <= 0:
            return False
        if attempt(0):
            return True
        if value % unit:
            unit = 1
        lo, hi, improved = 0, value // unit, False  # lo fails, hi is the accepted value
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if attempt(mid * unit):
                hi, improved = mid, True
            else:
                lo = mid
        return improved
