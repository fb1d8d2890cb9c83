"""Line numbers for TOML keys, which ``tomllib`` does not report.

A light scan of the source maps each ``[table]`` / ``[[array]]`` header and each ``key = value``
to its line number, so validation errors can say ``file:line: field: what is wrong``. The scan runs
only on text ``tomllib`` has already accepted, so it can be simple; it still follows strings of all
four kinds (a multi-line string may hold lines that look like headers or keys), comments, dotted
headers and keys, multi-line arrays and inline tables. Array-of-tables elements are numbered the
way ``tomllib`` numbers them (``[[a.b]]`` counts within the current ``[[a]]``). Anything it cannot
place falls back to the line of the enclosing table; the document itself is line 1.
"""

from __future__ import annotations

import re

from actors.inputs.lines import LineIndex

_BARE = re.compile(r"[A-Za-z0-9_\-]+")
_SCALAR_END = re.compile(r"[,\]}\n#]")
_BASIC_ESCAPE = re.compile(r'\\.|"', re.DOTALL)


class Positions(LineIndex):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        # Arrays of tables seen so far: path -> number of elements.
        self._arrays: dict[tuple[str, ...], int] = {}
        try:
            self._scan()
        except (IndexError, ValueError, RecursionError):  # keep what was placed
            pass

    # -- the scan --------------------------------------------------------------------------------

    def _scan(self) -> None:
        text = self._text
        table: tuple[str, ...] = ()
        i = self._skip_blank(0, newlines=True)
        while i < len(text):
            start = i
            if text.startswith("[[", i):
                names, i = self._key(i + 2, "]")
                parent = self._resolve(names[:-1])
                array = (*parent, names[-1])
                index = self._arrays.get(array, 0)
                self._arrays[array] = index + 1
                table = (*array, str(index))
                self._mark(array, start)
                self._mark(table, start)
                i += 2  # "]]"
            elif text.startswith("[", i):
                names, i = self._key(i + 1, "]")
                table = (*self._resolve(names[:-1]), names[-1])
                self._mark(table, start)
                i += 1  # "]"
            else:
                names, i = self._key(i, "=")
                for n in range(1, len(names) + 1):
                    self._mark((*table, *names[:n]), start)
                i = self._value(i + 1, (*table, *names))
            i = self._skip_blank(i, newlines=True)

    def _resolve(self, names: tuple[str, ...]) -> tuple[str, ...]:
        """A header's parent path, with the current element of each array of tables on the way."""
        path: tuple[str, ...] = ()
        for name in names:
            path = (*path, name)
            count = self._arrays.get(path)
            if count:
                path = (*path, str(count - 1))
        return path

    def _skip_blank(self, i: int, *, newlines: bool) -> int:
        """Skip spaces and comments (and line breaks, if ``newlines``)."""
        text = self._text
        while i < len(text):
            c = text[i]
            if c in " \t" or (newlines and c in "\r\n"):
                i += 1
            elif c == "#":
                end = text.find("\n", i)
                i = len(text) if end < 0 else end
            else:
                break
        return i

    def _key(self, i: int, until: str) -> tuple[tuple[str, ...], int]:
        """A (dotted) key starting at ``i``; returns its parts and the index of ``until``."""
        text = self._text
        names: list[str] = []
        while True:
            i = self._skip_blank(i, newlines=False)
            if text[i] == '"':
                end = self._basic_end(i + 1)
                names.append(text[i + 1:end - 1])
                i = end
            elif text[i] == "'":
                end = text.index("'", i + 1)
                names.append(text[i + 1:end])
                i = end + 1
            else:
                match = _BARE.match(text, i)
                if match is None:
                    raise ValueError(f"no key at {i}")
                names.append(match.group())
                i = match.end()
            i = self._skip_blank(i, newlines=False)
            if text[i] == ".":
                i += 1
                continue
            if text[i] != until:
                raise ValueError(f"expected {until!r} at {i}")
            return tuple(names), i

    def _basic_end(self, i: int) -> int:
        """Index just past the closing quote of a one-line basic string whose body starts at i."""
        for match in _BASIC_ESCAPE.finditer(self._text, i):
            if match.group() == '"':
                return match.end()
        raise ValueError("unterminated string")

    def _value(self, i: int, path: tuple[str, ...]) -> int:
        """Skip the value starting at (or after blanks from) ``i``; returns the index past it."""
        text = self._text
        i = self._skip_blank(i, newlines=False)
        if text.startswith('"""', i):
            j = i + 3
            while True:
                if text[j] == "\\":
                    j += 2
                elif text.startswith('"""', j):
                    break
                else:
                    j += 1
            return self._past_quotes(j, '"')
        if text.startswith("'''", i):
            return self._past_quotes(text.index("'''", i + 3), "'")
        if text[i] == '"':
            return self._basic_end(i + 1)
        if text[i] == "'":
            return text.index("'", i + 1) + 1
        if text[i] == "[":
            i += 1
            index = 0
            while True:
                i = self._skip_blank(i, newlines=True)
                if text[i] == "]":
                    return i + 1
                element = (*path, str(index))
                self._mark(element, i)
                i = self._value(i, element)
                index += 1
                i = self._skip_blank(i, newlines=True)
                if text[i] == ",":
                    i += 1
        if text[i] == "{":
            i += 1
            while True:
                i = self._skip_blank(i, newlines=False)
                if text[i] == "}":
                    return i + 1
                start = i
                names, i = self._key(i, "=")
                for n in range(1, len(names) + 1):
                    self._mark((*path, *names[:n]), start)
                i = self._value(i + 1, (*path, *names))
                i = self._skip_blank(i, newlines=False)
                if text[i] == ",":
                    i += 1
        match = _SCALAR_END.search(text, i)
        end = len(text) if match is None else match.start()
        if end == i:  # not a value: stop rather than loop
            raise ValueError(f"no value at {i}")
        return end

    def _past_quotes(self, j: int, quote: str) -> int:
        """``j`` is at a closing triple quote; up to two more quotes may belong to the body."""
        end = j + 3
        extra = 0
        while extra < 2 and end < len(self._text) and self._text[end] == quote:
            end += 1
            extra += 1
        return end
