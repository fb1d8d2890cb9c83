"""The default world's draws for private parent completion (PRV-1..8), on their own streams so
the other draws keep still: which top-level children are spawned with ``completionTarget:
"parent"``, and which of those requests combine it with an option ``sessions_spawn`` refuses."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from actors.messages import ChildSpec
from actors.private import (
    COMPLETION_TARGET_PARENT,
    Runtime,
    SpawnMode,
    SpawnOptions,
    spawn_refusal,
)
from sim.choices import Chooser
from sim.scenario.turns import LifecycleDef, TurnDef

# The share of drawn top-level children that complete privately, and of those requests the share
# that is refused at spawn time (PRV-4).
PRIVATE_SHARE = 0.25
REFUSED_SHARE = 0.2
# The forbidden combinations a refused request draws from (reference §c10), one or two at once.
_FORBIDDEN: tuple[SpawnOptions, ...] = (
    SpawnOptions(runtime=Runtime.ACP),
    SpawnOptions(collect=True),
    SpawnOptions(visible=True),
    SpawnOptions(thread=True),
    SpawnOptions(mode=SpawnMode.SESSION),
)
_OTHER_TARGETS = ("channel",)


def draw_private(chooser: Chooser, child: ChildSpec) -> ChildSpec:
    """``child`` as it is asked for: maybe private, maybe a refused private request. A nested
    child (spawned by a child's run, outside any requester turn) stays public."""
    sub = "workload:private"
    if child.parent is not None or not chooser.chance(sub, PRIVATE_SHARE):
        return child
    private = attrs.evolve(child, completion_target=COMPLETION_TARGET_PARENT,
                           expects_completion=True)
    if not chooser.chance(sub, REFUSED_SHARE):
        return private
    how = chooser.choose(sub, len(_FORBIDDEN) + 2)
    if how < len(_FORBIDDEN):
        options = _FORBIDDEN[how]
        if chooser.chance(sub, 0.3):  # two at once: the refusal names both
            other = _FORBIDDEN[(how + 1 + chooser.choose(sub, len(_FORBIDDEN) - 1))
                               % len(_FORBIDDEN)]
            options = _merge(options, other)
        return attrs.evolve(private, options=options)
    if how == len(_FORBIDDEN):
        return attrs.evolve(private, expects_completion=False)
    return attrs.evolve(private, completion_target=_OTHER_TARGETS[0])


def _merge(a: SpawnOptions, b: SpawnOptions) -> SpawnOptions:
    default = SpawnOptions()
    return SpawnOptions(**{
        field.name: getattr(b, field.name) if getattr(a, field.name) == getattr(
            default, field.name) else getattr(a, field.name)
        for field in attrs.fields(SpawnOptions)})


def refused(child: ChildSpec) -> bool:
    """Whether sessions_spawn refuses ``child``'s request (then it never runs, and spawns
    nothing: the world draws no nested child under it)."""
    return spawn_refusal(child.completion_target, child.options,
                         child.expects_completion) is not None


# The share of seeds where the requester is reset just as a private result is handed back, so
# the reset can race the hand-off (the session then refuses it, PRV-3).
RESET_RACE_SHARE = 0.12


def draw_reset_race(chooser: Chooser, children: Sequence[ChildSpec],
                    turns: Sequence[TurnDef]) -> tuple[LifecycleDef, ...]:
    """Maybe a ``/new`` a few seconds after a private child's result is due back to its
    parent (its turn's normal finish, or its own end if later)."""
    sub = "workload:private:reset"
    ends: dict[tuple[str, str | None], int] = {
        (t.session, t.id): t.end_ms for t in turns if t.end_ms is not None}
    due = [(max(c.spawn_at_ms + c.run_ms, ends[(c.requester, c.turn)]), c.requester)
           for c in children if c.completion_target == COMPLETION_TARGET_PARENT
           and not refused(c) and (c.requester, c.turn) in ends]
    if not due or not chooser.chance(sub, RESET_RACE_SHARE):
        return ()
    at_ms, session = due[chooser.choose(sub, len(due))]
    return (LifecycleDef(at_ms + 1000 * chooser.choose(sub, 3), session, "reset"),)
