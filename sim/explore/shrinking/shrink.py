"""Shrinking a failing run to a small one that fails the same invariant (SIM-7).

As Hypothesis shrinks: a run is a function of its choices, so the shrinker edits them and keeps
an edit only if the run it gives still violates the same invariant and is smaller. The choices are
kept as one list per subsystem and followed leniently (sim/choices.py: each choice takes its
subsystem's next value clamped to its range; past the end every choice is 0, the default), so
every edit is a valid run, and an edit to one subsystem's list does not shift another's. Passes,
in three tiers, each tier repeated while it helps, all three until none does or the run budget
is spent:

1. structure (shrinking/shrink_structure.py): turn swarm features off, leave children of a
   wide batch out (with the fault choices about them: shrinking/shrink_wide.py), drop a drawn
   child whole (its span of choices, the fault choices about it and one from ``[workload]
   children``; a child with children of its own first with its whole subtree), drop a scripted
   child (with the timeline entries naming it), drop a timeline entry, drop a fault kind (with
   its choices), reach sessions without a channel;
2. shorten the run (shrinking/shrink_choices.py): heal faults earlier, end the run earlier,
   bring scripted times (spawns, timeline instants, delays) down;
3. choices, in each subsystem's list: delete blocks of 8, 4, 2 and 1 choices, set blocks to 0,
   lower single values by binary search towards 0.

When none helps, the structural tier runs once more with deep deletions (shrinking/shrinker.py
``_drop``: a dropped child together with one choice drawn about it outside its span, such as
the chance that it opened a turn of its own); if that helps, all three tiers run again.

The saved file also names the moments its run must reach (``[expect] reaches``, chosen by
sim/explore/reaches.py), so a later change that moves the replay off that timeline fails it.

"Smaller" is the order of (trace records, other invariants violated, number of choices, the
choices themselves, the scripted structure, the run's end and heal): shorter traces first, as a
user reads a trace. The candidate is a :class:`~sim.scenario.Scenario` whose ``replay`` holds the
choices, which is exactly what is saved, so what was checked is what ``handoff run`` runs. No
wall clock and no randomness: the same failure and budget give the same result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from sim.choices import Schedule
from sim.explore.shrinking.shrink_choices import ChoicePasses
from sim.explore.shrinking.shrink_structure import StructurePasses
from sim.explore.shrinking.shrinker import BudgetSpent, Outcome
from sim.explore.streams import Streams as Streams
from sim.explore.streams import _total, _without_trailing_zeros
from sim.explore.streams import streams_of as streams_of
from sim.scenario import _REQUIREMENT_ID, Expectation, Scenario, loads
from sim.scenario.write import dumps
from sim.world import core as world

DEFAULT_MAX_RUNS = 2_000
__all__ = ["DEFAULT_MAX_RUNS", "NotReproduced", "NothingToShrink", "Outcome", "Shrunk",
           "Streams", "shrink", "streams_of"]


class NothingToShrink(Exception):
    """The run does not violate the invariant it was asked to shrink."""


class NotReproduced(Exception):
    """Following the run's own choices did not fail the same way: the failure is flaky."""


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


class _Shrinker(StructurePasses, ChoicePasses):
    def shrink(self) -> None:
        """The passes in their tiers, each tier repeated while it helps, all of them until none
        does or the budget is spent; then the deep structural edits (:meth:`_drop`), and if
        they helped, everything again."""
        tiers: tuple[tuple[Callable[[], bool], ...], ...] = (
            (self.drop_features, self.drop_wide_children, self.drop_drawn_children,
             self.drop_scripted_children, self.drop_timeline_entries, self.drop_fault_kinds,
             self.drop_channels),
            (self.lower_times, self.shorten_run),
            (self.delete_blocks, self.zero_blocks, self.lower_choices))
        try:
            while True:
                self.deep = False
                while self._tiers(tiers):
                    pass
                self.deep = True
                if not self._tier(tiers[0]):
                    return
        except BudgetSpent:
            pass

    def _tiers(self, tiers: Sequence[Sequence[Callable[[], bool]]]) -> bool:
        improved = False
        for tier in tiers:
            while self._tier(tier):
                improved = True
        return improved

    def _tier(self, passes: Sequence[Callable[[], bool]]) -> bool:
        """Run ``passes``; True if they made the run shorter (fewer records or choices). An
        edit that only lowers values is kept but does not call for another round: rounds of
        those alone could spend the whole budget without a record less."""
        size = self._size()
        for one_pass in passes:
            one_pass()
        return self._size() < size

    def _size(self) -> tuple[int, int]:
        return self.best_outcome.records, _total(self.best_outcome.streams)
