"""Messages between actors (and from the scripted timeline). Small frozen values."""

from __future__ import annotations

import attrs


@attrs.frozen
class ChildSpec:
    """What a requester spawns: one child run and how that child will behave."""

    child_id: str
    task: str
    run_ms: int
    outcome: str  # ok | error | timeout
    reply: str | None
    error: str | None = None
    expects_completion: bool = True


@attrs.frozen
class Spawn:
    child: ChildSpec


@attrs.frozen
class AbortChild:
    child_id: str


@attrs.frozen
class ChildEnded:
    run_id: str


@attrs.frozen
class Completion:
    """A child's result handed to its requester session (the follow-up agent call)."""

    key: str  # idempotency key: announce:v1:<childSessionKey>:<runId>
    run_id: str
    child_session_key: str
    requester: str
    generation: int
    status: str
    text: str


@attrs.frozen
class CompletionAck:
    key: str
    run_id: str
    accepted: bool  # False: the requester had already recorded this key (source-delivery fact)


@attrs.frozen
class SendRejected:
    """The gateway refused to hand the completion over; nothing reached the requester."""

    key: str
    run_id: str
    error: str
