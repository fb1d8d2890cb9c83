"""OUT-4, OUT-6: the ACP backend: ``session/update`` notifications, then the prompt's response.

The ACP observer never sees whole messages: it folds ``agent_message_chunk`` text only.
:func:`acp_messages` derives the wire view an ACP client would receive from a child's events.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

from actors.child.consumers.turn import SubagentResult, feed
from actors.child.output import (
    ABORTED,
    ERROR,
    JsonObject,
    OutputFold,
    SessionEvent,
    StopReason,
    TurnEndReason,
    acp_stop_reason,
    acp_wire_stop_reason,
)

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
        elif kind == "turn/end":  # what ``turn_end_reason`` reads, without a call per event
            last_end = event["data"]["reason"]
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
        # Decoded wire messages are dicts: ``type(x) is dict`` answers them before ``Mapping``'s
        # abstract-class check (a Python-level ``__instancecheck__``), which any other mapping
        # still gets.
        if message.get("method") == ACP_UPDATE_METHOD:
            params = message.get("params")
            update = (
                params.get("update")
                if type(params) is dict or isinstance(params, Mapping)
                else None
            )
            if (
                (type(update) is dict or isinstance(update, Mapping))
                and update.get("sessionUpdate") == "agent_message_chunk"
            ):
                content = update.get("content")
                text: object = ""
                if (
                    type(content) is dict or isinstance(content, Mapping)
                ) and content.get("type") == "text":
                    text = content.get("text")
                self._fold.push_text(text if isinstance(text, str) else "")
        elif "result" in message and (
            type(result := message["result"]) is dict or isinstance(result, Mapping)
        ):
            wire = result.get("stopReason")
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
    return feed(AcpObserver(), messages).result(cancelled=cancelled)
