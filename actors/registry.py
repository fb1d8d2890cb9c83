"""Run records and the delivery state machine: a pure core (no IO, no clock, no randomness).

The shell (``actors/delivery.py``) feeds it the store's rows, messages and timer payloads with the
current virtual time, and performs the effects it returns in order: persist a change, send a
completion, start a timer, note something in the trace. The core keeps only what a real process
keeps in memory (in-flight tries, timers); everything that must survive a crash goes through
:class:`Persist`, and :meth:`DeliveryCore.restore` rebuilds the rest from the store.

Retry policy, from reference/openclaw-delivery.md §b and §c11: an announce attempt makes up to
four transport tries (5 s, 10 s, 20 s apart) on transient errors; a retryable attempt waits the
registry backoff before the next attempt; a permanent error or the 30-minute completion expiry
gives up, as ``suspended`` when the child completed ok (its payload is kept for a redrive),
``failed`` otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attrs

from actors import announce, retry
from actors.messages import Completion, CompletionAck, SendRejected

# Delivery states (registry `delivery.status`); the resolved ones end the obligation.
NOT_REQUIRED = "not_required"
PENDING = "pending"
DELIVERED = "delivered"
FAILED = "failed"
SUSPENDED = "suspended"
RESOLVED = (NOT_REQUIRED, DELIVERED, FAILED, SUSPENDED)

# Known-bug variants this core can be switched into (SIM-8); see actors/mutants.py.
MUTANT_FRESH_KEY_AFTER_RESTART = "fresh-key-after-restart"


def completion_key(child_session_key: str, run_id: str) -> str:
    """The per-child announce idempotency key (reference §a)."""
    return f"announce:v1:{child_session_key}:{run_id}"


def transcript_path(child_session_id: str) -> str:
    return f"sessions/{child_session_id}.jsonl"


def announce_text(record: RunRecord) -> str:
    """What the requester's model reads for this completion: the announce context block."""
    usage = None
    if record.input_tokens is not None or record.output_tokens is not None:
        usage = announce.Usage(record.input_tokens, record.output_tokens)
    child = announce.ChildResult(
        session_key=record.child_session_key,
        session_id=record.child_session_id,
        task=record.task,
        status=record.outcome_status or "unknown",  # type: ignore[arg-type]
        error=record.outcome_error,
        text=record.result_text,
        created_at=record.created_at_ms,
        ended_at=record.ended_at_ms,
        started_at=record.started_at_ms,
        usage=usage,
        transcript_path=(transcript_path(record.child_session_id)
                         if record.child_session_id else None),
    )
    # A top-level requester in completion mode (the only requester kind this slice models).
    return announce.format_announce([child], announce.RequesterKind.TOP_LEVEL_COMPLETION).payload


@attrs.define
class RunRecord:
    """One child run as the registry stores it (a subset of SubagentRunRecord)."""

    run_id: str
    child_id: str
    child_session_key: str
    requester: str
    task: str
    required: bool
    created_at_ms: int
    ended_at_ms: int | None = None
    outcome_status: str | None = None  # ok | error | timeout | unknown
    outcome_error: str | None = None
    result_text: str | None = None
    stop_reason: str | None = None  # the child's real stop reason (OUT-6), e.g. max-tokens
    child_session_id: str | None = None
    started_at_ms: int | None = None
    # Usage as the child recorded it; None when it recorded none ("tokens unknown").
    input_tokens: int | None = None
    output_tokens: int | None = None
    delivery_status: str = PENDING
    attempt_count: int = 0
    next_attempt_at_ms: int | None = None
    last_error: str | None = None
    generation: int = 1
    delivered_at_ms: int | None = None


# -- effects -----------------------------------------------------------------------------------


@attrs.frozen
class Persist:
    run_id: str
    changes: dict[str, Any]


@attrs.frozen
class Send:
    requester: str
    completion: Completion


@attrs.frozen
class StartTimer:
    delay_ms: int
    payload: Any


