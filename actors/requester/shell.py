"""A requester session's Trio shell: it spawns child runs into its own nursery and receives
their completions.

Its table (:data:`HANDLERS`) names the handler of each message type, as the delivery core's
table does; the handlers are plain functions of the session's actor (``actor.py``): its
children (``spawning``), what it receives (``receiving``), what it serves (``reads``). Every
control message passes the caller's check first (DEL-17).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import trio

from actors.child.restart import RestartGate
from actors.child.sizing import ReplySizer
from actors.messages import (
    AbortChild,
    AbortRun,
    CheckStatus,
    CleanupSession,
    Compact,
    Completion,
    EndTurn,
    HistoryRead,
    NestedSessionDeleted,
    NoticeRetry,
    RecoveredAnswer,
    ResetSession,
    RunHistoryRead,
    RunResumed,
    SessionActs,
    Spawn,
    StartTurn,
    StatusRead,
    SteerChild,
    TranscriptMirror,
)
from actors.nesting.lane import Lane
from actors.nesting.session_queue import SessionQueue
from actors.nesting.spawn_limits import NO_LIMITS, SpawnLimits
from actors.permissions import DEFAULT_OWNER
from actors.requester import notices, reads, receiving, spawning
from actors.requester.actor import Requester, refused
from actors.requester.session import SessionCore
from actors.requester.store import RequesterStore
from actors.runtime import Port
from actors.yields.turns import ReplyMode, TurnCore

# Each message a session takes, and its handler.
HANDLERS: dict[type, Callable[[Requester, Any], None]] = {
    StartTurn: spawning.turn_message,
    EndTurn: spawning.turn_message,
    CheckStatus: spawning.turn_message,
    ResetSession: spawning.turn_message,
    NestedSessionDeleted: spawning.nested_session_deleted,
    Spawn: spawning.spawn,
    AbortChild: spawning.abort_child,
    SteerChild: spawning.steer_child,
    AbortRun: spawning.abort_run,
    Completion: receiving.completion,
    RecoveredAnswer: receiving.recovered_answer,
    TranscriptMirror: receiving.transcript_mirror,
    Compact: receiving.compact,
    HistoryRead: reads.history_read,
    CleanupSession: reads.cleanup_session,
    RunHistoryRead: reads.run_history_read,
    StatusRead: reads.status_read,
    RunResumed: notices.on_notice,
    NoticeRetry: notices.on_notice,
}


async def run_requester(
    port: Port, session_key: str, store: RequesterStore, mutants: frozenset[str] = frozenset(),
    owners: Sequence[str] = (DEFAULT_OWNER,),
    limits: SpawnLimits = NO_LIMITS, lane: Lane | None = None,
    reply_mode: ReplyMode = ReplyMode.AUTO, sessions: SessionQueue | None = None,
    restarts: RestartGate | None = None,  # Gateway restarts, notices owed (§c18)
    sizer: ReplySizer | None = None,  # the world's final-answer sizing (issue 36)
) -> None:
    core = SessionCore(session_key, mutants=mutants)
    turns = TurnCore(session_key, reply_mode)
    store.save_session(session_key, turns.incarnation, deleted=False)
    async with trio.open_nursery() as children:
        req = Requester(port, session_key, store, mutants, owners, limits, lane, sessions, core,
                        turns, children, restarts, sizer=sizer)
        while True:
            received = await port.receive()
            for message in received.acts if isinstance(received, SessionActs) else (received,):
                handle(req, message)


def handle(req: Requester, message: Any) -> None:
    """One message: the caller's check, then the handler its type names."""
    if refused(req, message):
        return
    handler = HANDLERS.get(type(message))
    if handler is None:
        raise TypeError(f"requester cannot handle {type(message).__name__}")
    handler(req, message)
