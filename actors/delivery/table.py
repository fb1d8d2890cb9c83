"""The delivery state machine: a pure core (no IO, no clock, no randomness), written as a table.

The shell (``actors/delivery/shell.py``) feeds it inputs with the current virtual time and performs
the effects it returns, in order (persist a change, send, start a timer, emit a trace event). The
core keeps only what a real process keeps in memory; everything that must survive a crash goes
through :class:`Persist`, and a new incarnation rebuilds the rest from the store's rows.

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
from typing import Generic, TypeVar

import attrs

from actors import events, mutants
from actors.announce.labels import is_announce_skip
from actors.delivery.attempts import DESCENDANT_RECHECK_MS as DESCENDANT_RECHECK_MS
from actors.delivery.attempts import AttemptSteps
from actors.delivery.edge import (
    AckTimeout,
    AttemptDue,
    BatchClaim,
    Effect,
    Input,
    OperatorAsked,
    Persist,
    Restored,
    RunFinished,
    TryDue,
    persisted,
)
from actors.delivery.private_steps import PrivateSteps
from actors.delivery.receipts import Active, ReceiptSteps
from actors.delivery.redrive import OperatorSteps
from actors.delivery.wakes.batch_handover import BatchHandover
from actors.messages import CompletionAck, SendRejected
from actors.mutants import MUTANT_FULL_TEXT_IN_MEMORY
from actors.private.rules import Hold, window_deadline_ms
from actors.records import retry
from actors.records.retention import ResolvedRuns, RunSummary
from actors.records.run_record import (
    Change,
    CleanedUp,
    RunRecord,
    completion_key,
    generation_key,
)
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
    # The DeliveryCore step that runs, called with the core: (core, active, input, now_ms).
    handler: Callable[..., list[Effect]]
    targets: tuple[Waiting, ...]  # where the run may be left; IDLE once resolved or not started
    doc: str


class DeliveryCore(AttemptSteps, PrivateSteps, ReceiptSteps, OperatorSteps, BatchHandover,
                   Generic[K]):
    """``render(record, kind)`` makes the text a requester of ``requester_kind(session_key)``
    reads; both come from outside, so the core never formats anything itself."""

    def __init__(
        self,
        incarnation: int,
        jitter: Callable[[], float],
        render: Callable[[RunRecord, K], str],
        requester_kind: Callable[[str], K],
        mutants: frozenset[str] = frozenset(),
        probe: Callable[[str], None] = lambda name: None,
        pending_descendants: Callable[[RunRecord], int] = lambda record: 0,
        checkpoint: Callable[[RunRecord, bool], tuple[str, int] | None] = lambda r, any_run: None,
        route: Callable[[RunRecord], str | None] = lambda record: record.requester,
        findings: Callable[[RunRecord], str | None] = lambda record: None,
        batch_of: Callable[[str], str | None] = lambda run_id: None,
        private_hold: Callable[[RunRecord], Hold] = lambda record: Hold.RELEASE,
    ) -> None:
        self.incarnation = incarnation
        # The requester's checkpoint of a run's receipt (key, end time): of that run, or (the
        # bug) of any run of its child session (DEL-13).
        self._checkpoint = checkpoint
        self._route = route
        self._batch_of = batch_of  # the open yield batch that owns a run, if any (YLD-2)
        self._private_hold = private_hold  # PRV: the spawning turn and requester incarnation
        self._pending_descendants = pending_descendants
        self._findings = findings  # a run's findings section, None without children (DEL-6)
        self._jitter = jitter
        self._render = render
        self._requester_kind = requester_kind
        self._mutants = mutants
        self._probe = probe  # names a rare condition where it happens (actors/probes.py)
        self._active: dict[str, Active] = {}
        self._tries = 0
        self._resolved = ResolvedRuns(MUTANT_FULL_TEXT_IN_MEMORY in mutants)

    # -- the one entry point -----------------------------------------------------------------

    def state(self, run_id: str) -> Waiting:
        active = self._active.get(run_id)
        return Waiting.IDLE if active is None else active.waiting

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

    def awaits_ack(self, run_id: str, token: int) -> bool:
        """Whether ``run_id``'s transport try ``token`` is still waiting for its answer (a
        try's token is never reused in an incarnation: once over, its ack timeout is moot)."""
        active = self._active.get(run_id)
        return active is not None and active.waiting is Waiting.ACK and active.token == token

    def waits(self) -> list[Waiting]:
        """What each in-flight run waits for (the shell names it when its process dies)."""
        return [active.waiting for active in self._active.values()]

    def remember(self, summaries: Iterable[RunSummary]) -> None:
        """What a new incarnation loads of the runs resolved before it (from the store)."""
        self._resolved.load(summaries)

    def memory(self) -> dict[str, dict[str, object]]:
        """What the registry holds in memory, run by run, as an observer would dump it."""
        return self._resolved.dump(a.record for a in self._active.values())

    def snapshot(self) -> dict[str, tuple[object, ...]]:
        """What the core holds in memory, for tests that check an input changed nothing."""
        return {run_id: (a.record, a.key, a.text, a.failed_tries, a.token, a.waiting)
                for run_id, a in self._active.items()}

    # -- handlers ----------------------------------------------------------------------------

    def _finished(self, active: Active | None, event: Input, now_ms: int) -> list[Effect]:
        assert isinstance(event, RunFinished)
        record = event.record
        if self._newer_receipt(record):
            return self._reopen(None, record, now_ms)
        given_up = self._given_up_receipt(record, now_ms)  # actors/delivery/redrive.py
        if given_up is not None:
            return given_up
        if record.cleaned_up_at_ms is not None:
            self._probe("delivery.child-ended-after-resolution")
            return []  # resolved and cleaned up already: only a newer receipt reopens it
        if mutants.MUTANT_NOT_REQUIRED_DELIVERED in self._mutants and not record.required:
            record = attrs.evolve(record, required=True, delivery_status=DeliveryStatus.PENDING)
        silent = (record.result_text or "").strip() in ("", "NO_REPLY")
        if mutants.MUTANT_SILENT_NO_REPLY in self._mutants and silent:
            return [events.DeliverySkipped(record.run_id, DeliveryStatus.NOT_REQUIRED)]
        if not record.required or record.delivery_status == DeliveryStatus.NOT_REQUIRED:
            self._probe("delivery.not-required-skip")
            return [events.DeliverySkipped(record.run_id, DeliveryStatus.NOT_REQUIRED),
                    *self._cleanup(record, now_ms)]
        if record.delivery_status != DeliveryStatus.PENDING:
            return self._cleanup(record, now_ms)  # resolved before a crash; cleanup left
        if record.delivery_disposition is not None:
            self._probe("delivery.child-ended-after-resolution")
            return []  # its yield batch claimed it already
        record, released, goes_on = self._private_gate(record, now_ms)  # PRV-3, PRV-5
        if not goes_on:
            return released
        active = self._active[record.run_id] = Active(record, self._key(record))
        return released + self._start_attempt(active, now_ms)

    def _acked(self, active: Active | None, event: Input, now_ms: int) -> list[Effect]:
        assert isinstance(event, CompletionAck) and active is not None
        if not event.accepted:
            self._probe("delivery.duplicate-ack")
        if event.key != active.key:
            self._probe("delivery.older-generation-ack")  # proves only an older receipt
            return [events.StaleInput(event.run_id, "ack")]
        if active.waiting != Waiting.ACK:
            self._probe("delivery.late-ack")  # a late ack still proves the hand-off
        if event.callback_error is not None:  # DEL-9: the hand-off was confirmed all the same
            self._probe("delivery.callback-failed-after-handoff")
            if mutants.MUTANT_CALLBACK_FAILURE_UNDELIVERS in self._mutants:
                return self._give_up(active, GiveUpReason.PERMANENT_FAILURE,
                                     event.callback_error, now_ms)
        del self._active[event.run_id]
        record = active.record
        kind = EvidenceKind.REPLY_SENT
        if mutants.MUTANT_ACK_AS_CHECKPOINT in self._mutants:
            kind = EvidenceKind.SILENT_CHECKPOINT  # the bug: the evidence kinds run together
        return self._resolve(record, kind, event.key, record.receipt_at_ms,
                             now_ms, events.DeliveryRecorded(event.run_id, event.key,
                                                             not event.accepted))

    def _stale_ack(self, active: Active | None, event: Input, now_ms: int) -> list[Effect]:
        assert isinstance(event, CompletionAck)
        if not event.accepted:
            self._probe("delivery.duplicate-ack")
        self._probe("delivery.stale-ack")
        return [events.StaleInput(event.run_id, "ack")]

    def _rejected(self, active: Active | None, event: Input, now_ms: int) -> list[Effect]:
        assert isinstance(event, SendRejected) and active is not None
        if event.key != active.key or (
                event.dispatch and event.dispatch != self._dispatch_of(active.token)):
            # Another generation's, or an earlier try's of this key (a late or echoed refusal,
            # maybe of a dead incarnation): the current try still waits for its own answer.
            return self._stale_rejection(active, event, now_ms)
        return self._try_failed(active, event.error, now_ms)

    def _stale_rejection(self, active: Active | None, event: Input, now_ms: int) -> list[Effect]:
        self._probe("delivery.stale-rejection")
        return [events.StaleInput(event.run_id, "rejection")]

    def _ack_timed_out(self, active: Active | None, event: Input, now_ms: int) -> list[Effect]:
        assert isinstance(event, AckTimeout) and active is not None
        if active.token != event.token:
            return []  # a timer of an earlier try
        # An unanswered send counts as OpenClaw's "gateway timeout" (transient).
        self._probe("delivery.ack-timeout")
        active.ambiguous = True
        return self._try_failed(active, SendError("gateway timeout"), now_ms, answered=False)

    def _try_due(self, active: Active | None, event: Input, now_ms: int) -> list[Effect]:
        assert isinstance(event, TryDue) and active is not None
        if active.token != event.token:
            return []
        if (batch := self._batch_takes(active)) is not None:
            return self._hand_over(active.record, batch)
        if self._closes(active.record):
            return self._close_private(active.record, now_ms)
        return self._send_try(active, now_ms)

    def _attempt_due(self, active: Active | None, event: Input, now_ms: int) -> list[Effect]:
        assert isinstance(event, AttemptDue) and active is not None
        if event.generation != active.record.generation:
            return []  # the wait of an older delivery generation (DEL-12)
        return self._start_attempt(active, now_ms)

    def _stale_timer(self, active: Active | None, event: Input, now_ms: int) -> list[Effect]:
        return []  # a timer whose wait is over (or whose run is resolved)

    # -- steps shared by handlers --------------------------------------------------------------

    def _key(self, record: RunRecord) -> str:
        if mutants.MUTANT_KEY_WITHOUT_RUN_ID in self._mutants:
            return generation_key(f"announce:v1:{record.child_session_key}", record.generation)
        return generation_key(completion_key(record.child_session_key, record.run_id),
                              record.generation)

    def _deadline(self, record: RunRecord) -> int:
        # A correction's window starts at its own end time, a redrive's at the redrive.
        ended = record.window_start_ms
        assert ended is not None
        if record.window_started_at_ms is not None:
            # A private result's window counts from its release (PRV-7), or from a later
            # correction's end or redrive, as any generation's does (DEL-12).
            return window_deadline_ms(max(record.window_started_at_ms, ended))
        if mutants.MUTANT_EXPIRY_FROM_SPAWN in self._mutants:
            return retry.expiry_deadline_ms(record.created_at_ms, record.required)
        return retry.expiry_deadline_ms(ended, record.required)

    def _skips(self, record: RunRecord) -> bool:
        return is_announce_skip(record.result_text) and (
            mutants.MUTANT_ANNOUNCE_SKIP_AS_TEXT not in self._mutants)

    def _announce_skip(self, record: RunRecord, now_ms: int) -> list[Effect]:
        """ANNOUNCE_SKIP: nothing is sent, the obligation is delivered, cleanup still runs."""
        self._probe("delivery.announce-skip")
        self._active.pop(record.run_id, None)
        return self._resolve(record, EvidenceKind.SEND_SUPPRESSED, None, record.receipt_at_ms,
                             now_ms, events.AnnounceSkipped(record.run_id))

    def _cleanup(self, record: RunRecord, now_ms: int) -> list[Effect]:
        """Once the obligations resolved: record the cleanup, then trace it. No crash point lies
        between the two effects, so the trace shows each durable cleanup exactly once."""
        if record.cleaned_up_at_ms is not None:
            # A reopened generation (DEL-12) resolved: the run's cleanup ran once already;
            # memory keeps the newer generation's summary.
            self._resolved.keep(record)
            return []
        cleaned = events.RunCleanedUp(record.run_id, record.delivery_status.value)
        after, persist = persisted(record, CleanedUp(now_ms))
        self._resolved.keep(after)
        if mutants.MUTANT_CLEANUP_NOT_RECORDED in self._mutants:
            return [cleaned]
        return [persist, cleaned]

    def _persist(self, active: Active, change: Change) -> Persist:
        active.record, persist = persisted(active.record, change)
        return persist


