"""Trace events of private parent completion (PRV-1..8): a result retained while its spawning
turn is open, released by the turn's normal finish (its window starts), or closed because the
requester incarnation it is bound to is gone. Registered with the others by
``actors/events/__init__.py``.
"""

from __future__ import annotations

from typing import ClassVar

import attrs

from actors.events.base import Event


@attrs.frozen(slots=True)
class PrivateRetained(Event):
    """The spawning turn is open: no announce, no deadline (PRV-5, PRV-7)."""

    kind: ClassVar[str] = "private.retained"
    run_id: str


@attrs.frozen(slots=True)
class PrivateReleased(Event):
    """A normal finish of the spawning turn released the result: its window starts now."""

    kind: ClassVar[str] = "private.released"
    run_id: str
    window_started_at_ms: int


@attrs.frozen(slots=True)
class PrivateClosed(Event):
    """The bound requester incarnation is gone: discarded, nothing sent (PRV-3)."""

    kind: ClassVar[str] = "private.closed"
    run_id: str
    reason: str


@attrs.frozen(slots=True)
class PrivateRefused(Event):
    """A requester session refused a private hand-off bound to an earlier incarnation of it."""

    kind: ClassVar[str] = "requester.private_refused"
    run_id: str
    key: str
    incarnation: int
