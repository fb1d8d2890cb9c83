"""What a requester session serves about its children (DEL-17 checks the caller first): a
child session's history, its archived run history, a run's status, and a session's cleanup.
Plain functions of the session's actor (``actor.py``), called from its shell's table
(``shell.py``).
"""

from __future__ import annotations

from actors import events
from actors.history import ArchiveStore, Reader, read_run_history, sessions_history
from actors.messages import CleanupSession, HistoryRead, RunHistoryRead, StatusRead
from actors.requester.actor import Requester
from actors.requester.session import child_session_key


def history_read(req: Requester, message: HistoryRead) -> None:
    key = req.runs[message.child_id][1] if message.child_id in req.runs else \
        child_session_key(req.session_key, message.child_id)
    history = sessions_history(req.store.transcript(key), limit=message.limit,
                               offset=message.offset,
                               include_tools=message.include_tools,
                               session_key=key, mutants=req.mutants)
    for edge in history.edges:
        req.port.probe(edge)
    req.port.emit(events.HistoryServed(message.child_id, message.include_tools,
                                       history.to_json(), message.limit, message.offset,
                                       message.request))


def cleanup_session(req: Requester, message: CleanupSession) -> None:
    if message.child_id not in req.runs:
        req.port.emit(events.RequestIgnored(message.child_id, "the child was never spawned"))
        return
    run_id, key = req.runs[message.child_id]
    req.port.emit(events.SessionCleaned(message.child_id, run_id, key,
                                        req.store.delete_session(key)))


def run_history_read(req: Requester, message: RunHistoryRead) -> None:
    if message.child_id not in req.runs:
        req.port.emit(events.RequestIgnored(message.child_id, "the child was never spawned"))
        return
    run_id, key = req.runs[message.child_id]
    # Gateway access that does not depend on the (maybe deleted) child's metadata.
    read = read_run_history(ArchiveStore(archives=tuple(req.store.archives(key))), key,
                            run_id, Reader(gateway_admin=True), limit=message.limit,
                            offset=message.offset,
                            include_tools=message.include_tools,
                            mutants=req.mutants)
    for edge in () if read.history is None else read.history.edges:
        req.port.probe(edge)
    req.port.emit(events.ArchiveServed(
        message.child_id, run_id, key, read.status, read.reason, read.retryable,
        None if read.history is None else read.history.to_json(), message.request))


def status_read(req: Requester, message: StatusRead) -> None:
    latest = req.store.get(req.runs[message.child_id][0]) if message.child_id in req.runs else None
    req.port.emit(events.StatusServed(
        message.child_id, None if latest is None else latest.run_id,
        None if latest is None or latest.outcome_status is None
        else str(latest.outcome_status),
        None if latest is None else str(latest.delivery_status)))
