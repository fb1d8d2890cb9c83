"""OUT-4, OUT-6: the SDK backend's observer of ``session.event`` notifications (JSON-RPC stdio)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

from actors.child.consumers.turn import SubagentResult, TurnFold, feed
from actors.child.output import ABORTED, JsonObject, SessionEvent, sdk_child_outcome

SDK_EVENT_METHOD: Final = "session.event"


def sdk_notifications(session_id: str, events: Iterable[SessionEvent]) -> Iterator[JsonObject]:
    """The notifications an SDK client receives for these session events, in order."""
    for event in events:
        yield {"method": SDK_EVENT_METHOD, "params": {"sessionId": session_id, "event": event}}


class SdkObserver:
    """The SDK backend's fold: only ``session.event`` notifications of the child's session."""

    __slots__ = ("_child", "_turns")

    def __init__(self, child_session_id: str) -> None:
        self._child = child_session_id
        self._turns = TurnFold()

    def push(self, notification: Mapping[str, Any]) -> None:
        if notification.get("method") != SDK_EVENT_METHOD:
            return
        params = notification.get("params")
        # A dict (as decoded) skips ``Mapping``'s slower abstract-class check.
        if type(params) is not dict and not isinstance(params, Mapping):
            return
        if params.get("sessionId") != self._child:
            return
        self._turns.push(params["event"])

    def result(self, *, cancelled: bool = False) -> SubagentResult:
        output = self._turns.output() or []
        if cancelled:
            # Local cancellation settles without waiting for the child's own terminal.
            return SubagentResult(output, ABORTED)
        outcome = sdk_child_outcome(self._turns.last_end)
        return SubagentResult(output, outcome.stop_reason, outcome.diagnostic)


def observe_sdk(
    child_session_id: str, notifications: Iterable[Mapping[str, Any]], *, cancelled: bool = False
) -> SubagentResult:
    return feed(SdkObserver(child_session_id), notifications).result(cancelled=cancelled)
