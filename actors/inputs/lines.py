"""What the TOML and JSON position scanners share: line starts, and a path's line with fallback."""

from __future__ import annotations

from collections.abc import Callable

# At most this many paths are placed: a document of millions of array elements would need
# gigabytes for them; past it, a value's line is its nearest placed parent's.
MAX_PLACED = 100_000


class Full(ValueError):
    """The index holds ``MAX_PLACED`` paths: the scan stops (keeping what was placed)."""


class LineIndex:
    """Maps paths (e.g. ``("children", 2, "outcome")``) to the line they start on.

    A scanner subclass records paths with :meth:`_mark`; :meth:`line` falls back to the nearest
    enclosing path that was recorded, and to line 1 for the document itself.
    """

    def __init__(self, text: str) -> None:
        self._text = text
        self._lines: dict[tuple[str, ...], int] = {}
        self._at = (0, 1)  # the last index placed and its line: the scan runs forward

    def line(self, *path: str | int) -> int:
        """Line of the value at ``path``, or of the nearest enclosing one that was placed."""
        parts = tuple(str(p) for p in path)
        while parts:
            found = self._lines.get(parts)
            if found is not None:
                return found
            parts = parts[:-1]
        return self._lines.get((), 1)

    def _line_of(self, index: int) -> int:
        last, line = self._at if index >= self._at[0] else (0, 1)
        line += self._text.count("\n", last, index)
        self._at = (index, line)
        return line

    def _mark(self, path: tuple[str, ...], index: int) -> None:
        if path not in self._lines:
            if len(self._lines) >= MAX_PLACED:
                raise Full(f"{MAX_PLACED:,} paths placed")
            self._lines[path] = self._line_of(index)


def lazily(make: Callable[[str], LineIndex], text: str) -> Callable[..., int]:
    """``make(text).line``, the index built at the first call: a document without a problem
    never pays for it."""
    index: list[LineIndex] = []

    def line(*path: str | int) -> int:
        if not index:
            index.append(make(text))
        return index[0].line(*path)

    return line
