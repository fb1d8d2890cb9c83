"""OUT-1..3, OUT-6..8: the one rule that selects a child's output, and what consumers build on it.

Content blocks, stream records and session events stay the JSON objects real logs carry, so a
log line, a wire notification and a simulated event are the same value and round-trip through
``json`` unchanged. Everything here is pure: no IO, no clock, no randomness.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

# A JSON object as it appears in a session log; the rule trusts shapes that logs.py validated.
JsonObject = dict[str, Any]
ContentBlock = JsonObject
SessionEvent = Mapping[str, Any]
StreamRecord = Mapping[str, Any]
StopReason = str

# The stop reasons the seed names; backends may report others, which are kept as they are.
COMPLETED: Final = "completed"
MAX_TOKENS: Final = "max-tokens"
ABORTED: Final = "aborted"
ERROR: Final = "error"
REFUSAL: Final = "refusal"


def join_stream_text(stream: Iterable[StreamRecord]) -> str:
    """``joinAssistantStreamText``: every text delta of one compact stream, in order.

    Reasoning, tool-call arguments and ``block-end`` text blocks are left out, so text that
    only ever arrived as a finished block contributes nothing to the fallback.
    """
    parts: list[str] = []
    for record in stream:
        kind = record.get("type")
        if kind == "text-chunks":
            parts.append("".join(record["texts"]))
        elif kind == "chunk" and record["chunk"].get("type") == "text-delta":
            parts.append(record["chunk"]["text"])
    return "".join(parts)


# The session events the rule reads: V1's streamed chunks, and messages and attempts with
# their V2 streams.
_FOLDED = frozenset({"assistant/chunk", "assistant/message", "assistant/attempt"})


class OutputFold:
    """The rule as an incremental fold (``AssistantOutputFold``).

    The candidate is the whole content list of the last assistant message whose list is
    non-empty; failing that, every streamed text-delta piece joined; failing that, nothing.
    Both encodings are folded: V2 streams embedded in messages and attempts, and V1
    top-level ``assistant/chunk`` events. A log never mixes them, so folding both is harmless.
    """

    __slots__ = ("_candidate", "_pieces")

    def __init__(self) -> None:
        self._candidate: list[ContentBlock] | None = None
        self._pieces: list[str] = []

    def push(self, event: SessionEvent) -> None:
        kind = event.get("type")
        if kind not in _FOLDED:
            return  # six in ten of a log's events (turns, steps, tools): one test each
        if kind == "assistant/chunk":
            chunk = event["data"]["chunk"]
            if chunk.get("type") == "text-delta":
                self.push_text(chunk["text"])
            return
        if kind == "assistant/message":
            content = event["data"]["message"]["content"]
            # A length test, not "has text": reasoning-only or empty-text messages still win.
            if len(content) > 0:
                self._candidate = list(content)
                # A candidate is only ever replaced, never withdrawn, so the streamed
                # fallback can no longer be chosen: drop it and keep memory flat on long logs.
                self._pieces.clear()
        # A message or an attempt. Once there is a candidate every piece is dropped: the
        # stream is not joined (a 200,000-character reply's pieces, copied once per fold, six
        # folds per child).
        if self._candidate is None:
            self.push_text(join_stream_text(event["data"].get("stream", ())))

    def push_text(self, text: str) -> None:
        # Pieces are kept as they came (no trimming); only the empty piece is a no-op.
        if len(text) > 0 and self._candidate is None:
            self._pieces.append(text)

    def collect(self) -> list[ContentBlock] | None:
        if self._candidate is not None:
            return list(self._candidate)
        joined = "".join(self._pieces)
        return [{"type": "text", "text": joined}] if len(joined) > 0 else None


def final_output(events: Iterable[SessionEvent]) -> list[ContentBlock] | None:
    """``finalAssistantOutput``: the rule over one whole child-owned suffix.

    Choosing the suffix (OUT-3) is the caller's job.
    """
    fold = OutputFold()
    for event in events:
        fold.push(event)
    return fold.collect()


def text_of(output: Sequence[ContentBlock] | None) -> str:
    """What a text-only reader sees: the text blocks joined, reasoning and tool calls excluded."""
    if output is None:
        return ""
    return "".join(block["text"] for block in output if block.get("type") == "text")


# ---------------------------------------------------------------------------------------------
# Stop reasons (OUT-6): each consumer keeps the real reason, through its own mapping
# (reference §1.6). A turn-end reason is the JSON ``{"kind": ..., ...}`` of ``turn/end``.

TurnEndReason = Mapping[str, Any]


def in_process_stop_reason(
    reason: TurnEndReason | None, *, owner_cancelled: bool = False
) -> StopReason:
    """In-process one-shot ``readResult`` (``toStopReason``)."""
    kind = None if reason is None else reason.get("kind")
    mapped = {
        "completed": COMPLETED,
        "max-tokens": MAX_TOKENS,
        "aborted": ABORTED,
        "blocked": REFUSAL,
    }.get(kind if isinstance(kind, str) else "", ERROR)
    # The owner's own cancel wins over anything but a clean finish.
    if owner_cancelled and mapped != COMPLETED:
        return ABORTED
    return mapped


def epoch_stop_reason(reason: TurnEndReason | None, *, dropped_unrun: bool = False) -> StopReason:
    """Continuable activation epoch (``epochStopReason``); ``reason`` is the accounting turn's."""
    kind = None if reason is None else reason.get("kind")
    if kind == "max-tokens":
        return MAX_TOKENS
    if kind in ("aborted", "interrupted"):
        return ABORTED
    if kind == "error":
        return ERROR
    if kind == "blocked":
        return REFUSAL
    if kind is None or kind == "completed":
        # Accepted work cancelled before any turn ran it means the epoch did not finish.
        return ABORTED if dropped_unrun else COMPLETED
    return ERROR


