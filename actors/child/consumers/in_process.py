"""OUT-4: the in-process result reader (``readResult``) over the child-owned suffix."""

from __future__ import annotations

from collections.abc import Iterable

from actors.child.consumers.turn import SubagentResult, TurnFold, feed
from actors.child.output import SessionEvent, in_process_stop_reason


class InProcessReader(TurnFold):
    """``readResult`` over the child-owned suffix, folded as it grows."""

    __slots__ = ()

    def result(self, *, owner_cancelled: bool = False) -> SubagentResult:
        stop = in_process_stop_reason(self.last_end, owner_cancelled=owner_cancelled)
        return SubagentResult(self.output() or [], stop)


def read_result(events: Iterable[SessionEvent], *, owner_cancelled: bool = False) -> SubagentResult:
    return feed(InProcessReader(), events).result(owner_cancelled=owner_cancelled)
