"""The delivery state machine: a pure core (no IO, no clock, no randomness), written as a table.

The shell (``actors/delivery/shell.py``) feeds it inputs with the current virtual time and performs
the effects it returns, in order (persist a change, send, start a timer, emit a trace event). The
core keeps only what a real process keeps in memory; everything that must survive a crash goes
through :class:`Persist`, and a new incarnation rebuilds the rest from the store's rows.

Its state is ``actors/delivery/core.py``'s; the handlers are plain functions of it, here and in
the parts' modules (``attempts``, ``receipts``, ``redrive``, ``private_steps``,
``wakes/batch_handover``), named in :data:`TABLE` by reference.

:data:`TABLE` is the specification: for each in-flight state of a run (:class:`Waiting`) and each
input type, the handler that runs and the states it may leave the run in. An input with no entry
is illegal in that state and raises :class:`DeliveryProtocolError` before anything changes. Stale
acknowledgements and timers are expected (a crash, a lost message, a late answer): they have
explicit entries that only note them.

Retry policy (reference §b, §c11): up to four transport tries (5, 10, 20 s apart) per attempt on
transient errors, the registry backoff between attempts; a permanent error or the 30-minute
expiry gives up: ``suspended`` for an ok child (payload kept for a redrive), else ``failed``.
Nesting (deferral, fallback): docs/nesting.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

import attrs

from actors import events, mutants
from actors.delivery import attempts, private_steps, receipts, redrive
from actors.delivery.attempts import DESCENDANT_RECHECK_MS as DESCENDANT_RECHECK_MS
from actors.delivery.core import Active, Core, CoreState
from actors.delivery.edge import (
    AckTimeout,
    AttemptDue,
    BatchClaim,
    Effect,
    Input,
    OperatorAsked,
    Restored,
    RunFinished,
    TryDue,
)
from actors.delivery.wakes import batch_handover
from actors.messages import CompletionAck, SendRejected
from actors.records import retry
from actors.records.run_record import RunRecord
from actors.records.send_error import SendError
from actors.states import (
    DeliveryStatus,
    EvidenceKind,
    GiveUpReason,
    Waiting,
)

K = TypeVar("K")


class DeliveryProtocolError(Exception):
    """An input arrived in a state where the table has no transition for it."""


@attrs.frozen
class Transition:
    # The step that runs, a plain function: (core, active, input, now_ms).
    handler: Callable[..., list[Effect]]
    targets: tuple[Waiting, ...]  # where the run may be left; IDLE once resolved or not started
    doc: str


class DeliveryCore(CoreState[K]):
    """The core's state (``actors/delivery/core.py``) with its entry points: every input goes
    through :meth:`handle`, which runs the handler :data:`TABLE` names for the run's state."""

    def handle(self, event: Input, now_ms: int) -> list[Effect]:
        run_id = event.run_id  # (a property on some inputs: read once)
        active = self._active.get(run_id)
        state = Waiting.IDLE if active is None else active.waiting  # ``state``, inline
        transition = TABLE.get((state, type(event)))
        if transition is None:
            raise DeliveryProtocolError(
                f"{type(event).__name__} is illegal while {run_id} waits in {state}")
        effects = transition.handler(self, active, event, now_ms)
        assert self.state(run_id) in transition.targets, (state, event)
        return effects

    def child_ended(self, record: RunRecord, now_ms: int) -> list[Effect]:
        return self.handle(RunFinished(record), now_ms)

    def restore(self, records: Iterable[RunRecord], now_ms: int) -> list[Effect]:
        """Pick up every ended run whose required delivery is still pending, and finish the
        cleanup of every resolved run the previous incarnation did not reach (after a restart)."""
        effects: list[Effect] = []
        for record in records:
            if record.ended_at_ms is None:
                continue
            if record.owes:
                if record.delivery_disposition is None:  # else its yield batch owns it
                    effects += self.handle(Restored(record), now_ms)
            elif self._newer_receipt(record):
                self._probe("delivery.restart-finds-newer-receipt")
                effects += self.handle(RunFinished(record), now_ms)
            elif record.cleaned_up_at_ms is None:
                self._probe("delivery.cleanup-after-restart")
                effects += self._cleanup(record, now_ms)
        return effects


# -- handlers: plain functions of the core, named in the table by reference ----------------


