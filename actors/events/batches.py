"""Trace events of yield batches and their wakes (reference §c9): frozen, handed over, deferred,
dispatched, retried, delivered, closed. Registered with the others by
``actors/events/__init__.py``."""

from __future__ import annotations

from typing import ClassVar

import attrs

from actors.events.base import Event


@attrs.frozen(slots=True)
class BatchFrozen(Event):
    """A yield froze its turn's required children as one batch (``consumed``: no wake is due:
    no required child, or a cron requester)."""

    kind: ClassVar[str] = "batch.frozen"
    batch_id: str
    turn_run_id: str
    members: list[str]
    key: str
    consumed: str | None


@attrs.frozen(slots=True)
class HandedToBatch(Event):
    """A member's own delivery stops: the yielded batch owns its result now."""

    kind: ClassVar[str] = "delivery.batch_owned"
    run_id: str
    batch_id: str


@attrs.frozen(slots=True)
class WakeDeferred(Event):
    kind: ClassVar[str] = "batch.defer"
    batch_id: str
    pending: int
    active: int
    deferrals: int  # counted toward the limit (only while no descendant is running)


@attrs.frozen(slots=True)
class WakeDispatched(Event):
    kind: ClassVar[str] = "batch.dispatch"
    batch_id: str
    key: str
    attempt: int
    replay: int


@attrs.frozen(slots=True)
class WakeRetry(Event):
    kind: ClassVar[str] = "batch.retry"
    batch_id: str
    attempt: int
    at_ms: int
    error: str


@attrs.frozen(slots=True)
class WakeTurnPending(Event):
    """The requester was busy in another turn: the wake waits, no attempt or deferral spent."""

    kind: ClassVar[str] = "batch.turn_pending"
    batch_id: str
    key: str
    at_ms: int  # when it tries again


@attrs.frozen(slots=True)
class WakeDelivered(Event):
    kind: ClassVar[str] = "batch.delivered"
    batch_id: str
    key: str
    duplicate: bool


@attrs.frozen(slots=True)
class WakeClosed(Event):
    """Consumed or given up without a wake: ``outcome`` says why, ``error`` what was recorded."""

    kind: ClassVar[str] = "batch.closed"
    batch_id: str
    outcome: str
    error: str | None


@attrs.frozen(slots=True)
class WakeRefused(Event):
    """A wake reached a session whose yielded turn a reset or delete abandoned, or that was busy
    in another turn (requester_turn_pending)."""

    kind: ClassVar[str] = "requester.wake_refused"
    run_id: str
    key: str
    reason: str


@attrs.frozen(slots=True)
class TurnAnswered(Event):
    """The turn a wake resumed answered, as the session's transcript shows it: its final text
    and what it sent with the message tool (``message_tool``: each message's text)."""

    kind: ClassVar[str] = "requester.turn_answer"
    turn_run_id: str
    key: str  # the wake that resumed it
    final: str
    message_tool: list[str]


@attrs.frozen(slots=True)
class ConversationReply(Event):
    """What the session's conversation (its user's chat) received from the session."""

    kind: ClassVar[str] = "conversation.reply"
    session: str
    turn_run_id: str
    text: str


@attrs.frozen(slots=True)
class WaveSettled(Event):
    """A wave of a requester's non-yield children settled (reference §c9 unfrozen batch): its
    wake is frozen now (``consumed``: none is due, exactly one already-delivered child)."""

    kind: ClassVar[str] = "batch.wave"
    batch_id: str
    members: list[str]
    key: str
    consumed: str | None
    joined_late: bool  # part of its connected set was carried by an earlier wave
