"""OUT-4..6: the four consumers of a child's output, all on the one rule in ``actors.output``.

Each consumer is a fold over what it really sees, so a long run or a big log is read once:

* the in-process result reader folds the child-owned session events (``readResult``);
* the continuable activation capture folds one epoch's events into ``subagent/end`` data;
* the SDK observer folds ``session.event`` notifications for the child's session id only;
* the ACP observer folds ``agent_message_chunk`` text only, never whole messages.

The wire views the two out-of-process backends receive are derived from the child's events by
:func:`sdk_notifications` and :func:`acp_messages`, so one simulated run can be checked across
all four. Each consumer keeps the real stop reason, through its own mapping (OUT-6).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

import attrs

from actors.logs import EpochTracker
from actors.output import (
    ABORTED,
    ERROR,
    ContentBlock,
    JsonObject,
    OutputFold,
    SessionEvent,
    StopReason,
    ToolResult,
    TurnEndReason,
    acp_stop_reason,
    acp_wire_stop_reason,
    epoch_stop_reason,
    in_process_stop_reason,
    sdk_child_outcome,
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


def _turn_end_reason(event: SessionEvent) -> TurnEndReason | None:
    if event.get("type") != "turn/end":
        return None
    reason: TurnEndReason = event["data"]["reason"]
    return reason


# ---------------------------------------------------------------------------------------------
# In-process result reader.


class _TurnFold:
    """The one rule over a stream of session events, plus the last turn's end reason."""

    __slots__ = ("_fold", "_last_end")

    def __init__(self) -> None:
        self._fold = OutputFold()
        self._last_end: TurnEndReason | None = None

    def push(self, event: SessionEvent) -> None:
        self._fold.push(event)
        reason = _turn_end_reason(event)
        if reason is not None:
            self._last_end = reason


class InProcessReader(_TurnFold):
    """``readResult`` over the child-owned suffix, folded as it grows."""

    __slots__ = ()

    def result(self, *, owner_cancelled: bool = False) -> SubagentResult:
        stop = in_process_stop_reason(self._last_end, owner_cancelled=owner_cancelled)
        return SubagentResult(self._fold.collect() or [], stop)


def read_result(events: Iterable[SessionEvent], *, owner_cancelled: bool = False) -> SubagentResult:
    reader = InProcessReader()
    for event in events:
        reader.push(event)
    return reader.result(owner_cancelled=owner_cancelled)


# ---------------------------------------------------------------------------------------------
# Continuable activation capture.


