"""Delivery retry timing: transport tries, registry backoff and expiry (reference §c11). Pure.

Which errors are retried at all is decided by the error chain's class
(``actors.records.send_error``).
"""

from __future__ import annotations

import math

from actors.records.send_error import ErrorClass, SendError, classify

__all__ = [
    "ErrorClass",
    "SendError",
    "backoff_ms",
    "classify",
    "expiry_deadline_ms",
    "transport_wait_ms",
]

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
# SUBAGENT_SUSPENDED_DELIVERY_RETENTION_MS: a suspended result is kept 7 days (reference §c18).
RETENTION_MS = 7 * 24 * 3600 * 1000
# Jitter is drawn as one of this many evenly spaced fractions, so it is a recorded choice.
JITTER_STEPS = 1001


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
    jittered = js_round(base * (1.0 + BACKOFF_JITTER * jitter_fraction))
    return min(BACKOFF_MAX_MS, jittered)


def js_round(value: float) -> int:
    """JavaScript's ``Math.round`` (``computeBackoff``, reference §c11): a half rounds up, toward
    +infinity (15022.5 gives 15023), where Python's ``round`` goes to the even neighbour."""
    whole = math.floor(value)
    return whole + 1 if value - whole >= 0.5 else whole


def expiry_deadline_ms(ended_at_ms: int, required: bool) -> int:
    return ended_at_ms + (COMPLETION_EXPIRY_MS if required else OPTIONAL_EXPIRY_MS)
