"""A child run's session log as its shell appends it: each event stamped with its seq and time,
fed to the live in-process reader, and traced in the terms an oracle needs (no fold involved);
and the model attempt being streamed into it.
"""

from __future__ import annotations

import attrs

from actors import events
from actors.child.consumers import InProcessReader
from actors.child.output import JsonObject
from actors.runtime import Port


@attrs.define
class Attempt:
    """The model attempt being streamed: its chunks, how many were fed, and its time span."""

    chunks: list[JsonObject] = attrs.field(factory=list)
    fed: int = 0
    t0_ms: int = 0
    duration_ms: int = 0


@attrs.define
class SessionLog:
    """The child's session log: events stamped with seq and time as they are appended."""

    port: Port
    run_id: str
    events: list[JsonObject] = attrs.field(factory=list)
    reader: InProcessReader = attrs.field(factory=InProcessReader)

    def append(self, new: list[JsonObject], *, own: bool = True) -> None:
        logged, now_ms = self.events, self.port.now_ms  # no await here: one time for all
        for event in new:
            stamped = {"type": event["type"], "seq": len(logged) + 1,
                       "time": now_ms, "data": event["data"]}
            logged.append(stamped)
            if own:
                self.reader.push(stamped)
                self._note(stamped)

    def inherit(self, origin: str, text: str, logged: list[JsonObject]) -> None:
        """Log events that are not this run's own (OUT-3): a fork's seeded parent turn, or an
        earlier epoch's turn. The live reader never sees them; the trace says what they said."""
        self.append(logged, own=False)
        self.port.emit(events.ChildInherited(self.run_id, origin, text, len(logged)))

    def _note(self, event: JsonObject) -> None:
        """Trace what the child committed, in the terms an oracle needs (no fold involved)."""
        kind, data = event["type"], event["data"]
        if kind == "assistant/message":
            blocks = [{"type": b["type"], "text": b.get("text")} for b in
                      data["message"]["content"]]
            self.port.emit(events.ChildMessage(self.run_id, data["step"], blocks,
                                               _streamed(data.get("stream", [])),
                                               "stream" in data,
                                               bool(data.get("interrupted"))))
        elif kind == "assistant/attempt":
            self.port.emit(events.ChildAttempt(self.run_id, data["step"],
                                               _streamed(data["stream"])))
        elif kind == "assistant/chunk" and data["chunk"]["type"] == "text-delta":
            self.port.emit(events.ChildDelta(self.run_id, data["step"], data["chunk"]["text"]))
        elif kind == "tool/result":
            self.port.emit(events.ChildToolResult(self.run_id, _tool_text(data)))
        elif kind == "turn/end":
            cause = data["reason"].get("reason")
            self.port.emit(events.ChildTurnEnd(self.run_id, data["reason"]["kind"],
                                               cause["kind"] if cause else None))


def _streamed(stream: list[JsonObject]) -> str:
    # What the wire carried as text deltas; recorded verbatim for the oracles.
    out = []
    for record in stream:
        if record["type"] == "text-chunks":
            out += record["texts"]
        elif record["type"] == "chunk" and record["chunk"]["type"] == "text-delta":
            out.append(record["chunk"]["text"])
    return "".join(out)


def _tool_text(data: JsonObject) -> str:
    parts = []
    for block in data["message"]["content"]:
        for inner in block.get("content", []):
            if inner.get("type") == "text":
                parts.append(inner["text"])
    return "".join(parts)
