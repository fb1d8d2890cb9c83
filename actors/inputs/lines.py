"""What the TOML and JSON position scanners share: line starts, and a path's line with fallback."""

from __future__ import annotations

import bisect
import re


class LineIndex:
    """Maps paths (e.g. ``("children", 2, "outcome")``) to the line they start on.

    A scanner subclass records paths with :meth:`_mark`; :meth:`line` falls back to the nearest
    enclosing path that was recorded, and to line 1 for the document itself.
    """

    def __init__(self, text: str) -> None:
        self._text = text
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self._lines: dict[tuple[str, ...], int] = {}

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
        return bisect.bisect_right(self._line_starts, index)

    def _mark(self, path: tuple[str, ...], index: int) -> None:
        self._lines.setdefault(path, self._line_of(index))
