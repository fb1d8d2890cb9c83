"""What a requester session's actor holds while it runs, and the check every control message
passes first (DEL-17). Its Trio shell (``shell.py``) feeds each message to the handler its table
names; the handlers (``spawning``, ``receiving``, ``reads``) are plain functions of this state.

The nursery mirrors ownership: the session owns its children's runs, and aborting a child is
cancelling that child's scope.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import trio

from actors import events
from actors.child.restart import RestartGate
from actors.child.sizing import ReplySizer
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
from actors.nesting.lane import Lane
from actors.nesting.session_queue import SessionQueue
from actors.nesting.spawn_limits import SpawnLimits
from actors.permissions import Caller, refusal
from actors.requester.session import SessionCore
from actors.requester.store import RequesterStore
from actors.runtime import Port
from actors.yields.turns import TurnCore

# Session-control messages and the action each one is (DEL-17).
CONTROL_ACTIONS: dict[type, str] = {Spawn: "spawn", AbortChild: "abort", HistoryRead: "history",
                                    StatusRead: "status", CleanupSession: "cleanup",
                                    RunHistoryRead: "archive-read", SteerChild: "steer"}


@attrs.define(eq=False)
class Requester:
    """One requester session's actor: what ``run_requester`` sets up, and what its handlers
    read and change."""

    port: Port
    session_key: str
    store: RequesterStore
    mutants: frozenset[str]
    owners: Sequence[str]
    limits: SpawnLimits
    lane: Lane | None
    sessions: SessionQueue | None
    core: SessionCore
    turns: TurnCore
    children: trio.Nursery
    restarts: RestartGate | None  # Gateway restarts and the notices they owe (§c18)
    spawners: dict[str, Caller] = attrs.field(factory=dict)  # child id -> who asked for its spawn
    # child id -> its latest spawn (what a steer replaces)
    specs: dict[str, ChildSpec] = attrs.field(factory=dict)
    scopes: dict[str, trio.CancelScope] = attrs.field(factory=dict)
    # run id -> its child's scope (a reset kills)
    run_scopes: dict[str, trio.CancelScope] = attrs.field(factory=dict)
    # Each child's latest run and session key (a key may be reused by a later child).
    runs: dict[str, tuple[str, str]] = attrs.field(factory=dict)
    spawned: dict[str, str] = attrs.field(factory=dict)  # child session key -> its latest run id
    # Child actors still alive: one may outlive its run's end (a later correction, DEL-12).
    alive: set[str] = attrs.field(factory=set)
    sizer: ReplySizer | None = None  # the world's final-answer sizing (actors/child/sizing.py)


def refused(req: Requester, message: Any) -> bool:
    """Whether a control message's caller may not act (the refusal traced); any other message
    passes."""
    action = CONTROL_ACTIONS.get(type(message))
    if action is not None:
        # Checked against the current caller, never the person behind a report (DEL-17).
        child_id = message.child.id if isinstance(message, Spawn) else message.child_id
        reason = refusal(message.caller, action, req.owners, req.spawners, req.mutants)
        if reason is not None:
            req.port.probe("requester.refused-report" if message.caller.person is None
                           else "requester.refused-person")
            req.port.emit(events.ActionRefused(message.request, action, child_id,
                                               str(message.caller), reason))
            return True
    return False
