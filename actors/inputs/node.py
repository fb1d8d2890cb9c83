"""Typed, located access to a parsed TOML or JSON document.

Every reader of user input (scenarios, session logs, results files, schedules) walks its document
through :class:`Node`: each accessor checks the type and range of one field and, when it is wrong,
raises an :class:`~actors.errors.InputError` that reads ``file:line: field: what is wrong``.
Unknown keys are errors (a typo must not pass silently). Pure: no IO.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from actors.errors import InputError

Dialect = Literal["toml", "json"]
# A value's place in the document: keys of tables/objects and indexes of arrays.
At = tuple[str | int, ...]


class Document:
    """One input text: its name, its dialect and how to find the line a value starts on."""

    def __init__(self, path: str | None, dialect: Dialect,
                 line_of: Callable[..., int | None] = lambda *at: None) -> None:
        self.path = path
        self.dialect = dialect
        self._line_of = line_of

    def line(self, at: At) -> int | None:
        return self._line_of(*at)

    def error(self, at: At, field: str, message: str) -> InputError:
        return InputError(self.path, self.line(at), field, message)

    def root(self, data: Any) -> Node:
        """The top-level value, which must be a table (TOML) or an object (JSON)."""
        if not isinstance(data, Mapping):
            raise self.error((), "", f"must be {_names(self.dialect)[dict]}, "
                             f"not {kind_of(data, self.dialect)}")
        return Node(self, data, ())


def field_name(path: At) -> str:
    """``("children", 2, "outcome")`` -> ``children[2].outcome``."""
    parts: list[str] = []
    for p in path:
        if isinstance(p, int) and parts:
            parts[-1] = f"{parts[-1]}[{p}]"
        else:
            parts.append(str(p))
    return ".".join(parts)


def _names(dialect: Dialect) -> dict[type, str]:
    if dialect == "toml":
        return {str: "a string", int: "an integer", float: "a number", bool: "true or false",
                list: "an array", dict: "a table"}
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false",
            list: "an array", dict: "an object", type(None): "null"}


def kind_of(value: object, dialect: Dialect) -> str:
    """What a parsed value is, in its format's words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table" if dialect == "toml" else "an object"
    return "a date or time"


