"""The resumed notice a requester session owes its conversation after a Gateway restart
(reference §c18): when recovery resumed a child whose completion is required, the session gives
its conversation ``Resumed your interrupted task after the Gateway restart.`` before that child's
completion. A notice that fails is kept as a debt (the gate's ``owed``) and tried again on a timer
(15 s, doubling to 300 s), never with a second recovery turn of the child. A completion of that
child reaching the session first proves its conversation reachable: the owed notice is given
just before it, so the notice always comes first and once.

A run stopped since (a kill, a reset: its completion is no longer required) owes nothing; a
session deleted since gives nothing (its completion falls back to the session above, which
takes the owed notice with it).
"""

from __future__ import annotations

from actors import events
from actors.child.restart import RESUMED_NOTICE, RestartGate, notice_retry_ms
from actors.messages import NoticeRetry, RunResumed
from actors.requester.actor import Requester
from actors.runtime import Port

__all__ = ["before_completion", "on_notice"]


def on_notice(req: Requester, message: RunResumed | NoticeRetry) -> None:
    """A resumed run's notice (``RunResumed``: its first attempt) or its retry's timer."""
    port, gate, store, session_key = req.port, req.restarts, req.store, req.session_key
    owed = None if gate is None else gate.owed.get(message.run_id)
    if owed is None or (isinstance(message, RunResumed) and owed[0] != message.restart):
        return  # already given (a duplicate, or a completion paid it), or stale
    assert gate is not None
    if store.session_deleted(session_key):
        return  # the debt waits for the completion's fallback session
    if store.get(message.run_id).silenced:
        del gate.owed[message.run_id]  # stopped since: nothing is owed
        return
    attempt = message.attempt if isinstance(message, NoticeRetry) else 1
    if attempt > 1:
        port.probe("requester.restart-notice-retried")
    if gate.notice_fails(message.run_id):
        port.probe("requester.restart-notice-failed")
        delay = notice_retry_ms(attempt)
        port.emit(events.RestartNoticeFailed(message.run_id, attempt, delay))
        port.set_timer(delay, NoticeRetry(message.run_id, attempt + 1))
        return
    _give(port, gate, message.run_id, attempt, with_completion=False)


def before_completion(port: Port, gate: RestartGate | None, run_id: str) -> None:
    """A completion of ``run_id`` is being taken: its owed notice goes first."""
    if gate is not None and run_id in gate.owed:
        port.probe("requester.restart-notice-with-completion")
        _give(port, gate, run_id, 0, with_completion=True)


def _give(port: Port, gate: RestartGate, run_id: str, attempt: int,
          with_completion: bool) -> None:
    restart, _ = gate.owed.pop(run_id)
    port.probe("requester.restart-notice")
    port.emit(events.RestartNoticed(run_id, restart, RESUMED_NOTICE, attempt, with_completion))
