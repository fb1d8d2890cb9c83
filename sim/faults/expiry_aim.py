"""A restart of the delivery process aimed at a completion's deadline (issue 36's expiry draw, as
re-aimed for issue 34: OpenClaw 2026.9.6 never cuts a backoff at the deadline).

An attempt starts when a backoff runs out, an instant the world does not choose, and a backoff
runs its whole length past the deadline, so left alone an attempt lands on the deadline's own
instant only by chance (a few in thousands of seeds). The world does choose one instant that
starts an attempt at once: a restarted delivery process sends each pending completion whose
backoff is due (``actors/delivery/receipts.py``, ``restored``). An aimed child's sends are
refused with an unclassified error (armed by ``sim/world/draws/edges.py``), so it backs off
attempt after attempt; the process is killed before the last attempt that surely comes before
the deadline and stays down until the deadline's instant, where it starts that attempt: a
public completion gives up on it (``delivery.expiry``; the ``expiry-inclusive`` bug sends it),
a private one's window ends there (``private.window-ends-at-its-instant``).

The backoff after attempt ``k`` is 15 s doubling to 300 s plus up to 20 % jitter the world
does not see when it aims, so after each refused send the aimer bounds when the next attempt
comes: if it surely comes by the deadline and the one after it might not, the process dies one
ms before the next attempt can come and stays down until the deadline (minutes, at most 7: a
long outage of that one process). The deadline is the model's (the world is the driver and may
read the store: ``deadline_of``); oracles restate it from the trace.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from actors.private.rules import window_deadline_ms
from actors.records import retry
from actors.records.keys import is_recovery_key
from actors.records.run_record import RunRecord

# A later generation's key (a correction's or a redrive's): its window starts anew.
LATER_GENERATION = re.compile(r":g[0-9]+$")


def deadline_ms(record: RunRecord) -> int | None:
    """The record's expiry deadline as the delivery core computes it (``_deadline``, no
    mutant): a private result's window from its release, else 30 minutes from its end."""
    ended = record.window_start_ms
    if ended is None:
        return None
    if record.window_started_at_ms is not None:
        return window_deadline_ms(max(record.window_started_at_ms, ended))
    return retry.expiry_deadline_ms(ended, record.required)


class ExpiryAim:
    """Children whose completion's deadline a restart of the delivery process is aimed at; the
    world sets ``crash_for(at_ms, down_ms)`` (kill that process at an instant for a while) and
    ``deadline_of(run_id)`` (the run's deadline, read from the store)."""

    def __init__(self) -> None:
        self._sends: dict[str, int] = {}  # aimed child -> its refused sends so far
        self.crash_for: Callable[[int, int], None] | None = None
        self.deadline_of: Callable[[str], int | None] = lambda run_id: None
        self.heal_ms: int | None = None  # no aimed restart at or after the heal

    def arm(self, child: str) -> None:
        self._sends[child] = 0

    def aimed(self, child: str) -> bool:
        return child in self._sends

    def sent(self, child: str | None, run_id: str, key: str, now_ms: int) -> None:
        """The gateway was handed ``child``'s completion (run ``run_id``) now."""
        if child is None or child not in self._sends or is_recovery_key(key) \
                or LATER_GENERATION.search(key) or self.crash_for is None:
            return
        deadline = self.deadline_of(run_id)
        if deadline is None or (self.heal_ms is not None and deadline >= self.heal_ms):
            del self._sends[child]  # faults strike only before the heal
            return
        self._sends[child] += 1
        sends = self._sends[child]
        # This send refused (attempt ``sends``): the next attempt comes in [now + low, now +
        # high] (the refusal answers in the send's instant).
        low, high = retry.backoff_ms(sends, 0.0), retry.backoff_ms(sends, 1.0)
        if now_ms + high > deadline:
            del self._sends[child]  # too late already: the next may be past the deadline
            return
        if now_ms + high + retry.backoff_ms(sends + 1, 1.0) <= deadline:
            return  # the attempt after the next surely comes by the deadline too: wait for it
        del self._sends[child]
        crash_at = now_ms + low - 1
        self.crash_for(crash_at, deadline - crash_at)