def finished(core: Core, active: Active | None, event: Input, now_ms: int) -> list[Effect]:
    assert isinstance(event, RunFinished)
    record = event.record
    if core._newer_receipt(record):
        return receipts.reopen(core, None, record, now_ms)
    given_up = redrive.given_up_receipt(core, record, now_ms)  # actors/delivery/redrive.py
    if given_up is not None:
        return given_up
    if record.cleaned_up_at_ms is not None:
        core._probe("delivery.child-ended-after-resolution")
        return []  # resolved and cleaned up already: only a newer receipt reopens it
    if mutants.MUTANT_NOT_REQUIRED_DELIVERED in core._mutants and not record.required:
        record = attrs.evolve(record, required=True, delivery_status=DeliveryStatus.PENDING)
    silent = (record.result_text or "").strip() in ("", "NO_REPLY")
    if mutants.MUTANT_SILENT_NO_REPLY in core._mutants and silent:
        return [events.DeliverySkipped(record.run_id, DeliveryStatus.NOT_REQUIRED)]
    if record.silenced:
        # Not asked for, or stopped while it ran (a kill keeps its row pending: the skip
        # names the status the row keeps).
        core._probe("delivery.killed-pending-skip" if record.delivery_status
                    == DeliveryStatus.PENDING else "delivery.not-required-skip")
        return [events.DeliverySkipped(record.run_id, record.delivery_status),
                *core._cleanup(record, now_ms)]
    if record.delivery_status != DeliveryStatus.PENDING:
        return core._cleanup(record, now_ms)  # resolved before a crash; cleanup left
    if record.delivery_disposition is not None:
        core._probe("delivery.child-ended-after-resolution")
        return []  # its yield batch claimed it already
    record, released, goes_on = private_steps.private_gate(core, record, now_ms)  # PRV-3, PRV-5
    if not goes_on:
        return released
    active = core._active[record.run_id] = Active(record, core._key(record))
    return released + attempts.start_attempt(core, active, now_ms)


def acked(core: Core, active: Active | None, event: Input, now_ms: int) -> list[Effect]:
    assert isinstance(event, CompletionAck) and active is not None
    if not event.accepted:
        core._probe("delivery.duplicate-ack")
    if event.key != active.key:
        core._probe("delivery.older-generation-ack")  # proves only an older receipt
        return [events.StaleInput(event.run_id, "ack")]
    _probe_timeout_edge(core, active, now_ms)
    if active.waiting != Waiting.ACK:
        core._probe("delivery.late-ack")  # a late ack still proves the hand-off
    if event.callback_error is not None:  # DEL-9: the hand-off was confirmed all the same
        core._probe("delivery.callback-failed-after-handoff")
        if mutants.MUTANT_CALLBACK_FAILURE_UNDELIVERS in core._mutants:
            return attempts.give_up(core, active, GiveUpReason.PERMANENT_FAILURE,
                                    event.callback_error, now_ms)
    del core._active[event.run_id]
    if active.failed_tries == retry.TRANSPORT_TRIES - 1:
        core._probe("delivery.delivered-on-last-transport-try")  # one under the budget
    record = active.record
    kind = EvidenceKind.REPLY_SENT
    if mutants.MUTANT_ACK_AS_CHECKPOINT in core._mutants:
        kind = EvidenceKind.SILENT_CHECKPOINT  # the bug: the evidence kinds run together
    return core._resolve(record, kind, event.key, record.receipt_at_ms,
                         now_ms, events.DeliveryRecorded(event.run_id, event.key,
                                                         not event.accepted))


# An answer arriving this long after its try's send, around the 120 s timeout (issue 36's ack
# draw): one ms under it, at it (the timer first or the answer first: the scheduler's order of
# one instant) and one ms over it.
_TIMEOUT_EDGE = {retry.ANNOUNCE_TIMEOUT_MS - 1: "delivery.ack-one-under-timeout",
                 retry.ANNOUNCE_TIMEOUT_MS + 1: "delivery.ack-one-over-timeout"}


def _private_answer(core: Core, active: Active, now_ms: int) -> bool:
    """Whether the answer is a private try's, which has no 120 s timeout (attempts.answer_wait_ms):
    one more than 120 s after its send is still this try's answer."""
    if not attempts.untimed(core, active.record):
        return False
    if now_ms - active.sent_at_ms > retry.ANNOUNCE_TIMEOUT_MS and active.waiting == Waiting.ACK:
        core._probe("private.answered-past-announce-timeout")
    return True


