"""The batch-wake outbox: a pure core (no IO, clock or randomness) that decides when a frozen
batch wakes its requester, and what happens to each attempt (reference §b "BATCH WAKE", §c9,
§c11 "Batch wake", §c12).

A batch wakes once every member has settled (ended, and its own delivery resolved or handed to
the batch) and every member's descendants have settled too; a child of another turn is never
looked at. Unsettled descendants defer the wake 30 s; a deferral counts only while no descendant
is still running, and at 10 counted deferrals the batch closes undelivered. The row is persisted
as ``dispatching`` before each send; a restarted process replays the same attempt key and honours
the persisted deadline. A known undelivered attempt (a refused send, a missing visible reply) is
retried 30 s, then 120 s later on a fresh ``:retry-n`` key, three attempts in all; an unanswered
send is replayed on the same key up to three times; a permanent or ambiguous failure, a reset or
deleted requester close it at once. When it completes, every member it owns is recorded
delivered (or, when it closes, suspended or failed) and cleaned up, each once; a member whose own
delivery had given up (suspended) before the wake was taken is released to delivered when the
wake carried its current receipt (reference §b, §c12; seed 002, YLD-2). A batch whose every
member was killed is consumed without a wake (§c9).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from actors import events, mutants
from actors.delivery.edge import Persist, Send
from actors.delivery.wakes.outbox_messages import (
    ClaimMember,
    Effect,
    Member,
    ReopenMember,
    Requester,
    SaveBatch,
    WakeAckTimeout,
    WakeDue,
    WakeTimer,
)
from actors.events import batches as batch_events
from actors.messages import Completion, CompletionAck, SendRejected
from actors.private.rules import HANDOFF_UNAVAILABLE
from actors.records import claims, retry
from actors.records.batch_record import BatchRow, BatchStatus
from actors.records.run_record import (
    ClaimMoved,
    CleanedUp,
    Delivered,
    GaveUp,
    RunRecord,
    apply,
)
from actors.states import (
    ACTIVE_CLAIMS,
    ClaimPhase,
    DeliveryStatus,
    EvidenceKind,
    GiveUpReason,
    OutcomeStatus,
)

DEFERRAL_MS = 30_000
DEFERRAL_LIMIT = 10
DEFERRAL_ERROR = "requester settle wake deferred too many times"
RETRY_DELAYS_MS = (30_000, 120_000)
MAX_ATTEMPTS = 3
MAX_REPLAYS = 3
UNAVAILABLE = "requester session unavailable"
ABANDONED = "requester_abandoned"
HANDED_TO_BATCH = "intentional_non_delivery"
TURN_PENDING = "requester_turn_pending"
CONSUMED = "every member killed"
SETTLE_TOOL = "subagent_settle"  # the wake's sourceTool: an internal call (reference §c9)




def _owns(row: BatchRow, record: RunRecord) -> bool:
    """Whether the batch resolves this member's delivery when it completes or closes: the
    members ``store.batch_owner`` hands over to it, a yield batch's own (YLD-2). Not a wave's
    (an unfrozen wave hands nothing over: its members are announced one by one, reference §c9),
    nor a public sibling in a private batch (it keeps its own delivery: PRV-5, reference §c10).
    Such a member is pending here only when a redrive or correction reopened it after the wake
    left, and it goes on under its own retries and expiry; giving it up here left it sending
    after its give-up (seeds 69144, 99401: an operator's redrive between two of its own tries
    while the wake was out)."""
    return record.run_id in row.members and record.yield_batch == row.batch_id \
        and (record.private or not row.private)


def settled(member: Member) -> bool:
    record = member.record
    return record.ended_at_ms is not None and not member.in_flight and (
        not record.owes or record.delivery_disposition == HANDED_TO_BATCH)


class BatchWakeCore:
    """``render(row, records)`` makes the wake text (the shell injects the announce code)."""

    def __init__(self, render: Callable[[BatchRow, list[RunRecord]], str],
                 probe: Callable[[str], None] = lambda name: None,
                 mutants: frozenset[str] = frozenset(), incarnation: int = 0) -> None:
        self._render = render
        self._probe = probe
        self._mutants = mutants
        # The live dispatch's answer-timeout token, by batch; tokens are never reused (an
        # earlier dispatch's timeout falling due as a later one is sent, or while the batch
        # waits on a busy requester, must not count against the later one: reference §c17).
        # Each incarnation of the delivery process starts its own range, so the late answer of
        # a dead process's dispatch never matches a new one's on the same key either.
        self._tokens: dict[str, int] = {}
        self._first = incarnation << 32
        self._issued = self._first

    # -- inputs ----------------------------------------------------------------------------------

    def check(self, row: BatchRow, members: list[Member], requester: Requester,
              now_ms: int) -> list[Effect]:
        """A member or descendant settled, the batch was frozen, or a wait ran out."""
        if row.status == BatchStatus.DISPATCHING or not row.open:
            if row.status == BatchStatus.DISPATCHING and all(settled(m) for m in members):
                self._probe("batch.coalesced-settle")  # the wake is already out
            return []
        waiting = row.next_attempt_at_ms is not None and row.next_attempt_at_ms > now_ms
        if self.waiting(row, now_ms):
            return []  # a retry's (or a busy requester's) deadline is persisted: honoured
        unsettled = [m for m in members if not settled(m)]
        if unsettled:
            return [ClaimMember(m.record.run_id) for m in unsettled
                    if m.record.ended_at_ms is not None and not m.in_flight]
        pending = sum(m.descendants_pending for m in members)
        if pending:
            if waiting:
                return []  # the deferral's recheck is set
            return self._defer(row, members, pending,
                               sum(m.descendants_active for m in members), now_ms)
        if row.private and requester.incarnation != row.incarnation:
            # Private findings are never passed to another incarnation (reference §c10, PRV-3).
            self._probe("private.batch-handoff-unavailable")
            return self._close(row, members, HANDOFF_UNAVAILABLE, HANDOFF_UNAVAILABLE, now_ms)
        if requester.incarnation is None:
            self._probe("batch.requester-deleted")
            return self._close(row, members, UNAVAILABLE, UNAVAILABLE, now_ms)
        if requester.incarnation != row.incarnation:
            self._probe("batch.reset-before-wake")
            return self._close(row, members, ABANDONED, ABANDONED, now_ms)
        owned = [m for m in members if m.record.run_id in row.members]
        if owned and all(m.record.silenced for m in owned) \
                and mutants.MUTANT_KILLED_BATCH_WOKEN not in self._mutants:
            # Every member was killed or steered (its delivery suppressed): the batch is
            # consumed without a wake (reference §c9), as one with no required children is.
            self._probe("batch.consumed-all-killed")
            self._tokens.pop(row.batch_id, None)
            return [SaveBatch(attrs.evolve(row, status=BatchStatus.CLOSED, outcome=CONSUMED,
                                           next_attempt_at_ms=None)),
                    batch_events.WakeClosed(row.batch_id, CONSUMED, None)]
        return self._dispatch(attrs.evolve(row, status=BatchStatus.DISPATCHING,
                                           attempt_count=row.attempt_count + 1,
                                           next_attempt_at_ms=None), members, now_ms)

    def waiting(self, row: BatchRow, now_ms: int) -> bool:
        """Whether :meth:`check` would do nothing whatever the members: a retry's (or a busy
        requester's) persisted deadline is still ahead (the shell then skips reading them)."""
        return row.status == BatchStatus.PENDING and row.next_attempt_at_ms is not None \
            and row.next_attempt_at_ms > now_ms and (
                row.attempt_count > 0 or row.last_error == TURN_PENDING)

    def due(self, row: BatchRow, members: list[Member], requester: Requester,
            now_ms: int) -> list[Effect]:
        if row.status == BatchStatus.DISPATCHING and row.next_attempt_at_ms is not None:
            if row.next_attempt_at_ms > now_ms:
                return [WakeTimer(row.next_attempt_at_ms - now_ms, WakeDue(row.batch_id))]
            return self._dispatch(attrs.evolve(row, next_attempt_at_ms=None), members, now_ms)
        if row.status == BatchStatus.PENDING and row.next_attempt_at_ms is not None \
                and row.next_attempt_at_ms <= now_ms:
            row = attrs.evolve(row, next_attempt_at_ms=None)
            return self.check(row, members, requester, now_ms)
        return []

    def restore(self, row: BatchRow, members: list[Member], requester: Requester,
                now_ms: int) -> list[Effect]:
        """A new incarnation finds this open batch in the store."""
        due = row.next_attempt_at_ms
        if row.status == BatchStatus.DISPATCHING:
            # Replays the same attempt key, no new transition; a persisted deadline holds.
            self._probe("batch.restart-while-dispatching")
            if not row.yielded:
                self._probe("wave.restart-while-dispatching")
            # What the dead process sent may have landed: this key only, until an answer.
            row = attrs.evolve(row, key_ambiguous=True)
            if due is not None and due > now_ms:
                return [SaveBatch(row), WakeTimer(due - now_ms, WakeDue(row.batch_id))]
            return self._dispatch(attrs.evolve(row, next_attempt_at_ms=None), members, now_ms)
        if due is not None and due > now_ms:
            return [WakeTimer(due - now_ms, WakeDue(row.batch_id))]
        return self.check(row, members, requester, now_ms)

    def acked(self, row: BatchRow, members: list[Member], ack: CompletionAck,
              now_ms: int) -> list[Effect]:
        if row.status != BatchStatus.DISPATCHING or ack.key != row.attempt_key() or \
                ack.dispatch != self._tokens.get(row.batch_id):
            # A late answer of an earlier dispatch on the same key (a timed-out one, or one of
            # a dead process) answers nothing now (reference §c17; seed 3555)...
            self._probe("batch.stale-answer")
            if row.open and ack.accepted and (ack.visible_reply or not row.yielded
                                              or row.private):
                # ... except a take: the requester took a copy of this batch's wake (the
                # network's duplicate of a send it had refused as busy, arriving after its
                # turn ended), which is the wake done, as a late acknowledgement proves a run's
                # own hand-off. Sending it again would resume the turn a second time (YLD-1,
                # seed 28414: the retry went out on a fresh key the session took anew).
                self._tokens.pop(row.batch_id, None)
                return self._complete(row, members, ack, now_ms)
            return []
        self._tokens.pop(row.batch_id, None)
        if ack.abandoned:
            self._probe("batch.reset-during-wake")
            return self._close(row, members, ABANDONED, ABANDONED, now_ms)
        if ack.turn_pending:
            # The requester is busy in another turn: pending again, the attempt not spent (the
            # same key goes next), no deferral counted; it tries again after the recheck.
            later = attrs.evolve(row, status=BatchStatus.PENDING,
                                 attempt_count=row.attempt_count - 1,
                                 next_attempt_at_ms=now_ms + DEFERRAL_MS, last_error=TURN_PENDING)
            return [SaveBatch(later), batch_events.WakeTurnPending(row.batch_id, ack.key,
                                                                   now_ms + DEFERRAL_MS),
                    WakeTimer(DEFERRAL_MS, WakeDue(row.batch_id))]
        if ack.accepted and not ack.visible_reply and row.yielded and not row.private:
            self._probe("batch.visible-reply-missing")
            return self._retry(row, members, "visible_reply_missing", now_ms)
        if row.attempt_count == MAX_ATTEMPTS:
            self._probe("batch.taken-on-last-attempt")  # one under the budget (issue 36)
        return self._complete(row, members, ack, now_ms)

    def rejected(self, row: BatchRow, members: list[Member], rejection: SendRejected,
                 now_ms: int) -> list[Effect]:
        if row.status != BatchStatus.DISPATCHING or rejection.key != row.attempt_key() or \
                rejection.dispatch != self._tokens.get(row.batch_id):
            self._probe("batch.stale-answer")
            return []
        self._tokens.pop(row.batch_id, None)
        error = rejection.error.text()
        error_class = retry.classify(rejection.error)
        if error_class is retry.ErrorClass.PERMANENT:
            self._probe("batch.permanent-error")
            return self._close(row, members, "permanent_failure", error, now_ms)
        if error_class is retry.ErrorClass.SENT:
            return self._close(row, members, "ambiguous", error, now_ms)
        if row.key_ambiguous:
            # An earlier send of this key may have landed: a refusal of this one proves
            # nothing about it, so the same key goes again (a replay), never a fresh one.
            return self._replay(row, members, error, now_ms)
        return self._retry(row, members, error, now_ms)

    def timed_out(self, row: BatchRow, members: list[Member], timer: WakeAckTimeout,
                  now_ms: int) -> list[Effect]:
        if row.status != BatchStatus.DISPATCHING or self._tokens.get(row.batch_id) != timer.token:
            return []
        # A transport failure of unknown outcome: replay on the same key.
        return self._replay(attrs.evolve(row, key_ambiguous=True), members, "gateway timeout",
                            now_ms)

    def _replay(self, row: BatchRow, members: list[Member], error: str,
                now_ms: int) -> list[Effect]:
        if row.replay_count >= MAX_REPLAYS:
            self._probe("batch.replays-exhausted")
            return self._close(row, members, "ambiguous", error, now_ms)
        self._probe("batch.replay")
        later = attrs.evolve(row, replay_count=row.replay_count + 1,
                             next_attempt_at_ms=now_ms + RETRY_DELAYS_MS[0], last_error=error)
        return [SaveBatch(later), WakeTimer(RETRY_DELAYS_MS[0], WakeDue(row.batch_id))]

    # -- steps -----------------------------------------------------------------------------------

    def _defer(self, row: BatchRow, members: list[Member], pending: int, active: int,
               now_ms: int) -> list[Effect]:
        count = row.deferral_count + 1 if active == 0 else 0
        if count >= DEFERRAL_LIMIT:
            self._probe("batch.deferral-limit")
            return self._close(row, members, "deferred", DEFERRAL_ERROR, now_ms)
        self._probe("batch.deferred")
        later = attrs.evolve(row, deferral_count=count, next_attempt_at_ms=now_ms + DEFERRAL_MS)
        return [SaveBatch(later), batch_events.WakeDeferred(row.batch_id, pending, active, count),
                WakeTimer(DEFERRAL_MS, WakeDue(row.batch_id))]

    def _dispatch(self, row: BatchRow, members: list[Member], now_ms: int) -> list[Effect]:
        """Persist ``dispatching`` first, then send (a crash between replays the same key)."""
        if row.text is None:
            records = [m.record for m in members]
            times = [(r.created_at_ms, r.ended_at_ms) for r in records if r.run_id in row.members]
            if len(set(times)) < len(times):
                # Two members spawned and ended in one instant: only the session key orders
                # their sections (reference §c9's stable order; issue 36's tie draw).
                self._probe("batch.sections-ordered-by-session-key")
            row = attrs.evolve(row, text=self._render(row, records), rendered=tuple(
                (r.run_id, r.receipt_at_ms or 0) for r in records if r.run_id in row.members))
        text = row.text
        assert text is not None
        if mutants.MUTANT_WAKE_TOKEN_REUSED in self._mutants:
            # The bug (issue 24): each dispatch after an answer starts the tokens at 1 again,
            # so an earlier attempt's timeout reads as this one going unanswered.
            self._issued = self._tokens.get(row.batch_id, self._first)
        self._issued += 1
        token = self._tokens[row.batch_id] = self._issued
        key = row.attempt_key()
        completion = Completion(key=key, run_id=row.batch_id, child_session_key="",
                                requester=row.requester, status=OutcomeStatus.OK, text=text,
                                turn_run_id=row.turn_run_id, source_tool=SETTLE_TOOL,
                                incarnation=None if row.yielded else row.incarnation,
                                dispatch=token)
        return [SaveBatch(row),
                batch_events.WakeDispatched(row.batch_id, key, row.attempt_count,
                                           row.replay_count),
                Send(row.requester, completion),
                WakeTimer(retry.ANNOUNCE_TIMEOUT_MS, WakeAckTimeout(row.batch_id, token))]

    def _retry(self, row: BatchRow, members: list[Member], error: str,
               now_ms: int) -> list[Effect]:
        """A known undelivered attempt: another on a fresh key, while attempts are left."""
        budget = MAX_ATTEMPTS - (mutants.MUTANT_WAKE_ATTEMPTS_ONE_SHORT in self._mutants)
        if row.attempt_count >= budget:
            self._probe("batch.attempts-exhausted")
            return self._close(row, members, "retries_exhausted", error, now_ms)
        self._probe("batch.retry")
        delay = RETRY_DELAYS_MS[min(row.attempt_count, len(RETRY_DELAYS_MS)) - 1]
        later = attrs.evolve(row, status=BatchStatus.PENDING, next_attempt_at_ms=now_ms + delay,
                             last_error=error, key_ambiguous=False)
        return [SaveBatch(later), batch_events.WakeRetry(row.batch_id, row.attempt_count,
                                                        now_ms + delay, error),
                WakeTimer(delay, WakeDue(row.batch_id))]

    def _complete(self, row: BatchRow, members: list[Member], ack: CompletionAck,
                  now_ms: int) -> list[Effect]:
        done = attrs.evolve(row, status=BatchStatus.DELIVERED, outcome="delivered",
                            next_attempt_at_ms=None)
        if mutants.MUTANT_TWO_WAKES in self._mutants and row.attempt_count == 1:
            # The bug: the outbox forgets the wake went out; the next settle trigger sends
            # another on a fresh key.
            done = attrs.evolve(row, status=BatchStatus.PENDING, next_attempt_at_ms=None)
        # Members first, the row last: a crash in between leaves the batch dispatching, and the
        # next incarnation replays the same key and finishes the rest.
        effects: list[Effect] = []
        newer: list[Effect] = []
        carried = dict(row.rendered)
        for member in members:
            record = member.record
            # A member whose own try is out (reopened by a correction since the wake left) is
            # left to that try's answer, as a hand-over leaves it.
            if record.owes and _owns(row, record) \
                    and not member.in_flight:
                # DEL-13 as for a run's own delivery: the wake its requester took is the
                # evidence (of the receipt the wake carried), saved before a claim left from
                # its own tries is cleared.
                ended = carried.get(record.run_id, record.receipt_at_ms)
                if ended is not None and (record.receipt_at_ms or 0) > ended:
                    newer.append(ReopenMember(record.run_id))
                for change in claims.resolution(record, EvidenceKind.REPLY_SENT, ack.key,
                                                ended, now_ms, self._mutants):
                    record = apply(record, change)
                    effects.append(Persist(record.run_id, change))
                effects += [events.DeliveryRecorded(record.run_id, ack.key, not ack.accepted),
                            *self._cleanup(record, now_ms)]
            elif self._releases(row, member, carried):
                effects += self._release(record, ack, carried[record.run_id], now_ms)
        return [*effects, SaveBatch(done),
                batch_events.WakeDelivered(row.batch_id, ack.key, not ack.accepted), *newer]

    def _releases(self, row: BatchRow, member: Member, carried: dict[str, int]) -> bool:
        """A member whose own delivery gave up (suspended) before the wake was taken, and whose
        current receipt the wake carried: the receipt of the same run and delivery generation
        (a newer one, a correction since the wake was rendered, keeps its suspension and its own
        delivery: reference §c12, DEL-12)."""
        record = member.record
        return (record.delivery_status == DeliveryStatus.SUSPENDED
                and record.run_id in row.members and not member.in_flight
                and carried.get(record.run_id) == (record.receipt_at_ms or 0)
                and mutants.MUTANT_WAKE_KEEPS_SUSPENDED not in self._mutants)

    def _release(self, record: RunRecord, ack: CompletionAck, carried: int,
                 now_ms: int) -> list[Effect]:
        """The batch's results count as delivered (seed 002, YLD-2): the wake taken is the
        evidence (DEL-13), saved before the abandoned claim is settled; then delivered. A later
        correction reopens it as a new generation, a new delivery (DEL-12)."""
        self._probe("batch.released-suspended-member")
        effects: list[Effect] = []
        for change in claims.resolution(record, EvidenceKind.REPLY_SENT, ack.key, carried,
                                        now_ms, self._mutants):
            if isinstance(change, Delivered) and record.claim_phase is not None \
                    and record.claim_phase not in (ClaimPhase.ACCEPTED, *ACTIVE_CLAIMS):
                # The give-up abandoned its claim: the wake's receipt settles it.
                moved = ClaimMoved(ClaimPhase.ACCEPTED, record.claim_key,
                                   record.claim_ended_at_ms)
                record = apply(record, moved)
                effects.append(Persist(record.run_id, moved))
            record = apply(record, change)
            effects.append(Persist(record.run_id, change))
        return [*effects, events.DeliveryRecorded(record.run_id, ack.key, not ack.accepted)]

    def _close(self, row: BatchRow, members: list[Member], outcome: str, error: str,
               now_ms: int) -> list[Effect]:
        closed = attrs.evolve(row, status=BatchStatus.CLOSED, outcome=outcome, last_error=error,
                              next_attempt_at_ms=None)
        self._tokens.pop(row.batch_id, None)
        effects: list[Effect] = []  # members first, the row last (as _complete)
        for member in members:
            record = member.record
            # A member whose own try is out (reopened by a correction since the wake left) is
            # left to that try's answer, as a hand-over leaves it.
            if record.owes and _owns(row, record) \
                    and not member.in_flight:
                change = GaveUp(DeliveryStatus.SUSPENDED, error, now_ms) \
                    if record.outcome_status == OutcomeStatus.OK \
                    else GaveUp(DeliveryStatus.FAILED, error)
                status = change.delivery_status
                if record.generation > 1:
                    self._probe("batch.gave-up-corrected-member")
                if record.claim_phase in ACTIVE_CLAIMS:  # left from its own tries
                    cleared = ClaimMoved(ClaimPhase.ABANDONED, record.claim_key,
                                         record.claim_ended_at_ms)
                    record = apply(record, cleared)
                    effects.append(Persist(record.run_id, cleared))
                effects += [Persist(record.run_id, change),
                            events.DeliveryGaveUp(record.run_id, status,
                                                  GiveUpReason.BATCH_CLOSED, error),
                            *self._cleanup(apply(record, change), now_ms)]
        return [*effects, SaveBatch(closed),
                batch_events.WakeClosed(row.batch_id, outcome, error)]

    def _cleanup(self, record: RunRecord, now_ms: int) -> list[Effect]:
        if record.cleaned_up_at_ms is not None:
            return []
        return [Persist(record.run_id, CleanedUp(now_ms)),
                events.RunCleanedUp(record.run_id, record.delivery_status.value)]
