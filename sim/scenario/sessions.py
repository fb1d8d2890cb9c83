"""A scenario's ``[[sessions]]``: top-level requester sessions, their routing facts (DEL-5) and
owners (DEL-17), each field checked (docs/scenarios.md)."""

from __future__ import annotations

import re

from actors.gateway.routing import WEBCHAT
from actors.inputs import Node
from actors.messages import Target
from actors.permissions import REPORT_PREFIX, Caller
from actors.records.keys import is_subagent
from sim.scenario.model import MAX_CHUNK_CHARS, MAX_SESSIONS, SessionDef

_CHANNEL = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
# A chat or thread id as channels write them: no spaces, at most 128 characters.
_ID = re.compile(r"^\S{1,128}$")
_PERSON = re.compile(r"^[A-Za-z0-9_\-]{1,64}$")
MAX_OWNERS = 100


def sessions(root: Node) -> tuple[SessionDef, ...]:
    found: list[SessionDef] = []
    tables = root.nodes("sessions")
    if len(tables) > MAX_SESSIONS:
        raise root.fail("sessions", f"must hold at most {MAX_SESSIONS:,} entries (the limit)")
    for table in tables:
        table.check_keys(("key", "channel", "chunk_chars", "to", "thread", "route", "binding",
                          "hook", "owners", "visible_replies"))
        key = table.text("key")
        if not re.match(r"^agent:[^:\s]+:\S+$", key):
            raise table.fail("key", f"{key!r} is not a session key like 'agent:main:main'")
        if is_subagent(key):
            raise table.fail("key", f"{key!r} is a sub-agent session; [[sessions]] are top-level "
                             "requesters (a nested requester is a child with children)")
        if any(s.key == key for s in found):
            raise table.fail("key", f"session {key!r} is defined twice")
        channel = _channel(table, "channel")
        chunk_chars = table.integer("chunk_chars", None, minimum=1, maximum=MAX_CHUNK_CHARS)
        if chunk_chars is not None and channel in (None, WEBCHAT):
            raise table.fail("chunk_chars", "needs an external channel")
        for field in ("to", "thread"):
            if table.has(field) and channel in (None, WEBCHAT):
                raise table.fail(field, "needs an external channel (the origin's chat)")
        # The origin's chat: by default the session's own conversation; "" names only a channel.
        to = table.text("to", key) or None
        if to is not None and not _ID.match(to):
            raise table.fail("to", f"{to!r} is not a chat id (no spaces, 1 to 128 characters)")
        found.append(SessionDef(
            key, channel, chunk_chars, to if channel not in (None, WEBCHAT) else None,
            _id(table, "thread"), _target(table, "route"), _target(table, "binding"),
            _target(table, "hook"), _owners(table),
            table.text("visible_replies", "auto", choices=("auto", "message_tool"))))
    if not found:
        raise root.doc.error((), "sessions", "at least one [[sessions]] is required")
    return tuple(found)


def _channel(table: Node, field: str) -> str | None:
    channel: str | None = table.text(field, None)
    if channel is not None and not _CHANNEL.match(channel):
        raise table.fail(field, f"{channel!r} is not a channel name like 'telegram'")
    return channel


def _id(table: Node, field: str) -> str | None:
    value: str | None = table.text(field, None)
    if value is not None and not _ID.match(value):
        raise table.fail(field, f"{value!r} is not an id (no spaces, 1 to 128 characters)")
    return value


def _target(table: Node, field: str) -> Target | None:
    """``route`` (the stored route: an external channel and chat), ``binding`` (a bound chat,
    its channel optional) or ``hook`` (what the delivery-target hook returns: a chat, or only
    ``channel = "webchat"``), each an inline table of channel, to, thread."""
    node = table.node(field, None)
    if node is None:
        return None
    node.check_keys(("channel", "to", "thread"))
    target = Target(_channel(node, "channel"), _id(node, "to"), _id(node, "thread"))
    if target.channel == WEBCHAT:
        if field != "hook":
            raise node.fail("channel", f"a {field} is an external target, not webchat")
        if target.to is not None or target.thread is not None:
            raise node.fail("to" if target.to is not None else "thread",
                            "a hook that returns webchat returns nothing else")
        return target
    if target.to is None:
        raise node.fail("to", f"a {field} names its chat")
    if field == "route" and target.channel is None:
        raise node.fail("channel", "a stored route names its channel")
    return target


def _owners(table: Node) -> tuple[str, ...]:
    owners: tuple[str, ...] = table.strings("owners", ("owner",), non_empty=True)
    if len(owners) > MAX_OWNERS:
        raise table.fail("owners", f"must hold at most {MAX_OWNERS} names (the limit)")
    for index, person in enumerate(owners):
        if not _PERSON.match(person):
            raise table.fail_item("owners", index, f"{person!r} is not a person's name (letters, "
                                  "digits, - and _)")
    return owners


def caller(table: Node, child_ids: list[str]) -> Caller | None:
    """``caller``: who asks for a session-control action (DEL-17): a person's name, or
    ``report:<child>`` (the turn that child's completion report started)."""
    text: str | None = table.text("caller", None)
    if text is None:
        return None
    if text.startswith(REPORT_PREFIX):
        if text.removeprefix(REPORT_PREFIX) not in child_ids:
            raise table.fail("caller", f"{text!r}: no child {text.removeprefix(REPORT_PREFIX)!r} "
                             "among the [[children]]")
    elif not _PERSON.match(text):
        raise table.fail("caller", f"{text!r} is not a person's name or 'report:<child>'")
    return Caller.parse(text)
