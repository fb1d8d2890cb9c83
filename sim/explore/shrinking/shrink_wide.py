"""The shrinker's edits that drop children with the fault choices about them, and the one that
leaves children of a wide batch out (sim/world/turns.py).

A wide batch has eighty children, a size free runs never vary: each child's slot takes an
optional choice (``workload:wide:drop``, 1 to leave it out) that only a guide makes. Leaving a
child out keeps the other children's ids, times and drawn values (its own draws are still made),
but it also takes away the fault plan's opportunities about it: every seeded fault that struck
a later opportunity would move to a different one. So the edit also deletes the fault choices
the dropped child's opportunities took (the run's ``about:<child>`` spans, sim/choices.py
``about``): a fault that struck the 74th child's send still strikes it with 73 children gone.
Dropping a drawn child (its span labelled ``child:<id>``) deletes the choices about it the same
way.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from sim.choices import ABOUT_SPAN, Span
from sim.explore.streams import Streams, _stream
from sim.world.turns import WIDE_DROP, WIDE_SPAN

# Blocks of slots tried together, largest first (a batch has eighty).
WIDE_BLOCKS = (64, 32, 16, 8, 4, 2, 1)


def wide_slots(spans: Sequence[Span]) -> list[str]:
    """The wide children's ids, one per slot in the order the run drew them (kept or not)."""
    return [label.removeprefix(WIDE_SPAN) for label, _ in spans if label.startswith(WIDE_SPAN)]


def kept_slots(streams: Streams, spans: Sequence[Span]) -> list[int]:
    """The slots whose child the run kept."""
    drops = _stream(streams, WIDE_DROP)
    return [i for i in range(len(wide_slots(spans))) if not (i < len(drops) and drops[i])]


def without_wide(streams: Streams, spans: Sequence[Span], slots: Collection[int]) -> Streams:
    """``streams`` with the children of ``slots`` left out and the fault choices their
    opportunities took deleted."""
    ids = wide_slots(spans)
    drops = list(_stream(streams, WIDE_DROP))
    drops += [0] * (len(ids) - len(drops))
    for slot in slots:
        drops[slot] = 1
    streams = cut(streams, about(spans, [ids[slot] for slot in slots]))
    if WIDE_DROP not in dict(streams):
        streams += ((WIDE_DROP, ()),)
    return tuple((name, tuple(drops) if name == WIDE_DROP else values)
                 for name, values in streams)


def about(spans: Sequence[Span], children: Collection[str]) -> list[tuple[str, int, int]]:
    """The choices the fault plan's opportunities took about ``children``."""
    labels = {f"{ABOUT_SPAN}{child}" for child in children}
    return [piece for label, ranges in spans if label in labels for piece in ranges]


def cut(streams: Streams, ranges: Sequence[tuple[str, int, int]]) -> Streams:
    """``streams`` without the choices of ``ranges`` (each (subsystem, start, end) over the
    streams as they are: all cut at once)."""
    cuts: dict[str, list[tuple[int, int]]] = {}
    for name, start, end in ranges:
        cuts.setdefault(name, []).append((start, end))
    out = []
    for name, values in streams:
        for start, end in sorted(cuts.get(name, ()), reverse=True):
            values = values[:start] + values[end:]
        out.append((name, values))
    return tuple(out)
