"""The default world's routing facts: what the seed draws for the requester session (DEL-4, DEL-5).

Each seed gives the workload's top-level requester a captured origin (an external chat, with or
without a thread, only a channel, webchat, or none), maybe a stored route (the same chat, another
chat, another channel), maybe a binding and maybe a hook override (nothing useful, the same chat,
another chat or channel, with or without an explicit thread), so that every branch of
actors/gateway/routing.py happens in a default sweep: bound, hook, stored fallback, origin filled
from a stored route, webchat, no route, and a thread kept, inherited or dropped. All on their own
stream, ``workload:routes``, so other draws keep still.
"""

from __future__ import annotations

import attrs

from actors.gateway.routing import WEBCHAT
from actors.messages import Target
from sim.choices import Chooser
from sim.scenario import SessionDef

SUB = "workload:routes"
OTHER_CHANNEL = "discord"
NO_ORIGIN_SHARE = 0.15
WEBCHAT_SHARE = 0.18
STORED_SHARE = 0.6
BINDING_SHARE = 0.12
HOOK_SHARE = 0.3


def draw_routing(chooser: Chooser, session: SessionDef) -> SessionDef:
    """``session`` with drawn routing facts; its channel (when it has one) is the home channel."""
    home = session.channel if session.channel not in (None, WEBCHAT) else "telegram"
    channel: str | None
    to = thread = None
    if chooser.chance(SUB, NO_ORIGIN_SHARE):
        channel = None
    elif chooser.chance(SUB, WEBCHAT_SHARE):
        channel = WEBCHAT
    else:
        channel = home
        to = None if chooser.chance(SUB, 0.2) else "chat-1"  # a channel-only origin
        thread = "topic-1" if chooser.chance(SUB, 0.5) else None
    stored = None
    if chooser.chance(SUB, STORED_SHARE):
        stored = Target(home if chooser.chance(SUB, 0.8) else OTHER_CHANNEL,
                        "chat-1" if chooser.chance(SUB, 0.5) else "chat-9",
                        "topic-9" if chooser.chance(SUB, 0.5) else None)
    binding = None
    if chooser.chance(SUB, BINDING_SHARE):
        binding = Target(None if chooser.chance(SUB, 0.3) else home,
                         "chat-1" if chooser.chance(SUB, 0.5) else "chat-2",
                         "bound-1" if chooser.chance(SUB, 0.4) else None)
    hook = None
    if chooser.chance(SUB, HOOK_SHARE):
        kind = chooser.choose(SUB, 4)
        if kind == 0:
            hook = Target(WEBCHAT)  # only an internal channel: the origin stays
        else:
            # The same chat, another chat, another channel.
            channel_to = ((home, "chat-1"), (home, "chat-3"), (OTHER_CHANNEL, "chan-5"))[kind - 1]
            hook = Target(*channel_to, "hook-1" if chooser.chance(SUB, 0.3) else None)
    return attrs.evolve(session, channel=channel, to=to, thread=thread, route=stored,
                        binding=binding, hook=hook)
