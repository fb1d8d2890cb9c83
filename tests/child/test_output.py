"""OUT-1, OUT-2, OUT-6..8: the rule on the reference case table, and fold == whole-suffix."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from actors.child.output import (
    OutputFold,
    acp_stop_reason,
    bound_diagnostic,
    epoch_stop_reason,
    final_output,
    headline,
    in_process_stop_reason,
    join_stream_text,
    sdk_child_outcome,
    sdk_v1_stop_reason,
    tool_result,
)


def txt(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def reasoning(text: str) -> dict[str, Any]:
    return {"type": "reasoning", "text": text}


def call(call_id: str) -> dict[str, Any]:
    return {"type": "tool-call", "id": call_id, "name": "todo_write", "arguments": "{}"}


def text_chunks(*texts: str) -> dict[str, Any]:
    return {
        "type": "text-chunks",
        "time0": 0,
        "index": 0,
        "dt": [0] * (len(texts) - 1),
        "texts": list(texts),
    }


def raw(chunk: dict[str, Any]) -> dict[str, Any]:
    return {"type": "chunk", "time": 0, "chunk": chunk}


def M(*content: dict[str, Any], stream: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "turn": 1,
        "step": 1,
        "message": {"role": "assistant", "content": list(content)},
    }
    data["stream"] = stream if stream is not None else []
    return {"type": "assistant/message", "data": data}


def A(*texts: str) -> dict[str, Any]:
    """An attempt whose stream holds these text deltas."""
    return {
        "type": "assistant/attempt",
        "data": {"turn": 1, "step": 1, "stream": [text_chunks(*texts)]},
    }


def R(text: str) -> dict[str, Any]:
    rec = {"type": "reasoning-chunks", "time0": 0, "index": 0, "dt": [], "texts": [text]}
    return {"type": "assistant/attempt", "data": {"turn": 1, "step": 1, "stream": [rec]}}


def T(text: str) -> dict[str, Any]:
    block = {"type": "tool-result", "toolCallId": "t1", "content": [txt(text)]}
    return {"type": "tool/result", "data": {"message": {"content": [block]}}}


def V1(text: str) -> dict[str, Any]:
    chunk = {"type": "text-delta", "index": 0, "text": text}
    return {"type": "assistant/chunk", "data": {"turn": 1, "step": 1, "chunk": chunk}}


CASES: list[tuple[str, list[dict[str, Any]], list[dict[str, Any]] | None]] = [
    ("1-nothing", [], None),
    ("2-basic", [M(txt("a"))], [txt("a")]),
    (
        "3-empty-usage-only-message-skipped",
        [M(txt("step one")), M(txt("step two")), M()],
        [txt("step two")],
    ),
    (
        "4-message-beats-text-before-and-after",
        [A("earlier partial"), M(txt("complete answer")), A("later partial"), M()],
        [txt("complete answer")],
    ),
    (
        "5-textless-message-still-wins",
        [A("streamed text"), M(reasoning("complete reasoning")), A("later partial")],
        [reasoning("complete reasoning")],
    ),
    (
        "6-fallback-excludes-reasoning-and-tool-results",
        [R("thinking"), A("partial "), T("tool output"), A("answer"), M()],
        [txt("partial answer")],
    ),
    ("7-reasoning-then-empty", [R("thinking"), M()], None),
    (
        "10-max-tokens-tool-only-step",
        [M(txt("partial one"), call("t1")), T("Updated"), M()],
        [txt("partial one"), call("t1")],
    ),
    ("16-interrupted-partial", [M(txt("partial"))], [txt("partial")]),
    (
        "24-fork-child-owned-suffix",
        [M(txt("child answer"))],
        [txt("child answer")],
    ),
    (
        "29-sdk-fake-empty-message-v2",
        [
            A("hello from fake runtime"),
            M(
                stream=[
                    raw({"type": "usage", "usage": {}}),
                    raw({"type": "finish", "reason": {"kind": "max-tokens"}}),
                ]
            ),
        ],
        [txt("hello from fake runtime")],
    ),
    (
        "29-sdk-fake-empty-message-v1",
        [V1("hello from fake runtime"), M()],
        [txt("hello from fake runtime")],
    ),
    ("empty-text-block-is-non-empty", [A("streamed"), M(txt(""))], [txt("")]),
    ("whitespace-fallback-not-trimmed", [A("  ", "\n")], [txt("  \n")]),
    (
        "block-end-text-does-not-feed-fallback",
        [M(stream=[raw({"type": "block-end", "index": 0, "block": txt("only a block")})])],
        None,
    ),
    (
        "message-stream-text-feeds-fallback",
        [M(stream=[text_chunks("a", "b"), raw({"type": "text-delta", "index": 0, "text": "c"})])],
        [txt("abc")],
    ),
    ("later-non-empty-wins", [M(txt("x")), M(call("c"))], [call("c")]),
]


@pytest.mark.parametrize(
    ("events", "expected"), [(e, x) for _, e, x in CASES], ids=[n for n, _, _ in CASES]
)
def test_case_table(events: list[dict[str, Any]], expected: list[dict[str, Any]] | None) -> None:
    assert final_output(events) == expected
    fold = OutputFold()
    for event in events:
        fold.push(event)
    assert fold.collect() == expected


def test_raw_text_pieces_fold_for_acp() -> None:  # case 8
    fold = OutputFold()
    fold.push_text("partial ")
    fold.push_text("")
    fold.push_text("answer")
    assert fold.collect() == [txt("partial answer")]


def test_fresh_fold_collects_nothing() -> None:  # case 9
    assert OutputFold().collect() is None


def test_collect_returns_the_whole_content_list_unchanged() -> None:
    content = [reasoning("r"), txt(""), call("c"), {"type": "image", "attachment": {"id": "i"}}]
    assert final_output([M(*content)]) == content


def test_join_stream_text_skips_reasoning_tool_args_and_block_ends() -> None:
    stream = [
        {"type": "reasoning-chunks", "time0": 0, "index": 0, "dt": [], "texts": ["think"]},
        text_chunks("a", "", "b"),
        {"type": "tool-call-chunks", "time0": 0, "index": 1, "dt": [], "id": "c", "args": ["{}"]},
        raw({"type": "block-end", "index": 0, "block": txt("ab")}),
        raw({"type": "text-delta", "index": 2, "text": "c"}),
    ]
    assert join_stream_text(stream) == "abc"


# ------------------------------------------------------------------------------------------------
# OUT-2: fold and whole-suffix agree on arbitrary event sequences of the real shapes.

texts = st.text(alphabet=st.sampled_from(["a", "b", " ", "\n", "é"]), max_size=4)
blocks = st.one_of(
    texts.map(txt),
    texts.map(reasoning),
    st.sampled_from(["c1", "c2"]).map(call),
)
records = st.one_of(
    st.lists(texts, min_size=1, max_size=3).map(lambda ts: text_chunks(*ts)),
    texts.map(
        lambda t: {"type": "reasoning-chunks", "time0": 0, "index": 0, "dt": [], "texts": [t]}
    ),
    texts.map(lambda t: raw({"type": "text-delta", "index": 0, "text": t})),
    texts.map(lambda t: raw({"type": "block-end", "index": 0, "block": txt(t)})),
    st.just(raw({"type": "finish", "reason": {"kind": "max-tokens"}})),
)
events = st.one_of(
    st.builds(
        lambda c, s: M(*c, stream=s), st.lists(blocks, max_size=3), st.lists(records, max_size=3)
    ),
    st.builds(
        lambda s: {"type": "assistant/attempt", "data": {"turn": 1, "step": 1, "stream": s}},
        st.lists(records, max_size=3),
    ),
    texts.map(V1),
    texts.map(T),
    texts.map(R),
    st.just({"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "max-tokens"}}}),
    st.just({"type": "step/start", "data": {"turn": 1, "step": 2}}),
)


def reference_rule(sequence: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The rule restated as a backward scan (the upstream TODO's optimisation), independently."""
    for event in reversed(sequence):
        if event["type"] == "assistant/message" and event["data"]["message"]["content"]:
            return list(event["data"]["message"]["content"])
    pieces: list[str] = []
    for event in sequence:
        if event["type"] in ("assistant/message", "assistant/attempt"):
            for record in event["data"]["stream"]:
                if record["type"] == "text-chunks":
                    pieces.extend(record["texts"])
                elif record["type"] == "chunk" and record["chunk"]["type"] == "text-delta":
                    pieces.append(record["chunk"]["text"])
        elif event["type"] == "assistant/chunk" and event["data"]["chunk"]["type"] == "text-delta":
            pieces.append(event["data"]["chunk"]["text"])
    joined = "".join(pieces)
    return [txt(joined)] if joined else None


