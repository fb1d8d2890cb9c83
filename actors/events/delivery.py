"""The delivery actor's records: attempts, sends, retries, give-ups, recovery, and operator actions
on a run's delivery."""

from __future__ import annotations

from typing import ClassVar

import attrs

from actors.events.base import Event, JsonValue
from actors.states import DeliveryStatus, GiveUpReason

# -- the delivery actor --------------------------------------------------------------------------


@attrs.frozen(slots=True)
class DeliveryStarted(Event):
    kind: ClassVar[str] = "delivery.start"
    incarnation: int


@attrs.frozen(slots=True)
class DeliverySkipped(Event):
    kind: ClassVar[str] = "delivery.skip"
    run_id: str
    reason: DeliveryStatus


@attrs.frozen(slots=True)
class DeliveryReopened(Event):
    """A newer receipt of a run (a correction) opens its next delivery generation (DEL-12)."""

    kind: ClassVar[str] = "delivery.reopen"
    run_id: str
    generation: int
    ended_at: int | None


@attrs.frozen(slots=True)
class ChildCorrected(Event):
    """The producer corrected its result after the end: a newer receipt (DEL-12)."""

    kind: ClassVar[str] = "child.correction"
    run_id: str
    ended_at: int
    result: str | None


@attrs.frozen(slots=True)
class DeliveryDeferred(Event):
    """The run's announcement waits: it has descendants still pending (DEL-6, §c8)."""

    kind: ClassVar[str] = "delivery.defer"
    run_id: str
    pending: int
    recheck_at_ms: int


@attrs.frozen(slots=True)
class FindingsFrozen(Event):
    """The run's findings were rendered and stored with the run for this delivery generation
    (DEL-6): every later send under ``key``, after a restart too, carries the same text."""

    kind: ClassVar[str] = "delivery.findings-frozen"
    run_id: str
    key: str


@attrs.frozen(slots=True)
class AnnounceSkipped(Event):
    """The child replied exactly ANNOUNCE_SKIP: nothing is announced and the obligation is
    recorded as delivered (reference §c1)."""

    kind: ClassVar[str] = "delivery.announce_skip"
    run_id: str


@attrs.frozen(slots=True)
class RunCleanedUp(Event):
    """The run's obligations resolved and its cleanup ran (DEL-16); once per run."""

    kind: ClassVar[str] = "run.cleanup"
    run_id: str
    delivery: str  # the resolved delivery status


@attrs.frozen(slots=True)
class StaleInput(Event):
    """An acknowledgement or rejection for a try that is no longer in flight."""

    kind: ClassVar[str] = "delivery.stale"
    run_id: str
    what: str  # ack | rejection


@attrs.frozen(slots=True)
class AttemptSent(Event):
    kind: ClassVar[str] = "delivery.attempt"
    run_id: str
    key: str
    attempt: int
    try_: int


@attrs.frozen(slots=True)
class DeliveryRecorded(Event):
    """The registry recorded the run as delivered (``duplicate``: the requester had it)."""

    kind: ClassVar[str] = "delivery.delivered"
    run_id: str
    key: str
    duplicate: bool


@attrs.frozen(slots=True)
class SendFailed(Event):
    kind: ClassVar[str] = "delivery.send_failed"
    run_id: str
    error: dict[str, JsonValue]  # the error chain in its JSON form (actors.records.send_error)
    class_: str
    try_: int


@attrs.frozen(slots=True)
class DeliveryRetry(Event):
    kind: ClassVar[str] = "delivery.retry"
    run_id: str
    attempt: int
    next_attempt_at_ms: int


@attrs.frozen(slots=True)
class DeliveryGaveUp(Event):
    kind: ClassVar[str] = "delivery.give_up"
    run_id: str
    status: DeliveryStatus
    reason: GiveUpReason
    error: str | None


@attrs.frozen(slots=True)
class DeliveryBlocked(Event):
    """The blocked-completion warning (DEL-9): the run, its child session, and the concrete
    error its delivery is blocked on (kept across retries)."""

    kind: ClassVar[str] = "delivery.warning"
    run_id: str
    child_session_key: str
    error: str


@attrs.frozen(slots=True)
class RecoveryAttempt(Event):
    """Lost-answer recovery read the run's transcript (DEL-2); ``found``: an answer was there."""

    kind: ClassVar[str] = "recovery.attempt"
    run_id: str
    attempt: int
    found: bool


@attrs.frozen(slots=True)
class RecoveryEnded(Event):
    """Lost-answer recovery ended: ``recovered`` (the requester has the answer) or
    ``exhausted`` (its attempt bound was reached)."""

    kind: ClassVar[str] = "recovery.end"
    run_id: str
    outcome: str
    attempts: int


# -- operator actions on a run's delivery (actors/delivery/redrive.py) -----------------------------


@attrs.frozen(slots=True)
class DeliveryRedriven(Event):
    """An operator redrove a run from its retained payload: its next generation (DEL-16)."""

    kind: ClassVar[str] = "delivery.redrive"
    run_id: str
    request: int
    generation: int
    was: str  # suspended, failed or paused (pending, waiting out a retry backoff)
    ended_at: int | None  # the producer end time of the retained receipt it carries


@attrs.frozen(slots=True)
class DeliveryExpired(Event):
    """The sweeper discarded a suspended delivery 7 days after its suspension (reference
    §c18, reason ``expired``): a later redrive delivers nothing."""

    kind: ClassVar[str] = "delivery.expired"
    run_id: str
    suspended_at: int
    reason: str = "expired"


@attrs.frozen(slots=True)
class RunArchived(Event):
    """The sweeper archived a delete-mode run (reference §c18): its live session deleted
    (``deleted``: it was still there and no newer run of the session owned it), its archive
    kept for reads (FMT-6)."""

    kind: ClassVar[str] = "delivery.archived"
    run_id: str
    session_key: str
    deleted: bool


@attrs.frozen(slots=True)
class SuspendedBacklog(Event):
    """The warning OpenClaw gives from 25 suspended deliveries (again when the count changes);
    nothing is pruned to relieve the pressure."""

    kind: ClassVar[str] = "delivery.suspended_backlog"
    count: int


@attrs.frozen(slots=True)
class DeliveryDismissed(Event):
    """An operator dismissed a given-up delivery: discarded, its payload released."""

    kind: ClassVar[str] = "delivery.dismiss"
    run_id: str
    request: int
    was: str


@attrs.frozen(slots=True)
class OperatorRefused(Event):
    """The registry refused an operator's action on a run, and why (actors/delivery/redrive.py)."""

    kind: ClassVar[str] = "delivery.operator_refused"
    run_id: str
    request: int
    action: str
    reason: str
