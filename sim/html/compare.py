"""A page of two runs aligned (``handoff replay ... --compare OTHER``): each actor's lane of the
second run right under the first's, on one time axis, the first record where they differ marked
in both and opened on: a mutant against the plain run, an original against its shrunk file, one
seed against another.

Records are compared as an observer reads them (time, actor, kind, fields); ``world.start``'s
fields are the runs' configurations (seed, mutants, scenario), different by design, so only its
time, actor and kind count.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sim.html.timeline import Side, assemble, page
from sim.trace import Record

# Records that state a run's configuration rather than what happened in it.
_CONFIGURATION = ("world.start",)


def _same(a: Record, b: Record) -> bool:
    if (a.t_ms, a.actor, a.kind) != (b.t_ms, b.actor, b.kind):
        return False
    return a.kind in _CONFIGURATION or a.data == b.data


def first_difference(a: Sequence[Record], b: Sequence[Record]) -> int | None:
    """The index of the first record that differs, or where the shorter trace ends; None if
    the two are the same."""
    for i, (ra, rb) in enumerate(zip(a, b, strict=False)):
        if not _same(ra, rb):
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def compare_doc(a: Side, b: Side, *, titles: tuple[str, str], title: str,
                repro: str | None = None, summary: str = "") -> dict[str, Any]:
    """The document of a compare page: ``a`` and ``b`` labelled (``Side.label``) A and B."""
    doc = assemble([a, b], title=title, repro=repro, summary=summary)
    first = first_difference(a.records, b.records)
    offset = len(a.records)
    marked = [] if first is None else (
        ([first] if first < len(a.records) else []) +
        ([offset + first] if first < len(b.records) else []))
    doc["compare"] = {
        "sides": [{"label": side.label, "title": name, "records": len(side.records),
                   "violations": len(side.violations)}
                  for side, name in zip((a, b), titles, strict=True)],
        "first": first, "records": marked}
    return doc


def compare_page(a: Side, b: Side, *, titles: tuple[str, str], title: str,
                 repro: str | None = None, summary: str = "") -> str:
    return page(compare_doc(a, b, titles=titles, title=title, repro=repro, summary=summary))
