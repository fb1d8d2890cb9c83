"""OpenClaw's row beside the trace's, check by check: the first field that differs is a
divergence, shown with both sides."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from sim.conform.registry.model import Expect


@attrs.frozen
class Divergence:
    run: str
    seq: int  # the trace record after which the rows differ
    t_ms: int
    kind: str
    field: str
    model: Any
    openclaw: Any
    # OpenClaw's whole answer at that check, for the explainers (whether its registry still
    # held the row, its status and next attempt time, when its announce flow was called).
    snapshot: dict[str, Any] = attrs.field(factory=dict, eq=False, repr=False)

    @property
    def row(self) -> bool:
        return bool(self.snapshot.get("row", True))

    @property
    def handed_at(self) -> tuple[int, ...]:
        return tuple(int(h["at"]) for h in self.snapshot.get("handed", []))

    def line(self) -> str:
        return (f"{self.run} after record {self.seq} ({self.kind} at {self.t_ms} ms): "
                f"{self.field}: model {cut(repr(self.model))}, openclaw "
                f"{cut(repr(self.openclaw))}")


def cut(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def observed(snapshot: dict[str, Any], field: str) -> Any:
    handed = snapshot.get("handed", [])
    if field == "handed":  # how many times the announce flow was called
        return len(handed)
    if field == "handedResult":  # the result the latest call was handed
        return handed[-1].get("result") if handed else None
    return snapshot.get(field)


def divergences(expects: Sequence[Expect],
                snapshots: Sequence[dict[str, Any]]) -> dict[str, Divergence]:
    """Each run's first divergence (a run compared no further once it diverged: what follows
    depends on it)."""
    found: dict[str, Divergence] = {}
    for expect, snapshot in zip(expects, snapshots, strict=True):
        if expect.run in found:
            continue
        for field, want in expect.fields.items():
            got = observed(snapshot, field)
            if got != want:
                found[expect.run] = Divergence(
                    expect.run, expect.seq, expect.t_ms, expect.kind, field, want, got,
                    snapshot=snapshot)
                break
    return found