@given(st.lists(events, max_size=8))
def test_fold_and_whole_suffix_agree(sequence: list[dict[str, Any]]) -> None:
    fold = OutputFold()
    for event in sequence:
        fold.push(event)
    whole = final_output(sequence)
    assert fold.collect() == whole
    assert whole == reference_rule(sequence)
    # The shapes round-trip through JSON unchanged, as a log line would carry them.
    assert final_output(json.loads(json.dumps(sequence))) == whole


@given(st.lists(events, max_size=6), st.lists(events, max_size=6))
def test_fold_is_incremental(prefix: list[dict[str, Any]], suffix: list[dict[str, Any]]) -> None:
    """Collecting mid-way does not disturb the fold: the later answer is the whole answer."""
    fold = OutputFold()
    for event in prefix:
        fold.push(event)
    assert fold.collect() == final_output(prefix)
    for event in suffix:
        fold.push(event)
    assert fold.collect() == final_output(prefix + suffix)


# ------------------------------------------------------------------------------------------------
# OUT-6: stop reasons per consumer (reference §1.6).

REASONS = {
    "completed": {"kind": "completed"},
    "max-tokens": {"kind": "max-tokens"},
    "aborted": {"kind": "aborted", "reason": {"kind": "parent"}},
    "blocked": {"kind": "blocked"},
    "error": {"kind": "error", "error": {"message": "boom", "code": "UNKNOWN"}},
    "interrupted": {"kind": "interrupted"},
    "unknown": {"kind": "compacted-away"},
}

