"""Where a top-level requester's completion goes: route resolution (DEL-4, DEL-5). Pure.

A requester session carries four routing facts (reference §a, §c2; seed 002):

- its **origin**: the channel, chat (``to``) and thread the requester turn was captured from;
- its **stored route**: the last external target the session delivered to (OpenClaw's
  ``lastChannel`` / ``lastTo`` / ``lastThreadId``);
- a **binding**: a conversation/thread the session is bound to;
- a **hook override**: what the ``subagent_delivery_target`` hook returns.

The order (DEL-5): a bound conversation/thread, else the hook's override, picks the target;
missing fields are filled from the requester's own route, which is the captured origin with its
missing fields filled from a *compatible* stored route (same channel; for the thread, same chat
too), or the stored route when no origin was captured. A webchat origin is internal: it never
inherits an earlier external target from the stored route. A hook that returns nothing or only
an internal channel (webchat) leaves the origin in place. An override that picks another chat
does not inherit the old thread; an explicit thread from a binding or hook is kept. With no
channel and chat at the end, the completion is injected internally (``deliver=false``).

Nested requesters (sub-agent sessions) never reach this: they always get an internal injection.
"""

from __future__ import annotations

from collections.abc import Collection

import attrs

from actors.messages import Target
from actors.mutants import MUTANT_OVERRIDE_KEEPS_THREAD, MUTANT_STORED_ROUTE_BEATS_ORIGIN

# The internal channel of OpenClaw's own UI: its "target" is the session itself.
WEBCHAT = "webchat"


@attrs.frozen
class SessionRouting:
    """A top-level requester session's routing facts (``None``: the session has none)."""

    origin: Target | None = None
    stored: Target | None = None
    binding: Target | None = None
    hook: Target | None = None


@attrs.frozen
class Resolution:
    """Where the completion goes: ``target`` (``deliver=true``) or ``None`` (an internal
    injection only, ``deliver=false``). ``probes`` name the rare branches taken."""

    target: Target | None
    probes: tuple[str, ...] = ()


def resolve(routing: SessionRouting, mutants: Collection[str] = ()) -> Resolution:
    probes: list[str] = []
    base = _own_route(routing, mutants, probes)
    override = _override(routing, probes)
    target = base if override is None else _apply(override, base, mutants, probes)
    if target is None or target.channel in (None, WEBCHAT) or target.to is None:
        probes.append("route.internal")
        return Resolution(None, tuple(probes))
    return Resolution(target, tuple(probes))


def _own_route(routing: SessionRouting, mutants: Collection[str],
               probes: list[str]) -> Target | None:
    """The requester's own route: the captured origin, filled from a compatible stored route."""
    origin, stored = routing.origin, routing.stored
    if origin is None:
        if stored is not None:
            probes.append("route.stored-fallback")
        return stored
    if origin.channel == WEBCHAT:
        # Internal: the session's earlier external target is not inherited.
        if stored is not None:
            probes.append("route.webchat-ignores-stored")
        return origin
    if stored is None or stored.channel != origin.channel:
        return origin
    if MUTANT_STORED_ROUTE_BEATS_ORIGIN in mutants:
        first, second = stored, origin
    else:
        first, second = origin, stored
    to = first.to or second.to
    thread = first.thread
    if thread is None and second.to == to:
        thread = second.thread
    if (to, thread) != (origin.to, origin.thread):
        probes.append("route.origin-filled-from-stored")
    return Target(origin.channel, to, thread)


def _override(routing: SessionRouting, probes: list[str]) -> Target | None:
    """A bound conversation/thread first, then the hook (unless it returned nothing useful)."""
    if routing.binding is not None:
        probes.append("route.bound")
        return routing.binding
    hook = routing.hook
    if hook is None:
        return None
    if hook.channel == WEBCHAT or hook.to is None:
        probes.append("route.hook-ignored")
        return None
    probes.append("route.hook")
    return hook


def _apply(override: Target, base: Target | None, mutants: Collection[str],
           probes: list[str]) -> Target:
    """The override's fields, the rest from the requester's own route; the old thread only when
    the override stays in the same chat."""
    channel = override.channel or (base.channel if base is not None else None)
    if override.thread is not None:
        return Target(channel, override.to, override.thread)
    old = base.thread if base is not None else None
    if old is None:
        return Target(channel, override.to)
    same_chat = base is not None and (base.channel, base.to) == (channel, override.to)
    if same_chat or MUTANT_OVERRIDE_KEEPS_THREAD in mutants:
        probes.append("route.thread-inherited")
        return Target(channel, override.to, old)
    probes.append("route.thread-not-inherited")
    return Target(channel, override.to)
