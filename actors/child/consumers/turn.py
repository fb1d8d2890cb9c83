"""OUT-4..6: the turn fold every consumer of whole session events is built on, and its result.

A consumer that sees session events folds them with :class:`TurnFold`: the one output rule
(``actors.child.output.OutputFold``) plus the last ``turn/end`` reason, which each consumer maps to
a stop reason its own way. :func:`feed` is the one place a consumer is driven over a whole input.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, TypeVar

import attrs

from actors.child.output import (
    ContentBlock,
    JsonObject,
    OutputFold,
    SessionEvent,
    StopReason,
    ToolResult,
    TurnEndReason,
    tool_result,
)


@attrs.frozen
class SubagentResult:
    """``SubagentResult``: ``output`` is ``[]`` (never absent) when the child produced nothing."""

    output: list[ContentBlock]
    stop_reason: StopReason
    diagnostic: str | None = None

    def tool_result(self) -> ToolResult:
        """The foreground delegation tool's result for this run (OUT-7)."""
        return tool_result(self.output, self.stop_reason, self.diagnostic)

    def end_data(self) -> JsonObject:
        """The one-shot lifecycle ``subagent/end`` fields (``observeRun``)."""
        return end_data(self.output, self.stop_reason)


def end_data(output: list[ContentBlock] | None, stop_reason: StopReason) -> JsonObject:
    """``subagent/end`` data: ``lastAssistantMessage`` is left out, never ``[]``, without output."""
    data: JsonObject = {"stopReason": stop_reason}
    if output:
        data["lastAssistantMessage"] = list(output)
    return data


def turn_end_reason(event: SessionEvent) -> TurnEndReason | None:
    """The reason of a ``turn/end`` event; ``None`` for any other event."""
    if event.get("type") != "turn/end":
        return None
    reason: TurnEndReason = event["data"]["reason"]
    return reason


class TurnFold:
    """The one rule over a stream of session events, plus the last turn's end reason."""

    __slots__ = ("_fold", "_last_end")

    def __init__(self) -> None:
        self._fold = OutputFold()
        self._last_end: TurnEndReason | None = None

    def push(self, event: SessionEvent) -> None:
        self._fold.push(event)
        # ``turn_end_reason`` inlined: three folds a child push every event of its log.
        if event.get("type") == "turn/end":
            self._last_end = event["data"]["reason"]

    def output(self) -> list[ContentBlock] | None:
        return self._fold.collect()

    @property
    def last_end(self) -> TurnEndReason | None:
        return self._last_end


class _Consumer(Protocol):
    def push(self, item: Any, /) -> None: ...


C = TypeVar("C", bound=_Consumer)


def feed(consumer: C, items: Iterable[Any]) -> C:
    """Push every item into ``consumer``, in order, and hand it back for its verdict."""
    push = consumer.push  # (bound once: a child's log is pushed event by event into four views)
    for item in items:
        push(item)
    return consumer
