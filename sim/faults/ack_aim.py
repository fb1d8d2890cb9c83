"""An acknowledgement aimed at the 120 s answer timeout of its send (issue 36's boundary draws).

The delivery process times each try out 120,000 ms after it hands the completion to the gateway
(reference §c11, ``announceTimeoutMs``); the session's acknowledgement goes back through the
gateway, and where it arrives relative to that instant decides whether the try counted as
answered. The world aims a child's first acknowledgement so that it reaches the gateway (and the
delivery process, in the same process) exactly one ms before the timeout, at it, or one ms past
it: the delay on its way back is computed when it leaves the session, from the send it answers,
so however late the completion reached the session the arrival instant is exact. At the
timeout's very instant the kernel's chooser orders the timer and the answer, so both orders
occur (as in Node's event loop, where a timer and an I/O callback due in one millisecond run in
either order: OpenClaw's ``runAnnounceAgentCall`` clears its timer only on acceptance).
"""

from __future__ import annotations

from actors.records.keys import is_recovery_key
from actors.records.retry import ANNOUNCE_TIMEOUT_MS


class AckAim:
    """Children whose next acknowledgement is aimed (by their offset from the timeout: -1, 0 or
    +1 ms), and the latest send of each of their runs' keys."""

    def __init__(self) -> None:
        self._aims: dict[str, int] = {}
        self._sent: dict[tuple[str, str], int] = {}

    def arm(self, child: str, offset_ms: int) -> None:
        self._aims[child] = offset_ms

    def sent(self, child: str | None, run_id: str, key: str, now_ms: int) -> None:
        """The gateway was handed ``run_id``'s completion under ``key`` now."""
        if child is not None and child in self._aims:
            self._sent[(run_id, key)] = now_ms

    def delay_ms(self, child: str | None, run_id: str, key: str, now_ms: int) -> int | None:
        """The delay that brings this acknowledgement to the gateway at its send's timeout plus
        the child's offset, if it is aimed and that instant is still ahead (the aim is spent
        either way); None: not aimed."""
        if child is None or child not in self._aims or is_recovery_key(key):
            return None
        sent = self._sent.get((run_id, key))
        if sent is None:
            return None
        offset = self._aims.pop(child)
        delay = sent + ANNOUNCE_TIMEOUT_MS + offset - now_ms
        return delay if delay > 0 else None
