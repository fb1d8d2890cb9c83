"""The session-key and hand-off-key rules every subsystem reads (one place for each).

A session key names who a session belongs to: a child session's key holds one ``:subagent:``
segment per level of nesting below its top-level requester (reference §a), a cron session's key
holds ``:cron:``. A hand-off key is the idempotency key a completion is sent under; a lost-answer
recovery sends under the run's own key with ``:recovered`` after it (actors/delivery/recovery.py).
The oracles in sim/invariants keep their own copy of the session-key rule on purpose: they never
import the model.
"""

from __future__ import annotations

from actors.records.run_record import completion_key

SUBAGENT = ":subagent:"
CRON = ":cron:"
RECOVERED = ":recovered"


def is_subagent(session_key: str) -> bool:
    """Whether the session is a child's (a sub-agent's), at any depth."""
    return SUBAGENT in session_key


def depth(session_key: str) -> int:
    """How many levels of sub-agents lie between the session and its top-level requester."""
    return session_key.count(SUBAGENT)


def is_cron(session_key: str) -> bool:
    return CRON in session_key


def recovery_key(child_session_key: str, run_id: str) -> str:
    return completion_key(child_session_key, run_id) + RECOVERED


def is_recovery_key(key: str) -> bool:
    return key.endswith(RECOVERED)
