"""Operator actions on a run's delivery: redrive and dismiss (DEL-16, DEL-12). Pure.

Reference §b: ``suspended --operator retry--> pending{generation+1}`` and ``--operator dismiss-->
discarded``. The delivery core takes an operator's request with the run's row as the store holds
it (:class:`~actors.delivery.edge.OperatorAsked`): a redrive works from that retained payload,
never from what the core remembers, and starts the run's next delivery generation under its own
key (``…:<runId>:g<n+1>``), so the requester's receipt rule decides (DEL-12: a newer end time
owns the reply; the same receipt already taken under an older generation keeps its first reply).

Where the reference is silent (docs/recovery.md says why):

- a redrive takes a run that gave up (``suspended``, or ``failed``: its payload is retained too)
  or one that is *paused*: pending while it waits out a registry backoff after a retryable
  failure. Its new generation's 30-minute expiry window starts at the redrive.
- it is refused, with a traced reason, for a run already delivered (a newer receipt reopens a
  delivered run by itself), one whose payload an operator released (``discarded``) or the
  sweeper discarded 7 days after its suspension (``expired``, actors/delivery/sweeper.py; so
  is a suspended row whose 7 days are up in the request's instant, the sweeper not yet run), one
  with a send in flight, one not ended or not asked to report back.
- a dismissal takes only a given-up run: ``discarded``, its delivery's replay payload released
  (never sent again); the run's result stays in the store for reads (history, findings).
- a correction from the producer after a give-up changes only the retained payload (the row);
  it sends nothing by itself, and a later redrive carries it.
"""

from __future__ import annotations

import enum

from actors import events
from actors.delivery import attempts, receipts
from actors.delivery.core import Active, Core, carried_error
from actors.delivery.edge import Effect, Input, OperatorAsked, Persist
from actors.mutants import MUTANT_GIVE_UP_CORRECTION_SENDS, MUTANT_REDRIVE_SAME_GENERATION
from actors.records.retry import RETENTION_MS
from actors.records.run_record import Dismissed, Redriven, RunRecord, apply
from actors.states import DeliveryStatus, Waiting

GIVEN_UP = (DeliveryStatus.SUSPENDED, DeliveryStatus.FAILED)
DAY_MS = 24 * 3600 * 1000


class Action(enum.StrEnum):
    REDRIVE = "redrive"
    DISMISS = "dismiss"


class Refusal(enum.StrEnum):
    """Why the registry refused an operator's action (traced as ``delivery.operator_refused``)."""

    DELIVERED = "already delivered"
    RELEASED = "payload released"
    EXPIRED = "payload expired"  # discarded by the sweeper 7 days after its suspension
    IN_FLIGHT = "delivery in flight"
    NOT_ENDED = "run not ended"
    NOT_REQUIRED = "no completion required"


_REFUSAL_PROBES = {Refusal.DELIVERED: "delivery.operator-refused-delivered",
                   Refusal.RELEASED: "delivery.operator-refused-released",
                   Refusal.EXPIRED: "delivery.operator-refused-expired",
                   Refusal.IN_FLIGHT: "delivery.operator-refused-in-flight",
                   Refusal.NOT_ENDED: "delivery.operator-refused-not-ended",
                   Refusal.NOT_REQUIRED: "delivery.operator-refused-not-required"}
_REDRIVE_PROBES = {"suspended": "delivery.redrive-suspended",
                   "failed": "delivery.redrive-failed", "paused": "delivery.redrive-paused"}


def refusal(record: RunRecord, action: Action, paused: bool, now_ms: int) -> Refusal | None:
    """Why ``action`` may not proceed on the run as its row stands at ``now_ms`` (None: it
    may)."""
    status = record.delivery_status
    if record.silenced:
        return Refusal.NOT_REQUIRED
    if record.ended_at_ms is None:
        return Refusal.NOT_ENDED
    if status == DeliveryStatus.DISCARDED:
        return Refusal.RELEASED if record.expired_at_ms is None else Refusal.EXPIRED
    if status == DeliveryStatus.DELIVERED:
        return Refusal.DELIVERED
    if status == DeliveryStatus.SUSPENDED and record.suspended_at_ms is not None \
            and now_ms - record.suspended_at_ms >= RETENTION_MS:
        # Its 7 days are up (reference §c18; OpenClaw's sweep: ``now - suspendedAt >=
        # SUBAGENT_SUSPENDED_DELIVERY_RETENTION_MS``): the payload has expired even when the
        # request reaches the row in the sweeper's own instant, before its discard (seed 82601:
        # a redrive at exactly 7 days was sent as generation 2).
        return Refusal.EXPIRED
    if status in GIVEN_UP or (paused and action is Action.REDRIVE):
        return None
    return Refusal.IN_FLIGHT


def operator(core: Core, active: Active | None, event: Input, now_ms: int) -> list[Effect]:
    assert isinstance(event, OperatorAsked)
    record, action = event.record, Action(event.action)
    # Paused: pending and waiting out a registry backoff (a retry is scheduled in its row).
    paused = (active is not None and active.waiting is Waiting.ATTEMPT_WAIT
              and record.next_attempt_at_ms is not None)
    refused = refusal(record, action, paused, now_ms)
    if refused is not None:
        core._probe(_REFUSAL_PROBES[refused])
        return [events.OperatorRefused(record.run_id, event.request, action, refused)]
    was = "paused" if record.delivery_status == DeliveryStatus.PENDING \
        else str(record.delivery_status)
    if action is Action.DISMISS:
        core._probe("delivery.dismissed")
        record = apply(record, Dismissed())
        return [Persist(record.run_id, Dismissed()),
                events.DeliveryDismissed(record.run_id, event.request, was),
                *core._cleanup(record, now_ms)]
    core._probe(_REDRIVE_PROBES[was])
    if was == "suspended" and record.suspended_at_ms is not None \
            and now_ms - record.suspended_at_ms >= DAY_MS:
        core._probe("delivery.redrive-after-days")  # late, yet inside its 7 days
    if record.receipt_ended_at_ms is not None:
        core._probe("delivery.redrive-corrected-payload")  # the payload is a correction
    generation = record.generation + 1
    if MUTANT_REDRIVE_SAME_GENERATION in core._mutants:
        generation = record.generation  # the bug: the old generation's key again
    change = Redriven(generation, now_ms)
    record = apply(record, change)
    fresh = core._active[record.run_id] = Active(record, core._key(record),
                                                 concrete_error=carried_error(active, record))
    return [Persist(record.run_id, change),
            events.DeliveryRedriven(record.run_id, event.request, record.generation, was,
                                    record.receipt_at_ms),
            *attempts.start_attempt(core, fresh, now_ms)]


def given_up_receipt(core: Core, record: RunRecord, now_ms: int) -> list[Effect] | None:
    """A newer receipt of a run that gave up: the producer already wrote it into the row
    (the retained payload a later redrive reads); nothing is sent (None: not this case)."""
    if record.delivery_status not in GIVEN_UP or record.receipt_ended_at_ms is None:
        return None
    core._probe("delivery.corrected-after-give-up")
    if MUTANT_GIVE_UP_CORRECTION_SENDS in core._mutants:
        return receipts.reopen(core, None, record, now_ms)  # the bug: sent as if it were delivered
    return []
