"""Shrinking a failing run to a small one that fails the same invariant (SIM-7).

As Hypothesis shrinks: a run is a function of its choice sequence, so the shrinker edits that
sequence and keeps an edit only if the run it gives still violates the same invariant and is
smaller. The edited sequence is followed leniently (sim/choices.py: each choice takes the next
value clamped to its range, past the end every choice is 0, the default), so every edit is a valid
run. Passes, repeated until none helps or the run budget is spent:

- structure: drop a drawn child whole (its span of choices and one from ``[workload] children``),
  drop a scripted child (with the timeline entries naming it), drop a timeline entry, drop a fault
  kind (with its swarm choices), bring scripted times (spawns, timeline instants, delays) down;
- choices: delete blocks of 8, 4, 2 and 1 choices, set blocks to 0, lower single values by binary
  search towards 0.

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

from sim import world
from sim.choices import Schedule
from sim.scenario import _REQUIREMENT_ID, Expectation, Scenario, loads
from sim.scenario_write import dumps

DEFAULT_MAX_RUNS = 2_000
BLOCK_SIZES = (8, 4, 2, 1)
# Scripted times are lowered in whole seconds when they are whole seconds: a saved scenario reads
# "at = 12", not "at = 12.207".
SECOND = 1000


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
    choices: tuple[int, ...]  # the choices the run actually made (clamped, cut at its end)
    subsystems: tuple[str, ...]  # which subsystem made each choice
    spans: tuple[tuple[str, int, int], ...]
    message: str  # the target violation's message, when interesting
    requirement: str


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
        expect=Expectation(), replay=tuple(c[2] for c in original.schedule.choices))
    shrinker = _Shrinker(target, max_runs)
    first = shrinker.run(start)
    if not first.interesting:
        raise NotReproduced(f"seed {seed}: replaying its own {len(start.replay or ())} choices "
                            f"did not violate {target} again")
    shrinker.best, shrinker.best_outcome = attrs.evolve(start, replay=first.choices), first
    shrinker.shrink()
    best, outcome = shrinker.best, shrinker.best_outcome
    choices = list(outcome.choices)
    while choices and choices[-1] == 0:  # past the end every choice is 0 anyway
        choices.pop()
    saved = attrs.evolve(
        best, replay=tuple(choices),
        name=f"shrunk: {target} (seed {seed}{_mutant_words(best.mutants)})",
        description=(
            f"Shrunk by handoff shrink from seed {seed} of {source or scenario.path}"
            f"{_mutant_words(best.mutants)}: {len(original.trace)} trace records -> "
            f"{outcome.records}, {len(original.schedule.choices)} choices -> {len(choices)}. "
            f"{target} ({outcome.requirement}): {outcome.message}"),
        covers=_covers(outcome.requirement, best.mutants),
        # With a known-bug variant on, finding the violation is the regression (as the
        # scenarios/mutant-*.toml); without one it is a bug in the model, and the scenario fails
        # until the bug is fixed, then guards against its return.
        expect=Expectation(violations=outcome.invariants if best.mutants else ()),
    )
    # What is saved is checked: the file's text, loaded back, must fail the same way.
    again = world.run(loads(dumps(saved), "<shrunk>"))
    if target not in {v.invariant for v in again.violations}:
        raise NotReproduced(f"seed {seed}: the shrunk scenario did not violate {target} again")
    return Shrunk(saved, target, outcome.requirement, outcome.message, len(original.trace),
                  outcome.records, len(original.schedule.choices), len(choices), shrinker.runs)


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
        self._cache: dict[Scenario, Outcome] = {}
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
        except Exception:  # a candidate the model cannot run is not the same failure
            outcome = Outcome(False, 0, (), (), (), (), "", "")
        else:
            hits = [v for v in result.violations if v.invariant == self.target]
            schedule = result.schedule
            outcome = Outcome(
                interesting=bool(hits), records=len(result.trace),
                invariants=tuple(dict.fromkeys(v.invariant for v in result.violations)),
                choices=tuple(c[2] for c in schedule.choices),
                subsystems=tuple(schedule.subsystems[c[0]] for c in schedule.choices),
                spans=result.spans, message=hits[0].message if hits else "",
                requirement=hits[0].requirement if hits else "")
        self._cache[candidate] = outcome
        return outcome

    def _key(self, scenario: Scenario, outcome: Outcome) -> tuple[object, ...]:
        return (outcome.records, len(outcome.invariants), len(outcome.choices), outcome.choices,
                _structure(scenario))

    def consider(self, candidate: Scenario) -> bool:
        """Run ``candidate``; keep it, with the choices it really made, if it fails smaller."""
        outcome = self.run(candidate)
        if not outcome.interesting:
            return False
        normal = attrs.evolve(candidate, replay=outcome.choices)
        if self._key(normal, outcome) >= self._key(self.best, self.best_outcome):
            return False
        self.best, self.best_outcome = normal, outcome
        return True

    def with_choices(self, choices: Sequence[int], **changes: Any) -> bool:
        return self.consider(attrs.evolve(self.best, replay=tuple(choices), **changes))

    # -- the passes ----------------------------------------------------------------------------

    def shrink(self) -> None:
        passes: tuple[Callable[[], bool], ...] = (
            self.drop_drawn_children, self.drop_scripted_children, self.drop_timeline_entries,
            self.drop_fault_kinds, self.lower_times, self.delete_blocks, self.zero_blocks,
            self.lower_choices)
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
            spans = [s for s in self.best_outcome.spans if s[0] == "child"]
            if workload is None or workload.children <= 1:
                break
            if i < len(spans):
                _, start, end = spans[i]
                choices = self.best_outcome.choices
                if self.with_choices(choices[:start] + choices[end:],
                                     workload=attrs.evolve(workload,
                                                           children=workload.children - 1)):
                    improved = True
            i -= 1
        return improved

    def drop_scripted_children(self) -> bool:
        improved = False
        for child in reversed(self.best.children):
            best = self.best
            if len(best.children) == 1 and best.workload is None:
                break  # a world needs a child
            if child not in best.children:
                continue
            improved = self.with_choices(
                self.best_outcome.choices,
                children=tuple(c for c in best.children if c is not child),
                timeline=tuple(e for e in best.timeline if e.child != child.id)) or improved
        return improved

    def drop_timeline_entries(self) -> bool:
        improved = False
        for i in reversed(range(len(self.best.timeline))):
            timeline = self.best.timeline
            if i < len(timeline):
                improved = self.with_choices(self.best_outcome.choices,
                                             timeline=timeline[:i] + timeline[i + 1:]) or improved
        return improved

    def drop_fault_kinds(self) -> bool:
        improved = False
        for kind in reversed(self.best.faults.kinds):
            # Its swarm draws and every draw it made while on: with the kind off, the run makes
            # none of them, so the choices after them stay aligned.
            own = (f"swarm:{kind}", f"swarm:{kind}:rate", f"fault:{kind}")
            outcome = self.best_outcome
            choices = [c for c, sub in zip(outcome.choices, outcome.subsystems, strict=True)
                       if sub not in own]
            faults = attrs.evolve(self.best.faults,
                                  kinds=tuple(k for k in self.best.faults.kinds if k != kind))
            improved = self.with_choices(choices, faults=faults) or improved
        return improved

    def lower_times(self) -> bool:
        improved = False
        for i in range(len(self.best.children)):
            def child_at(ms: int, i: int = i) -> bool:
                children = list(self.best.children)
                children[i] = attrs.evolve(children[i], spawn_at_ms=ms)
                return self.with_choices(self.best_outcome.choices, children=tuple(children))
            improved = self._minimize(self.best.children[i].spawn_at_ms, child_at,
                                      SECOND) or improved
        for i in range(len(self.best.timeline)):
            for field in ("at_ms", "delay_ms", "restart_after_ms"):
                def event_at(ms: int, i: int = i, field: str = field) -> bool:
                    timeline = list(self.best.timeline)
                    changes: dict[str, Any] = {field: ms}
                    timeline[i] = attrs.evolve(timeline[i], **changes)
                    return self.with_choices(self.best_outcome.choices, timeline=tuple(timeline))
                value = getattr(self.best.timeline[i], field)
                if value is not None:
                    improved = self._minimize(value, event_at, SECOND) or improved
        return improved

    def delete_blocks(self) -> bool:
        improved = False
        for size in BLOCK_SIZES:
            i = len(self.best_outcome.choices) - size
            while i >= 0:
                choices = self.best_outcome.choices
                if i + size <= len(choices) and self.with_choices(choices[:i] + choices[i + size:]):
                    improved = True
                i -= 1
        return improved

    def zero_blocks(self) -> bool:
        improved = False
        for size in BLOCK_SIZES:
            i = len(self.best_outcome.choices) - size
            while i >= 0:
                choices = self.best_outcome.choices
                if any(choices[i:i + size]) and self.with_choices(
                        choices[:i] + (0,) * size + choices[i + size:]):
                    improved = True
                i -= 1
        return improved

    def lower_choices(self) -> bool:
        improved = False
        for i in reversed(range(len(self.best_outcome.choices))):
            def set_to(value: int, i: int = i) -> bool:
                choices = list(self.best_outcome.choices)
                if i >= len(choices):
                    return False
                choices[i] = value
                return self.with_choices(choices)
            if i < len(self.best_outcome.choices):
                improved = self._minimize(self.best_outcome.choices[i], set_to) or improved
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
