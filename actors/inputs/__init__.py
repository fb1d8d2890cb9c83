"""Reading user input: TOML and JSON documents with ``file:line: field: what is wrong`` errors.

One reader for every door (scenario files, session logs, results files, schedules): parse the
text here, then walk it with :class:`Node`, whose accessors check type and range and locate the
offending line. Pure: callers read the file and hand over its bytes or text.
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

from actors.errors import InputError
from actors.inputs.jsonpos import JsonPositions
from actors.inputs.lines import lazily
from actors.inputs.node import At, Document, Node, field_name, kind_of
from actors.inputs.tomlpos import Positions


def decode(path: str | None, data: bytes) -> str:
    """UTF-8 text, or an error naming the line of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(path, line, "", f"not UTF-8 text: {exc.reason}") from None


def toml_document(path: str | None, text: str) -> tuple[Document, Node]:
    """Parse TOML; the document's root table as a :class:`Node`."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        # "(at end of document)": the last line.
        line = int(match.group(1)) if match else text.rstrip("\n").count("\n") + 1
        message = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "",
                         str(exc)) or "invalid TOML"
        raise InputError(path, line, "", f"invalid TOML: {message}") from None
    except RecursionError:
        raise InputError(path, None, "", "invalid TOML: nested too deeply") from None
    except ValueError as exc:  # an integer too long for Python to convert
        raise InputError(path, _long_number_line(text), "", f"invalid TOML: {_short(exc)}") \
            from None
    doc = Document(path, "toml", lazily(Positions, text))
    return doc, doc.root(data)


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} appears twice in one object")
        self.key = key


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's members, refusing a key given twice (``json`` keeps the last one silently:
    a schedule with two ``seed``s would replay the second)."""
    members = dict(pairs)
    if len(members) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return members


def json_value(path: str | None, text: str, line: int | None = None) -> Any:
    """Parse JSON (one document, or one log line when ``line`` is given); a key given twice in
    one object is an error."""
    try:
        return json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique)
    except _DuplicateKey as exc:
        where = line if line is not None else _second_key_line(text, exc.key)
        raise InputError(path, where, "", f"invalid JSON: {exc}") from None
    except json.JSONDecodeError as exc:
        if line is None:
            raise InputError(path, exc.lineno, "", f"invalid JSON: {exc.msg}") from None
        raise InputError(path, line, "", f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise InputError(path, line, "", "invalid JSON: nested too deeply") from None
    except ValueError as exc:  # NaN / Infinity, which JSON lacks; an integer too long to convert
        where = line if line is not None else _constant_line(text) or _long_number_line(text)
        raise InputError(path, where, "", f"invalid JSON: {_short(exc)}") from None


def _second_key_line(text: str, key: str) -> int | None:
    """The line where ``key`` is given a second time (its second appearance as a key)."""
    found = [m.start() for m in re.finditer(re.escape(json.dumps(key)) + r"\s*:", text)][1:2]
    return text.count("\n", 0, found[0]) + 1 if found else None


_CONSTANT_OR_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|NaN|-?Infinity')


def _constant_line(text: str) -> int | None:
    """The line of the first NaN or Infinity outside a string."""
    for match in _CONSTANT_OR_STRING.finditer(text):
        if not match.group().startswith('"'):
            return text.count("\n", 0, match.start()) + 1
    return None


def _long_number_line(text: str) -> int | None:
    """The line of the first integer too long to convert (Python's limit is 4,300 digits)."""
    match = re.search(r"\d{4000,}", text)
    return None if match is None else text.count("\n", 0, match.start()) + 1


def _short(exc: Exception) -> str:
    return str(exc).split(";")[0]


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def json_document(path: str | None, text: str) -> tuple[Document, Node]:
    """Parse a JSON document whose top level is an object; its root as a :class:`Node`."""
    data = json_value(path, text)
    doc = Document(path, "json", lazily(JsonPositions, text))
    return doc, doc.root(data)


def json_line(path: str | None, line: int | None, text: str) -> Node:
    """One JSONL line, which must be an object; every error names that line."""
    data = json_value(path, text, line)
    return Document(path, "json", lambda *at: line).root(data)


__all__ = ["At", "Document", "InputError", "JsonPositions", "Node", "Positions", "decode",
           "field_name", "json_document", "json_line", "json_value", "kind_of", "toml_document"]