IDLE, ACK, TRY_WAIT, ATTEMPT_WAIT = Waiting
_ANY = (IDLE, ACK, TRY_WAIT, ATTEMPT_WAIT)
_T = Transition
_D = DeliveryCore  # each handler is a DeliveryCore step, named by reference
# The state machine: (state, input) -> (handler, the states it may leave the run in, what for).
# IDLE as a target also means "resolved" (the run leaves memory).
TABLE: Mapping[tuple[Waiting, type], Transition] = {
    # nothing in flight here
    (IDLE, RunFinished): _T(_D._finished, (IDLE, ACK, ATTEMPT_WAIT),
                            "send attempt 1, skip, or wait for descendants"),
    (IDLE, Restored): _T(_D._restored, (IDLE, ACK, ATTEMPT_WAIT), "resume from the store"),
    (IDLE, CompletionAck): _T(_D._stale_ack, (IDLE,), "stale: noted"),
    (IDLE, SendRejected): _T(_D._stale_rejection, (IDLE,), "stale: noted"),
    (IDLE, AckTimeout): _T(_D._stale_timer, (IDLE,), "stale timer"),
    (IDLE, TryDue): _T(_D._stale_timer, (IDLE,), "stale timer"),
    (IDLE, AttemptDue): _T(_D._stale_timer, (IDLE,), "stale timer"),
    # a try is in flight
    (ACK, RunFinished): _T(_D._duplicate_end, _ANY, "duplicate end, or a correction"),
    (ACK, CompletionAck): _T(_D._acked, (IDLE, ACK), "record delivered"),
    (ACK, SendRejected): _T(_D._rejected, _ANY, "next try, back off, or give up"),
    (ACK, AckTimeout): _T(_D._ack_timed_out, _ANY, "next try, back off, or give up"),
    (ACK, TryDue): _T(_D._stale_timer, (ACK,), "stale timer"),
    (ACK, AttemptDue): _T(_D._stale_timer, (ACK,), "stale timer"),
    # waiting between transport tries
    (TRY_WAIT, RunFinished): _T(_D._duplicate_end, _ANY, "duplicate end, or a correction"),
    (TRY_WAIT, CompletionAck): _T(_D._acked, (IDLE, TRY_WAIT), "late ack: record delivered"),
    (TRY_WAIT, SendRejected): _T(_D._stale_rejection, (TRY_WAIT,), "stale: noted"),
    (TRY_WAIT, AckTimeout): _T(_D._stale_timer, (TRY_WAIT,), "stale timer"),
    (TRY_WAIT, TryDue): _T(_D._try_due, (TRY_WAIT, ACK, IDLE),
                           "send the next try, hand over, or close a private one"),
    (TRY_WAIT, AttemptDue): _T(_D._stale_timer, (TRY_WAIT,), "stale timer"),
    # waiting out the registry backoff between attempts
    (ATTEMPT_WAIT, RunFinished): _T(_D._duplicate_end, _ANY, "duplicate end, or a correction"),
    (ATTEMPT_WAIT, CompletionAck): _T(_D._acked, (IDLE, ATTEMPT_WAIT),
                                      "late ack: record delivered"),
    (ATTEMPT_WAIT, SendRejected): _T(_D._stale_rejection, (ATTEMPT_WAIT,), "stale: noted"),
    (ATTEMPT_WAIT, AckTimeout): _T(_D._stale_timer, (ATTEMPT_WAIT,), "stale timer"),
    (ATTEMPT_WAIT, TryDue): _T(_D._stale_timer, (ATTEMPT_WAIT,), "stale timer"),
    (ATTEMPT_WAIT, AttemptDue): _T(_D._attempt_due, (IDLE, ACK, ATTEMPT_WAIT),
                                   "next attempt, expire, or wait for descendants"),
    # an operator's redrive or dismissal (actors/delivery/redrive.py)
    (IDLE, OperatorAsked): _T(_D._operator, (IDLE, ACK, ATTEMPT_WAIT),
                              "redrive or dismiss a given-up run, or refuse"),
    (ACK, OperatorAsked): _T(_D._operator, (ACK,), "refuse: a send is in flight"),
    (TRY_WAIT, OperatorAsked): _T(_D._operator, (TRY_WAIT,), "refuse: a send is in flight"),
    (ATTEMPT_WAIT, OperatorAsked): _T(_D._operator, (IDLE, ACK, ATTEMPT_WAIT),
                                      "redrive a paused run as its next generation, or refuse"),
    # a yielded batch claims a member's result (actors/delivery/wakes/batch_handover.py)
    (IDLE, BatchClaim): _T(_D._claim_idle, (IDLE,), "nothing in flight: hand an ended run over"),
    (ACK, BatchClaim): _T(_D._claim_later, (ACK,), "a try is out: its answer decides"),
    (TRY_WAIT, BatchClaim): _T(_D._claimed, (IDLE, TRY_WAIT), "hand over to the batch"),
    (ATTEMPT_WAIT, BatchClaim): _T(_D._claimed, (IDLE, ATTEMPT_WAIT), "hand over to the batch"),
}
# Missing on purpose: Restored while a delivery is in flight (a restore only happens in a fresh
# incarnation, which has nothing in flight).
INPUT_TYPES: tuple[type, ...] = (RunFinished, Restored, CompletionAck, SendRejected, AckTimeout,
                                 TryDue, AttemptDue, OperatorAsked, BatchClaim)
assert all(state is IDLE or t is not Restored for state, t in TABLE), "see above"
assert len(TABLE) == len(_ANY) * len(INPUT_TYPES) - 3
