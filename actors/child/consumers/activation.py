"""OUT-4, OUT-3, OUT-5: the continuable activation capture (``subagent/end`` of one epoch)."""

from __future__ import annotations

from collections.abc import Iterable

from actors.child.consumers.turn import TurnFold, end_data, feed
from actors.child.logs import EpochTracker
from actors.child.output import ERROR, JsonObject, SessionEvent, epoch_stop_reason


class ActivationCapture(TurnFold):
    """The activation observer's ``capture`` for one epoch's events (since the epoch's start)."""

    __slots__ = ()

    def end(self, *, dropped_unrun: bool = False, teardown_failed: bool = False) -> JsonObject:
        """``subagent/end`` data for this epoch.

        A teardown failure reports ``error`` and withholds the output: an answer the harness
        could not durably release is not a result.
        """
        if teardown_failed:
            return end_data(None, ERROR)
        return end_data(
            self.output(), epoch_stop_reason(self.last_end, dropped_unrun=dropped_unrun)
        )


class LastEpochCapture:
    """Capture of the latest epoch in a whole child log, found with :class:`EpochTracker`."""

    __slots__ = ("_capture", "_tracker")

    def __init__(self) -> None:
        self._tracker = EpochTracker()
        self._capture = ActivationCapture()

    def push(self, event: SessionEvent) -> None:
        if self._tracker.observe(event):
            # An earlier epoch's answer must never stand for this one's (OUT-3).
            self._capture = ActivationCapture()
        self._capture.push(event)

    @property
    def capture(self) -> ActivationCapture:
        return self._capture


def capture_activation(
    epoch_events: Iterable[SessionEvent],
    *,
    dropped_unrun: bool = False,
    teardown_failed: bool = False,
) -> JsonObject:
    return feed(ActivationCapture(), epoch_events).end(
        dropped_unrun=dropped_unrun, teardown_failed=teardown_failed
    )
