"""The delivery core's send path (reference §c11): an attempt starts (or waits for the run's
descendants, or falls back to another requester, DEL-4, DEL-6), each try is sent and answered,
a failed try is classed and retried, backed off or given up. Pure: the steps return effects.

A mixin of :class:`actors.delivery.table.DeliveryCore`, which owns the state these steps read
and holds the table that calls them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from actors import events, mutants
from actors.delivery.edge import (
    AckTimeout,
    AttemptDue,
    Effect,
    Persist,
    Send,
    StartTimer,
    TryDue,
    persisted,
)
from actors.delivery.receipts import REQUESTER_UNAVAILABLE, Active
from actors.gateway.blocked import blocked_error
from actors.messages import Completion
from actors.records import retry
from actors.records.run_record import (
    AttemptStarted,
    Change,
    ClaimMoved,
    Delivered,
    GaveUp,
    RetryScheduled,
    RunRecord,
    apply,
)
from actors.records.send_error import SendError, closed_turn
from actors.states import (
    ACTIVE_CLAIMS,
    ClaimPhase,
    DeliveryStatus,
    GiveUpReason,
    OutcomeStatus,
    Waiting,
)

# A run with pending descendants re-checks after this long; the wait counts no attempt (§c8, §c11).
DESCENDANT_RECHECK_MS = 15_000


class AttemptSteps:
    """What the steps below need of the core (it, or another of its mixins, provides each)."""

    _active: dict[str, Active]
    _mutants: frozenset[str]
    _probe: Callable[[str], None]
    _pending_descendants: Callable[[RunRecord], int]
    _route: Callable[[RunRecord], str | None]
    _jitter: Callable[[], float]
    _render: Callable[[RunRecord, Any], str]
    _requester_kind: Callable[[str], Any]
    _tries: int

    def _deadline(self, record: RunRecord) -> int:
        raise NotImplementedError

    def _skips(self, record: RunRecord) -> bool:
        raise NotImplementedError

    def _announce_skip(self, record: RunRecord, now_ms: int) -> list[Effect]:
        raise NotImplementedError

    def _cleanup(self, record: RunRecord, now_ms: int) -> list[Effect]:
        raise NotImplementedError

    def _persist(self, active: Active, change: Change) -> Persist:
        raise NotImplementedError

    if TYPE_CHECKING:  # provided by the other mixins, which come after this one
        def _batch_takes(self, active: Any) -> str | None: ...
        def _hand_over(self, record: RunRecord, batch_id: str) -> list[Any]: ...
        def _closes(self, record: RunRecord) -> bool: ...
        def _close_private(self, record: RunRecord, now_ms: int) -> list[Any]: ...
        def _freeze_findings(self, active: Active) -> list[Effect]: ...

    def _start_attempt(self, active: Active, now_ms: int) -> list[Effect]:
        record = active.record
        if (batch := self._batch_takes(active)) is not None:
            return self._hand_over(record, batch)  # before any expiry: YLD-2
        if self._closes(record):
            return self._close_private(record, now_ms)
        if now_ms >= self._deadline(record):
            self._probe("delivery.expiry")
            return self._give_up(active, GiveUpReason.EXPIRY, record.last_error, now_ms)
        pending = self._pending_descendants(record)
        if pending and mutants.MUTANT_NO_DESCENDANT_GATING not in self._mutants:
            # DEL-6: the run announces once its descendants settled (their results are what it
            # reports); until then it waits without spending an attempt.
            self._probe("delivery.descendants-pending")
            active.waiting = Waiting.ATTEMPT_WAIT
            return [events.DeliveryDeferred(record.run_id, pending, now_ms + DESCENDANT_RECHECK_MS),
                    StartTimer(DESCENDANT_RECHECK_MS, AttemptDue(record.run_id, record.generation))]
        if self._skips(record):  # after the descendants settled, as any announcement
            return self._announce_skip(record, now_ms)
        target = self._route(record)
        effects: list[Effect] = []
        if target != record.requester:
            # DEL-4: the nested requester's session is gone (reference §c2).
            self._probe("delivery.requester-fallback" if target is not None
                        else "delivery.requester-unavailable")
            effects.append(events.RequesterFallback(record.run_id, record.requester, target))
            if mutants.MUTANT_FALLBACK_DROPPED in self._mutants:
                del self._active[record.run_id]
                return [*effects, Persist(record.run_id, Delivered(now_ms)),
                        events.DeliveryRecorded(record.run_id, active.key, False),
                        *self._cleanup(apply(record, Delivered(now_ms)), now_ms)]
        if target != active.target:
            active.target, active.text = target, None  # rendered for the new reader
        active.failed_tries = 0
        effects.append(self._persist(active, AttemptStarted(record.attempt_count + 1)))
        if target is None:
            # No fallback: a retryable outcome; the completion waits and nothing is lost.
            # The warning keeps the concrete refusal it is still blocked on (DEL-9); with none,
            # no send was refused, so there is nothing to warn with.
            concrete = active.concrete_error
            return effects + self._retry_later(active, concrete or REQUESTER_UNAVAILABLE,
                                               now_ms, warn=concrete is not None)
        if record.claim_phase not in ACTIVE_CLAIMS:
            effects.append(self._persist(active, ClaimMoved(ClaimPhase.RESERVED, active.key,
                                                            record.receipt_at_ms)))
        return effects + self._send_try(active, now_ms)

    def _send_try(self, active: Active, now_ms: int) -> list[Effect]:
        frozen = self._freeze_findings(active) if active.text is None else []
        record = active.record
        # Unique in this incarnation, across runs and generations: a timer set for an earlier
        # try (or an earlier generation of the run) never matches a later one.
        self._tries += 1
        active.token = self._tries
        active.waiting = Waiting.ACK
        target = active.target or record.requester
        if active.text is None:
            active.text = self._render(record, self._requester_kind(target))
        completion = Completion(key=active.key, run_id=record.run_id,
                                child_session_key=record.child_session_key,
                                requester=target,
                                status=record.outcome_status or OutcomeStatus.UNKNOWN,
                                text=active.text, ended_at_ms=record.receipt_at_ms or 0,
                                generation=record.generation, private=record.private and (
                                    mutants.MUTANT_PRIVATE_TO_CHANNEL not in self._mutants),
                                incarnation=record.requester_incarnation)
        claim: list[Effect] = []
        if record.claim_phase is ClaimPhase.RESERVED:  # from now on the requester may have it
            claim.append(self._persist(active, ClaimMoved(ClaimPhase.ATTEMPTED, active.key,
                                                          record.receipt_at_ms)))
        return [
            *frozen,
            *claim,
            events.AttemptSent(record.run_id, active.key, record.attempt_count,
                               active.failed_tries + 1),
            Send(target, completion),
            StartTimer(retry.ANNOUNCE_TIMEOUT_MS, AckTimeout(record.run_id, active.token)),
        ]

    def _try_failed(self, active: Active, chain: SendError, now_ms: int,
                    answered: bool = True) -> list[Effect]:
        record = active.record
        error_class = retry.classify(chain)
        error = chain.text()
        warned = active.concrete_error = blocked_error(
            active.concrete_error, error, answered, self._probe,
            mutants.MUTANT_WARNING_LOSES_ERROR in self._mutants)
        if {retry.ErrorClass.PERMANENT: mutants.MUTANT_PERMANENT_RETRIED, retry.ErrorClass.SENT:
                mutants.MUTANT_RETRY_PARTIAL_CHUNKS}.get(error_class) in self._mutants:
            error_class = retry.ErrorClass.TRANSIENT  # the bugs: taken for a transient error
        if closed_turn(chain):  # DEL-7: a permanent failure, never rescheduled
            self._probe("delivery.closed-turn-rejected")
            if mutants.MUTANT_CLOSED_TURN_RESCHEDULED in self._mutants:
                error_class = retry.ErrorClass.OTHER
        active.failed_tries += 1
        effects: list[Effect] = [events.SendFailed(record.run_id, chain.to_json(),
                                                   error_class.value, active.failed_tries)]
        if (batch := self._batch_takes(active)) is not None:
            return effects + self._hand_over(record, batch)
        if error_class is retry.ErrorClass.PERMANENT:
            self._probe("delivery.permanent-error")
            if chain.cause is not None:
                self._probe("delivery.wrapped-permanent-error")
            return effects + self._give_up(active, GiveUpReason.PERMANENT_FAILURE, error,
                                               now_ms)
        if error_class is retry.ErrorClass.SENT:
            # Part of it already reached the platform: never resent (DEL-10, DEL-11).
            self._probe("delivery.sent-before-error")
            return effects + self._give_up(active, GiveUpReason.SENT_BEFORE_ERROR, error,
                                               now_ms)
        if error_class is retry.ErrorClass.TRANSIENT:
            wait = retry.transport_wait_ms(active.failed_tries)
            if wait is not None:
                active.waiting = Waiting.TRY_WAIT
                return [*effects, StartTimer(wait, TryDue(record.run_id, active.token))]
            self._probe("delivery.transient-retries-exhausted")
            if mutants.MUTANT_GIVE_UP_AFTER_TRIES in self._mutants:
                return effects + self._give_up(active, GiveUpReason.PERMANENT_FAILURE, error,
                                               now_ms)
        else:
            self._probe("delivery.unclassified-error")
        return effects + self._retry_later(active, warned, now_ms)

    def _retry_later(self, active: Active, error: str, now_ms: int,
                     warn: bool = True) -> list[Effect]:
        """Retryable announce outcome: the registry loop waits its backoff, then tries again;
        the wait never runs past the expiry deadline, where the next attempt gives up on time.
        ``error`` is persisted and, with ``warn``, is the blocked-completion warning's (DEL-9)."""
        record = active.record
        deadline = self._deadline(record)
        backoff = retry.backoff_ms(record.attempt_count, self._jitter())
        if mutants.MUTANT_BACKOFF_UNCAPPED in self._mutants:
            backoff = retry.backoff_ms(1, 0.0) * 2 ** (record.attempt_count - 1)
        if backoff == retry.BACKOFF_MAX_MS:
            self._probe("delivery.backoff-capped")
        delay = min(backoff, max(0, deadline - now_ms))
        if delay < backoff:
            self._probe("delivery.backoff-clamped-to-expiry")
        active.waiting = Waiting.ATTEMPT_WAIT
        return [
            self._persist(active, RetryScheduled(now_ms + delay, error)),
            events.DeliveryRetry(record.run_id, record.attempt_count, now_ms + delay),
            *([events.DeliveryBlocked(record.run_id, record.child_session_key, error)]
              if warn else []),
            StartTimer(delay, AttemptDue(record.run_id, record.generation)),
        ]

    def _give_up(self, active: Active, reason: GiveUpReason, error: str | None,
                 now_ms: int) -> list[Effect]:
        record = active.record
        del self._active[record.run_id]
        # A completed ok child keeps its payload for an operator redrive (suspended); anything
        # else fails for good.
        status: Literal[DeliveryStatus.FAILED, DeliveryStatus.SUSPENDED] = (
            DeliveryStatus.SUSPENDED if record.outcome_status == OutcomeStatus.OK
            else DeliveryStatus.FAILED)
        self._probe("delivery.suspended" if status == DeliveryStatus.SUSPENDED
                    else "delivery.failed")
        abandon: list[Effect] = []
        if record.claim_phase in ACTIVE_CLAIMS:
            self._probe("delivery.claim-abandoned")
            cleared = ClaimMoved(ClaimPhase.ABANDONED, record.claim_key, record.claim_ended_at_ms)
            record, persist = persisted(record, cleared)
            abandon.append(persist)
        given_up, persist = persisted(record, GaveUp(
            status, error, now_ms if status == DeliveryStatus.SUSPENDED else None))
        return [*abandon, persist,
                events.DeliveryGaveUp(record.run_id, status, reason, error),
                *self._cleanup(given_up, now_ms)]
