"""OUT-9: the assembler and the loop recorder produce the events a real agent loop appends."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from actors.child.agent_loop import (
    AgentLoop,
    BlockAssembler,
    Encoding,
    StepOutcome,
    StreamAccumulator,
)
from actors.child.consumers import read_result
from actors.child.output import final_output, join_stream_text, text_of


def text_delta(text: str, index: int = 0) -> dict[str, Any]:
    return {"type": "text-delta", "index": index, "text": text}


def tool_delta(args: str, index: int = 1, call_id: str = "c1") -> dict[str, Any]:
    return {
        "type": "tool-call-delta",
        "index": index,
        "id": call_id,
        "name": "todo_write",
        "argumentsDelta": args,
    }


def finish(kind: str, **extra: Any) -> dict[str, Any]:
    return {"type": "finish", "reason": {"kind": kind, **extra}}


USAGE = {"type": "usage", "usage": {"inputTokens": 30, "outputTokens": 4}}


# ------------------------------------------------------------------------------------------------
# BlockAssembler


def assembled(*chunks: dict[str, Any]) -> BlockAssembler:
    assembler = BlockAssembler()
    for chunk in chunks:
        assembler.push(chunk)
    return assembler


def test_max_tokens_drops_tool_calls_only() -> None:
    a = assembled(text_delta(""), tool_delta("{"), finish("max-tokens"))
    assert a.blocks() == [{"type": "text", "text": ""}]  # the empty text block still counts
    b = assembled(tool_delta("{"), finish("max-tokens"))
    assert b.blocks() == []
    c = assembled(tool_delta("{}"), finish("tool-calls"))
    assert c.blocks() == [
        {"type": "tool-call", "id": "c1", "name": "todo_write", "arguments": "{}"}
    ]


def test_block_end_is_authoritative_and_stragglers_ignored() -> None:
    a = assembled(
        {"type": "block-start", "index": 0, "blockType": "text"},
        text_delta("par"),
        {"type": "block-end", "index": 0, "block": {"type": "text", "text": "partial"}},
        text_delta("ignored"),
        {"type": "block-end", "index": 0, "block": {"type": "text", "text": "second close"}},
    )
    assert a.blocks() == [{"type": "text", "text": "partial"}]
    assert a.finish == {"kind": "stop"}  # no finish chunk means stop


def test_interrupted_blocks_keep_visible_text_and_reasoning_only() -> None:
    a = assembled(
        {"type": "reasoning-delta", "index": 0, "text": "think"},
        text_delta(" \n\t\u00a0", 1),
        tool_delta("{", 2),
        text_delta("visible", 3),
        text_delta("\ufeff", 4),  # JS trim() strips the BOM; Python's isspace() would not
    )
    assert a.interrupted_blocks() == [
        {"type": "reasoning", "text": "think"},
        {"type": "text", "text": "visible"},
    ]
    # \x1c is whitespace to Python but not to JS trim(), so it is visible text there.
    assert assembled(text_delta("\x1c")).interrupted_blocks() == [{"type": "text", "text": "\x1c"}]


# ------------------------------------------------------------------------------------------------
# StreamAccumulator


def test_accumulator_packs_runs_and_keeps_the_rest_raw() -> None:
    acc = StreamAccumulator()
    for time, chunk in enumerate(
        [
            {"type": "block-start", "index": 0, "blockType": "text"},
            text_delta("a"),
            text_delta("b"),
            text_delta("c", index=1),
            tool_delta("{"),
            tool_delta("}"),
            {"type": "tool-call-delta", "index": 2, "id": "", "argumentsDelta": "x"},
            USAGE,
        ]
    ):
        acc.push(chunk, time * 10)
    assert acc.snapshot() == [
        {
            "type": "chunk",
            "time": 0,
            "chunk": {"type": "block-start", "index": 0, "blockType": "text"},
        },
        {"type": "text-chunks", "time0": 10, "index": 0, "dt": [10], "texts": ["a", "b"]},
        {"type": "text-chunks", "time0": 30, "index": 1, "dt": [], "texts": ["c"]},
        {
            "type": "tool-call-chunks",
            "time0": 40,
            "index": 1,
            "dt": [10],
            "id": "c1",
            "name": "todo_write",
            "args": ["{", "}"],
        },
        {
            "type": "chunk",
            "time": 60,
            "chunk": {"type": "tool-call-delta", "index": 2, "id": "", "argumentsDelta": "x"},
        },
        {"type": "chunk", "time": 70, "chunk": USAGE},
    ]


# ------------------------------------------------------------------------------------------------
# AgentLoop


def run_step(
    loop: AgentLoop, chunks: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], StepOutcome]:
    events = loop.begin_step()
    for time, chunk in enumerate(chunks):
        events += loop.chunk(chunk, time)
    settled, outcome = loop.end_stream()
    return events + settled, outcome


def tool_events(loop: AgentLoop) -> list[dict[str, Any]]:
    """What the caller appends after running a step's tools."""
    block = {
        "type": "tool-result",
        "toolCallId": "c1",
        "content": [{"type": "text", "text": "Updated"}],
    }
    return [
        {
            "type": "tool/result",
            "data": {"turn": loop.turn, "step": loop.step, "message": {"content": [block]}},
        }
    ]