class ActivationCapture(_TurnFold):
    """The activation observer's ``capture`` for one epoch's events (since the epoch's start)."""

    __slots__ = ()

    def output(self) -> list[ContentBlock] | None:
        return self._fold.collect()

    def end(self, *, dropped_unrun: bool = False, teardown_failed: bool = False) -> JsonObject:
        """``subagent/end`` data for this epoch.

        A teardown failure reports ``error`` and withholds the output: an answer the harness
        could not durably release is not a result.
        """
        if teardown_failed:
            return end_data(None, ERROR)
        return end_data(
            self.output(), epoch_stop_reason(self._last_end, dropped_unrun=dropped_unrun)
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
    capture = ActivationCapture()
    for event in epoch_events:
        capture.push(event)
    return capture.end(dropped_unrun=dropped_unrun, teardown_failed=teardown_failed)


# ---------------------------------------------------------------------------------------------
# SDK backend: ``session.event {sessionId, event}`` notifications over JSON-RPC stdio.

SDK_EVENT_METHOD: Final = "session.event"


def sdk_notifications(session_id: str, events: Iterable[SessionEvent]) -> Iterator[JsonObject]:
    """The notifications an SDK client receives for these session events, in order."""
    for event in events:
        yield {"method": SDK_EVENT_METHOD, "params": {"sessionId": session_id, "event": event}}


class SdkObserver:
    """The SDK backend's fold: only ``session.event`` notifications of the child's session."""

    __slots__ = ("_child", "_fold", "_last_end")

    def __init__(self, child_session_id: str) -> None:
        self._child = child_session_id
        self._fold = OutputFold()
        self._last_end: TurnEndReason | None = None

    def push(self, notification: Mapping[str, Any]) -> None:
        if notification.get("method") != SDK_EVENT_METHOD:
            return
        params = notification.get("params")
        if not isinstance(params, Mapping) or params.get("sessionId") != self._child:
            return
        event = params["event"]
        self._fold.push(event)
        reason = _turn_end_reason(event)
        if reason is not None:
            self._last_end = reason

    def result(self, *, cancelled: bool = False) -> SubagentResult:
        output = self._fold.collect() or []
        if cancelled:
            # Local cancellation settles without waiting for the child's own terminal.
            return SubagentResult(output, ABORTED)
        outcome = sdk_child_outcome(self._last_end)
        return SubagentResult(output, outcome.stop_reason, outcome.diagnostic)


def observe_sdk(
    child_session_id: str, notifications: Iterable[Mapping[str, Any]], *, cancelled: bool = False
) -> SubagentResult:
    observer = SdkObserver(child_session_id)
    for notification in notifications:
        observer.push(notification)
    return observer.result(cancelled=cancelled)


# ---------------------------------------------------------------------------------------------
# ACP backend: ``session/update`` notifications, then the prompt's response.

ACP_UPDATE_METHOD: Final = "session/update"
ACP_PROMPT_ID: Final = 1


def _acp_update(session_id: str, update: JsonObject) -> JsonObject:
    return {
        "jsonrpc": "2.0",
        "method": ACP_UPDATE_METHOD,
        "params": {"sessionId": session_id, "update": update},
    }


def _text_chunk(session_id: str, kind: str, text: str) -> JsonObject:
    return _acp_update(
        session_id, {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    )


class _AcpChunker:
    """Turn raw stream chunks into ACP updates, the way an ACP agent streams a turn.

    Text deltas go out as they come. A text block that closes with no delta before it (some
    adapters send whole blocks) goes out once, whole, at its ``block-end``, as the DeepSeek
    Harness ACP agent does in the recorded snapshots. Thoughts and tool calls go out under
    their own update kinds, which the backend reads and discards.
    """

    __slots__ = ("_session_id", "_streamed")

    def __init__(self, session_id: str) -> None:
        self._session_id = session_id
        # Block indexes of the current attempt that already streamed a delta, in a dict
        # (not a set) so nothing here depends on set iteration order.
        self._streamed: dict[int, bool] = {}

    def reset(self) -> None:
        self._streamed = {}

    def chunk(self, chunk: Mapping[str, Any]) -> Iterator[JsonObject]:
        kind = chunk.get("type")
        sid = self._session_id
        if kind == "block-start":
            self._streamed.pop(chunk["index"], None)
        elif kind == "text-delta":
            self._streamed[chunk["index"]] = True
            if chunk["text"] != "":
                yield _text_chunk(sid, "agent_message_chunk", chunk["text"])
        elif kind == "reasoning-delta":
            self._streamed[chunk["index"]] = True
            if chunk["text"] != "":
                yield _text_chunk(sid, "agent_thought_chunk", chunk["text"])
        elif kind == "block-end":
            block = chunk["block"]
            streamed = self._streamed.get(chunk["index"], False)
            if block.get("type") == "text" and not streamed and block["text"] != "":
                yield _text_chunk(sid, "agent_message_chunk", block["text"])
            elif block.get("type") == "reasoning" and not streamed and block["text"] != "":
                yield _text_chunk(sid, "agent_thought_chunk", block["text"])
            elif block.get("type") == "tool-call":
                update = {
                    "sessionUpdate": "tool_call",
                    "toolCallId": block["id"],
                    "title": block["name"],
                }
                yield _acp_update(sid, update)

    def stream(self, records: Iterable[Mapping[str, Any]]) -> Iterator[JsonObject]:
        """One V2 compact stream, member by member."""
        self.reset()
        for record in records:
            kind = record.get("type")
            if kind == "chunk":
                yield from self.chunk(record["chunk"])
            elif kind in ("text-chunks", "reasoning-chunks"):
                delta = "text-delta" if kind == "text-chunks" else "reasoning-delta"
                for text in record["texts"]:
                    yield from self.chunk({"type": delta, "index": record["index"], "text": text})
        self.reset()


def acp_messages(session_id: str, events: Iterable[SessionEvent]) -> Iterator[JsonObject]:
    """What an ACP client receives for one prompt whose turn produced these events.

    Updates first, then the prompt's response: ``{"result": {"stopReason": ...}}`` from the last
    ``turn/end``, or an ``error`` response when the turn failed (ACP has no failed stop reason).
    """
    chunker = _AcpChunker(session_id)
    last_end: TurnEndReason | None = None
    for event in events:
        kind = event.get("type")
        if kind == "assistant/chunk":
            yield from chunker.chunk(event["data"]["chunk"])
        elif kind in ("assistant/message", "assistant/attempt"):
            # V1 messages carry no stream; their chunks went out as they arrived.
            yield from chunker.stream(event["data"].get("stream", ()))
            chunker.reset()
        reason = _turn_end_reason(event)
        if reason is not None:
            last_end = reason
    wire = acp_wire_stop_reason(last_end)
    if wire is None:
        yield {
            "jsonrpc": "2.0",
            "id": ACP_PROMPT_ID,
            "error": {"code": -32603, "message": "turn failed"},
        }
    else:
        yield {"jsonrpc": "2.0", "id": ACP_PROMPT_ID, "result": {"stopReason": wire}}


class AcpObserver:
    """The ACP backend's fold: ``agent_message_chunk`` text only (``''`` for non-text content)."""

    __slots__ = ("_fold", "_stop")

    def __init__(self) -> None:
        self._fold = OutputFold()
        self._stop: StopReason | None = None

    def push(self, message: Mapping[str, Any]) -> None:
        if message.get("method") == ACP_UPDATE_METHOD:
            params = message.get("params")
            update = params.get("update") if isinstance(params, Mapping) else None
            if isinstance(update, Mapping) and update.get("sessionUpdate") == "agent_message_chunk":
                content = update.get("content")
                is_text = isinstance(content, Mapping) and content.get("type") == "text"
                text = content.get("text") if is_text and isinstance(content, Mapping) else ""
                self._fold.push_text(text if isinstance(text, str) else "")
        elif "result" in message and isinstance(message["result"], Mapping):
            wire = message["result"].get("stopReason")
            self._stop = acp_stop_reason(wire if isinstance(wire, str) else "")
        elif "error" in message:
            self._stop = ERROR

    def result(self, *, cancelled: bool = False) -> SubagentResult:
        output = self._fold.collect() or []
        if cancelled:
            return SubagentResult(output, ABORTED)
        # A prompt that never answered settles as an error (``settleRunResult``).
        return SubagentResult(output, self._stop if self._stop is not None else ERROR)


def observe_acp(
    messages: Iterable[Mapping[str, Any]], *, cancelled: bool = False
) -> SubagentResult:
    observer = AcpObserver()
    for message in messages:
        observer.push(message)
    return observer.result(cancelled=cancelled)


# ---------------------------------------------------------------------------------------------
# All four views of one child, so the simulator (and the tests) can check they agree.


@attrs.frozen
class ConsumerViews:
    in_process: SubagentResult
    activation: JsonObject
    sdk: SubagentResult
    acp: SubagentResult


def consumer_views(session_id: str, events: Sequence[SessionEvent]) -> ConsumerViews:
    """Every consumer's view of one child-owned suffix (one epoch), each from its own transport."""
    sdk = observe_sdk(session_id, sdk_notifications(session_id, events))
    acp = observe_acp(acp_messages(session_id, events))
    return ConsumerViews(read_result(events), capture_activation(events), sdk, acp)
