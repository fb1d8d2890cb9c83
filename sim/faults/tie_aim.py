"""Two receipts of one reply with an equal end time (DEL-12's tie; issue 36's boundary draws).

A redrive (DEL-16) sends a run's retained payload as its next generation, under a key of its own
and with the producer's end time unchanged: when the earlier generation's receipt also reaches
the requester, the session holds two receipts of one reply with equal end times, and the first
it accepted must stay (SPEC DEL-12: "at equal end time the first accepted reply stays"). The
earlier receipt must still be on its way when the redrive goes out, and the run must be paused
for the redrive to be taken (actors/delivery/redrive.py: a backoff after a retryable failure).

So, for an aimed child, when its first completion leaves the gateway for the requester (at
``t``), the world holds it on the network past the try's 120 s answer timeout, so the try counts
as unanswered (reference §c11: the next try 5 s after the timeout). Then the run must pause:

- an internal injection (no channel): the next try, exactly 125 s after ``t``, is refused with an
  unclassified error, so the registry backs off (15 s to 18 s);
- a call to a channel: the gateway answers a repeat of a key already on the channel by injecting
  it again without a refusal (``actors/gateway/core.py``), so every try of the key is held too:
  all four go unanswered (at ``t``, 125 s, 255 s and 395 s after it), and the registry backs off
  515 s after ``t``.

An operator redrives the run a drawn 1 to 14 s into that backoff, and the held receipts reach the
requester a drawn few seconds before the redrive's or in its very instant, where the scheduler
orders the two. The requester's answer to a receipt taken before the redrive is held
until just after it: the registry counts a late answer while it backs off as delivered, and
would refuse the redrive.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from actors.records.keys import is_recovery_key
from actors.records.retry import (
    ANNOUNCE_TIMEOUT_MS,
    COMPLETION_EXPIRY_MS,
    TRANSPORT_TRIES,
    TRANSPORT_WAITS_MS,
)
from sim.faults.expiry_aim import LATER_GENERATION

EXPIRY_MARGIN_MS = 60_000

# From the first try to the backoff: one unanswered try, or all four of them.
PAUSED_AFTER_MS = {False: ANNOUNCE_TIMEOUT_MS + TRANSPORT_WAITS_MS[0],
                   True: TRANSPORT_TRIES * ANNOUNCE_TIMEOUT_MS + sum(TRANSPORT_WAITS_MS)}


@attrs.frozen
class TieAim:
    redrive_after_ms: int  # into the backoff that pauses the run
    skew_ms: int  # when the held receipt arrives, from the redrive (<= 0: not after it)


class TieAims:
    """Children whose first receipt is held for a redrive's, those whose next send the
    gateway refuses, and the world's way to redrive a child at an instant
    (``redrive_at(at_ms, child)``)."""

    def __init__(self) -> None:
        self._aims: dict[str, TieAim] = {}
        self._refuse: set[str] = set()
        # child -> the held key, when it arrives, when the redrive comes
        self._held: dict[str, tuple[str, int, int]] = {}
        self.redrive_at: Callable[[int, str], None] | None = None

    def arm(self, child: str, aim: TieAim) -> None:
        self._aims[child] = aim

    def hold_ms(self, child: str | None, key: str, channel: bool, ended_at_ms: int,
                now_ms: int) -> int | None:
        """How long to hold ``child``'s completion under ``key`` (a call to a channel when
        ``channel``; its producer ended at ``ended_at_ms``) on its way to the requester (None:
        not held). The first one spends the aim: the redrive is scheduled and, for an
        injection, the next send refused. Only a first generation's, with the redrive a
        minute or more inside its expiry (else the expiry may end the delivery before the
        held receipt arrives: seed 37)."""
        if child is None:
            return None
        held = self._held.get(child)
        if held is not None:
            if held[0] == key and held[1] > now_ms:
                return held[1] - now_ms  # a later try of the held key arrives with the first
            return None
        aim = self._aims.pop(child, None)
        if aim is None or is_recovery_key(key) or LATER_GENERATION.search(key) \
                or self.redrive_at is None:
            return None
        redrive = PAUSED_AFTER_MS[channel] + aim.redrive_after_ms
        if now_ms + redrive + EXPIRY_MARGIN_MS > ended_at_ms + COMPLETION_EXPIRY_MS:
            return None
        if not channel:
            self._refuse.add(child)
        self.redrive_at(now_ms + redrive, child)
        # Never before the last held try's answer timeout: an answer in time would deliver it.
        hold = max(redrive + aim.skew_ms, PAUSED_AFTER_MS[channel] - TRANSPORT_WAITS_MS[0] + 1)
        self._held[child] = (key, now_ms + hold, now_ms + redrive)
        return hold

    def ack_hold_ms(self, child: str | None, key: str, now_ms: int) -> int | None:
        """How long to hold the requester's answer to a held receipt (None: not held): one
        that arrived before the redrive answers the registry 1 ms after the redrive came, so
        the redrive still finds the run paused (a late answer counts it delivered)."""
        held = self._held.get(child) if child is not None else None
        if held is None or held[0] != key or held[2] < now_ms:
            return None
        return held[2] - now_ms + 1

    def refuses(self, child: str | None) -> bool:
        """Does the gateway refuse this send of ``child`` (its first after the held one)?"""
        if child is None or child not in self._refuse:
            return False
        self._refuse.discard(child)
        return True