@pytest.mark.parametrize("encoding", [Encoding.V2, Encoding.V1])
def test_tool_only_max_tokens_step_leaves_the_empty_usage_only_message(encoding: Encoding) -> None:
    """The seed's scenario arises on its own: text + tool call, then a tool-call-only cut-off."""
    loop = AgentLoop(encoding=encoding)
    log = loop.begin_turn()
    events, outcome = run_step(
        loop, [text_delta("partial one"), tool_delta("{}"), finish("tool-calls")]
    )
    assert outcome is StepOutcome.TOOL_CALLS
    log += events + tool_events(loop) + loop.end_step()
    events, outcome = run_step(loop, [tool_delta("{", call_id="c2"), USAGE, finish("max-tokens")])
    assert outcome is StepOutcome.MAX_TOKENS
    log += events + loop.end_step() + loop.end_turn()

    messages = [e for e in log if e["type"] == "assistant/message"]
    assert messages[-1]["data"]["message"]["content"] == []
    assert messages[-1]["data"]["usage"] == USAGE["usage"]
    assert ("stream" in messages[-1]["data"]) == (encoding is Encoding.V2)
    assert log[-1] == {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "max-tokens"}}}
    assert [e["type"] for e in log if e["type"] in ("step/start", "step/end")] == [
        "step/start",
        "step/end",
    ] * 2
    result = read_result(log)
    assert result.stop_reason == "max-tokens"
    assert result.output[0] == {"type": "text", "text": "partial one"}
    assert result.tool_result().text == (
        "Error: subagent run hit its token limit before finishing\n"
        "Partial output before the run ended:\npartial one"
    )


def test_v1_chunks_are_top_level_events_in_order() -> None:
    loop = AgentLoop(encoding=Encoding.V1)
    loop.begin_turn()
    events, _ = run_step(loop, [text_delta("a"), finish("stop")])
    assert [e["type"] for e in events] == [
        "step/start",
        "assistant/chunk",
        "assistant/chunk",
        "assistant/message",
    ]
    assert events[1]["data"] == {"turn": 1, "step": 1, "chunk": text_delta("a")}


def test_max_tokens_is_sticky_within_a_turn() -> None:
    loop = AgentLoop()
    loop.begin_turn()
    run_step(loop, [text_delta("cut"), finish("max-tokens")])
    loop.end_step()
    # Steering input kept the turn going; a later clean step does not downgrade it.
    _, outcome = run_step(loop, [text_delta("done"), finish("stop")])
    assert outcome is StepOutcome.COMPLETED
    loop.end_step()
    assert loop.end_turn()[0]["data"]["reason"] == {"kind": "max-tokens"}
    loop.begin_turn()
    run_step(loop, [text_delta("fresh"), finish("stop")])
    loop.end_step()
    assert loop.end_turn()[0]["data"] == {"turn": 2, "reason": {"kind": "completed"}}


@pytest.mark.parametrize("encoding", [Encoding.V2, Encoding.V1])
def test_cancel_mid_stream_with_visible_text_writes_an_interrupted_message(
    encoding: Encoding,
) -> None:
    loop = AgentLoop(encoding=encoding)
    log = loop.begin_turn() + loop.begin_step()
    log += loop.chunk(text_delta("partial"))
    log += loop.chunk(tool_delta("{"))
    cancelled = loop.cancel("parent")
    assert [e["type"] for e in cancelled] == ["assistant/message", "step/end", "turn/end"]
    message = cancelled[0]["data"]
    assert message["interrupted"] is True
    assert message["message"]["content"] == [{"type": "text", "text": "partial"}]
    assert cancelled[-1]["data"]["reason"] == {"kind": "aborted", "reason": {"kind": "parent"}}
    result = read_result(log + cancelled)
    assert (result.output, result.stop_reason) == ([{"type": "text", "text": "partial"}], "aborted")
    assert not loop.in_turn


@pytest.mark.parametrize("encoding", [Encoding.V2, Encoding.V1])
def test_cancel_before_visible_text(encoding: Encoding) -> None:
    loop = AgentLoop(encoding=encoding)
    loop.begin_turn()
    loop.begin_step()
    loop.chunk(text_delta("   "))
    cancelled = loop.cancel("user")
    expected = (
        ["step/end", "turn/end"]
        if encoding is Encoding.V1
        else ["assistant/attempt", "step/end", "turn/end"]
    )
    assert [e["type"] for e in cancelled] == expected
    # The whitespace streamed before the cancel is kept in the attempt, as the fallback reads it.
    assert final_output(cancelled) == (
        None if encoding is Encoding.V1 else [{"type": "text", "text": "   "}]
    )


