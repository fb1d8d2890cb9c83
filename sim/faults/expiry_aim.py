"""A restart of the delivery process aimed at a completion's expiry (issue 36's boundary draws).

An attempt starts when a backoff runs out, an instant the world does not choose, and the
registry cuts the last backoff short to end exactly at the deadline (reference §c11), so left
alone every attempt near the deadline lands on it. The world does choose one instant that starts
an attempt at once: a restarted delivery process sends each pending completion whose backoff is
due (``actors/delivery/receipts.py``, ``restored``). An aimed child's sends are refused with an
unclassified error (before any seeded refusal, which would end the delivery otherwise), so it
backs off until its 30-minute expiry; the first send names its producer end time, hence the
deadline, and the process is killed so that it comes back exactly one ms before the deadline,
at it, or one ms past it.

At or past the deadline any backoff is due (the last one is cut to end at the deadline), so a
crash a drawn few seconds before is enough. One ms before it, the last backoff (due at the
deadline) would still run: the process must be down before the last attempt due before the
deadline, and stay down across it. The backoff after attempt ``k`` is 15 s doubling to 300 s,
plus up to 20 % jitter the world cannot see, so after each refused send the aimer bounds when
the next attempt comes: if it surely comes no later than the deadline less one ms, and the one
after it might not, the process dies one ms before the next attempt can come and stays down
until the deadline less one ms (minutes, at most 7: a long outage of that one process).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import attrs

from actors.records.keys import is_recovery_key
from actors.records.retry import COMPLETION_EXPIRY_MS, backoff_ms

# A later generation's key (a correction's or a redrive's): its window starts anew.
LATER_GENERATION = re.compile(r":g[0-9]+$")


@attrs.define
class _Aim:
    offset_ms: int  # -1, 0 or +1: where the restart lands from the deadline
    down_ms: int  # at or past the deadline: how long before it the process dies
    sends: int = 0  # the run's sends seen so far (each refused: one attempt each)


class ExpiryAim:
    """Children whose completion is aimed at its expiry, and the world's way to kill the
    delivery process at an instant for a while (``crash_for(at_ms, down_ms)``)."""

    def __init__(self) -> None:
        self._aims: dict[str, _Aim] = {}
        self._refusing: set[str] = set()  # aimed children: their first generation is refused
        self.crash_for: Callable[[int, int], None] | None = None
        self.heal_ms: int | None = None  # no aimed restart at or after the heal

    def arm(self, child: str, offset_ms: int, down_ms: int) -> None:
        self._aims[child] = _Aim(offset_ms, down_ms)
        self._refusing.add(child)

    def aimed(self, child: str) -> bool:
        return child in self._refusing

    def refuses(self, child: str | None, key: str, now_ms: int) -> bool:
        """Does the gateway refuse this send (an aimed child's first generation, before the
        heal)?"""
        return child is not None and child in self._refusing and not is_recovery_key(key) \
            and not LATER_GENERATION.search(key) and (self.heal_ms is None
                                                      or now_ms < self.heal_ms)

    def sent(self, child: str | None, key: str, ended_at_ms: int, now_ms: int) -> None:
        """The gateway was handed ``child``'s completion (ended at ``ended_at_ms``) now."""
        aim = self._aims.get(child) if child is not None else None
        if aim is None or child is None or is_recovery_key(key) \
                or LATER_GENERATION.search(key) or self.crash_for is None:
            return
        aim.sends += 1
        restart_at = ended_at_ms + COMPLETION_EXPIRY_MS + aim.offset_ms
        if self.heal_ms is not None and restart_at >= self.heal_ms:
            del self._aims[child]  # faults strike only before the heal
            return
        if aim.offset_ms >= 0:
            del self._aims[child]
            if restart_at - aim.down_ms > now_ms:
                self.crash_for(restart_at - aim.down_ms, aim.down_ms)
            return
        # The next attempt comes in [now + low, now + high] (this send refused: attempt k).
        low, high = backoff_ms(aim.sends, 0.0), backoff_ms(aim.sends, 1.0)
        if now_ms + high > restart_at:
            del self._aims[child]  # too late already: the next may be the deadline's own
            return
        if now_ms + high + backoff_ms(aim.sends + 1, 1.0) <= restart_at:
            return  # the next attempt is surely early enough too: wait for it
        del self._aims[child]
        crash_at = now_ms + low - 1
        self.crash_for(crash_at, restart_at - crash_at)