def _probe_timeout_edge(core: Core, active: Active, now_ms: int) -> None:
    if _private_answer(core, active, now_ms):
        return
    since = now_ms - active.sent_at_ms
    if since == retry.ANNOUNCE_TIMEOUT_MS:
        core._probe("delivery.ack-at-timeout-answer-first" if active.waiting == Waiting.ACK
                    else "delivery.ack-at-timeout-after-timer")
    elif since in _TIMEOUT_EDGE:
        core._probe(_TIMEOUT_EDGE[since])


def stale_ack(core: Core, active: Active | None, event: Input, now_ms: int) -> list[Effect]:
    assert isinstance(event, CompletionAck)
    if not event.accepted:
        core._probe("delivery.duplicate-ack")
    core._probe("delivery.stale-ack")
    return [events.StaleInput(event.run_id, "ack")]


def rejected(core: Core, active: Active | None, event: Input, now_ms: int) -> list[Effect]:
    assert isinstance(event, SendRejected) and active is not None
    if event.key != active.key or event.dispatch != active.token:
        # Another generation's refusal, or a late one of an earlier try on the same key (a
        # timed-out try, one of a dead process): it answers nothing now (§c17; seed 15898).
        return stale_rejection(core, active, event, now_ms)
    _private_answer(core, active, now_ms)
    return attempts.try_failed(core, active, event.error, now_ms)


def stale_rejection(core: Core, active: Active | None, event: Input, now_ms: int) -> list[Effect]:
    core._probe("delivery.stale-rejection")
    return [events.StaleInput(event.run_id, "rejection")]


def ack_timed_out(core: Core, active: Active | None, event: Input, now_ms: int) -> list[Effect]:
    assert isinstance(event, AckTimeout) and active is not None
    if active.token != event.token:
        return []  # a timer of an earlier try
    active.ambiguous = True
    if attempts.untimed(core, active.record):
        # A private try has no timeout of its own: its timer is the registry's attempt
        # deadline, the window's end (attempts.answer_wait_ms). There the attempt's signal
        # aborts the call, the announce flow returns undelivered, and the cleanup gives up
        # for the passed deadline (resolveDeferredCleanupDecision: ``now >= deadline``).
        # A yielded batch that took it meanwhile owns it (``requesterTookCompletion``).
        if (batch := batch_handover.batch_takes(core, active)) is not None:
            return batch_handover.hand_over(core, active.record, batch)
        core._probe("private.unanswered-until-window-end")
        return attempts.give_up(core, active, GiveUpReason.EXPIRY, active.record.last_error,
                                now_ms)
    # An unanswered send counts as OpenClaw's "gateway timeout" (transient).
    core._probe("delivery.ack-timeout")
    return attempts.try_failed(core, active, SendError("gateway timeout"), now_ms, answered=False)


def try_due(core: Core, active: Active | None, event: Input, now_ms: int) -> list[Effect]:
    assert isinstance(event, TryDue) and active is not None
    if active.token != event.token:
        return []
    if (batch := batch_handover.batch_takes(core, active)) is not None:
        return batch_handover.hand_over(core, active.record, batch)
    if private_steps.closes(core, active.record):
        return private_steps.close_private(core, active.record, now_ms)
    return attempts.send_try(core, active, now_ms)


def attempt_due(core: Core, active: Active | None, event: Input, now_ms: int) -> list[Effect]:
    assert isinstance(event, AttemptDue) and active is not None
    if event.generation != active.record.generation:
        return []  # the wait of an older delivery generation (DEL-12)
    return attempts.start_attempt(core, active, now_ms)


def stale_timer(core: Core, active: Active | None, event: Input, now_ms: int) -> list[Effect]:
    return []  # a timer whose wait is over (or whose run is resolved)