TABLE = [
    # kind, in-process, epoch, sdk v2, sdk v1
    ("completed", "completed", "completed", "completed", "completed"),
    ("max-tokens", "max-tokens", "max-tokens", "max-tokens", "max-tokens"),
    ("aborted", "aborted", "aborted", "aborted", "aborted"),
    ("blocked", "refusal", "refusal", "refusal", "error"),
    ("error", "error", "error", "error", "error"),
    ("interrupted", "error", "aborted", "error", "error"),
    ("unknown", "error", "error", "error", "error"),
]


@pytest.mark.parametrize(("kind", "in_process", "epoch", "sdk2", "sdk1"), TABLE)
def test_stop_reason_mapping(kind: str, in_process: str, epoch: str, sdk2: str, sdk1: str) -> None:
    reason = REASONS[kind]
    assert in_process_stop_reason(reason) == in_process
    assert epoch_stop_reason(reason) == epoch
    assert sdk_child_outcome(reason).stop_reason == sdk2
    assert sdk_v1_stop_reason(reason) == sdk1


def test_no_turn_mapping() -> None:
    assert in_process_stop_reason(None) == "error"
    assert epoch_stop_reason(None) == "completed"
    assert epoch_stop_reason(None, dropped_unrun=True) == "aborted"
    assert epoch_stop_reason(REASONS["completed"], dropped_unrun=True) == "aborted"
    outcome = sdk_child_outcome(None)
    assert outcome.stop_reason == "error"
    assert outcome.diagnostic == (
        "Subagent failure (provider: DSH SDK; stage: session-run; category: missing-terminal)"
    )
    assert sdk_v1_stop_reason(None) == "error"


