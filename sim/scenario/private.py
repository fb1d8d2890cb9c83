"""A scenario child's private-completion keys (PRV-4): ``completion_target`` and the spawn options
that may not be combined with it. The options are modelled only as such refused combinations,
so without ``completion_target`` each must keep its default (a collector or ACP run is not
modelled otherwise, and must not silently run as an ordinary child)."""

from __future__ import annotations

import re

from actors.inputs import Node
from actors.private.rules import DEFAULT_OPTIONS, Runtime, SpawnMode, SpawnOptions
from actors.states import values

_PRIVATE_KEYS = ("completion_target", "runtime", "collect", "visible", "thread", "mode")
_OPTION_KEYS = _PRIVATE_KEYS[1:]


def completion_target(table: Node) -> str | None:
    target: str | None = table.text("completion_target", None)
    if target is not None and not re.match(r"^[a-z][a-z_-]{0,31}$", target):
        raise table.fail("completion_target", f"{target!r} is not a target name like 'parent'")
    return target


def spawn_options(table: Node) -> SpawnOptions:
    options = SpawnOptions(
        runtime=Runtime(table.text("runtime", DEFAULT_OPTIONS.runtime.value,
                                   choices=values(Runtime))),
        collect=table.boolean("collect", False),
        visible=table.boolean("visible", False),
        thread=table.boolean("thread", False),
        mode=SpawnMode(table.text("mode", DEFAULT_OPTIONS.mode.value, choices=values(SpawnMode))),
    )
    if not options.is_default and not table.has("completion_target"):
        key = next(k for k in _OPTION_KEYS
                   if table.has(k) and getattr(options, k) != getattr(DEFAULT_OPTIONS, k))
        raise table.fail(key, "is modelled only together with completion_target (a "
                         "combination sessions_spawn refuses, PRV-4)")
    return options