class Node:
    """One table (TOML) or object (JSON) of a document, with its place in it."""

    __slots__ = ("data", "doc", "path")

    def __init__(self, doc: Document, data: Mapping[str, Any], path: At) -> None:
        self.doc = doc
        self.data = data
        self.path = path

    # -- complaints --------------------------------------------------------------------------

    def field(self, key: str | int) -> str:
        return field_name((*self.path, key))

    def fail(self, key: str, message: str) -> InputError:
        return self.doc.error((*self.path, key), self.field(key), message)

    def fail_item(self, key: str, index: int, message: str) -> InputError:
        """An error in one element of the array at ``key``, located on that element's line."""
        return self.doc.error((*self.path, key, index), self.field(key) + f"[{index}]", message)

    def fail_here(self, message: str) -> InputError:
        return self.doc.error(self.path, field_name(self.path), message)

    @property
    def line(self) -> int | None:
        return self.doc.line(self.path)

    # -- shape -------------------------------------------------------------------------------

    def check_keys(self, allowed: Sequence[str]) -> None:
        for key in self.data:
            if key not in allowed:
                raise self.fail(str(key), f"unknown field (expected one of: {', '.join(allowed)})")

    def has(self, key: str) -> bool:
        return key in self.data

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
        """The value at ``key`` if it is of ``kind``; ``default`` if absent (``...``: required).

        A JSON ``null`` counts as absent when the default is ``None``.
        """
        value = self.data.get(key)
        if key not in self.data or (value is None and default is None):
            if default is ...:
                raise self.fail(key, "is missing")
            return default
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if isinstance(value, bool) and bool not in kinds:  # bool is an int in Python, not here
            raise self.fail(key, f"must be {self._kinds(kinds)}, not a boolean")
        if not isinstance(value, kinds):
            raise self.fail(key, f"must be {self._kinds(kinds)}, "
                            f"not {kind_of(value, self.doc.dialect)}")
        return value

    def _kinds(self, kinds: tuple[type, ...]) -> str:
        names = _names(self.doc.dialect)
        if kinds[:2] == (int, float):
            kinds = (float, *kinds[2:])
        return " or ".join(names.get(k, k.__name__) for k in kinds)

    # -- scalars -----------------------------------------------------------------------------

    def text(self, key: str, default: Any = ..., *, choices: Sequence[str] | None = None,
             non_empty: bool = False, max_chars: int | None = None) -> Any:
        value = self.get(key, str, default)
        if isinstance(value, str):
            if non_empty and not value:
                raise self.fail(key, "must not be empty")
            if max_chars is not None and len(value) > max_chars:
                raise self.fail(key, f"is {len(value):,} characters long, over the limit of "
                                f"{max_chars:,}")
            if choices is not None and value not in choices:
                raise self.fail(key, f"{value!r} is not one of: {', '.join(choices)}")
        return value

    def boolean(self, key: str, default: Any = ...) -> Any:
        return self.get(key, bool, default)

    def integer(self, key: str, default: Any = ..., *, minimum: int = 0,
                maximum: int) -> Any:
        """An integer in ``minimum..maximum`` (every count read from a file has a limit)."""
        value = self.get(key, int, default)
        if isinstance(value, int) and value is not default:
            self._in_range(key, value, minimum, maximum, "")
        return value

    def number(self, key: str, default: Any = ..., *, minimum: float,
               maximum: float) -> Any:
        """A finite number (integer or float) in ``minimum..maximum``."""
        value = self.get(key, (int, float), default)
        if isinstance(value, int | float) and value is not default:
            if not math.isfinite(value):
                raise self.fail(key, "must be a finite number")
            self._in_range(key, value, minimum, maximum, "")
        return value

    def seconds(self, key: str, default: Any = ..., *, minimum: float = 0.0,
                maximum: float) -> Any:
        """A duration or instant in seconds (the default too), returned in whole milliseconds."""
        value = self.get(key, (int, float), default)
        if value is None:
            return None
        if not math.isfinite(value):
            raise self.fail(key, "must be a finite number of seconds")
        unit = " seconds"
        if maximum >= 86_400 and maximum % 86_400 == 0:
            unit += f", {maximum // 86_400:g} days"
        self._in_range(key, value, minimum, maximum, unit)
        return round(value * 1000)

    def _in_range(self, key: str, value: float, minimum: float, maximum: float,
                  unit: str) -> None:
        if value < minimum:
            least = unit.split(",")[0]
            if minimum == 1 and least.endswith("s"):  # "at least 1 second", not "1 seconds"
                least = least[:-1]
            raise self.fail(key, f"must be at least {minimum:g}{least}")
        if value > maximum:
            raise self.fail(key, f"must be at most {maximum:,g}{unit} (the limit)"
                            if isinstance(maximum, float) else
                            f"must be at most {maximum:,}{unit} (the limit)")

    # -- arrays and nested tables ------------------------------------------------------------

    def array(self, key: str, default: Any = ..., *, max_items: int | None = None) -> Any:
        value = self.get(key, list, default)
        if isinstance(value, list) and max_items is not None and len(value) > max_items:
            raise self.fail(key, f"must hold at most {max_items:,} entries (the limit)")
        return value

    def strings(self, key: str, default: Any = ..., *, non_empty: bool = False) -> Any:
        value = self.array(key, default)
        if not isinstance(value, list):
            return value if value is None else tuple(value)
        for index, item in enumerate(value):
            if not isinstance(item, str):
                raise self.fail_item(key, index, "must be a string, "
                                     f"not {kind_of(item, self.doc.dialect)}")
        if non_empty and not value:
            raise self.fail(key, "must not be empty")
        return tuple(value)

    def integers(self, key: str, default: Any = ..., *, minimum: int,
                 maximum: int) -> Any:
        """An array of integers, each in ``minimum..maximum``."""
        value = self.array(key, default)
        if not isinstance(value, list):
            return value
        for index, item in enumerate(value):
            if isinstance(item, bool) or not isinstance(item, int):
                raise self.fail_item(key, index, "must be an integer, "
                                     f"not {kind_of(item, self.doc.dialect)}")
            if not minimum <= item <= maximum:
                raise self.fail_item(key, index, f"must be in {minimum:,}..{maximum:,}")
        return value

    def node(self, key: str, default: Any = ...) -> Any:
        """The table/object at ``key`` as a :class:`Node` (``default`` if absent)."""
        value = self.get(key, dict, default)
        if isinstance(value, Mapping):
            return Node(self.doc, value, (*self.path, key))
        return value

    def nodes(self, key: str, default: Any = ()) -> list[Node]:
        """The array of tables/objects at ``key``, one :class:`Node` each (absent: none)."""
        value = self.data.get(key)
        if key not in self.data or (value is None and default is None):
            if default is ...:
                raise self.fail(key, "is missing")
            return []
        hint = (f"of tables ([[{self.field(key)}]])" if self.doc.dialect == "toml"
                else "of objects")
        if not isinstance(value, list):
            raise self.fail(key, f"must be an array {hint}, "
                            f"not {kind_of(value, self.doc.dialect)}")
        return [self.element(key, index) for index in range(len(value))]

    def element(self, key: str, index: int) -> Node:
        """Element ``index`` of the array at ``key``, which must be a table/object."""
        item = self.data[key][index]
        if not isinstance(item, Mapping):
            raise self.fail_item(key, index, f"must be {_names(self.doc.dialect)[dict]}, "
                                 f"not {kind_of(item, self.doc.dialect)}")
        return Node(self.doc, item, (*self.path, key, index))
