"""The harness's side of sessions: their configuration as recorded for the oracles, and the
session-control requests it sends, numbered, with their callers (DEL-5, DEL-17).

Every control request (a spawn, an abort, a history, status or archive read, a cleanup) carries a
caller: the one a scenario or fault names, else the session's first owner. It is recorded as
asked when it is sent (``world.spawn`` for spawns, ``world.action`` for the rest) with the number
the session's answer names, so the permission oracle reads what was asked, not what the session
made of it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from actors import addresses
from actors.messages import (
    AbortChild,
    ChildSpec,
    CleanupSession,
    HistoryRead,
    RunHistoryRead,
    Spawn,
    StatusRead,
    SteerChild,
)
from actors.permissions import DEFAULT_OWNER, Caller
from actors.private.rules import SpawnOptions
from actors.requester.actor import CONTROL_ACTIONS
from actors.requester.spawning import steered_spec
from sim.kernel import Kernel
from sim.scenario import SessionDef

# A session-control message the harness sends (DEL-17).
Control = (Spawn | AbortChild | HistoryRead | StatusRead | CleanupSession | RunHistoryRead
           | SteerChild)


@functools.cache
def _options_json(options: SpawnOptions) -> dict[str, Any]:
    """``attrs.asdict`` of spawn options, worked out once per distinct value (a run's spawns
    share a few; asdict walks the class's fields at every call, ~350 bytecodes)."""
    return attrs.asdict(options)


class ControlDesk:
    def __init__(self, kernel: Kernel, sessions: Mapping[str, SessionDef],
                 chunks: bool = True) -> None:
        self.kernel = kernel
        self.sessions = sessions  # the top-level sessions as the run configures them
        # Each session's own channel and that channel's longest message, as this run configures
        # them: the gateway's routes (drawn routing never changes a channel's limit; a run whose
        # swarm turned chunked channels off sends every text whole).
        self._channels = {key: (s.channel, s.chunk_chars if chunks else None)
                          for key, s in sessions.items()}
        self._requests = 0
        self._dropped: dict[str, None] = {}  # children that never run (spawn not asked, refused)
        # (requester, child id) -> the latest spawn asked for it (what a steer replaces)
        self._latest: dict[tuple[str, str], ChildSpec] = {}
        # Each top-level session's driver (sim/world/turns.py): its current incarnation.
        self.drivers: dict[str, Any] = {}

    def owners(self, session_key: str) -> tuple[str, ...]:
        """A top-level session's owners; a nested requester is controlled by its owner run."""
        session = self.sessions.get(session_key)
        return (DEFAULT_OWNER,) if session is None else session.owners

    def chunk_chars(self, key: str) -> int | None:
        """The longest message of top-level session ``key``'s own channel in this run (None:
        no channel, no limit, or chunked channels off)."""
        return self._channels.get(key, (None, None))[1]

    def record_session(self, key: str, reply_mode: str = "auto") -> None:
        """The session's configuration as the oracles read it (``world.session``): its owners,
        its reply mode (``visible_replies``: auto or message_tool) and, for a top-level session,
        its routing facts and its own channel with that channel's longest message
        (``channel``, ``chunk_chars``: longer text goes out in chunks)."""
        session = self.sessions.get(key)
        data: dict[str, Any] = {"key": key, "nested": session is None,
                                "owners": list(self.owners(key)), "reply_mode": reply_mode}
        if session is not None:
            routing = session.routing
            for name, target in (("origin", routing.origin), ("route", routing.stored),
                                 ("binding", routing.binding), ("hook", routing.hook)):
                data[name] = None if target is None else target.to_json()
            data["channel"], data["chunk_chars"] = self._channels.get(key, (None, None))
        self.kernel.emit(addresses.HARNESS, "world.session", data)

    def spawn(self, child: ChildSpec) -> None:
        """``child``'s spawn, asked for at its spawn time by its caller (outside any turn: a
        nested child's parent run spawns it)."""
        def request() -> None:
            if child.parent is not None and child.parent in self._dropped:
                self.drop(child)  # its parent never ran (an abandoned turn): nothing spawns it
                return
            self.kernel.send(addresses.TIMELINE, addresses.requester(child.requester),
                             self.spawn_request(child))

        self.kernel.at(child.spawn_at_ms, f"spawn {child.id}", request)

    def drop(self, child: ChildSpec) -> None:
        """``child``'s spawn is never asked (its turn was abandoned, or its parent never ran)."""
        self._dropped[child.id] = None

    def never_run(self, children: Iterable[ChildSpec],
                  refused: Callable[[ChildSpec], bool]) -> None:
        """The children whose spawn is asked but refused (PRV-4): they never run either."""
        for child in children:
            if refused(child):
                self._dropped[child.id] = None

    def spawn_request(self, child: ChildSpec, turn: str | None = None,
                      incarnation: int = 1, request: int | None = None) -> Spawn:
        """The spawn message, numbered, recorded as asked now (``world.spawn``): also the
        requester turn that asks and the session incarnation it asks in (sim/world/turns.py).
        ``request``: the number of the control request it is part of (a steer's replacement)."""
        caller = child.caller or Caller(self.owners(child.requester)[0])
        self._latest[(child.requester, child.id)] = child
        if request is None:
            self._requests += 1
        # What was asked, as the oracles must read it (never the model's own spawn record).
        self.kernel.emit(addresses.HARNESS, "world.spawn", {
            "child": child.id, "requester": child.requester,
            "actor": addresses.requester(child.requester),
            "required": child.expects_completion, "task": child.task,
            "caller": str(caller), "request": request or self._requests,
            "answer_lost": child.answer_lost, "session": child.session or child.id,
            "turn": turn, "incarnation": incarnation, "route_change": child.route_change,
            "completion_target": child.completion_target,
            # Its time limits as asked (reference §c18): runTimeoutSeconds (seconds, as given;
            # None: not asked) and the child's own scripted budget (ms; None: none).
            "run_timeout_seconds": None if child.run_timeout_ms is None
            else child.run_timeout_ms / 1000, "timeout_ms": child.timeout_ms,
            "cleanup": child.cleanup,  # the spawn's cleanup mode (reference §c18)
            # What the world asked the child to do, step by step: each step's duration (ms), how
            # it ends and its tool calls (eventually-resolved reads how long a run that a
            # time-limit end found unended may legitimately still take: sim/invariants/unended.py).
            "plan": [[step.duration_ms, step.finish.value, step.tool_calls]
                     for step in child.steps],
            "options": dict(_options_json(child.options))})  # each record its own dict
        return Spawn(child, caller, request or self._requests)

    def steer(self, at_ms: int, child: ChildSpec, run_ms: int, reply: str,
              caller: Caller | None = None, outside_turns: bool = False) -> None:
        """``child``'s requester steers it at ``at_ms`` (reference §c18): recorded as asked when
        it is sent, both the replacement run it asks for (``world.spawn``, outside any turn) and
        the steer itself (``world.action``), under one request number. ``outside_turns``: not
        when the child's latest spawn was asked in a requester turn (the world's draws: a
        replacement joins no yielded batch, docs/fidelity.md)."""
        session_key = child.requester

        def send() -> None:
            latest = self._latest.get((session_key, child.id))
            if outside_turns and (latest is None or latest.turn is not None):
                # A drawn steer may fall in its child's spawn instant and run before the spawn
                # is asked: nothing is running yet, and whether the spawn will be asked in a
                # turn is not known, so it is not asked (its replacement would be matched to
                # the child's first request, issue 38: seeds 2266, 6112).
                return
            latest = latest or child
            who = caller or Caller(self.owners(session_key)[0])
            self._requests += 1
            number = self._requests
            steer = SteerChild(child.id, run_ms, reply, who, number)
            driver = self.drivers.get(session_key)
            self.spawn_request(attrs.evolve(steered_spec(latest, steer, at_ms), caller=who),
                               incarnation=1 if driver is None else driver.incarnation,
                               request=number)
            self.kernel.emit(addresses.HARNESS, "world.action", {
                "request": number, "session": session_key,
                "actor": addresses.requester(session_key), "action": "steer", "child": child.id,
                "caller": str(who)})
            self.kernel.send(addresses.TIMELINE, addresses.requester(session_key), steer)

        self.kernel.at(at_ms, f"steer {child.id}", send)

    def control(self, at_ms: int, label: str, session_key: str, message: Control,
                caller: Caller | None = None) -> None:
        """``message`` sent to ``session_key`` at ``at_ms`` by ``caller`` (default: the
        session's owner), recorded as asked (``world.action``) when it is sent."""
        caller = caller or Caller(self.owners(session_key)[0])
        self._requests += 1
        message = attrs.evolve(message, caller=caller, request=self._requests)
        child = message.child.id if isinstance(message, Spawn) else message.child_id
        record: dict[str, Any] = {
            "request": self._requests, "session": session_key,
            "actor": addresses.requester(session_key),
            "action": CONTROL_ACTIONS[type(message)], "child": child, "caller": str(caller)}
        if isinstance(message, HistoryRead | RunHistoryRead):
            # What the read asks, as asked: the paging oracles read the offset here (None: no
            # offset passed, which is not offset 0, §c19).
            record.update(limit=message.limit, offset=message.offset,
                          include_tools=message.include_tools)

        def send() -> None:
            self.kernel.emit(addresses.HARNESS, "world.action", record)
            self.kernel.send(addresses.TIMELINE, addresses.requester(session_key), message)

        self.kernel.at(at_ms, label, send)
