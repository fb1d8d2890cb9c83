"""A run's choices as the shrinker edits them: one list of choice indices per subsystem, in the
order the subsystems were first asked (sim/choices.py follows such lists leniently, so every
edit is a valid run).
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.choices import Schedule

# A run's choices, one list per subsystem in the order the subsystems were first asked.
Streams = tuple[tuple[str, tuple[int, ...]], ...]


def streams_of(schedule: Schedule) -> Streams:
    """A schedule's choice indices, one list per subsystem."""
    streams: dict[str, list[int]] = {}
    for sub, _, index in schedule.choices:
        streams.setdefault(schedule.subsystems[sub], []).append(index)
    return tuple((name, tuple(values)) for name, values in streams.items())


def _total(streams: Streams) -> int:
    return sum(len(values) for _, values in streams)


def _without_trailing_zeros(streams: Streams) -> Streams:
    """Past its end a list gives 0s, so trailing 0s (and lists of only 0s) say nothing."""
    out = []
    for name, values in streams:
        end = len(values)
        while end and values[end - 1] == 0:
            end -= 1
        if end:
            out.append((name, values[:end]))
    return tuple(out)


def _replace(streams: Streams, name: str, values: Sequence[int]) -> Streams:
    return tuple((n, tuple(values) if n == name else v) for n, v in streams)


def _stream(streams: Streams, name: str) -> tuple[int, ...]:
    return next((v for n, v in streams if n == name), ())
