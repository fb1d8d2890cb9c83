"""The model's closed sets of strings, as string-valued enums (values are what the trace, the
store and scenario files spell).

A value of one of these is a ``str``, so it serialises, compares and stores as the plain string;
scenario loading lists the legal spellings from here instead of restating them.
"""

from __future__ import annotations

import enum


class DeliveryStatus(enum.StrEnum):
    """A run's durable delivery state (the registry's ``delivery.status``)."""

    NOT_REQUIRED = "not_required"
    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"
    SUSPENDED = "suspended"
    # An operator dismissed it (its payload released), or a private result whose bound requester
    # incarnation is gone (PRV-3): nothing more is sent.
    DISCARDED = "discarded"


class Waiting(enum.StrEnum):
    """What an in-flight delivery waits for in this incarnation (memory only, lost in a crash).

    ``idle``: nothing in flight here (not ended, already resolved, or not yet restored).
    """

    IDLE = "idle"
    ACK = "ack"
    TRY_WAIT = "try-wait"
    ATTEMPT_WAIT = "attempt-wait"


class OutcomeStatus(enum.StrEnum):
    """How a child run ended, as its runtime reports it."""

    OK = "ok"
    ERROR = "error"
    TIMEOUT = "timeout"
    UNKNOWN = "unknown"


class GiveUpReason(enum.StrEnum):
    EXPIRY = "expiry"
    PERMANENT_FAILURE = "permanent_failure"
    # Part of the send reached the platform before the error: never resent (DEL-10).
    SENT_BEFORE_ERROR = "sent_before_error"
    BATCH_CLOSED = "batch_closed"  # its yield batch closed without a wake (reference §c9)


class CrashPoint(enum.StrEnum):
    """Where the delivery actor's process may die: before each effect it performs."""

    BEFORE_PERSIST = "before-persist"
    BEFORE_SEND = "before-send"
    BEFORE_RECORD_DELIVERED = "before-record-delivered"
    BEFORE_RECORD_FAILED = "before-record-failed"
    BEFORE_RECORD_SUSPENDED = "before-record-suspended"
    BEFORE_RECORD_CLEANUP = "before-record-cleanup"
    # Recovery claims and delivery evidence (DEL-13, actors/records/claims.py).
    BEFORE_CLAIM_RESERVED = "before-claim-reserved"
    BEFORE_CLAIM_ATTEMPTED = "before-claim-attempted"
    BEFORE_CLAIM_CONSUMED = "before-claim-consumed"
    BEFORE_SAVE_EVIDENCE = "before-save-evidence"
    BEFORE_CLEAR_CLAIM = "before-clear-claim"
    BEFORE_CLAIM_ABANDONED = "before-claim-abandoned"
    BEFORE_REOPEN = "before-reopen"
    BEFORE_REDRIVE = "before-redrive"


class ClaimPhase(enum.StrEnum):
    """A delivery generation's recovery claim (reference §a ``restartRecovery``), apart from its
    delivery status. Active: reserved (an attempt is about to start), attempted (a send was
    handed to the gateway: the requester may have it), consumed (a restart found the requester's
    checkpoint for it). Cleared: accepted (delivery evidence saved first), abandoned (given up)."""

    RESERVED = "reserved"
    ATTEMPTED = "attempted"
    CONSUMED = "consumed"
    ACCEPTED = "accepted"
    ABANDONED = "abandoned"


ACTIVE_CLAIMS = (ClaimPhase.RESERVED, ClaimPhase.ATTEMPTED, ClaimPhase.CONSUMED)


class EvidenceKind(enum.StrEnum):
    """What proves a delivery generation done (DEL-13): kept distinct in the store."""

    REPLY_SENT = "reply-sent"  # the requester acknowledged the hand-off to this process
    SEND_SUPPRESSED = "send-suppressed"  # nothing sent on purpose (ANNOUNCE_SKIP, §c1)
    # A restart found the requester's own checkpoint of this run's receipt: it processed it,
    # though no acknowledgement reached this registry.
    SILENT_CHECKPOINT = "silent-checkpoint"


class StepFinish(enum.StrEnum):
    """How a scripted agent-loop step ends (see :class:`actors.messages.StepSpec`)."""

    AUTO = "auto"
    STOP = "stop"
    TOOL_CALLS = "tool-calls"
    MAX_TOKENS = "max-tokens"
    ERROR = "error"
    STREAM_ERROR = "stream-error"


def values(enum_type: type[enum.Enum]) -> tuple[str, ...]:
    """The spellings of a closed set, in declaration order (for messages and validation)."""
    return tuple(str(member.value) for member in enum_type)
