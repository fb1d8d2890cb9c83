"""Operator actions on a run's delivery: redrive and dismiss (DEL-16, DEL-12). Pure.

Reference §b: ``suspended --operator retry--> pending{generation+1}`` and ``--operator dismiss-->
discarded``. The delivery core takes an operator's request with the run's row as the store holds
it (:class:`~actors.delivery.edge.OperatorAsked`): a redrive works from that retained payload,
never from what the core remembers, and starts the run's next delivery generation under its own
key (``…:<runId>:g<n+1>``), so the requester's receipt rule decides (DEL-12: a newer end time
owns the reply; the same receipt already taken under an older generation keeps its first reply).

Where the reference is silent (docs/recovery.md says why):

- a redrive takes only a ``suspended`` run (its new generation's 30-minute expiry window starts
  at the redrive). A ``failed`` run, or one *paused* (pending while it waits out a registry
  backoff after a retryable failure), is refused: ``completion delivery is not blocked``, as
  OpenClaw 2026.9.6's ``retrySubagentCompletionDelivery`` answers (the seed is silent, so the
  released code decides; issue 34). Its other opening, a delivery in flight with a session-queue
  entry (released and rescheduled), has no counterpart here: the model's in-flight sends are
  refused (docs/fidelity.md).
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
from actors.mutants import (
    MUTANT_GIVE_UP_CORRECTION_SENDS,
    MUTANT_REDRIVE_NOT_SUSPENDED,
    MUTANT_REDRIVE_SAME_GENERATION,
)
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
    # Failed, or paused in its backoff: only a suspended completion is blocked (OpenClaw
    # 2026.9.6's own words).
    NOT_BLOCKED = "completion delivery is not blocked"


_REFUSAL_PROBES = {Refusal.DELIVERED: "delivery.operator-refused-delivered",
                   Refusal.RELEASED: "delivery.operator-refused-released",
                   Refusal.EXPIRED: "delivery.operator-refused-expired",
                   Refusal.IN_FLIGHT: "delivery.operator-refused-in-flight",
                   Refusal.NOT_ENDED: "delivery.operator-refused-not-ended",
                   Refusal.NOT_REQUIRED: "delivery.operator-refused-not-required"}
_NOT_BLOCKED_PROBES = {DeliveryStatus.FAILED: "delivery.operator-refused-failed",
                       DeliveryStatus.PENDING: "delivery.operator-refused-paused"}


def refusal(record: RunRecord, action: Action, paused: bool, now_ms: int,
            mutants: frozenset[str] = frozenset()) -> Refusal | None:
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
    if status == DeliveryStatus.SUSPENDED:
        return None
    if action is Action.REDRIVE and (status == DeliveryStatus.FAILED or paused):
        # Only a suspended completion is blocked (OpenClaw 2026.9.6); the mutant takes these
        # too, as the model did before issue 34.
        return None if MUTANT_REDRIVE_NOT_SUSPENDED in mutants else Refusal.NOT_BLOCKED
    if status == DeliveryStatus.FAILED:
        return None  # a dismissal of a failed run (the model's; docs/fidelity.md)
    return Refusal.IN_FLIGHT


def operator(core: Core, active: Active | None, event: Input, now_ms: int) -> list[Effect]:
    assert isinstance(event, OperatorAsked)
    record, action = event.record, Action(event.action)
    # Paused: pending and waiting out a registry backoff (a retry is scheduled in its row).
    paused = (active is not None and active.waiting is Waiting.ATTEMPT_WAIT
              and record.next_attempt_at_ms is not None)
    refused = refusal(record, action, paused, now_ms, core._mutants)
    if refused is not None:
        core._probe(_NOT_BLOCKED_PROBES[record.delivery_status] if refused is Refusal.NOT_BLOCKED
                    else _REFUSAL_PROBES[refused])
        return [events.OperatorRefused(record.run_id, event.request, action, refused)]
    was = "paused" if record.delivery_status == DeliveryStatus.PENDING \
        else str(record.delivery_status)
    if action is Action.DISMISS:
        core._probe("delivery.dismissed")
        record = apply(record, Dismissed())
        return [Persist(record.run_id, Dismissed()),
                events.DeliveryDismissed(record.run_id, event.request, was),
                *core._cleanup(record, now_ms)]
    if was == "suspended":
        core._probe("delivery.redrive-suspended")
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