def test_cancel_between_steps_and_when_idle() -> None:
    loop = AgentLoop()
    assert loop.cancel() == []
    loop.begin_turn()
    run_step(loop, [tool_delta("{}"), finish("tool-calls")])
    # Cancelled while its tools run: the step closes, no message or attempt is added.
    assert [e["type"] for e in loop.cancel("hook")] == ["step/end", "turn/end"]
    loop.begin_turn()
    run_step(loop, [tool_delta("{}"), finish("tool-calls")])
    loop.end_step()
    assert [e["type"] for e in loop.cancel()] == ["turn/end"]


def test_failed_finish_records_an_attempt_then_retry_or_fail() -> None:
    failure = {"message": "overloaded", "code": "RATE_LIMIT"}
    loop = AgentLoop()
    log = loop.begin_turn()
    events, outcome = run_step(loop, [text_delta("lost "), finish("error", failure=failure)])
    assert outcome is StepOutcome.FAILED
    assert events[-1]["type"] == "assistant/attempt"
    assert join_stream_text(events[-1]["data"]["stream"]) == "lost "
    log += events + loop.retry()
    for chunk in [text_delta("again"), finish("error", failure=failure)]:
        log += loop.chunk(chunk)
    settled, outcome = loop.end_stream()
    log += settled + loop.fail_step()
    assert [e["type"] for e in log] == [
        "turn/start",
        "step/start",
        "assistant/attempt",
        "assistant/attempt",
        "step/end",
        "turn/end",
    ]
    assert log[-1]["data"]["reason"] == {"kind": "error", "error": failure}
    # The fallback joins every attempt's text, failed ones included.
    assert final_output(log) == [{"type": "text", "text": "lost again"}]
    assert read_result(log).stop_reason == "error"


def test_thrown_stream_error() -> None:
    loop = AgentLoop(encoding=Encoding.V1)
    loop.begin_turn()
    loop.begin_step()
    loop.chunk(text_delta("half"))
    events = loop.stream_error({"message": "socket closed", "code": "UNKNOWN"})
    assert [e["type"] for e in events] == ["step/end", "turn/end"]


def test_blocked_turn_and_misuse() -> None:
    loop = AgentLoop()
    loop.begin_turn()
    assert loop.block_turn()[0]["data"]["reason"] == {"kind": "blocked"}
    with pytest.raises(RuntimeError):
        loop.chunk(text_delta("no attempt is open"))
    with pytest.raises(RuntimeError):
        loop.end_step()


# Chunks of one attempt, with a cancellation at an arbitrary point, in either encoding.
# One text block, and separate indexes for reasoning and tool calls, as a real adapter sends.
chunks = st.lists(
    st.one_of(
        st.builds(text_delta, st.sampled_from(["a", " ", "", "b\n"])),
        st.builds(
            lambda t: {"type": "reasoning-delta", "index": 2, "text": t},
            st.sampled_from(["r", " "]),
        ),
        st.builds(tool_delta, st.sampled_from(["{", "}"]), st.integers(3, 4)),
        st.just(USAGE),
    ),
    max_size=8,
)


@given(
    chunks, st.sampled_from(["stop", "tool-calls", "max-tokens"]), st.integers(0, 9), st.booleans()
)
def test_stopping_anywhere_agrees_across_encodings(
    body: list[dict[str, Any]], kind: str, cut: int, cancel: bool
) -> None:
    """Wherever a run stops, V1 and V2 logs give the same result, and a cancelled attempt never
    hides visible streamed text from the rule."""
    results = []
    stream = [*body, finish(kind)]
    for encoding in (Encoding.V1, Encoding.V2):
        loop = AgentLoop(encoding=encoding)
        log = loop.begin_turn() + loop.begin_step()
        if cancel:
            for chunk in stream[:cut]:
                log += loop.chunk(chunk)
            log += loop.cancel()
        else:
            for chunk in stream:
                log += loop.chunk(chunk)
            settled, _ = loop.end_stream()
            log += settled + loop.end_step() + loop.end_turn()
        assert log[-1]["type"] == "turn/end"
        results.append(read_result(log))
    v1, v2 = results
    assert v1 == v2
    assert v1.stop_reason == (
        "aborted" if cancel else {"max-tokens": "max-tokens"}.get(kind, "completed")
    )
    seen = stream[:cut] if cancel else stream
    streamed = "".join(c["text"] for c in seen if c["type"] == "text-delta")
    if streamed.strip(" \n"):
        assert text_of(v1.output) == streamed
