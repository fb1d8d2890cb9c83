"""Line numbers for JSON values, which ``json`` does not report.

The same idea as :mod:`actors.inputs.tomlpos`: a light scan of text ``json`` has already accepted
maps each object member and array element (by its path, e.g. ``("results", 2, "status")``) to the
line it starts on, so a complaint can say ``file:line: field: what is wrong``.
"""

from __future__ import annotations

import json.decoder
import re
from collections.abc import Callable

from actors.inputs.lines import LineIndex

# json.decoder's string scanner (C or Python); the stubs do not declare it.
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_SCALAR = re.compile(r'-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null|NaN|-?Infinity')


class JsonPositions(LineIndex):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        try:
            self._value(self._skip(0), ())
        except (IndexError, ValueError, RecursionError):  # keep what was placed
            pass

    def _skip(self, i: int) -> int:
        text = self._text
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        return i

    def _value(self, i: int, path: tuple[str, ...]) -> int:
        text = self._text
        self._mark(path, i)
        c = text[i]
        if c == "{":
            i = self._skip(i + 1)
            if text[i] == "}":
                return i + 1
            while True:
                key_start = i
                key, i = _scanstring(text, i + 1)
                member = (*path, key)
                self._mark(member, key_start)
                i = self._skip(i)
                i = self._value(self._skip(i + 1), member)  # past ":"
                i = self._skip(i)
                if text[i] == "}":
                    return i + 1
                i = self._skip(i + 1)  # past ","
        if c == "[":
            i = self._skip(i + 1)
            if text[i] == "]":
                return i + 1
            index = 0
            while True:
                i = self._skip(self._value(i, (*path, str(index))))
                index += 1
                if text[i] == "]":
                    return i + 1
                i = self._skip(i + 1)
        if c == '"':
            return _scanstring(text, i + 1)[1]
        match = _SCALAR.match(text, i)
        if match is None:
            raise ValueError(f"no value at {i}")
        return match.end()
