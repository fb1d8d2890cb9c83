"""Nesting records (docs/nesting.md): refused spawns and sessions, the requester fallback, abort
cascades, the lane and the session queue."""

from __future__ import annotations

from typing import ClassVar

import attrs

from actors.events.base import Event, JsonValue

# -- nesting (docs/nesting.md) -------------------------------------------------------------------


@attrs.frozen(slots=True)
class SpawnRefused(Event):
    """A session's spawn was refused (reference §c15; an invalid private request, PRV-4): nothing
    was registered, nothing runs."""

    kind: ClassVar[str] = "spawn.refused"
    child: str
    requester: str
    reason: str


@attrs.frozen(slots=True)
class SessionRefused(Event):
    """A deleted session refused a completion that was on its way when it was deleted."""

    kind: ClassVar[str] = "requester.gone"
    run_id: str
    key: str
    error: dict[str, JsonValue]


@attrs.frozen(slots=True)
class RequesterFallback(Event):
    """The run's requester session is gone: its completion goes to ``target`` instead (DEL-4);
    ``target`` None means no fallback exists and the completion stays retryable."""

    kind: ClassVar[str] = "delivery.fallback"
    run_id: str
    requester: str
    target: str | None


@attrs.frozen(slots=True)
class AbortCascaded(Event):
    """An aborted run's session cancels its own not-yet-ended children."""

    kind: ClassVar[str] = "abort.cascade"
    session: str
    children: list[str]


@attrs.frozen(slots=True)
class LaneQueued(Event):
    """A child run waits for a free slot of the global maxConcurrent lane."""

    kind: ClassVar[str] = "lane.queued"
    run_id: str
    running: int


@attrs.frozen(slots=True)
class LaneStarted(Event):
    """A queued child run (behind the maxConcurrent lane or its session's earlier run) starts
    now."""

    kind: ClassVar[str] = "lane.started"
    run_id: str


@attrs.frozen(slots=True)
class SessionQueued(Event):
    """A child run was spawned into a session whose earlier run has not ended: it waits behind
    ``behind`` (actors/nesting/session_queue.py) and starts with ``lane.started``."""

    kind: ClassVar[str] = "session.queued"
    run_id: str
    child_session_key: str
    behind: str
