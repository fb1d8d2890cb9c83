"""The delivery core's send path (reference §c11): an attempt starts (or waits for the run's
descendants, or falls back to another requester, DEL-4, DEL-6), each try is sent and answered,
a failed try is classed and retried, backed off or given up. Pure: the steps return effects.

Plain functions of the core's state (:class:`~actors.delivery.core.CoreState`); the table
(``actors/delivery/table.py``) and the other parts call them by reference.
"""

from __future__ import annotations

from typing import Literal

from actors import events, mutants
from actors.delivery import private_steps
from actors.delivery.core import REQUESTER_UNAVAILABLE, Active, Core
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
from actors.delivery.wakes import batch_handover
from actors.gateway.blocked import blocked_error
from actors.messages import Completion
from actors.records import retry
from actors.records.run_record import (
    AttemptStarted,
    ClaimMoved,
    Delivered,
    FindingsFrozen,
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


def start_attempt(core: Core, active: Active, now_ms: int) -> list[Effect]:
    record = active.record
    if (batch := batch_handover.batch_takes(core, active)) is not None:
        return batch_handover.hand_over(core, record, batch)  # before any expiry: YLD-2
    if private_steps.closes(core, record):
        return private_steps.close_private(core, record, now_ms)
    deadline = core._deadline(record)
    if now_ms > deadline or (now_ms == deadline
                             and mutants.MUTANT_EXPIRY_INCLUSIVE not in core._mutants):
        core._probe("delivery.expiry")
        if now_ms > deadline:
            core._probe("delivery.expiry-overdue")
        elif record.private:
            core._probe("private.window-ends-at-its-instant")  # issue 36's private window draw
        return give_up(core, active, GiveUpReason.EXPIRY, record.last_error, now_ms)
    pending = core._pending_descendants(record)
    if pending and mutants.MUTANT_NO_DESCENDANT_GATING not in core._mutants:
        # DEL-6: the run announces once its descendants settled (their results are what it
        # reports); until then it waits without spending an attempt.
        core._probe("delivery.descendants-pending")
        active.waiting = Waiting.ATTEMPT_WAIT
        return [events.DeliveryDeferred(record.run_id, pending, now_ms + DESCENDANT_RECHECK_MS),
                StartTimer(DESCENDANT_RECHECK_MS, AttemptDue(record.run_id, record.generation))]
    if core._skips(record):  # after the descendants settled, as any announcement
        return core._announce_skip(record, now_ms)
    target = core._route(record)
    effects: list[Effect] = []
    if target != record.requester:
        # DEL-4: the nested requester's session is gone (reference §c2).
        core._probe("delivery.requester-fallback" if target is not None
                    else "delivery.requester-unavailable")
        effects.append(events.RequesterFallback(record.run_id, record.requester, target))
        if mutants.MUTANT_FALLBACK_DROPPED in core._mutants:
            del core._active[record.run_id]
            return [*effects, Persist(record.run_id, Delivered(now_ms)),
                    events.DeliveryRecorded(record.run_id, active.key, False),
                    *core._cleanup(apply(record, Delivered(now_ms)), now_ms)]
    if target != active.target:
        active.target, active.text = target, None  # rendered for the new reader
    active.failed_tries = 0
    effects.append(core._persist(active, AttemptStarted(record.attempt_count + 1)))
    if target is None:
        # No fallback: a retryable outcome; the completion waits and nothing is lost.
        # The warning keeps the concrete refusal it is still blocked on (DEL-9); with none,
        # no send was refused, so there is nothing to warn with.
        concrete = active.concrete_error
        return effects + retry_later(core, active, concrete or REQUESTER_UNAVAILABLE,
                                     now_ms, warn=concrete is not None)
    if record.claim_phase is ClaimPhase.ABANDONED:
        # A give-up the process died before recording: its receipt may be at the requester,
        # so the replay's claim stays a sent one (attempted, of that receipt): a correction
        # meanwhile opens the next generation, never goes under this key (DEL-3, DEL-12).
        effects.append(core._persist(active, ClaimMoved(
            ClaimPhase.ATTEMPTED, record.claim_key, record.claim_ended_at_ms)))
    elif record.claim_phase not in ACTIVE_CLAIMS:
        effects.append(core._persist(active, ClaimMoved(ClaimPhase.RESERVED, active.key,
                                                        record.receipt_at_ms)))
    return effects + send_try(core, active, now_ms)


def send_try(core: Core, active: Active, now_ms: int) -> list[Effect]:
    frozen = freeze_findings(core, active) if active.text is None else []
    record = active.record
    # Unique across runs, generations and incarnations: a timer set for an earlier try (or
    # an earlier generation of the run) never matches a later one, nor does the late answer
    # of a dead process's try of the same key (reference §c17; seed 15898).
    core._tries += 1
    active.token = core._tries
    active.waiting = Waiting.ACK
    active.sent_at_ms = now_ms
    target = active.target or record.requester
    if active.text is None:
        active.text = core._render(record, core._requester_kind(target))
    completion = Completion(key=active.key, run_id=record.run_id,
                            child_session_key=record.child_session_key,
                            requester=target,
                            status=record.outcome_status or OutcomeStatus.UNKNOWN,
                            text=active.text, ended_at_ms=record.receipt_at_ms or 0,
                            generation=record.generation, private=record.private and (
                                mutants.MUTANT_PRIVATE_TO_CHANNEL not in core._mutants),
                            incarnation=record.requester_incarnation,
                            dispatch=active.token)
    claim: list[Effect] = []
    if record.claim_phase is ClaimPhase.RESERVED:  # from now on the requester may have it
        claim.append(core._persist(active, ClaimMoved(ClaimPhase.ATTEMPTED, active.key,
                                                      record.receipt_at_ms)))
    return [
        *frozen,
        *claim,
        events.AttemptSent(record.run_id, active.key, record.attempt_count,
                           active.failed_tries + 1),
        Send(target, completion),
        StartTimer(answer_wait_ms(core, record, now_ms), AckTimeout(record.run_id, active.token)),
    ]


def answer_wait_ms(core: Core, record: RunRecord, now_ms: int) -> int:
    """How long a try waits for its answer. A public try times out after 120 s
    (``announceTimeoutMs``). A private one has no timeout of its own: OpenClaw 2026.9.6 passes
    ``timeoutMs: parentOnly && isSubagentCompletion ? void 0 : announceTimeoutMs`` to
    ``runAnnounceAgentCall``, which then sets no timer, and the dispatch waits with no deadline;
    only the registry's attempt signal, aborted at the 30-minute window's end
    (``resolveAnnounceDeliveryDeadline``), ends the wait (docs/fidelity.md, "A private try's
    answer timeout")."""
    if untimed(core, record):
        return max(0, core._deadline(record) - now_ms)
    return retry.ANNOUNCE_TIMEOUT_MS - (
        mutants.MUTANT_ANSWER_TIMEOUT_EARLY in core._mutants)  # the bug: 119,999


def untimed(core: Core, record: RunRecord) -> bool:
    """Whether the record's tries have no answer timeout of their own (a private one's:
    ``answer_wait_ms``)."""
    return record.private and mutants.MUTANT_PRIVATE_TRY_TIMES_OUT not in core._mutants


def try_failed(core: Core, active: Active, chain: SendError, now_ms: int,
               answered: bool = True) -> list[Effect]:
    record = active.record
    error_class = retry.classify(chain)
    error = chain.text()
    warned = active.concrete_error = blocked_error(
        active.concrete_error, error, answered, core._probe,
        mutants.MUTANT_WARNING_LOSES_ERROR in core._mutants)
    if {retry.ErrorClass.PERMANENT: mutants.MUTANT_PERMANENT_RETRIED, retry.ErrorClass.SENT:
            mutants.MUTANT_RETRY_PARTIAL_CHUNKS}.get(error_class) in core._mutants:
        error_class = retry.ErrorClass.TRANSIENT  # the bugs: taken for a transient error
    if closed_turn(chain):  # DEL-7: a permanent failure, never rescheduled
        core._probe("delivery.closed-turn-rejected")
        if mutants.MUTANT_CLOSED_TURN_RESCHEDULED in core._mutants:
            error_class = retry.ErrorClass.OTHER
    active.failed_tries += 1
    effects: list[Effect] = [events.SendFailed(record.run_id, chain.to_json(),
                                               error_class.value, active.failed_tries)]
    if (batch := batch_handover.batch_takes(core, active)) is not None:
        return effects + batch_handover.hand_over(core, record, batch)
    if error_class is retry.ErrorClass.PERMANENT:
        core._probe("delivery.permanent-error")
        if chain.cause is not None:
            core._probe("delivery.wrapped-permanent-error")
        return effects + give_up(core, active, GiveUpReason.PERMANENT_FAILURE, error,
                                 now_ms)
    if error_class is retry.ErrorClass.SENT:
        # Part of it already reached the platform: never resent (DEL-10, DEL-11).
        core._probe("delivery.sent-before-error")
        return effects + give_up(core, active, GiveUpReason.SENT_BEFORE_ERROR, error,
                                 now_ms)
    if error_class is retry.ErrorClass.TRANSIENT:
        wait = retry.transport_wait_ms(active.failed_tries)
        if wait is not None:
            active.waiting = Waiting.TRY_WAIT
            return [*effects, StartTimer(wait, TryDue(record.run_id, active.token))]
        core._probe("delivery.transient-retries-exhausted")
        if mutants.MUTANT_GIVE_UP_AFTER_TRIES in core._mutants:
            return effects + give_up(core, active, GiveUpReason.PERMANENT_FAILURE, error,
                                     now_ms)
    else:
        core._probe("delivery.unclassified-error")
    return effects + retry_later(core, active, warned, now_ms)


def retry_later(core: Core, active: Active, error: str, now_ms: int,
                warn: bool = True) -> list[Effect]:
    """Retryable announce outcome: the registry loop waits its whole backoff, then tries again.
    OpenClaw 2026.9.6 (``resolveDeferredCleanupDecision``) gives up at once when the deadline
    has passed (``now >= deadline``), and otherwise schedules the resume a full
    ``resolveAnnounceRetryDelayMs`` later, never cut at the deadline: a resume due at or past
    it gives up then (``start_attempt``; the seed is silent, so the released code wins:
    docs/fidelity.md). ``error`` is persisted and, with ``warn``, is the blocked-completion
    warning's (DEL-9)."""
    record = active.record
    deadline = core._deadline(record)
    warning: list[Effect] = (
        [events.DeliveryBlocked(record.run_id, record.child_session_key, error)] if warn else [])
    if now_ms > deadline or (now_ms == deadline
                             and mutants.MUTANT_EXPIRY_INCLUSIVE not in core._mutants):
        # The attempt ended at or past its deadline (its transport tries ran past it): the
        # decision gives up now, with the error it ended on; no backoff is drawn.
        core._probe("delivery.expiry-at-decision")
        if private_steps.closes(core, record):
            return warning + private_steps.close_private(core, record, now_ms)
        return warning + give_up(core, active, GiveUpReason.EXPIRY, error, now_ms)
    backoff = retry.backoff_ms(record.attempt_count, core._jitter())
    if mutants.MUTANT_BACKOFF_UNCAPPED in core._mutants:
        backoff = retry.backoff_ms(1, 0.0) * 2 ** (record.attempt_count - 1)
    if backoff == retry.BACKOFF_MAX_MS:
        core._probe("delivery.backoff-capped")
    delay = backoff
    if now_ms + backoff >= deadline:
        # Due at or past the expiry: the resume then gives up, a whole backoff after this
        # decision (``delivery.expiry-overdue`` past the instant).
        core._probe("delivery.backoff-past-expiry")
        if mutants.MUTANT_BACKOFF_CLAMPED in core._mutants:
            delay = deadline - now_ms  # the bug: the wait cut at the deadline
    active.waiting = Waiting.ATTEMPT_WAIT
    return [
        core._persist(active, RetryScheduled(now_ms + delay, error)),
        events.DeliveryRetry(record.run_id, record.attempt_count, now_ms + delay),
        *warning,
        StartTimer(delay, AttemptDue(record.run_id, record.generation)),
    ]


def give_up(core: Core, active: Active, reason: GiveUpReason, error: str | None,
            now_ms: int) -> list[Effect]:
    record = active.record
    del core._active[record.run_id]
    # A completed ok child keeps its payload for an operator redrive (suspended); anything
    # else fails for good.
    status: Literal[DeliveryStatus.FAILED, DeliveryStatus.SUSPENDED] = (
        DeliveryStatus.SUSPENDED if record.outcome_status == OutcomeStatus.OK
        else DeliveryStatus.FAILED)
    core._probe("delivery.suspended" if status == DeliveryStatus.SUSPENDED
                else "delivery.failed")
    abandon: list[Effect] = []
    if record.claim_phase in ACTIVE_CLAIMS:
        core._probe("delivery.claim-abandoned")
        cleared = ClaimMoved(ClaimPhase.ABANDONED, record.claim_key, record.claim_ended_at_ms)
        record, persist = persisted(record, cleared)
        abandon.append(persist)
    given_up, persist = persisted(record, GaveUp(
        status, error, now_ms if status == DeliveryStatus.SUSPENDED else None))
    return [*abandon, persist,
            events.DeliveryGaveUp(record.run_id, status, reason, error),
            *core._cleanup(given_up, now_ms)]


def freeze_findings(core: Core, active: Active) -> list[Effect]:
    """DEL-6: a run's findings are rendered once per delivery generation and stored with
    the run before its first send, so a resend after a restart carries the same text under
    the same key. A child's later correction reaches the child's own requester (this run's
    session), never an already rendered payload (docs/nesting.md)."""
    record = active.record
    if (record.findings_text is not None
            and mutants.MUTANT_FINDINGS_RERENDERED not in core._mutants):
        return []
    section = core._findings(record)
    if section is None:  # the run spawned no children: nothing to keep
        return []
    return [core._persist(active, FindingsFrozen(section)),
            events.FindingsFrozen(record.run_id, active.key)]
