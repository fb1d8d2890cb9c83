"""The batch-wake outbox row (OpenClaw's ``requesterSettleWake``, reference §a, §b, §c9, §c12).

One row per batch: the frozen membership (sorted run ids), the requester turn and session
incarnation it resumes, and the outbox state with its budgets. The row is persisted before every
dispatch (``dispatching``), so a restarted delivery process replays the same attempt key and
honours the persisted deadline. Pure values; the store keeps them (``actors/store/durable.py``).
"""

from __future__ import annotations

import enum

import attrs

SETTLE_KEY_PREFIX = "announce:requester-settle:"


class BatchStatus(enum.StrEnum):
    PENDING = "pending"  # waiting for its members to settle, or for a retry
    DISPATCHING = "dispatching"  # an attempt is out (persisted before the send)
    DELIVERED = "delivered"  # the wake reached the requester (completeBatch)
    CLOSED = "closed"  # consumed without a wake, or given up (outcome, last_error say why)


@attrs.frozen
class BatchRow:
    batch_id: str
    requester: str  # the requester session key
    agent_id: str
    turn_run_id: str | None  # the yielded turn it resumes; None: an unfrozen wave
    incarnation: int  # the requester session's incarnation at the yield
    members: tuple[str, ...]  # the frozen membership: run ids, sorted
    rearm_generation: int  # 0: an unfrozen wave (no yield)
    frozen_at_ms: int
    status: BatchStatus = BatchStatus.PENDING
    attempt_count: int = 0
    replay_count: int = 0
    deferral_count: int = 0
    next_attempt_at_ms: int | None = None
    last_error: str | None = None
    outcome: str | None = None
    # The current attempt's key went unanswered once: the requester may hold it, so only that
    # key is sent again until an answer comes (a fresh key could wake it twice).
    key_ambiguous: bool = False
    # PRV hook: one private member makes the whole wake private (reference §c10); a private wake
    # replays one unsuffixed key across attempts. Set by the private-completion model.
    private: bool = False
    # The wake's text, rendered once at the first dispatch and kept with the row, so every
    # attempt and replay (also after a restart) carries the same bytes; and the receipt (producer
    # end time) of each member it carries (a newer one arriving later is owed on its own).
    text: str | None = None
    rendered: tuple[tuple[str, int], ...] = ()

    @property
    def yielded(self) -> bool:
        return self.turn_run_id is not None

    @property
    def open(self) -> bool:
        return self.status in (BatchStatus.PENDING, BatchStatus.DISPATCHING)

    def base_key(self) -> str:
        """``announce:requester-settle:<agentId>:<requesterSessionKey>:<sortedRunIds>``, plus
        ``:yield-<rearmGeneration>`` for a yielded batch (reference §a)."""
        key = f"{SETTLE_KEY_PREFIX}{self.agent_id}:{self.requester}:{','.join(self.members)}"
        return f"{key}:yield-{self.rearm_generation}" if self.yielded else key

    def attempt_key(self) -> str:
        """The key of the current attempt: a deliverable retry gets a fresh ``:retry-<n>``; a
        private wake keeps one unsuffixed key across attempts (reference §c10)."""
        if self.private or self.attempt_count <= 1:
            return self.base_key()
        return f"{self.base_key()}:retry-{self.attempt_count - 1}"


def settle_key_runs(key: str) -> list[str]:
    """The run ids a batch-wake key names (what an outside reader of the key sees)."""
    rest = key[len(SETTLE_KEY_PREFIX):]
    parts = rest.split(":")
    for part in parts:
        if part.startswith("run-"):
            return part.split(",")
    return []


def agent_id(session_key: str) -> str:
    parts = session_key.split(":")
    return parts[1] if len(parts) > 1 and parts[0] == "agent" else "main"
