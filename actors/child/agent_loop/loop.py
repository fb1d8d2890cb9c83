"""OUT-9: the agent loop's recording: a turn's steps, attempts and chunks as session events.

The caller feeds it one call at a time (a chunk, the end of a stream, a cancellation) and appends
the events it returns; cancellation may come between any two chunks. Either encoding is written
(OUT-10). No IO, no clock (chunk times are given), no randomness.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

from actors.child.agent_loop.assembler import BlockAssembler, StreamChunk
from actors.child.agent_loop.streams import StreamAccumulator
from actors.child.output import ContentBlock, JsonObject


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
        data = {"turn": self.turn, "step": self.step, "stream": self._stream.take()}
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
            data["stream"] = self._stream.take()
        return {"type": "assistant/message", "data": data}
