"""A run's records grouped by kind, built once per trace and shared by every oracle.

About 78 oracles judge each run, and most of them read a handful of the ~90 record kinds; walking
the whole trace once or several times each (about 106 passes over ~300 records per default-world
seed, wave 10a in docs/performance-log.md) cost more than much of what they do with the records they
keep. :func:`of_kinds` hands an oracle exactly the records of the kinds it reads, in trace order,
from one grouping of the trace made the first time any oracle asks about it.

Like the readings in ``observations.py``, the grouping is kept for the last trace asked (holding
the trace itself, so its identity cannot be reused while it is remembered) and rebuilt when that
trace changed since (a tuple, what a run hands its oracles, cannot; a list may grow or have a
record replaced, as a test forging a trace does): an oracle stays callable with any plain
sequence of records.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from itertools import chain
from typing import TypeVar

from sim.trace import Record

T = TypeVar("T")


class KindIndex:
    """Where each kind's records sit in one trace (their positions, in trace order)."""

    __slots__ = ("_merged", "held", "positions", "readings", "size", "trace")

    def __init__(self, trace: Sequence[Record]) -> None:
        self.trace = trace
        self.size = len(trace)
        # A list may be changed in place (a test forging a record): what it held, to tell.
        self.held = None if isinstance(trace, tuple) else tuple(trace)
        positions: dict[str, list[int]] = {}
        for i, r in enumerate(trace):
            kind = r.kind
            at = positions.get(kind)
            if at is None:
                positions[kind] = [i]
            else:
                at.append(i)
        self.positions = positions
        self._merged: dict[tuple[str, ...], list[Record]] = {}
        # What several oracles read of this trace, computed once (:func:`shared`).
        self.readings: dict[str, object] = {}

    def follows(self, trace: Sequence[Record]) -> bool:
        """Whether this is ``trace``'s grouping still: the same sequence, of the same records
        (a tuple cannot change; another sequence is compared record by record)."""
        return self.trace is trace and self.size == len(trace) and (
            self.held is None or all(map(operator.is_, trace, self.held)))

    def of(self, kinds: tuple[str, ...]) -> list[Record]:
        """The records of these kinds, in trace order (one list per kinds tuple, reused: the
        caller must not change it)."""
        found = self._merged.get(kinds)
        if found is None:
            runs = [at for at in map(self.positions.get, _distinct(kinds)) if at is not None]
            if len(runs) == 1:
                at = runs[0]
            else:  # sorting the concatenated runs merges them (each is ascending already)
                at = list(chain.from_iterable(runs))
                at.sort()
            trace = self.trace
            found = [trace[i] for i in at]
            self._merged[kinds] = found
        return found

    def of_prefix(self, prefix: str) -> list[Record]:
        """The records whose kind starts with ``prefix``, in trace order."""
        return self.of(tuple(kind for kind in self.positions if kind.startswith(prefix)))


# Each oracle's kinds tuple without repeats (an oracle's own kinds and a helper's overlap), kept
# per tuple: the oracles ask with the same few dozen constant tuples for every trace.
_DISTINCT: dict[tuple[str, ...], tuple[str, ...]] = {}


def _distinct(kinds: tuple[str, ...]) -> tuple[str, ...]:
    found = _DISTINCT.get(kinds)
    if found is None:
        found = tuple(dict.fromkeys(kinds))
        if len(_DISTINCT) < 4096:  # a tuple built anew at each call is not kept forever
            _DISTINCT[kinds] = found
    return found


_last: KindIndex | None = None


def kind_index(trace: Sequence[Record]) -> KindIndex:
    """The grouping of ``trace``, built on first use and kept while the trace is the last one
    asked about and holds the same records."""
    global _last
    index = _last
    if index is not None and index.trace is trace and index.held is None:
        return index  # the same tuple (what a run hands its oracles): it cannot have changed
    if index is None or not index.follows(trace):
        index = _last = KindIndex(trace)
    return index


def of_kinds(trace: Sequence[Record], kinds: tuple[str, ...]) -> list[Record]:
    """The records of ``trace`` whose kind is one of ``kinds``, in trace order."""
    return kind_index(trace).of(kinds)


def shared(trace: Sequence[Record], name: str, read: Callable[[Sequence[Record]], T]) -> T:
    """``read(trace)``, computed once per trace under ``name`` and handed to every oracle that
    asks (each must only read it, never change it)."""
    readings = kind_index(trace).readings
    if name not in readings:
        readings[name] = read(trace)
    return readings[name]  # type: ignore[return-value]


def last_of_kind(trace: Sequence[Record], kind: str) -> Record | None:
    """The last record of ``trace`` of this kind, if any."""
    at = kind_index(trace).positions.get(kind)
    return None if at is None else trace[at[-1]]


def of_kind_prefix(trace: Sequence[Record], prefix: str) -> list[Record]:
    """The records of ``trace`` whose kind starts with ``prefix`` (``child.``), in trace
    order."""
    return kind_index(trace).of_prefix(prefix)
