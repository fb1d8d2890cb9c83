"""What one run of the world gives back (sim/world/core.py builds it, once the run is over)."""

from __future__ import annotations

import attrs

from actors.records.run_record import RunRecord
from sim.choices import Schedule, Span, SpanMark, resolve_spans
from sim.invariants import Violation
from sim.scenario import Scenario
from sim.trace import Trace


@attrs.frozen
class RunResult:
    scenario: Scenario
    seed: int
    strategy: str
    mutants: tuple[str, ...]
    trace: Trace
    schedule: Schedule
    end_reason: str
    end_ms: int
    violations: tuple[Violation, ...]
    runs: tuple[RunRecord, ...]
    # Spans of related choices (one drawn child), for the shrinker (shrinking/shrink.py), as
    # the chooser left them (``Chooser.span_marks``): :attr:`spans` counts their ranges when
    # read, which a sweep never does (~0.8 % of a default-world seed's bytecodes).
    span_marks: tuple[Span | SpanMark, ...] = ()
    # Code probes hit in this run, name -> hits (actors/probes.py), in the order first hit.
    probes: dict[str, int] = attrs.field(factory=dict)
    steps: int = 0  # the kernel's steps: the unit of a bug's detection cost (SPEC §5)
    # Per probe hit, how many choices the run had made when it first fired: the moment a
    # guided sweep branches from (sim/explore/guided.py).
    moments: dict[str, int] = attrs.field(factory=dict)

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def spans(self) -> list[Span]:
        """``Chooser.spans`` at the run's end: each mark's ranges over the recorded choices."""
        return resolve_spans(self.span_marks, self.schedule.choices, self.schedule.subsystems)