def test_sdk_diagnostics() -> None:
    disposed = sdk_child_outcome({"kind": "aborted", "reason": {"kind": "disposed"}})
    assert disposed.diagnostic is not None and "category: child-disposed" in disposed.diagnostic
    assert sdk_child_outcome(REASONS["aborted"]).diagnostic is None
    assert sdk_child_outcome(REASONS["error"]).diagnostic == (
        "Subagent failure (provider: DSH SDK; stage: session-run; category: child-error)"
    )
    assert "category: child-unknown" in (sdk_child_outcome(REASONS["unknown"]).diagnostic or "")


def test_owner_cancel_forces_aborted_unless_completed() -> None:
    assert in_process_stop_reason(REASONS["max-tokens"], owner_cancelled=True) == "aborted"
    assert in_process_stop_reason(None, owner_cancelled=True) == "aborted"
    assert in_process_stop_reason(REASONS["completed"], owner_cancelled=True) == "completed"


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        ("end_turn", "completed"),
        ("max_tokens", "max-tokens"),
        ("refusal", "refusal"),
        ("cancelled", "aborted"),
        ("max_turn_requests", "error"),
        ("something_new", "error"),
    ],
)
def test_acp_wire_mapping(wire: str, expected: str) -> None:
    assert acp_stop_reason(wire) == expected


# ------------------------------------------------------------------------------------------------
# OUT-7: the foreground tool result.


def test_headlines_exact() -> None:
    assert headline("aborted") == "subagent run was cancelled"
    assert headline("error") == "subagent run failed"
    assert headline("max-tokens") == "subagent run hit its token limit before finishing"
    assert headline("refusal") == "subagent declined the task"
    assert headline("timeout") == "subagent run ended abnormally (timeout)"


def test_snapshot_max_tokens_text() -> None:
    result = tool_result([txt("partial one"), call("t1")], "max-tokens")
    assert result.is_error
    assert result.text == (
        "Error: subagent run hit its token limit before finishing\n"
        "Partial output before the run ended:\npartial one"
    )


def test_diagnostic_comes_before_partial_text() -> None:
    result = tool_result(
        [txt("partial assistant text")], "error", "Claude Code denied a tool request"
    )
    assert result.text == (
        "Error: subagent run failed\nDiagnostic: Claude Code denied a tool request\n"
        "Partial output before the run ended:\npartial assistant text"
    )


def test_no_partial_section_without_text() -> None:
    assert (
        tool_result([reasoning("r"), call("c")], "aborted").text
        == "Error: subagent run was cancelled"
    )
    assert tool_result(None, "refusal").text == "Error: subagent declined the task"
    assert tool_result([txt("")], "weird").text == "Error: subagent run ended abnormally (weird)"


def test_completed_shows_only_text_blocks() -> None:
    completed = tool_result([reasoning("r"), txt("a"), call("c"), txt("b")], "completed")
    assert (completed.is_error, completed.text) == (False, "ab")
    assert tool_result([reasoning("only")], "completed").text == ""


def test_tool_results_never_enter_the_output() -> None:  # OUT-8
    output = final_output([T("tool output"), A("answer")])
    assert output == [txt("answer")]
    assert "tool output" not in tool_result(output, "error").text


def test_diagnostic_bound_cuts_on_a_character_boundary() -> None:
    assert bound_diagnostic("short") == "short"
    long = "é" * 3000  # 6000 bytes
    bounded = bound_diagnostic(long)
    assert bounded.endswith("\n[diagnostic truncated]")
    head = bounded.removesuffix("\n[diagnostic truncated]")
    assert head == "é" * 2048 and len(head.encode("utf-8")) == 4096
