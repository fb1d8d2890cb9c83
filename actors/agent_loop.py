"""OUT-9: the pure core of an agent loop's recording, so the empty terminal message arises alone.

:class:`BlockAssembler` folds raw stream chunks into content blocks (dropping tool calls at a
token-limit stop); :class:`StreamAccumulator` packs one attempt's chunks into the compact V2
stream records; :class:`AgentLoop` turns a turn's steps, attempts and chunks into the session
events the real loop appends, in either encoding. The caller feeds it one call at a time (a
chunk, the end of a stream, a cancellation) and appends the events it returns; cancellation
may come between any two chunks. No IO, no clock (chunk times are given), no randomness.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, Final

import attrs

from actors.output import ContentBlock, JsonObject

StreamChunk = Mapping[str, Any]

# ``String.prototype.trim`` whitespace, which the real assembler uses to decide whether an
# interrupted block is visible. Python's ``str.isspace`` differs (it counts \x1c-\x1f and \x85,
# and not \ufeff), so the set is spelled out.
_JS_WHITESPACE: Final = frozenset(
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def has_visible_text(text: str) -> bool:
    return any(ch not in _JS_WHITESPACE for ch in text)


@attrs.define
class _Partial:
    block_type: str
    text: str = ""
    call_id: str | None = None
    call_name: str | None = None
    arguments: str = ""
    # Set by ``block-end``: authoritative, and freezes the partial.
    block: ContentBlock | None = None


class BlockAssembler:
    """Raw chunks to content blocks, in stream order (``BlockAssembler``)."""

    __slots__ = ("_finish", "_order", "_partials", "_usage")

    def __init__(self) -> None:
        # Keyed by block index; ``_order`` keeps first-seen order (dicts, not sets).
        self._partials: dict[int, _Partial] = {}
        self._order: list[int] = []
        self._usage: JsonObject | None = None
        self._finish: JsonObject | None = None

    def _ensure(self, index: int, block_type: str) -> _Partial:
        partial = self._partials.get(index)
        if partial is None:
            partial = _Partial(block_type)
            self._partials[index] = partial
            self._order.append(index)
        return partial

    def push(self, chunk: StreamChunk) -> None:
        kind = chunk["type"]
        if kind == "block-start":
            self._ensure(chunk["index"], chunk["blockType"])
        elif kind in ("text-delta", "reasoning-delta"):
            partial = self._ensure(chunk["index"], "text" if kind == "text-delta" else "reasoning")
            if partial.block is None:  # deltas after block-end are stragglers of a bad adapter
                partial.text += chunk["text"]
        elif kind == "tool-call-delta":
            partial = self._ensure(chunk["index"], "tool-call")
            if partial.block is None:
                partial.call_id = chunk["id"]
                if chunk.get("name"):
                    partial.call_name = chunk["name"]
                partial.arguments += chunk["argumentsDelta"]
        elif kind == "block-end":
            partial = self._ensure(chunk["index"], chunk["block"]["type"])
            if partial.block is None:  # first close wins
                partial.block = dict(chunk["block"])
        elif kind == "usage":
            self._usage = dict(chunk["usage"])
        elif kind == "finish":
            self._finish = dict(chunk["reason"])

    @staticmethod
    def _assemble(partial: _Partial, index: int) -> ContentBlock:
        if partial.block is not None:
            return dict(partial.block)
        if partial.block_type in ("text", "reasoning"):
            return {"type": partial.block_type, "text": partial.text}
        if partial.block_type == "tool-call":
            return {
                "type": "tool-call",
                "id": partial.call_id if partial.call_id is not None else f"call-{index}",
                "name": partial.call_name if partial.call_name is not None else "",
                "arguments": partial.arguments,
            }
        raise ValueError(f"cannot assemble incomplete block of type {partial.block_type!r}")

    def blocks(self) -> list[ContentBlock]:
        """Every block seen; at a ``max-tokens`` finish tool calls are dropped (a truncated call
        cannot run safely). Nothing else is dropped: an empty text block is still a block."""
        assembled = [self._assemble(self._partials[i], i) for i in self._order]
        if self.finish["kind"] == "max-tokens":
            return [block for block in assembled if block["type"] != "tool-call"]
        return assembled

    def interrupted_blocks(self) -> list[ContentBlock]:
        """What a cancelled stream can keep: text/reasoning blocks with visible text only."""
        kept: list[ContentBlock] = []
        for index in self._order:
            partial = self._partials[index]
            kind = partial.block["type"] if partial.block is not None else partial.block_type
            if kind not in ("text", "reasoning"):
                continue
            block = self._assemble(partial, index)
            if has_visible_text(block["text"]):
                kept.append(block)
        return kept

    @property
    def usage(self) -> JsonObject | None:
        return None if self._usage is None else dict(self._usage)

    @property
    def finish(self) -> JsonObject:
        """The finish reason; a stream that ended without one counts as ``stop``."""
        return dict(self._finish) if self._finish is not None else {"kind": "stop"}


class StreamAccumulator:
    """One attempt's chunks packed into compact V2 stream records (``AssistantStreamAccumulator``).

    Consecutive deltas of one kind and block index share a record; the rest stay raw.
    """

    __slots__ = ("_last_time", "_records")

    def __init__(self) -> None:
        self._records: list[JsonObject] = []
        self._last_time = 0

    def push(self, chunk: StreamChunk, time: int) -> None:
        kind = chunk["type"]
        previous = self._records[-1] if self._records else None
        gap = time - self._last_time
        if kind in ("text-delta", "reasoning-delta"):
            packed = "text-chunks" if kind == "text-delta" else "reasoning-chunks"
            if (
                previous is not None
                and previous["type"] == packed
                and previous["index"] == chunk["index"]
            ):
                previous["dt"].append(gap)
                previous["texts"].append(chunk["text"])
            else:
                self._records.append(
                    {
                        "type": packed,
                        "time0": time,
                        "index": chunk["index"],
                        "dt": [],
                        "texts": [chunk["text"]],
                    }
                )
        elif kind == "tool-call-delta" and chunk["id"] != "" and chunk.get("name") != "":
            same_call = (
                previous is not None
                and previous["type"] == "tool-call-chunks"
                and previous["index"] == chunk["index"]
                and previous["id"] == chunk["id"]
                and ("name" in previous) == ("name" in chunk)
                and previous.get("name") == chunk.get("name")
            )
            if same_call:
                assert previous is not None
                previous["dt"].append(gap)
                previous["args"].append(chunk["argumentsDelta"])
            else:
                record: JsonObject = {
                    "type": "tool-call-chunks",
                    "time0": time,
                    "index": chunk["index"],
                    "dt": [],
                }
                record["id"] = chunk["id"]
                if "name" in chunk:
                    record["name"] = chunk["name"]
                record["args"] = [chunk["argumentsDelta"]]
                self._records.append(record)
        else:
            # Block edges, usage, finish and odd tool-call deltas stay raw.
            self._records.append({"type": "chunk", "time": time, "chunk": dict(chunk)})
        self._last_time = time

    def snapshot(self) -> list[JsonObject]:
        out: list[JsonObject] = []
        for record in self._records:
            copy = dict(record)
            for key in ("dt", "texts", "args"):
                if key in copy:
                    copy[key] = list(copy[key])
            out.append(copy)
        return out


class Encoding(enum.Enum):
    """V2 embeds each attempt's stream in its event; V1 logs every chunk as its own event."""

    V1 = "v1"
    V2 = "v2"


