"""The base of every trace event, and :func:`register`, which gives each class its JSON form.

Pure: no IO. Every event module of this package imports only this one (and the model's closed
sets in ``actors/states.py``); ``actors/events/__init__.py`` gathers them.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar, cast

import attrs

JsonValue = Any


class Event:
    """Base of every trace event. :func:`register` gives each class its ``to_json``."""

    __slots__ = ()
    kind: ClassVar[str]
    fields: ClassVar[tuple[str, ...]] = ()  # JSON names, in order

    def to_json(self) -> dict[str, JsonValue]:
        raise NotImplementedError(f"{type(self).__name__} is not registered")


E = TypeVar("E", bound=Event)


def register(cls: type[E]) -> type[E]:
    """Give an attrs event class its ``to_json``: generated once, as attrs generates ``__init__``,
    so emitting costs one dict display and no reflection. Every class in this module has it; a
    simulator-only event (a benchmark's) applies this as its outer decorator."""
    names = [(f.name, f.name.rstrip("_")) for f in attrs.fields(cast(Any, cls))]
    body = ", ".join(f"{json_name!r}: self.{name}" for name, json_name in names)
    namespace: dict[str, Any] = {}
    exec(f"def to_json(self):\n    return {{{body}}}\n", namespace)
    to_json = namespace["to_json"]
    to_json.__qualname__ = f"{cls.__qualname__}.to_json"
    cls.to_json = to_json  # type: ignore[method-assign]
    cls.fields = tuple(json_name for _, json_name in names)
    return cls
