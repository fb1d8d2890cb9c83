"""Invariants are oracles: pure functions over the trace that name what they found wrong.

They restate a requirement from what the trace shows and never import ``actors/``: a bug in the
model must not be checked against itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from sim.trace import Record


@attrs.frozen
class Violation:
    invariant: str
    requirement: str
    message: str
    records: tuple[int, ...]  # seq numbers of the trace records that prove it

    def to_json(self) -> dict[str, object]:
        return {"invariant": self.invariant, "requirement": self.requirement,
                "message": self.message, "records": list(self.records)}


@attrs.frozen
class Invariant:
    name: str
    requirement: str
    kind: str  # "safety" or "liveness"
    doc: str
    check: Callable[[Sequence[Record]], list[Violation]]