class StepOutcome(enum.Enum):
    """How a model attempt's stream ended, which tells the caller what comes next."""

    COMPLETED = "completed"  # no tool calls: the turn may end
    TOOL_CALLS = "tool-calls"  # run the tools, append their events, then begin the next step
    MAX_TOKENS = "max-tokens"  # token limit: the turn ends max-tokens (sticky)
    FAILED = "failed"  # finish error/aborted: retry() or fail_step()


class _Phase(enum.Enum):
    IDLE = "idle"
    IN_TURN = "in-turn"
    IN_STEP = "in-step"
    STREAMING = "streaming"
    SETTLED = "settled"  # the attempt settled; the step is still open


class AgentLoop:
    """Records one session's turns the way the real agent loop appends them.

    Call order within a turn: ``begin_turn``; then per step ``begin_step``, ``chunk``…,
    ``end_stream`` (then ``retry`` after a failed attempt, or ``end_step``), and finally
    ``end_turn``. ``cancel`` and ``stream_error`` may come at any point inside a turn and
    close it. Every call returns the events to append, in order; events carry ``type`` and
    ``data`` only (the session that appends them stamps ``seq`` and ``time``).
    """

    def __init__(
        self,
        *,
        encoding: Encoding = Encoding.V2,
        provider: str = "sim",
        model: str = "sim-model",
        id_prefix: str = "msg",
        last_turn: int = 0,
    ) -> None:
        self.encoding = encoding
        self._source: JsonObject = {"kind": "model", "provider": provider, "model": model}
        self._id_prefix = id_prefix
        self._messages = 0
        self._phase = _Phase.IDLE
        self.turn = last_turn
        self.step = 0
        self._turn_end: JsonObject | None = None
        self._assembler = BlockAssembler()
        self._stream = StreamAccumulator()

    # -- turn and step edges ------------------------------------------------------------------

    def begin_turn(self) -> list[JsonObject]:
        self._require(_Phase.IDLE)
        self.turn += 1
        self.step = 0
        self._turn_end = None
        self._phase = _Phase.IN_TURN
        return [{"type": "turn/start", "data": {"turn": self.turn}}]

    def begin_step(self) -> list[JsonObject]:
        self._require(_Phase.IN_TURN)
        self.step += 1
        self._phase = _Phase.STREAMING
        self._new_attempt()
        return [{"type": "step/start", "data": {"turn": self.turn, "step": self.step}}]

    def end_step(self) -> list[JsonObject]:
        self._require(_Phase.SETTLED)
        self._phase = _Phase.IN_TURN
        return [self._step_end()]

    def end_turn(self) -> list[JsonObject]:
        """Close a turn whose last step ended normally (or that ran no step at all)."""
        self._require(_Phase.IN_TURN)
        reason = self._turn_end if self._turn_end is not None else {"kind": "completed"}
        return self._close_turn(reason)

    def block_turn(self) -> list[JsonObject]:
        """A pre-step hook rejected the turn's input."""
        self._require(_Phase.IN_TURN)
        return self._close_turn({"kind": "blocked"})

    # -- one model attempt ---------------------------------------------------------------------

    def chunk(self, chunk: StreamChunk, time: int = 0) -> list[JsonObject]:
        self._require(_Phase.STREAMING)
        self._assembler.push(chunk)
        self._stream.push(chunk, time)
        if self.encoding is Encoding.V1:
            data = {"turn": self.turn, "step": self.step, "chunk": dict(chunk)}
            return [{"type": "assistant/chunk", "data": data}]
        return []

    def end_stream(self) -> tuple[list[JsonObject], StepOutcome]:
        """The stream ended on its own: commit a message, or an attempt if it failed."""
        self._require(_Phase.STREAMING)
        self._phase = _Phase.SETTLED
        finish = self._assembler.finish
        if finish["kind"] in ("error", "aborted"):
            return self._attempt(), StepOutcome.FAILED
        content = self._assembler.blocks()
        # A max-tokens step whose only blocks were tool calls commits ``content == []``: the
        # usage-only message that is the durable record of that step.
        events = [self._message(content, interrupted=False)]
        if finish["kind"] == "max-tokens":
            self._turn_end = {"kind": "max-tokens"}
            return events, StepOutcome.MAX_TOKENS
        if any(block["type"] == "tool-call" for block in content):
            return events, StepOutcome.TOOL_CALLS
        if self._turn_end is None:
            self._turn_end = {"kind": "completed"}
        return events, StepOutcome.COMPLETED

    def retry(self) -> list[JsonObject]:
        """Start a new attempt in the same step after a failed one."""
        self._require(_Phase.SETTLED)
        self._phase = _Phase.STREAMING
        self._new_attempt()
        return []

    def fail_step(self, failure: Mapping[str, Any] | None = None) -> list[JsonObject]:
        """Give up after a failed attempt: the turn ends with the finish's failure."""
        self._require(_Phase.SETTLED)
        if failure is None:
            failure = self._assembler.finish.get(
                "failure", {"message": "model call failed", "code": "UNKNOWN"}
            )
        return [self._step_end(), *self._close_turn({"kind": "error", "error": dict(failure)})]

    def stream_error(self, failure: Mapping[str, Any]) -> list[JsonObject]:
        """The stream threw mid-way: record the attempt, end the step and fail the turn."""
        self._require(_Phase.STREAMING)
        events = self._attempt()
        return [
            *events,
            self._step_end(),
            *self._close_turn({"kind": "error", "error": dict(failure)}),
        ]

    def cancel(self, cause: str = "parent") -> list[JsonObject]:
        """Cancellation (``user``, ``parent``, ``hook``, ``disposed``) wherever the loop is."""
        events: list[JsonObject] = []
        if self._phase is _Phase.IDLE:
            return events
        if self._phase is _Phase.STREAMING:
            content = self._assembler.interrupted_blocks()
            if content:
                events.append(self._message(content, interrupted=True))
            else:
                events.extend(self._attempt())
        if self._phase in (_Phase.STREAMING, _Phase.SETTLED):
            events.append(self._step_end())
        events.extend(self._close_turn({"kind": "aborted", "reason": {"kind": cause}}))
        return events

    @property
    def in_turn(self) -> bool:
        return self._phase is not _Phase.IDLE

    # -- internals ------------------------------------------------------------------------------

    def _require(self, phase: _Phase) -> None:
        if self._phase is not phase:
            raise RuntimeError(f"agent loop is {self._phase.value}, not {phase.value}")

    def _new_attempt(self) -> None:
        self._assembler = BlockAssembler()
        self._stream = StreamAccumulator()

    def _step_end(self) -> JsonObject:
        return {"type": "step/end", "data": {"turn": self.turn, "step": self.step}}

    def _close_turn(self, reason: JsonObject) -> list[JsonObject]:
        self._phase = _Phase.IDLE
        return [{"type": "turn/end", "data": {"turn": self.turn, "reason": reason}}]

    def _attempt(self) -> list[JsonObject]:
        # V1 has no attempt event: its chunks are already in the log.
        self._phase = _Phase.SETTLED
        if self.encoding is Encoding.V1:
            return []
        data = {"turn": self.turn, "step": self.step, "stream": self._stream.snapshot()}
        return [{"type": "assistant/attempt", "data": data}]

    def _message(self, content: list[ContentBlock], *, interrupted: bool) -> JsonObject:
        self._phase = _Phase.SETTLED
        self._messages += 1
        message = {
            "role": "assistant",
            "content": content,
            "source": dict(self._source),
            "id": f"{self._id_prefix}-{self._messages}",
        }
        data: JsonObject = {"turn": self.turn, "step": self.step, "message": message}
        if interrupted:
            data["interrupted"] = True
        usage = self._assembler.usage
        if usage is not None:
            data["usage"] = usage
        if self.encoding is Encoding.V2:
            data["stream"] = self._stream.snapshot()
        return {"type": "assistant/message", "data": data}
