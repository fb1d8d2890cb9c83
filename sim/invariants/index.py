"""A run's records grouped by kind, built once per trace and shared by every oracle.

About 78 oracles judge each run, and most of them read a handful of the ~90 record kinds; walking
the whole trace once or several times each (about 106 passes over ~300 records per default-world
seed, wave 10a in docs/performance-log.md) cost more than much of what they do with the records they
keep. :func:`of_kinds` hands an oracle exactly the records of the kinds it reads, in trace order,
from one grouping of the trace made the first time any oracle asks about it.

The grouping belongs to the run being judged: :func:`judging` builds it for the trace
:func:`sim.invariants.check` hands every oracle and drops it when the oracles are done, so no
oracle keeps anything of one run into the next. An oracle asked about any other sequence of
records (a test calling it on a forged trace, the shrinker asking one oracle) gets a grouping
built for that call: the same answer, only not shared.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
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
            runs = [at for at in map(self.positions.get, dict.fromkeys(kinds)) if at is not None]
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


# The grouping of the run being judged (:func:`judging`), None between runs.
_judged: ContextVar[KindIndex | None] = ContextVar("judged", default=None)


@contextmanager
def judging(trace: Sequence[Record]) -> Iterator[KindIndex]:
    """The run's grouping of ``trace``, shared by every oracle asking about it inside the block
    (the ``with``), and dropped at its end."""
    index = KindIndex(trace)
    token = _judged.set(index)
    try:
        yield index
    finally:
        _judged.reset(token)


def judged() -> KindIndex | None:
    """The grouping of the run being judged, if one is."""
    return _judged.get()


def kind_index(trace: Sequence[Record]) -> KindIndex:
    """The grouping of ``trace``: the judged run's when ``trace`` is its trace and holds the same
    records, else one built for this call."""
    index = _judged.get()
    if index is not None and index.trace is trace and index.held is None:
        return index  # the same tuple (what a run hands its oracles): it cannot have changed
    if index is None or not index.follows(trace):
        return KindIndex(trace)
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
