"""Every choice a run makes, made in one place and recorded (Hypothesis' ConjectureData idea).

A choice is an index into ``n`` options listed in canonical order. In exploration a strategy (for
the schedule) or a per-subsystem RNG (for workload, faults, jitter) picks it; in replay the recorded
index is used and any mismatch in the subsystem or the number of options stops the run with
"schedule diverged at step k". Index 0 is always the "default": the first event in canonical order,
no fault, the smallest value; that is what shrinking moves choices towards.

Two more ways to guide a run, both for searching around a recorded one:

- a *branch* replays only a schedule's first ``replay_steps`` choices strictly and draws the rest
  fresh (SIM-11: explore the futures of a moment);
- *guides* are lists of indices, one per subsystem, followed leniently as Hypothesis'
  ConjectureData follows its buffer: a subsystem's next choice takes the next value of its list,
  clamped to ``n - 1``; past the end (or for a subsystem without a list) every choice is 0. Any
  lists of naturals make a valid run, which is what lets the shrinker (shrinking/shrink.py) delete
  and lower choices freely; one list per subsystem (as one RNG per subsystem, SIM-2) means deleting
  a child's workload draws does not shift the fault or schedule choices that come after them.

A few choices are *optional* (:meth:`Chooser.optional`): free runs never make them (0, not
recorded, so adding one moved no seed's draws); only a guide gives them another value, as the
shrinker does to leave children of a wide batch out (sim/world/turns.py).
"""

from __future__ import annotations

import enum
import hashlib
import random
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import NamedTuple

import attrs

from sim import choice_names
from sim.determinism import rng_for


class Strategy(enum.StrEnum):
    """How the chooser picks among events due at the same instant."""

    RANDOM = "random"
    PCT = "pct"
    FIFO = "fifo"


STRATEGIES = tuple(s.value for s in Strategy)
if STRATEGIES != choice_names.STRATEGIES:  # the flags' copy (sim/choice_names.py)
    raise AssertionError(f"sim.choice_names.STRATEGIES is not {STRATEGIES}")
# A span of related choices: (label, ((subsystem, start, end), ...)).
Span = tuple[str, tuple[tuple[str, int, int], ...]]
SCHEDULE = "schedule"
# The label of a guided run's span of fault choices about one child (:meth:`Chooser.about`).
ABOUT_SPAN = "about:"
MAX_SEED = choice_names.MAX_SEED
# A replayed choice's limit (a schedule file's and `[replay.choices]`'): far above any run.
MAX_OPTIONS = 10_000_000


class SpanMark(NamedTuple):
    """A drawn child's span as :meth:`Chooser.span` leaves it: the positions in the run's
    record where it began and ended. Its ranges are counted only when someone reads them
    (:func:`resolve_spans`: the shrinker does; a sweep's free runs never do)."""

    label: str
    start: int
    end: int


class ScheduleDiverged(Exception):
    """A replay asked for a different choice than the one recorded at this step."""

    def __init__(self, step: int, detail: str) -> None:
        self.step = step
        super().__init__(f"schedule diverged at step {step}: {detail}")


@attrs.frozen
class Schedule:
    """A run's recorded choices: enough, with the scenario, to reproduce the run exactly."""

    seed: int
    strategy: str
    versions: dict[str, str]
    subsystems: tuple[str, ...]
    # One (subsystem index, number of options, chosen index) triple per choice with n > 1.
    choices: tuple[tuple[int, int, int], ...]
    # The run's configuration beyond the scenario: known-bug variants switched on, and the fault
    # kinds allowed when they were narrowed on the command line (None: the scenario's own).
    mutants: tuple[str, ...] = ()
    fault_kinds: tuple[str, ...] | None = None
    # The scenario the run was made from, its text embedded so the schedule replays anywhere
    # (None only in schedules of runs built in code, or written before schedules carried it).
    scenario_path: str | None = None
    scenario_text: str | None = None

    @property
    def scenario_sha256(self) -> str | None:
        return None if self.scenario_text is None else sha256(self.scenario_text)

    def to_json(self) -> dict[str, object]:
        scenario = None
        if self.scenario_text is not None:
            scenario = {"path": self.scenario_path, "sha256": self.scenario_sha256,
                        "text": self.scenario_text}
        return {
            "seed": self.seed,
            "strategy": self.strategy,
            "versions": dict(self.versions),
            "mutants": list(self.mutants),
            "fault_kinds": None if self.fault_kinds is None else list(self.fault_kinds),
            "scenario": scenario,
            "subsystems": list(self.subsystems),
            "choices": [list(c) for c in self.choices],
        }


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# A free run's subsystem (see ``Chooser._stream``): its schedule index, its generator, and its
# recorded choices for a chance that fails and one that strikes.
_Stream = tuple[int, random.Random, tuple[int, int, int], tuple[int, int, int]]


