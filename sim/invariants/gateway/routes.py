"""DEL-4, DEL-5: a completion goes where its requester's routing facts say, judged by the channels.

The expected target is restated here from the session's configuration as the harness recorded it
(``world.session``: the captured origin, the stored route, a binding, a hook override), with the
rules of DEL-5 and reference §c2; what happened is what the channels received
(``gateway.chunk``: channel, chat and thread of every chunk a channel's user sees) and what
reached each session's transcript (``requester.accept``). The model's own resolution is never
read.

The rules, as the seed and reference state them: a bound conversation/thread, else a hook
override naming a chat (a hook returning nothing or only webchat does not count), picks the chat;
missing parts come from the requester's own route. That route is the captured origin, its missing
chat or thread taken from a stored route on the same channel (the thread only for the same chat);
with no captured origin, the stored route; a webchat origin takes nothing from the stored route.
An explicit thread of a binding or hook is kept; otherwise the old thread follows only into the
same chat. No external channel and chat in the end: nothing goes to any channel (deliver=false).
A nested requester (a sub-agent session) never has its completions sent to a channel, nor does
a run asked for with completionTarget "parent" (PRV-1: the spawning session's own input; whether
any of it reached a channel is private-never-to-channel's to judge).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sim.invariants.base import Invariant, Violation
from sim.invariants.index import of_kinds
from sim.invariants.observations import is_wake
from sim.invariants.private.completion import private_runs
from sim.trace import Record

Where = tuple[str, str, str | None]  # channel, chat, thread
INTERNAL_CHANNEL = "webchat"


def _get(t: Mapping[str, Any] | None, field: str) -> Any:
    return None if t is None else t.get(field)


def expected_target(session: Mapping[str, Any]) -> Where | None:
    """Where a top-level session's completions must go (None: to no channel)."""
    origin, stored = session.get("origin"), session.get("route")
    # The requester's own route.
    own: Mapping[str, Any] | None
    if origin is None:
        own = stored
    elif origin["channel"] == INTERNAL_CHANNEL:
        own = origin
    else:
        own = dict(origin)
        if stored is not None and stored["channel"] == origin["channel"]:
            if own["to"] is None:
                own["to"] = stored["to"]
            if own["thread"] is None and stored["to"] == own["to"]:
                own["thread"] = stored["thread"]
    # The override: a binding, else a hook that names a chat outside webchat.
    override = session.get("binding")
    if override is None:
        hook = session.get("hook")
        if hook is not None and hook["to"] is not None and hook["channel"] != INTERNAL_CHANNEL:
            override = hook
    if override is None:
        channel, to, thread = _get(own, "channel"), _get(own, "to"), _get(own, "thread")
    else:
        channel = override["channel"] or _get(own, "channel")
        to = override["to"]
        thread = override["thread"]
        if thread is None and (_get(own, "channel"), _get(own, "to")) == (channel, to):
            thread = _get(own, "thread")
    if channel is None or channel == INTERNAL_CHANNEL or to is None:
        return None
    return (channel, to, thread)


def _sessions(trace: Sequence[Record]) -> dict[str, Mapping[str, Any]]:
    return {r.data["key"]: r.data for r in of_kinds(trace, ("world.session",))
            if r.kind == "world.session"}


def route_as_configured(trace: Sequence[Record]) -> list[Violation]:
    """Every chunk a channel received went to the target its session's configuration names;
    every completion a session with such a target accepted went out to that channel first; a
    session with none (webchat, no route, a nested requester) had nothing sent to any channel."""
    sessions = _sessions(trace)
    expected = {key: (None if s["nested"] else expected_target(s)) for key, s in sessions.items()}
    sent: set[str] = set()
    private = private_runs(trace)
    violations: list[Violation] = []
    for r in of_kinds(trace, ("gateway.chunk", "requester.accept")):
        if r.kind == "gateway.chunk":
            session = r.data["session"]
            want = expected.get(session)
            got = (r.data["channel"], r.data["to"], r.data["thread"])
            sent.add(r.data["run_id"])
            if got != want:
                what = "no channel (an internal injection, deliver=false)" if want is None \
                    else f"channel {want[0]}, chat {want[1]}, thread {want[2]}"
                violations.append(Violation(
                    "route-as-configured", "DEL-5",
                    f"{r.data['run_id']}'s completion for {session} went to channel {got[0]}, "
                    f"chat {got[1]}, thread {got[2]}; its routing facts say {what}", (r.seq,)))
        elif r.kind == "requester.accept" and is_wake(r.data.get("key", "")):
            continue  # a batch wake is an internal call: the requester's reply goes out
        elif r.kind == "requester.accept" and r.data["run_id"] in private:
            continue  # a private hand-off is the session's own input (PRV-1)
        elif r.kind == "requester.accept":
            session = r.actor.removeprefix("requester:")
            if expected.get(session) is not None and r.data["run_id"] not in sent:
                want = expected[session]
                assert want is not None
                violations.append(Violation(
                    "route-as-configured", "DEL-4",
                    f"{r.data['run_id']}'s completion reached {session}, whose routing facts "
                    f"name channel {want[0]}, chat {want[1]}, without going out to that channel "
                    "(deliver=true)", (r.seq,)))
    return violations


INVARIANTS = (
    Invariant("route-as-configured", "DEL-5", "safety",
              "A top-level completion goes out to the channel, chat and thread its session's "
              "routing facts resolve to (binding, hook, origin, stored route, thread rules), or "
              "to no channel when they name none; a nested requester's never goes out.",
              route_as_configured),
)
