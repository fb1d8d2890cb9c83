"""Line numbers for TOML keys, which ``tomllib`` does not report.

A light scan of the source maps each ``[table]`` / ``[[array]]`` header and each ``key = value``
line to its line number, so validation errors can say ``file:line: field: what is wrong``. It
understands the subset scenarios use (headers, dotted headers, bare and quoted keys); anything it
cannot place falls back to the line of the enclosing table.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\-\"' ]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*(\"[^\"]*\"|'[^']*'|[A-Za-z0-9_\-]+)\s*=")


class Positions:
    def __init__(self, text: str) -> None:
        self._lines: dict[tuple[str, ...], int] = {}
        counts: dict[str, int] = {}
        table: tuple[str, ...] = ()
        in_multiline = False
        for number, line in enumerate(text.splitlines(), start=1):
            # Skip the bodies of multi-line strings, which may contain anything.
            if line.count('"""') % 2 == 1 or line.count("'''") % 2 == 1:
                if in_multiline:
                    in_multiline = False
                    continue
                in_multiline = True
                key = _KEY.match(line)
                if key:
                    self._lines.setdefault((*table, key.group(1).strip("\"'")), number)
                continue
            if in_multiline:
                continue
            header = _HEADER.match(line)
            if header and not _KEY.match(line):
                name = header.group(2).replace('"', "").replace("'", "").strip()
                if header.group(1) == "[[":
                    index = counts.get(name, 0)
                    counts[name] = index + 1
                    table = (name, str(index))
                else:
                    table = (name,)
                self._lines.setdefault(table, number)
                continue
            key = _KEY.match(line)
            if key:
                self._lines.setdefault((*table, key.group(1).strip("\"'")), number)

    def line(self, *path: str | int) -> int | None:
        """Line of the key at ``path`` (e.g. ``("children", 2, "outcome")``), or its table's."""
        parts = tuple(str(p) for p in path)
        while parts:
            found = self._lines.get(parts)
            if found is not None:
                return found
            parts = parts[:-1]
        return None
