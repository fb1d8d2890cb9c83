"""Delivery error classes, backoff and expiry (reference/openclaw-delivery.md §c11). Pure."""

from __future__ import annotations

import enum
import re

# Inner transport loop (runAnnounceDeliveryWithRetry): up to 4 tries, waiting 5 s, 10 s, 20 s.
TRANSPORT_TRIES = 4
TRANSPORT_WAITS_MS = (5_000, 10_000, 20_000)
# agents.defaults.subagents.announceTimeoutMs: an unanswered send counts as "gateway timeout".
ANNOUNCE_TIMEOUT_MS = 120_000
# Registry loop: computeBackoff({initial 15 s, factor 2, max 300 s, jitter 0.2}, n).
BACKOFF_INITIAL_MS = 15_000
BACKOFF_FACTOR = 2
BACKOFF_MAX_MS = 300_000
BACKOFF_JITTER = 0.2
# ANNOUNCE_COMPLETION_HARD_EXPIRY_MS / ANNOUNCE_EXPIRY_MS.
COMPLETION_EXPIRY_MS = 30 * 60_000
OPTIONAL_EXPIRY_MS = 5 * 60_000
# Jitter is drawn as one of this many evenly spaced fractions, so it is a recorded choice.
JITTER_STEPS = 1001


class ErrorClass(enum.Enum):
    TRANSIENT = "transient"
    PERMANENT = "permanent"
    # Not retried by the inner loop; the registry loop decides (it retries with backoff).
    OTHER = "other"


_PERMANENT = re.compile(
    r"unsupported channel|unknown channel|chat not found|user not found|bot.*not.*member"
    r"|bot was blocked by the user|forbidden: bot was kicked|recipient is not a valid"
    r"|outbound not configured for channel|message rejected|transcript turn mismatch",
    re.IGNORECASE,
)
_TRANSIENT = re.compile(
    r"errorcode=unavailable|status: unavailable|UNAVAILABLE|no active .* listener"
    r"|gateway not connected|gateway closed \(1006|gateway timeout"
    r"|ECONNRESET|ECONNREFUSED|ETIMEDOUT|ENOTFOUND|EHOSTUNREACH|network error",
)


def classify(error: str) -> ErrorClass:
    """Classify a send error by its message, including errors wrapped in other errors.

    Permanent wins over transient: a permanent rejection wrapped in, say, a writer-claim error
    still stops recovery (DEL-10).
    """
    if _PERMANENT.search(error):
        return ErrorClass.PERMANENT
    if _TRANSIENT.search(error) or re.search(r"network error", error, re.IGNORECASE):
        return ErrorClass.TRANSIENT
    return ErrorClass.OTHER


def transport_wait_ms(failed_tries: int) -> int | None:
    """Wait before the next transport try after ``failed_tries`` failures; None when spent."""
    assert failed_tries >= 1
    if failed_tries >= TRANSPORT_TRIES:
        return None
    return TRANSPORT_WAITS_MS[failed_tries - 1]


def backoff_ms(attempt: int, jitter_fraction: float) -> int:
    """Registry backoff before announce attempt ``attempt + 1``, given ``attempt`` >= 1 failures.

    ``jitter_fraction`` in [0, 1] scales the +20 % jitter; the cap applies after jitter, so with
    zero jitter: 15 s, 30 s, 60 s, 120 s, 240 s, 300 s...; with full jitter n=1 gives 18 s.
    """
    assert attempt >= 1
    assert 0.0 <= jitter_fraction <= 1.0
    base = BACKOFF_INITIAL_MS * BACKOFF_FACTOR ** min(attempt - 1, 16)
    jittered: int = round(base * (1.0 + BACKOFF_JITTER * jitter_fraction))
    return min(BACKOFF_MAX_MS, jittered)


def expiry_deadline_ms(ended_at_ms: int, required: bool) -> int:
    return ended_at_ms + (COMPLETION_EXPIRY_MS if required else OPTIONAL_EXPIRY_MS)