def sdk_failure_diagnostic(stage: str, category: str) -> str:
    """The SDK backend's fixed safe diagnostic line."""
    return f"Subagent failure (provider: DSH SDK; stage: {stage}; category: {category})"


@attrs.frozen
class Outcome:
    """A stop reason with the optional provider diagnostic that explains it."""

    stop_reason: StopReason
    diagnostic: str | None = None


def sdk_child_outcome(reason: TurnEndReason | None) -> Outcome:
    """SDK backend, V2 (``sdkChildOutcome``): the child's last ``turn/end`` reason."""
    kind = None if reason is None else reason.get("kind")
    if kind == "completed":
        return Outcome(COMPLETED)
    if kind == "max-tokens":
        return Outcome(MAX_TOKENS)
    if kind == "aborted":
        assert reason is not None
        cause = reason.get("reason")
        if isinstance(cause, Mapping) and cause.get("kind") == "disposed":
            return Outcome(ABORTED, sdk_failure_diagnostic("session-run", "child-disposed"))
        return Outcome(ABORTED)
    if kind == "blocked":
        return Outcome(REFUSAL)
    if kind == "error":
        return Outcome(ERROR, sdk_failure_diagnostic("session-run", "child-error"))
    if kind == "interrupted":
        return Outcome(ERROR)
    if kind is None:
        return Outcome(ERROR, sdk_failure_diagnostic("session-run", "missing-terminal"))
    return Outcome(ERROR, sdk_failure_diagnostic("session-run", "child-unknown"))


def sdk_v1_stop_reason(reason: TurnEndReason | None) -> StopReason:
    """SDK backend, V1 (``sdkStopReason``): anything but the three named kinds is an error."""
    kind = None if reason is None else reason.get("kind")
    return {"completed": COMPLETED, "max-tokens": MAX_TOKENS, "aborted": ABORTED}.get(
        kind if isinstance(kind, str) else "", ERROR
    )


# ACP wire ``StopReason`` values, as an ACP agent answers a prompt.
ACP_END_TURN: Final = "end_turn"
ACP_MAX_TOKENS: Final = "max_tokens"
ACP_REFUSAL: Final = "refusal"
ACP_CANCELLED: Final = "cancelled"
ACP_MAX_TURN_REQUESTS: Final = "max_turn_requests"


def acp_stop_reason(wire: str) -> StopReason:
    """ACP backend (``acpStopReason``): the wire stop reason of the prompt response."""
    return {
        ACP_END_TURN: COMPLETED,
        ACP_MAX_TOKENS: MAX_TOKENS,
        ACP_REFUSAL: REFUSAL,
        ACP_CANCELLED: ABORTED,
    }.get(wire, ERROR)


def acp_wire_stop_reason(reason: TurnEndReason | None) -> str | None:
    """How an ACP agent would answer a prompt whose turn ended so; ``None`` = an error response.

    (derived) ACP has no stop reason for a failed turn: the prompt request fails instead.
    """
    kind = None if reason is None else reason.get("kind")
    return {
        "completed": ACP_END_TURN,
        "max-tokens": ACP_MAX_TOKENS,
        "aborted": ACP_CANCELLED,
        "blocked": ACP_REFUSAL,
    }.get(kind if isinstance(kind, str) else "")


# ---------------------------------------------------------------------------------------------
# The foreground delegation tool's result (OUT-7, reference §4).

HEADLINES: Final[Mapping[str, str]] = {
    ABORTED: "subagent run was cancelled",
    ERROR: "subagent run failed",
    MAX_TOKENS: "subagent run hit its token limit before finishing",
    REFUSAL: "subagent declined the task",
}

DIAGNOSTIC_MAX_BYTES: Final = 4096
DIAGNOSTIC_TRUNCATED: Final = "\n[diagnostic truncated]"


def headline(stop_reason: StopReason) -> str:
    return HEADLINES.get(stop_reason, f"subagent run ended abnormally ({stop_reason})")


def bound_diagnostic(diagnostic: str) -> str:
    """Cap a provider diagnostic at 4096 UTF-8 bytes, cut on a character boundary.

    (derived) The marker is appended after the cut and is not counted in the cap.
    """
    encoded = diagnostic.encode("utf-8")
    if len(encoded) <= DIAGNOSTIC_MAX_BYTES:
        return diagnostic
    head = encoded[:DIAGNOSTIC_MAX_BYTES].decode("utf-8", errors="ignore")
    return head + DIAGNOSTIC_TRUNCATED


@attrs.frozen
class ToolResult:
    """What the parent model sees from a foreground delegation call."""

    is_error: bool
    text: str

    def to_json(self) -> JsonObject:
        return {"isError": self.is_error, "text": self.text}


def tool_result(
    output: Sequence[ContentBlock] | None, stop_reason: StopReason, diagnostic: str | None = None
) -> ToolResult:
    """A completed run shows its text blocks joined; any other stop is an error result."""
    partial = text_of(output)
    if stop_reason == COMPLETED:
        return ToolResult(is_error=False, text=partial)
    message = headline(stop_reason)
    if diagnostic is not None:
        message += "\nDiagnostic: " + diagnostic
    if partial != "":
        message += "\nPartial output before the run ended:\n" + partial
    # The tool registry prefixes every thrown tool error this way.
    return ToolResult(is_error=True, text="Error: " + message)


def last_assistant_message(events: Sequence[SessionEvent]) -> list[ContentBlock]:
    """The seed-000 bug (the ``last-assistant-message`` mutant): the content of the last
    ``assistant/message``, empty or not."""
    for event in reversed(events):
        if event["type"] == "assistant/message":
            return list(event["data"]["message"]["content"])
    return []