IDLE, ACK, TRY_WAIT, ATTEMPT_WAIT = Waiting
_ANY = (IDLE, ACK, TRY_WAIT, ATTEMPT_WAIT)
_T = Transition
# The state machine: (state, input) -> (handler, the states it may leave the run in, what for).
# IDLE as a target also means "resolved" (the run leaves memory).
TABLE: Mapping[tuple[Waiting, type], Transition] = {
    # nothing in flight here
    (IDLE, RunFinished): _T(finished, (IDLE, ACK, ATTEMPT_WAIT),
                            "send attempt 1, skip, or wait for descendants"),
    (IDLE, Restored): _T(receipts.restored, (IDLE, ACK, ATTEMPT_WAIT), "resume from the store"),
    (IDLE, CompletionAck): _T(stale_ack, (IDLE,), "stale: noted"),
    (IDLE, SendRejected): _T(stale_rejection, (IDLE,), "stale: noted"),
    (IDLE, AckTimeout): _T(stale_timer, (IDLE,), "stale timer"),
    (IDLE, TryDue): _T(stale_timer, (IDLE,), "stale timer"),
    (IDLE, AttemptDue): _T(stale_timer, (IDLE,), "stale timer"),
    # a try is in flight
    (ACK, RunFinished): _T(receipts.duplicate_end, _ANY, "duplicate end, or a correction"),
    (ACK, CompletionAck): _T(acked, (IDLE, ACK), "record delivered"),
    (ACK, SendRejected): _T(rejected, _ANY, "next try, back off, or give up"),
    (ACK, AckTimeout): _T(ack_timed_out, _ANY, "next try, back off, or give up"),
    (ACK, TryDue): _T(stale_timer, (ACK,), "stale timer"),
    (ACK, AttemptDue): _T(stale_timer, (ACK,), "stale timer"),
    # waiting between transport tries
    (TRY_WAIT, RunFinished): _T(receipts.duplicate_end, _ANY, "duplicate end, or a correction"),
    (TRY_WAIT, CompletionAck): _T(acked, (IDLE, TRY_WAIT), "late ack: record delivered"),
    (TRY_WAIT, SendRejected): _T(stale_rejection, (TRY_WAIT,), "stale: noted"),
    (TRY_WAIT, AckTimeout): _T(stale_timer, (TRY_WAIT,), "stale timer"),
    (TRY_WAIT, TryDue): _T(try_due, (TRY_WAIT, ACK, IDLE),
                           "send the next try, hand over, or close a private one"),
    (TRY_WAIT, AttemptDue): _T(stale_timer, (TRY_WAIT,), "stale timer"),
    # waiting out the registry backoff between attempts
    (ATTEMPT_WAIT, RunFinished): _T(receipts.duplicate_end, _ANY, "duplicate end, or a correction"),
    (ATTEMPT_WAIT, CompletionAck): _T(acked, (IDLE, ATTEMPT_WAIT),
                                      "late ack: record delivered"),
    (ATTEMPT_WAIT, SendRejected): _T(stale_rejection, (ATTEMPT_WAIT,), "stale: noted"),
    (ATTEMPT_WAIT, AckTimeout): _T(stale_timer, (ATTEMPT_WAIT,), "stale timer"),
    (ATTEMPT_WAIT, TryDue): _T(stale_timer, (ATTEMPT_WAIT,), "stale timer"),
    (ATTEMPT_WAIT, AttemptDue): _T(attempt_due, (IDLE, ACK, ATTEMPT_WAIT),
                                   "next attempt, expire, or wait for descendants"),
    # an operator's redrive or dismissal (actors/delivery/redrive.py)
    (IDLE, OperatorAsked): _T(redrive.operator, (IDLE, ACK, ATTEMPT_WAIT),
                              "redrive or dismiss a given-up run, or refuse"),
    (ACK, OperatorAsked): _T(redrive.operator, (ACK,), "refuse: a send is in flight"),
    (TRY_WAIT, OperatorAsked): _T(redrive.operator, (TRY_WAIT,), "refuse: a send is in flight"),
    (ATTEMPT_WAIT, OperatorAsked): _T(redrive.operator, (IDLE, ACK, ATTEMPT_WAIT),
                                      "redrive a paused run as its next generation, or refuse"),
    # a yielded batch claims a member's result (actors/delivery/wakes/batch_handover.py)
    (IDLE, BatchClaim): _T(batch_handover.claim_idle, (IDLE,),
                           "nothing in flight: hand an ended run over"),
    (ACK, BatchClaim): _T(batch_handover.claim_later, (ACK,), "a try is out: its answer decides"),
    (TRY_WAIT, BatchClaim): _T(batch_handover.claimed, (IDLE, TRY_WAIT),
                               "hand over to the batch"),
    (ATTEMPT_WAIT, BatchClaim): _T(batch_handover.claimed, (IDLE, ATTEMPT_WAIT),
                                   "hand over to the batch"),
}
# Missing on purpose: Restored while a delivery is in flight (a restore only happens in a fresh
# incarnation, which has nothing in flight).
INPUT_TYPES: tuple[type, ...] = (RunFinished, Restored, CompletionAck, SendRejected, AckTimeout,
                                 TryDue, AttemptDue, OperatorAsked, BatchClaim)
assert all(state is IDLE or t is not Restored for state, t in TABLE), "see above"
assert len(TABLE) == len(_ANY) * len(INPUT_TYPES) - 3
