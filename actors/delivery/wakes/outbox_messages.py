"""What the batch-wake outbox (batch_wake.py) is told and what it asks: its timers' payloads,
the effects it returns besides a send or a persist, and what it reads about each member and the
requester. The delivery shell (delivery_wakes.py) builds and carries them out."""

from __future__ import annotations

from typing import NamedTuple

import attrs

from actors import events
from actors.delivery.edge import Persist, Send
from actors.records.batch_record import BatchRow
from actors.records.run_record import RunRecord


@attrs.frozen
class WakeDue:
    """Timer: a deferral, a retry or a replay of ``batch_id`` is due."""

    batch_id: str


@attrs.frozen
class WakeAckTimeout:
    batch_id: str
    token: int


@attrs.frozen
class SaveBatch:
    row: BatchRow


@attrs.frozen
class ReopenMember:
    """A member the wake delivered got a newer receipt after the wake was rendered: its own
    delivery carries that one (a new generation, DEL-12), once the batch is done."""

    run_id: str


@attrs.frozen
class ClaimMember:
    """Ask the per-child delivery to hand this ended member over now (nothing in flight)."""

    run_id: str


@attrs.frozen
class WakeTimer:
    delay_ms: int
    payload: WakeDue | WakeAckTimeout


class Member(NamedTuple):
    """What the outbox reads about one member when it checks its batch. (A named tuple: the
    delivery shell builds one per member of every open batch after each of its messages, ~130
    a default-world seed, and a tuple is built without a frozen attribute write per field.)"""

    record: RunRecord
    in_flight: bool  # a per-child try is out (its answer decides)
    descendants_pending: int  # below it, not yet settled
    descendants_active: int  # below it, still running


@attrs.frozen
class Requester:
    incarnation: int | None  # None: the session entry is gone


Effect = SaveBatch | ClaimMember | ReopenMember | WakeTimer | Persist | Send | events.Event