def resolve_spans(marks: Sequence[Span | SpanMark], choices: Sequence[tuple[int, int, int]],
                  subsystems: Sequence[str]) -> list[Span]:
    """``marks`` (:attr:`Chooser.span_marks`) with each :class:`SpanMark` made a span over the
    run's recorded ``choices``: each subsystem that chose inside it, with how far its choices
    ran before and after, in the order subsystems first chose (their schedule index). One pass
    over the record: marks end in the order they were closed, which is the record's order."""
    spans: list[Span] = []
    taken: dict[int, int] = {}  # per subsystem index, its choices in ``choices[:at]``
    at = 0
    for mark in marks:
        if not isinstance(mark, SpanMark):
            spans.append(mark)
            continue
        label, start, end = mark
        assert end >= at, "span marks are listed in the order they were closed"
        for sub, _, _ in choices[at:end]:
            taken[sub] = taken.get(sub, 0) + 1
        at = end
        made: dict[int, int] = {}
        for sub, _, _ in choices[start:end]:
            made[sub] = made.get(sub, 0) + 1
        spans.append((label, tuple((subsystems[sub], taken[sub] - made[sub], taken[sub])
                                   for sub in sorted(made))))
    return spans


class Chooser:
    """The one object through which a run makes every choice."""

    def __init__(
        self,
        seed: int,
        strategy: str = "random",
        replay: Schedule | None = None,
        pct_change_points: int = 3,
        pct_horizon: int = 400,
        *,
        replay_steps: int | None = None,
        guides: Mapping[str, Sequence[int]] | None = None,
    ) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}; expected one of {STRATEGIES}")
        assert guides is None or replay is None, "a run follows a schedule or guides, not both"
        assert replay_steps is None or replay is not None, "a branch needs the schedule it keeps"
        self.seed = seed
        self.strategy = strategy
        self._rngs: dict[str, random.Random] = {}
        # A free run's draws: per subsystem, its index, its generator and its two chance
        # choices in one lookup (~550 draws per default-world seed; see :meth:`_stream`).
        self._streams: dict[str, _Stream] = {}
        self._subsystems: list[str] = []
        self._subsystem_index: dict[str, int] = {}
        self._record: list[tuple[int, int, int]] = []
        # Equal choices share one tuple: a run of 100,000 children records millions of them,
        # mostly repeats (a run's memory, not its meaning).
        self._choice_tuples: dict[tuple[int, int, int], tuple[int, int, int]] = {}
        self._replay = replay
        # A branch keeps only this many recorded choices; None keeps them all.
        self._replay_steps = replay_steps
        self._guides = None if guides is None else {k: tuple(v) for k, v in guides.items()}
        # Every choice is a fresh draw (no schedule, no guides): the common case of a sweep,
        # which then skips the replay checks (a default-world seed makes ~450 choices).
        self._free = replay is None and guides is None
        # Choices recorded so far, per subsystem: what a guide or an opportunity's span reads
        # next; kept only when the run is not free (a free run's spans count the record).
        self._taken: dict[str, int] = {}
        self._spans: list[Span | SpanMark] = []  # see :attr:`spans`
        # Guided runs only (the shrinker's): the child the fault plan's current opportunity is
        # about, and the choices taken before it began (see :meth:`about`).
        self._about: str | None = None
        self._about_from: dict[str, int] = {}
        # PCT (Burckhardt et al. 2010): actors get random priorities on first sight; the highest
        # enabled one runs; at a few random steps the running actor drops below everyone.
        self._priority: dict[str, float] = {}
        self._schedule_steps = 0
        # Its own generator, seeded only for a PCT run: another strategy never reads it, and
        # each generator's seeding costs ~25,000 instructions (a default-world seed seeds ~85).
        self._change_points: list[int] = []
        if strategy == Strategy.PCT:
            self._pct_rng = rng_for(seed, "pct")
            self._change_points = sorted(
                self._pct_rng.randrange(pct_horizon) for _ in range(pct_change_points)
            )
        self._lowest = 0.0

    # -- recording -----------------------------------------------------------------------------

    def schedule(self, versions: dict[str, str]) -> Schedule:
        return Schedule(
            seed=self.seed,
            strategy=self.strategy,
            versions=versions,
            subsystems=tuple(self._subsystems),
            choices=tuple(self._record),
        )

    @property
    def made(self) -> int:
        """How many choices the run has recorded so far."""
        return len(self._record)

    def _sub(self, subsystem: str) -> int:
        index = self._subsystem_index.get(subsystem)
        if index is None:
            index = len(self._subsystems)
            self._subsystems.append(subsystem)
            self._subsystem_index[subsystem] = index
        return index

    def _rng(self, subsystem: str) -> random.Random:
        rng = self._rngs.get(subsystem)
        if rng is None:
            rng = self._rngs[subsystem] = rng_for(self.seed, subsystem)
        return rng

    def _stream(self, subsystem: str) -> _Stream:
        """A free run's subsystem: its index in the schedule and its generator (the same ones
        :meth:`_sub` and :meth:`_rng` give), and its two recorded chances (False, True), kept
        together for :meth:`choose` and :meth:`chance`."""
        sub = self._sub(subsystem)
        # Every chance of the subsystem records one of these two (equal choices share a tuple).
        stream = self._streams[subsystem] = (sub, self._rng(subsystem), (sub, 2, 0), (sub, 2, 1))
        return stream

    @contextmanager
    def span(self, label: str) -> Iterator[None]:
        """Mark the choices made inside as one unit (``label``) for the shrinker."""
        start = len(self._record)
        yield
        self._spans.append(SpanMark(label, start, len(self._record)))

    def about(self, child: str | None) -> None:
        """The fault choices made from now until the next call are about ``child`` (the fault
        plan calls this at each opportunity, with the child whose message or send it is, or
        None). A guided run records them as spans labelled ``about:<child>`` so that the
        shrinker, dropping a child, drops the choices its opportunities took and the faults
        that struck later children keep their targets. Free runs and replays record nothing."""
        if self._guides is None:
            return
        self._spans.extend(self._about_span())
        self._about = child
        if child is not None:
            self._about_from = dict(self._taken)

    def _about_span(self) -> list[Span]:
        """The fault choices taken since the open opportunity began, as a span (if any)."""
        if self._about is None:
            return []
        since = self._about_from
        ranges = tuple((sub, since.get(sub, 0), end) for sub, end in self._taken.items()
                       if end != since.get(sub, 0) and sub.startswith("fault:"))
        return [(f"{ABOUT_SPAN}{self._about}", ranges)] if ranges else []

    @property
    def spans(self) -> list[Span]:
        """Spans of choices that belong together: each drawn child's (Hypothesis' "examples",
        so a shrinker can delete them whole) and, in a guided run, the fault choices of each
        opportunity about a child (``about:<child>``). Each is (label, ((subsystem, start,
        end), ...)) over that subsystem's choices."""
        return resolve_spans(self.span_marks, self._record, self._subsystems)

    @property
    def span_marks(self) -> tuple[Span | SpanMark, ...]:
        """:attr:`spans` as the run left them: each drawn child's still a :class:`SpanMark`."""
        return (*self._spans, *self._about_span())

    def _guided(self) -> bool:
        """Does the next choice come from a recording (so no fresh draw is needed)?"""
        if self._guides is not None:
            return True
        if self._replay is None:
            return False
        return self._replay_steps is None or len(self._record) < self._replay_steps

    def _take(self, subsystem: str, n: int, fresh: int) -> int:
        """Record (or, in replay, read back) one choice among ``n`` options."""
        taken = self._taken.get(subsystem, 0)
        if self._free:
            index = fresh
        elif self._guides is not None:
            guide = self._guides.get(subsystem, ())
            index = min(guide[taken], n - 1) if taken < len(guide) else 0
        elif not self._guided():
            index = fresh
        else:
            assert self._replay is not None
            step = len(self._record)
            if step >= len(self._replay.choices):
                raise ScheduleDiverged(
                    step, f"the recorded schedule ended; wanted a {subsystem} choice")
            rsub, rn, index = self._replay.choices[step]
            subsystems = self._replay.subsystems
            recorded_sub = subsystems[rsub] if rsub < len(subsystems) else "?"
            if recorded_sub != subsystem or rn != n:
                raise ScheduleDiverged(
                    step,
                    f"recorded a {recorded_sub} choice among {rn}, "
                    f"the run asked for a {subsystem} choice among {n}",
                )
            if not 0 <= index < n:
                raise ScheduleDiverged(step, f"recorded index {index} is not below {n}")
        self._keep(subsystem, n, index)
        return index

    def _keep(self, subsystem: str, n: int, index: int) -> None:
        """Record choice ``index`` among ``n`` of ``subsystem``."""
        self._append(self._sub(subsystem), n, index)
        if not self._free:
            self._taken[subsystem] = self._taken.get(subsystem, 0) + 1

    def _append(self, sub: int, n: int, index: int) -> None:
        """Record choice ``index`` among ``n`` of the subsystem whose schedule index is ``sub``
        (a free run's :meth:`choose` has it from :meth:`_stream`)."""
        choice = (sub, n, index)
        self._record.append(self._choice_tuples.setdefault(choice, choice))

    # -- the choices ---------------------------------------------------------------------------

    def choose(self, subsystem: str, n: int) -> int:
        """Uniform choice among ``n`` options (``n >= 1``); a single option is not recorded."""
        assert n >= 1
        if n == 1:
            return 0
        if self._free:  # a fresh draw, recorded (what _take does for a free run)
            sub, rng, _, _ = self._streams.get(subsystem) or self._stream(subsystem)
            index = rng.randrange(n)
            self._append(sub, n, index)
            return index
        fresh = self._rng(subsystem).randrange(n) if not self._guided() else 0
        return self._take(subsystem, n, fresh)

    def chance(self, subsystem: str, probability: float) -> bool:
        """True with ``probability``; recorded as index 1 (True) or 0 (False)."""
        if probability <= 0.0:
            return False
        if self._free:  # a fresh draw, recorded (what _take does for a free run)
            _, rng, no, yes = self._streams.get(subsystem) or self._stream(subsystem)
            if rng.random() < probability:
                self._record.append(yes)
                return True
            self._record.append(no)
            return False
        fresh = 0
        if not self._guided():
            fresh = 1 if self._rng(subsystem).random() < probability else 0
        return self._take(subsystem, 2, fresh) == 1

    def optional(self, subsystem: str, n: int) -> int:
        """A choice among ``n`` that free runs never make: there it is 0 and not recorded, so
        adding it moved no seed's draws. Only a guide (a shrinker's edit, a saved scenario's
        ``[replay.choices]``) gives it another value; a guided run records it while its list
        lasts (past the end it is 0 and unrecorded, as in a free run), and a replay takes it
        when the schedule recorded it next."""
        if self._free:
            return 0
        if self._guides is not None:
            if self._taken.get(subsystem, 0) >= len(self._guides.get(subsystem, ())):
                return 0
            return self._take(subsystem, n, 0)
        if not self._guided():
            return 0  # a branch's fresh part draws as a free run does
        assert self._replay is not None
        step = len(self._record)
        recorded = self._replay.choices[step][0] if step < len(self._replay.choices) else None
        subsystems = self._replay.subsystems
        if recorded is None or recorded >= len(subsystems) or subsystems[recorded] != subsystem:
            return 0
        return self._take(subsystem, n, 0)

    def pick_event(self, actors: Sequence[str]) -> int:
        """Which of the enabled events (listed in canonical order, by target actor) goes next."""
        n = len(actors)
        assert n >= 1
        if n == 1:
            return 0
        fresh = 0
        if self._free or not self._guided():
            if self.strategy == Strategy.RANDOM:
                fresh = self._rng(SCHEDULE).randrange(n)
            elif self.strategy == Strategy.PCT:
                fresh = self._pct_pick(actors)
        self._schedule_steps += 1
        return self._take(SCHEDULE, n, fresh)

    def _pct_pick(self, actors: Sequence[str]) -> int:
        for actor in actors:
            if actor not in self._priority:
                self._priority[actor] = 1.0 + self._pct_rng.random()
        best = max(range(len(actors)), key=lambda i: (self._priority[actors[i]], -i))
        while self._change_points and self._change_points[0] <= self._schedule_steps:
            self._change_points.pop(0)
            self._lowest -= 1.0
            self._priority[actors[best]] = self._lowest
            best = max(range(len(actors)), key=lambda i: (self._priority[actors[i]], -i))
        return best
