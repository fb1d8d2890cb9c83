"""A child run as the registry stores it, and the typed changes the delivery core makes to it.

The record is frozen: a change is a small frozen value naming exactly the columns one transition
writes, and :func:`apply` is the one place that turns a change into a new record. The store
persists through it and the core keeps its in-memory copy through it, so the two cannot drift;
the type checker (not a runtime assert) holds each change to real column names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Literal

import attrs

from actors.states import ClaimPhase, CrashPoint, DeliveryStatus, EvidenceKind, OutcomeStatus


def completion_key(child_session_key: str, run_id: str) -> str:
    """The per-child announce idempotency key (reference §a)."""
    return f"announce:v1:{child_session_key}:{run_id}"


@attrs.frozen
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
    outcome_status: OutcomeStatus | None = None
    outcome_error: str | None = None
    result_text: str | None = None
    stop_reason: str | None = None  # the child's real stop reason (OUT-6), e.g. max-tokens
    child_session_id: str | None = None
    started_at_ms: int | None = None
    # Usage as the child recorded it; None when it recorded none ("tokens unknown").
    input_tokens: int | None = None
    output_tokens: int | None = None
    delivery_status: DeliveryStatus = DeliveryStatus.PENDING
    attempt_count: int = 0
    next_attempt_at_ms: int | None = None
    last_error: str | None = None
    delivered_at_ms: int | None = None
    # Set once, when the run's cleanup ran after its obligations resolved (traced; a restart
    # finishes a cleanup the previous incarnation did not reach).
    cleaned_up_at_ms: int | None = None
    # DEL-6: the run of the requester session that spawned this one (None: a top-level
    # requester). A run's findings are its direct children's rows, scoped by this column.
    requester_run_id: str | None = None
    # -- receipts, recovery claims and delivery evidence (DEL-12, DEL-13; actors/records/claims.py)
    # -- The delivery generation: a correction from the producer reopens a delivered run as the
    # next one (its own idempotency key, see :func:`generation_key`).
    generation: int = 1
    # The producer's end time of its latest receipt (a correction's is later than the end).
    receipt_ended_at_ms: int | None = None
    claim_phase: ClaimPhase | None = None
    claim_key: str | None = None  # the attempt key the claim replays after a restart
    claim_ended_at_ms: int | None = None  # the producer end time of the receipt it carries
    evidence_kind: EvidenceKind | None = None
    evidence_key: str | None = None  # the key of the receipt the evidence proves
    evidence_ended_at_ms: int | None = None  # that receipt's producer end time
    # DEL-6: the findings section this generation's announcement carries, rendered once and
    # kept ("" for none; None: not rendered yet, or the run spawned no children), so a resend
    # after a restart is byte-identical under the same key (docs/nesting.md).
    findings_text: str | None = None
    # An operator's redrive (actors/delivery/redrive.py) opened the current generation then: its
    # 30-minute expiry window starts there.
    redriven_at_ms: int | None = None
    # Requester-turn binding (reference §a): the turn run that spawned it and the requester
    # session's incarnation (lifecycle revision) at the spawn.
    requester_turn_id: str | None = None
    requester_incarnation: int = 1
    # The yield batch that froze it (``requesterTurnYielded``), and the delivery disposition
    # ``intentional_non_delivery`` once its own delivery handed the result to that batch.
    yield_batch: str | None = None
    delivery_disposition: str | None = None
    # A model-route change notice the run carries (terminalReply.modelRouteChange, §a).
    route_change: str | None = None
    # PRV: completionTarget "parent" (a private hand-off to the spawning turn, bound to the
    # requester incarnation at the spawn), and when a normal finish of the spawning turn released
    # it (its 30-minute window starts there).
    private: bool = False
    window_started_at_ms: int | None = None
    # Retention of a suspended result (reference §c18): when its delivery was last suspended
    # (its payload is kept 7 days from then), and when the sweeper discarded it as expired.
    suspended_at_ms: int | None = None
    expired_at_ms: int | None = None
    # Cleanup mode of the spawn (reference §c18): "keep" or "delete"; a delete-mode run is
    # archived by the sweeper (its live session deleted, its archive kept, FMT-6) at its end +
    # archiveAfterMinutes, never while its required completion is pending.
    cleanup_mode: str = "keep"
    archived_at_ms: int | None = None
    # A kill, steer, reset or delete stopped it while it ran: nothing of it is ever announced
    # or handed over, whatever its delivery status says (a kill keeps ``pending``, as
    # OpenClaw 2026.9.6's kill path does; a reset or delete records ``not_required``).
    announce_suppressed: bool = False

    @property
    def silenced(self) -> bool:
        """Nothing of this run is to be delivered: not asked for, or stopped (see above)."""
        return self.announce_suppressed or not self.required \
            or self.delivery_status == DeliveryStatus.NOT_REQUIRED

    @property
    def owes(self) -> bool:
        """Its delivery is open: pending, and not silenced by a kill that kept it pending."""
        return self.delivery_status == DeliveryStatus.PENDING and not self.announce_suppressed

    @property
    def receipt_at_ms(self) -> int | None:
        """The producer end time the current receipt carries."""
        return self.ended_at_ms if self.receipt_ended_at_ms is None else self.receipt_ended_at_ms

    @property
    def window_start_ms(self) -> int | None:
        """Where the generation's expiry window starts: its receipt's end, or a later redrive."""
        receipt = self.receipt_at_ms
        if self.redriven_at_ms is None or receipt is None:
            return receipt
        return max(receipt, self.redriven_at_ms)


def generation_key(key: str, generation: int) -> str:
    """The idempotency key of a delivery generation: the per-child key for the first, with
    ``:g<n>`` after it for a reopened one (a new hand-off the gateway sends again)."""
    return key if generation == 1 else f"{key}:g{generation}"


# -- changes: one field set per transition -----------------------------------------------------
# Each change's fields are the columns it writes, by name: the store writes exactly them, and
# :func:`apply` makes the same record (tests/delivery/test_run_record_apply.py checks every change
# type).


@attrs.frozen
class RunEnded:
    """The producer (the child's run) records its terminal outcome, result and usage."""

    ended_at_ms: int
    outcome_status: OutcomeStatus
    outcome_error: str | None
    result_text: str | None
    stop_reason: str | None
    input_tokens: int | None
    output_tokens: int | None
    crash_point: ClassVar[None] = None


@attrs.frozen
class RunStarted:
    """A run that waited for a slot of the maxConcurrent lane starts (actors/nesting/lane.py)."""

    started_at_ms: int
    crash_point: ClassVar[None] = None


@attrs.frozen
class AttemptStarted:
    attempt_count: int
    next_attempt_at_ms: None = None  # the wait, if any, is over
    crash_point: ClassVar[None] = None


@attrs.frozen
class RetryScheduled:
    next_attempt_at_ms: int
    last_error: str
    crash_point: ClassVar[None] = None


@attrs.frozen
class Delivered:
    delivered_at_ms: int
    delivery_status: Literal[DeliveryStatus.DELIVERED] = DeliveryStatus.DELIVERED
    crash_point: ClassVar[CrashPoint] = CrashPoint.BEFORE_RECORD_DELIVERED


@attrs.frozen
class GaveUp:
    """Resolved without delivery: ``suspended`` keeps an ok child's payload for a redrive."""

    delivery_status: Literal[DeliveryStatus.FAILED, DeliveryStatus.SUSPENDED]
    last_error: str | None
    # When a suspension started (its 7-day retention counts from here); None for a failure.
    suspended_at_ms: int | None = None

    @property
    def crash_point(self) -> CrashPoint:
        if self.delivery_status == DeliveryStatus.SUSPENDED:
            return CrashPoint.BEFORE_RECORD_SUSPENDED
        return CrashPoint.BEFORE_RECORD_FAILED


@attrs.frozen
class CleanedUp:
    """The run's obligations resolved and its cleanup ran (once per run)."""

    cleaned_up_at_ms: int
    crash_point: ClassVar[CrashPoint] = CrashPoint.BEFORE_RECORD_CLEANUP


@attrs.frozen
class Corrected:
    """The producer corrects its result after the end: a newer receipt (DEL-12)."""

    receipt_ended_at_ms: int
    result_text: str | None
    crash_point: ClassVar[None] = None


_CLAIM_CRASH_POINTS = {
    ClaimPhase.RESERVED: CrashPoint.BEFORE_CLAIM_RESERVED,
    ClaimPhase.ATTEMPTED: CrashPoint.BEFORE_CLAIM_ATTEMPTED,
    ClaimPhase.CONSUMED: CrashPoint.BEFORE_CLAIM_CONSUMED,
    ClaimPhase.ACCEPTED: CrashPoint.BEFORE_CLEAR_CLAIM,
    ClaimPhase.ABANDONED: CrashPoint.BEFORE_CLAIM_ABANDONED,
}


@attrs.frozen
class ClaimMoved:
    """The generation's recovery claim moves to ``claim_phase`` (accepted or abandoned: it is
    cleared), replaying ``claim_key``."""

    claim_phase: ClaimPhase
    claim_key: str | None
    claim_ended_at_ms: int | None

    @property
    def crash_point(self) -> CrashPoint:
        return _CLAIM_CRASH_POINTS[self.claim_phase]


@attrs.frozen
class EvidenceSaved:
    """Confirmed delivery evidence of one receipt, saved before its claim is cleared (DEL-13)."""

    evidence_kind: EvidenceKind
    evidence_key: str | None
    evidence_ended_at_ms: int | None
    crash_point: ClassVar[CrashPoint] = CrashPoint.BEFORE_SAVE_EVIDENCE


@attrs.frozen
class FindingsFrozen:
    """The run's findings, rendered at its generation's first announcement (DEL-6)."""

    findings_text: str
    crash_point: ClassVar[None] = None


@attrs.frozen
class Reopened:
    """A newer receipt of a delivered run: the next delivery generation starts afresh (its
    evidence so far proves only the older receipt, so it stays; the run's cleanup, done once,
    stays done)."""

    generation: int
    delivery_status: Literal[DeliveryStatus.PENDING] = DeliveryStatus.PENDING
    attempt_count: int = 0
    next_attempt_at_ms: None = None
    delivered_at_ms: None = None
    claim_phase: None = None
    claim_key: None = None
    claim_ended_at_ms: None = None
    findings_text: None = None  # the next generation's announcement renders them afresh
    # A run its yield batch delivered is delivered on its own from now on (its batch is done).
    delivery_disposition: None = None
    crash_point: ClassVar[CrashPoint] = CrashPoint.BEFORE_REOPEN


@attrs.frozen
class Redriven:
    """An operator redrives a given-up or paused run from its retained payload: the next
    delivery generation starts afresh, its expiry window from now (actors/delivery/redrive.py)."""

    generation: int
    redriven_at_ms: int
    delivery_status: Literal[DeliveryStatus.PENDING] = DeliveryStatus.PENDING
    attempt_count: int = 0
    next_attempt_at_ms: None = None
    claim_phase: None = None
    claim_key: None = None
    claim_ended_at_ms: None = None
    findings_text: None = None  # the redriven generation renders them afresh, as a reopened one
    # A yield batch's member the batch closed undelivered is delivered on its own when redriven.
    delivery_disposition: None = None
    crash_point: ClassVar[CrashPoint] = CrashPoint.BEFORE_REDRIVE


@attrs.frozen
class Dismissed:
    """An operator dismisses a given-up run's delivery: discarded, its replay payload released
    (the registry never sends it again; the run's result stays for reads: history, findings)."""

    delivery_status: Literal[DeliveryStatus.DISCARDED] = DeliveryStatus.DISCARDED
    crash_point: ClassVar[None] = None


@attrs.frozen
class Expired:
    """The sweeper discards a suspended delivery 7 days after its suspension (reference §c18,
    ``expired``): its replay payload is released, so a later redrive delivers nothing (the run's
    result stays in the store for reads, as after a dismissal)."""

    expired_at_ms: int
    delivery_status: Literal[DeliveryStatus.DISCARDED] = DeliveryStatus.DISCARDED
    crash_point: ClassVar[None] = None


@attrs.frozen
class Archived:
    """The sweeper archived a delete-mode run: its live session deleted, its archive kept."""

    archived_at_ms: int
    crash_point: ClassVar[None] = None


@attrs.frozen
class YieldFrozen:
    """The requester yielded: the run is a member of that turn's batch (reference §c9)."""

    yield_batch: str
    crash_point: ClassVar[None] = None


@attrs.frozen
class WindowStarted:
    """A private result was released by a normal finish of its spawning turn (PRV-7)."""

    window_started_at_ms: int
    crash_point: ClassVar[None] = None


@attrs.frozen
class HandedToBatch:
    """The run's own delivery stopped: its yielded batch owns the result (reference §b)."""

    delivery_disposition: Literal["intentional_non_delivery"] = "intentional_non_delivery"
    crash_point: ClassVar[None] = None


@attrs.frozen
class HandoffClosed:
    """A private result's bound requester incarnation is gone: discarded, nothing sent (PRV-3)."""

    last_error: str
    delivery_status: Literal[DeliveryStatus.DISCARDED] = DeliveryStatus.DISCARDED
    crash_point: ClassVar[None] = None


@attrs.frozen
class DeliverySuppressed:
    """It was stopped while it ran: never announced. A reset or delete of its requester (and a
    steer) records its delivery ``not_required`` (reference §c17, OpenClaw's
    ``suppressTaskDelivery``); a kill keeps the status the row had (``pending`` for a required
    run: OpenClaw 2026.9.6's ``claimSubagentRunKill`` then ``markSubagentRunTerminated``
    suppress the announce and leave the status alone; docs/fidelity.md)."""

    delivery_status: DeliveryStatus = DeliveryStatus.NOT_REQUIRED
    announce_suppressed: Literal[True] = True
    crash_point: ClassVar[None] = None


Change = (RunEnded | AttemptStarted | RetryScheduled | Delivered | GaveUp | CleanedUp | Corrected
          | ClaimMoved | EvidenceSaved | Reopened | RunStarted | FindingsFrozen | Redriven
          | Dismissed | YieldFrozen | HandedToBatch | WindowStarted | HandoffClosed
          | DeliverySuppressed | Expired | Archived)
CHANGE_TYPES: tuple[type[Change], ...] = (RunEnded, AttemptStarted, RetryScheduled, Delivered,
                                          GaveUp, CleanedUp, Corrected, ClaimMoved,
                                          EvidenceSaved, Reopened, RunStarted, FindingsFrozen,
                                          Redriven, Dismissed, YieldFrozen, HandedToBatch,
                                          WindowStarted, HandoffClosed, DeliverySuppressed,
                                          Expired, Archived)


def apply(record: RunRecord, change: Change) -> RunRecord:
    """The record after ``change``: its fields written into the record's columns of the same
    names (as the store writes them). Built column by column, not with ``attrs.evolve``: the
    core applies a change at almost every transition, and evolve's per-field walk was ~3 % of
    a seed (docs/performance-log.md); tests/delivery/test_run_record_apply.py compares the two."""
    made = _APPLIERS.get(type(change))
    if made is None:  # made at a type's first use: all 19 at import cost ~1.7 ms (loaded)
        made = _APPLIERS[type(change)] = _applier(type(change))
    return made(record, change)


def _applier(change_type: type[Change]) -> Callable[[RunRecord, Any], RunRecord]:
    """``apply`` for one change type, generated once (as attrs generates ``__init__``): each
    column written from the change or from the record into a :class:`_Building`, which then
    becomes the frozen :class:`RunRecord` it is laid out as."""
    writes = set(columns(change_type))
    lines = ["def apply(record, change):", "    new = _new(_Building)"]
    lines += [f"    new.{name} = {'change' if name in writes else 'record'}.{name}"
              for name in _FIELD_INDEX]
    lines += ["    new.__class__ = RunRecord", "    return new"]
    namespace: dict[str, Any] = {"RunRecord": RunRecord, "_Building": _Building,
                                 "_new": object.__new__}
    exec("\n".join(lines) + "\n", namespace)
    made: Callable[[RunRecord, Any], RunRecord] = namespace["apply"]
    made.__qualname__ = f"apply_{change_type.__name__}"
    return made


class _Building(RunRecord):
    """A :class:`RunRecord` while :func:`apply` fills it in: the same slots, plain writes.

    A frozen attrs record writes each of its 40 fields in ``__init__`` through
    ``object.__setattr__`` (~85 ns a field, ~3.5 µs a record, ~100 records a seed). Here they
    are plain attribute stores into the slots (a class whose ``__setattr__`` *and*
    ``__delattr__`` are object's gets CPython's generic setter, and its stores are specialised),
    and the finished object's class is then set to ``RunRecord`` (allowed: no slot is added),
    frozen from then on. ~0.8 µs a record; no ``_Building`` is ever seen outside ``apply``.
    (Wave 10b tried such a subclass with ``__setattr__`` alone restored and found it slower:
    attrs' ``__delattr__`` kept the slow setter.)
    """

    __slots__ = ()
    __setattr__ = object.__setattr__
    __delattr__ = object.__delattr__


def columns(change_type: type[Change]) -> tuple[str, ...]:
    """The columns a change of this type writes (its field names)."""
    return tuple(f.name for f in attrs.fields(change_type))


# RunRecord's fields in ``__init__`` order. ``apply`` writes every one of them as a plain slot,
# past ``__init__``: that makes the same record only while ``__init__`` does nothing else.
_FIELD_INDEX = {name: i for i, name in enumerate(f.name for f in attrs.fields(RunRecord))}
if (any(f.alias != f.name or not f.init or f.validator is not None or f.converter is not None
        for f in attrs.fields(RunRecord))
        or hasattr(RunRecord, "__attrs_post_init__") or hasattr(RunRecord, "__attrs_pre_init__")):
    raise AssertionError("apply writes RunRecord's slots: no validator, converter or init hook")
_APPLIERS: dict[type[Change], Callable[[RunRecord, Any], RunRecord]] = {}
