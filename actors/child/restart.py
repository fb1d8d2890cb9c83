"""A Gateway restart as the child runs live through it (reference §c18): the process hosting them
goes down, every run that is streaming is interrupted where it stands, and when the Gateway is
back recovery resumes each from its transcript, or, when its execution context was lost, finalizes
it as an error. The resumed run of a child whose completion is required owes its requester the
notice ``Resumed your interrupted task after the Gateway restart.`` (paid by the requester
session, actors/requester/notices.py); a child whose completion is not required resumes silently.

Time the Gateway is down is no run time: a run's streaming (and so its deadline) moves on by the
outage, and a run that starts while the Gateway is down waits for it to come back. The gate is
shared by every run and session of the world, beside the store (it is the registry's
``restartRecovery`` receipt: who was interrupted, who is owed a notice); the world restarts it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import attrs
import trio

from actors import addresses, events
from actors.messages import RunResumed
from actors.runtime import Port

# The notice a requester reads before a resumed child's completion, and the error a run whose
# execution context was lost ends with (reference §c18).
RESUMED_NOTICE = "Resumed your interrupted task after the Gateway restart."
LOST_CONTEXT_ERROR = "subagent run lost active execution context"
# A requester's failed notice is retried after this long, then twice as long each time, up to the
# registry's backoff cap (reference §c11: 15 s doubling to 300 s). No second recovery turn.
NOTICE_RETRY_MS = 15_000
NOTICE_RETRY_CAP_MS = 300_000


class ContextLost(Exception):
    """Recovery found the run's execution context gone: it ends, it does not resume."""


@attrs.define
class Lost:
    """Whether a run ended because its execution context was lost (``caught``)."""

    caught: bool = False


@attrs.define
class RestartGate:
    """Every run's view of Gateway restarts, and the notices recovery still owes."""

    # When the Gateway is back from its latest restart (ms), and how many restarts there were.
    back_ms: int = 0
    restarts: int = 0
    # Runs whose execution context the restart lost (decided by the world, a fault).
    lost: dict[str, None] = attrs.field(factory=dict)
    # Each run streaming now: the scope of its current sleep, which a restart cancels.
    _sleeping: dict[str, trio.CancelScope] = attrs.field(factory=dict)
    # Run id -> (restart number, the requester session) of each notice not yet read.
    owed: dict[str, tuple[int, str]] = attrs.field(factory=dict)
    # Does this notice attempt fail? (the world's fault hook; run id -> failed)
    notice_fails: Callable[[str], bool] = lambda run_id: False
    # The mutant that drops every notice (actors/mutants.py): set by the world.
    skip_notices: bool = False

    def restart(self, back_ms: int, lost: list[str]) -> list[str]:
        """The Gateway goes down until ``back_ms``: every streaming run is interrupted now (its
        sleep cancelled); ``lost`` names those whose context recovery will not find. Returns
        the interrupted runs, in the order they began to sleep."""
        self.restarts += 1
        self.back_ms = max(self.back_ms, back_ms)
        for run_id in lost:
            self.lost[run_id] = None
        interrupted = list(self._sleeping)
        for scope in self._sleeping.values():
            scope.cancel()
        return interrupted

    async def sleep(self, port: Port, run_id: str, requester: str, required: bool,
                    delay_ms: int, interrupted: Callable[[int], None],
                    paused: Callable[[int], None]) -> None:
        """Sleep ``delay_ms`` of run time. A restart meanwhile interrupts it (``interrupted``
        is told the instant, to take what had streamed by then); the outage is then waited out
        and the run resumed or, context lost, ended (:class:`ContextLost`); ``paused`` is told
        each stretch of time the Gateway was down, which the run's clock skips."""
        left = delay_ms
        while True:
            if port.now_ms < self.back_ms:  # started while the Gateway is down: it waits
                port.probe("child.restart-held")
                down_from = port.now_ms
                await port.sleep(self.back_ms - port.now_ms)
                paused(port.now_ms - down_from)
            began = port.now_ms
            with trio.CancelScope() as scope:
                self._sleeping[run_id] = scope
                try:
                    await port.sleep(left)
                finally:
                    del self._sleeping[run_id]
            if not scope.cancelled_caught:
                return
            left -= port.now_ms - began
            down_from = port.now_ms
            interrupted(down_from)
            port.probe("child.restart-interrupted")
            port.emit(events.ChildInterrupted(run_id, "gateway-restart"))
            while port.now_ms < self.back_ms:  # a later restart may push the return back
                await port.sleep(self.back_ms - port.now_ms)
            paused(port.now_ms - down_from)
            self._recover(port, run_id, requester, required)

    def _recover(self, port: Port, run_id: str, requester: str, required: bool) -> None:
        """Recovery after the restart: a lost context ends the run; else it resumes from its
        transcript, and a required completion's requester is owed the notice first."""
        if run_id in self.lost:
            port.probe("child.restart-context-lost")
            raise ContextLost(run_id)
        port.emit(events.ChildResumed(run_id, self.restarts))
        if not required:
            port.probe("child.restart-resumed-silent")
            return
        port.probe("child.restart-resumed-required")
        if self.skip_notices:
            return
        self.owed[run_id] = (self.restarts, requester)
        port.send(addresses.requester(requester), RunResumed(run_id, self.restarts))

    @contextmanager
    def guard(self) -> Iterator[Lost]:
        """Around a run's streaming: a lost context ends it here (``caught``)."""
        lost = Lost()
        try:
            yield lost
        except ContextLost:
            lost.caught = True


def notice_retry_ms(attempt: int) -> int:
    """How long after failed attempt ``attempt`` (1, 2, ...) the notice is tried again."""
    return min(NOTICE_RETRY_CAP_MS, NOTICE_RETRY_MS << min(attempt - 1, 8))
