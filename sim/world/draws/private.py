"""The default world's draws for private parent completion (PRV-1..8), on their own streams so
the other draws keep still: which top-level children are spawned with ``completionTarget:
"parent"``, and which of those requests combine it with an option ``sessions_spawn`` refuses."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from actors.messages import ChildSpec
from actors.private.rules import (
    COMPLETION_TARGET_PARENT,
    Runtime,
    SpawnMode,
    SpawnOptions,
    spawn_refusal,
)
from actors.yields.turns import TurnEnd
from sim.choices import Chooser
from sim.faults.plan import TimelineEvent
from sim.scenario.turns import LifecycleDef, StatusCheckDef, TurnDef

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
# The share of seeds (with a private child whose turn finishes normally) where the race is
# aimed: that child's hand-off is held up in transit for a few seconds (a network delay armed on
# its run) and the /new is drawn inside that stretch, so the hand-off is already released and
# travelling when the session is reset (``private.refused-by-session``). Unaimed, a reset whole
# seconds after the release almost always finds the result either handed over already (the
# hand-off takes no virtual time) or not yet released; an aimed one still misses when the
# child's end comes later than drawn (a lane queue, a lost notice, a crash).
AIMED_SHARE = 0.4
AIMED_DELAY_S = (2, 6)  # the held-up hand-off's transit, in whole seconds


@attrs.frozen
class ResetRace:
    lifecycle: tuple[LifecycleDef, ...] = ()
    timeline: tuple[TimelineEvent, ...] = ()  # the armed transit delay of an aimed race


def draw_reset_race(chooser: Chooser, children: Sequence[ChildSpec],
                    turns: Sequence[TurnDef]) -> ResetRace:
    """Maybe a ``/new`` around the moment a private child's result is due back to its parent
    (its turn's normal finish, or its own end if later)."""
    sub = "workload:private:reset"
    ends: dict[tuple[str, str | None], TurnDef] = {
        (t.session, t.id): t for t in turns if t.end_ms is not None}
    due = [(max(c.spawn_at_ms + c.run_ms, ends[(c.requester, c.turn)].end_ms or 0), c)
           for c in children if c.completion_target == COMPLETION_TARGET_PARENT
           and not refused(c) and (c.requester, c.turn) in ends]
    finished = [(at_ms, c) for at_ms, c in due
                if ends[(c.requester, c.turn)].ends is TurnEnd.FINISH]
    if finished and chooser.chance(sub, AIMED_SHARE):
        at_ms, child = finished[chooser.choose(sub, len(finished))]
        low, high = AIMED_DELAY_S
        delay_ms = 1000 * (low + chooser.choose(sub, high - low + 1))
        # Somewhere inside the transit, from just after the hand-off left.
        reset_ms = at_ms + 1 + chooser.choose(sub, delay_ms - 1)
        return ResetRace((LifecycleDef(reset_ms, child.requester, "reset"),),
                         (TimelineEvent(child.spawn_at_ms, "delay", child=child.id,
                                        delay_ms=delay_ms),))
    if not due or not chooser.chance(sub, RESET_RACE_SHARE):
        return ResetRace()
    at_ms, child = due[chooser.choose(sub, len(due))]
    return ResetRace((LifecycleDef(at_ms + 1000 * chooser.choose(sub, 3), child.requester,
                                   "reset"),))


# The share of seeds (with a private child that should end while its turn is still open) where
# that turn also checks the child's status after its end, before the turn yields or finishes:
# the check must neither consume nor invalidate the retained result (PRV-6).
CHECK_SHARE = 0.3


def draw_status_check(chooser: Chooser, children: Sequence[ChildSpec],
                      turns: Sequence[TurnDef]) -> tuple[TurnDef, ...]:
    """``turns``, one of them maybe with a status check of a completed private child."""
    sub = "workload:private:check"
    by_turn: dict[tuple[str, str | None], int] = {
        (t.session, t.id): n for n, t in enumerate(turns)}
    candidates = [(by_turn[(c.requester, c.turn)], c) for c in children
                  if c.completion_target == COMPLETION_TARGET_PARENT and not refused(c)
                  and (c.requester, c.turn) in by_turn
                  and (end := turns[by_turn[(c.requester, c.turn)]].end_ms) is not None
                  and c.spawn_at_ms + c.run_ms < end - 1]
    if not candidates or not chooser.chance(sub, CHECK_SHARE):
        return tuple(turns)
    n, child = candidates[chooser.choose(sub, len(candidates))]
    turn = turns[n]
    assert turn.end_ms is not None
    done = child.spawn_at_ms + child.run_ms
    at_ms = done + 1 + chooser.choose(sub, turn.end_ms - done - 1)
    checked = attrs.evolve(turn, checks=(*turn.checks, StatusCheckDef(child.id, at_ms)))
    return (*turns[:n], checked, *turns[n + 1:])