@attrs.frozen
class Note:
    kind: str
    data: dict[str, Any]


Effect = Persist | Send | StartTimer | Note


# -- timer payloads (they die with the incarnation that set them) -------------------------------


@attrs.frozen
class AckTimeout:
    run_id: str
    token: int


@attrs.frozen
class TryDue:
    run_id: str
    token: int


@attrs.frozen
class AttemptDue:
    run_id: str


@attrs.define
class _Active:
    """In-memory state of a run whose delivery is in progress in this incarnation."""

    record: RunRecord
    key: str
    text: str | None = None  # the rendered announce block, made once per run
    failed_tries: int = 0
    token: int = 0  # identifies the current transport try; stale timers carry an older one
    waiting: str = "idle"  # idle | ack | try-wait | attempt-wait


class DeliveryCore:
    def __init__(
        self,
        incarnation: int,
        jitter: Callable[[], float],
        mutants: frozenset[str] = frozenset(),
    ) -> None:
        self.incarnation = incarnation
        self._jitter = jitter
        self._mutants = mutants
        self._active: dict[str, _Active] = {}

    # -- inputs --------------------------------------------------------------------------------

    def restore(self, records: Iterable[RunRecord], now_ms: int) -> list[Effect]:
        """Pick up every ended run whose required delivery is still pending (after a restart)."""
        effects: list[Effect] = []
        for record in records:
            if record.delivery_status != PENDING or record.ended_at_ms is None:
                continue
            key = completion_key(record.child_session_key, record.run_id)
            if MUTANT_FRESH_KEY_AFTER_RESTART in self._mutants and self.incarnation > 1:
                key = f"{key}:restart-{self.incarnation}"
            active = self._active[record.run_id] = _Active(record, key)
            due = record.next_attempt_at_ms
            if due is not None and due > now_ms:
                active.waiting = "attempt-wait"
                effects.append(StartTimer(due - now_ms, AttemptDue(record.run_id)))
            else:
                effects += self._start_attempt(active, now_ms)
        return effects

    def child_ended(self, record: RunRecord, now_ms: int) -> list[Effect]:
        if record.run_id in self._active:
            return []  # restore already picked it up; the notification is a duplicate
        if not record.required or record.delivery_status == NOT_REQUIRED:
            return [Note("delivery.skip", {"run_id": record.run_id, "reason": NOT_REQUIRED})]
        if record.delivery_status != PENDING:
            return []
        active = self._active[record.run_id] = _Active(
            record, completion_key(record.child_session_key, record.run_id)
        )
        return self._start_attempt(active, now_ms)

    def on_message(self, message: Any, now_ms: int) -> list[Effect]:
        if isinstance(message, CompletionAck):
            return self._acked(message, now_ms)
        if isinstance(message, SendRejected):
            active = self._active.get(message.run_id)
            if active is None or active.waiting != "ack" or message.key != active.key:
                return [Note("delivery.stale", {"run_id": message.run_id, "what": "rejection"})]
            return self._try_failed(active, message.error, now_ms)
        if isinstance(message, AckTimeout):
            active = self._active.get(message.run_id)
            if active is None or active.waiting != "ack" or active.token != message.token:
                return []
            return self._try_failed(active, "gateway timeout", now_ms)
        if isinstance(message, TryDue):
            active = self._active.get(message.run_id)
            if active is None or active.waiting != "try-wait" or active.token != message.token:
                return []
            return self._send_try(active, now_ms)
        if isinstance(message, AttemptDue):
            active = self._active.get(message.run_id)
            if active is None or active.waiting != "attempt-wait":
                return []
            return self._start_attempt(active, now_ms)
        raise TypeError(f"delivery core cannot handle {type(message).__name__}")

    # -- transitions ---------------------------------------------------------------------------

    def _start_attempt(self, active: _Active, now_ms: int) -> list[Effect]:
        record = active.record
        assert record.ended_at_ms is not None
        deadline = retry.expiry_deadline_ms(record.ended_at_ms, record.required)
        if now_ms >= deadline:
            return self._give_up(active, "expiry", record.last_error, now_ms)
        record.attempt_count += 1
        active.failed_tries = 0
        effects: list[Effect] = [
            Persist(record.run_id, {"attempt_count": record.attempt_count,
                                    "next_attempt_at_ms": None})
        ]
        return effects + self._send_try(active, now_ms)

    def _send_try(self, active: _Active, now_ms: int) -> list[Effect]:
        record = active.record
        active.token += 1
        active.waiting = "ack"
        if active.text is None:
            active.text = announce_text(record)
        completion = Completion(
            key=active.key,
            run_id=record.run_id,
            child_session_key=record.child_session_key,
            requester=record.requester,
            generation=record.generation,
            status=record.outcome_status or "unknown",
            result=record.result_text or "",
            text=active.text,
        )
        return [
            Note("delivery.attempt", {"run_id": record.run_id, "key": active.key,
                                      "attempt": record.attempt_count,
                                      "try": active.failed_tries + 1}),
            Send(record.requester, completion),
            StartTimer(retry.ANNOUNCE_TIMEOUT_MS, AckTimeout(record.run_id, active.token)),
        ]

    def _acked(self, ack: CompletionAck, now_ms: int) -> list[Effect]:
        active = self._active.get(ack.run_id)
        if active is None:
            return [Note("delivery.stale", {"run_id": ack.run_id, "what": "ack"})]
        del self._active[ack.run_id]
        return [
            Persist(ack.run_id, {"delivery_status": DELIVERED, "delivered_at_ms": now_ms}),
            Note("delivery.delivered", {"run_id": ack.run_id, "key": ack.key,
                                        "duplicate": not ack.accepted}),
        ]

    def _try_failed(self, active: _Active, error: str, now_ms: int) -> list[Effect]:
        record = active.record
        error_class = retry.classify(error)
        active.failed_tries += 1
        effects: list[Effect] = [
            Note("delivery.send_failed", {"run_id": record.run_id, "error": error,
                                          "class": error_class.value,
                                          "try": active.failed_tries})
        ]
        if error_class is retry.ErrorClass.PERMANENT:
            return effects + self._give_up(active, "permanent_failure", error, now_ms)
        if error_class is retry.ErrorClass.TRANSIENT:
            wait = retry.transport_wait_ms(active.failed_tries)
            if wait is not None:
                active.waiting = "try-wait"
                return [*effects, StartTimer(wait, TryDue(record.run_id, active.token))]
        # Retryable announce outcome: the registry loop waits its backoff, then tries again; the
        # wait never runs past the expiry deadline, where the next attempt gives up on time.
        assert record.ended_at_ms is not None
        deadline = retry.expiry_deadline_ms(record.ended_at_ms, record.required)
        delay = min(retry.backoff_ms(record.attempt_count, self._jitter()),
                    max(0, deadline - now_ms))
        record.next_attempt_at_ms = now_ms + delay
        record.last_error = error
        active.waiting = "attempt-wait"
        return [
            *effects,
            Persist(record.run_id, {"next_attempt_at_ms": record.next_attempt_at_ms,
                                    "last_error": error}),
            Note("delivery.retry", {"run_id": record.run_id, "attempt": record.attempt_count,
                                    "next_attempt_at_ms": record.next_attempt_at_ms}),
            StartTimer(delay, AttemptDue(record.run_id)),
        ]

    def _give_up(
        self, active: _Active, reason: str, error: str | None, now_ms: int
    ) -> list[Effect]:
        record = active.record
        del self._active[record.run_id]
        # A completed ok child keeps its payload for an operator redrive (suspended); anything
        # else fails for good.
        status = SUSPENDED if record.outcome_status == "ok" else FAILED
        return [
            Persist(record.run_id, {"delivery_status": status, "last_error": error}),
            Note("delivery.give_up", {"run_id": record.run_id, "status": status,
                                      "reason": reason, "error": error}),
        ]
