"""OUT-4..6: the four consumers agree on one run, each through its own transport."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from actors.child.agent_loop import AgentLoop, Encoding
from actors.child.consumers import (
    ActivationCapture,
    LastEpochCapture,
    SdkObserver,
    acp_messages,
    capture_activation,
    consumer_views,
    observe_acp,
    observe_sdk,
    read_result,
    sdk_notifications,
)
from actors.child.logs import child_owned, read_log
from actors.child.output import OutputFold, final_output
from tests.conftest import SNAPSHOTS, needs_snapshots

TXT = {"type": "text", "text": "partial one"}


def delta(text: str) -> dict[str, Any]:
    return {"type": "text-delta", "index": 0, "text": text}


def run(
    encoding: Encoding, steps: list[list[dict[str, Any]]], cancel_after: int | None = None
) -> list[dict[str, Any]]:
    """One turn of a child, step by step; optionally cancelled part-way through the last step."""
    loop = AgentLoop(encoding=encoding)
    log = loop.begin_turn()
    for number, chunks in enumerate(steps, start=1):
        log += loop.begin_step()
        last = number == len(steps)
        for position, chunk in enumerate(chunks):
            if last and cancel_after is not None and position == cancel_after:
                return log + loop.cancel("parent")
            log += loop.chunk(chunk)
        settled, _ = loop.end_stream()
        log += settled + loop.end_step()
    return log + loop.end_turn()


MAX_TOKENS_PARTIAL = [
    [
        {"type": "block-start", "index": 0, "blockType": "text"},
        {"type": "block-end", "index": 0, "block": TXT},
        {
            "type": "tool-call-delta",
            "index": 1,
            "id": "c1",
            "name": "todo_write",
            "argumentsDelta": "{}",
        },
        {"type": "finish", "reason": {"kind": "tool-calls"}},
    ],
    [
        {
            "type": "tool-call-delta",
            "index": 0,
            "id": "c2",
            "name": "todo_write",
            "argumentsDelta": "{",
        },
        {"type": "usage", "usage": {"inputTokens": 1, "outputTokens": 1}},
        {"type": "finish", "reason": {"kind": "max-tokens"}},
    ],
]


@needs_snapshots
@pytest.mark.parametrize("encoding", [Encoding.V1, Encoding.V2])
def test_four_consumers_agree_on_the_max_tokens_child(encoding: Encoding) -> None:
    views = consumer_views("child", run(encoding, MAX_TOKENS_PARTIAL))
    expected_output = [
        TXT,
        {"type": "tool-call", "id": "c1", "name": "todo_write", "arguments": "{}"},
    ]
    assert views.in_process.output == views.sdk.output == expected_output
    assert views.activation == {"stopReason": "max-tokens", "lastAssistantMessage": expected_output}
    assert (
        views.in_process.stop_reason
        == views.sdk.stop_reason
        == views.acp.stop_reason
        == "max-tokens"
    )
    # ACP never sees whole messages: it gets the text chunk only, and the rule over that text.
    assert views.acp.output == [TXT]
    texts = {v.tool_result().text for v in (views.in_process, views.sdk, views.acp)}
    assert texts == {
        "Error: subagent run hit its token limit before finishing\n"
        "Partial output before the run ended:\npartial one"
    }


@pytest.mark.parametrize("encoding", [Encoding.V1, Encoding.V2])
def test_no_output_means_empty_list_and_absent_field(encoding: Encoding) -> None:  # OUT-5
    events = run(
        encoding,
        [
            [
                {"type": "tool-call-delta", "index": 0, "id": "c", "argumentsDelta": "{"},
                {"type": "finish", "reason": {"kind": "max-tokens"}},
            ]
        ],
    )
    views = consumer_views("child", events)
    assert views.in_process.output == views.sdk.output == views.acp.output == []
    assert "lastAssistantMessage" not in views.activation
    assert views.activation == {"stopReason": "max-tokens"}
    assert "lastAssistantMessage" not in views.in_process.end_data()
    assert capture_activation([]) == {"stopReason": "completed"}


def test_cancelled_child_keeps_streamed_text_in_every_view() -> None:  # case 16
    events = run(Encoding.V2, [[delta("partial"), delta(" more")]], cancel_after=1)
    views = consumer_views("child", events)
    assert (
        views.in_process.output
        == views.sdk.output
        == views.acp.output
        == [{"type": "text", "text": "partial"}]
    )
    assert (
        views.in_process.stop_reason == views.sdk.stop_reason == views.acp.stop_reason == "aborted"
    )
    assert views.activation["stopReason"] == "aborted"


def test_interrupted_turn_end_maps_differently_per_consumer() -> None:
    events = [
        {"type": "turn/start", "data": {"turn": 1}},
        {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "interrupted"}}},
    ]
    views = consumer_views("child", events)
    assert views.in_process.stop_reason == "error"
    assert views.activation == {"stopReason": "aborted"}
    assert views.sdk.stop_reason == "error"
    assert views.acp.stop_reason == "error"  # ACP has no stop reason for it: an error response


def test_sdk_observer_folds_only_its_childs_session() -> None:
    child = run(Encoding.V2, [[delta("mine"), {"type": "finish", "reason": {"kind": "stop"}}]])
    other = run(Encoding.V2, [[delta("theirs"), {"type": "finish", "reason": {"kind": "stop"}}]])
    wire = [
        *sdk_notifications("other", other),
        *sdk_notifications("child", child),
        {"method": "session.status", "params": {"sessionId": "child"}},
    ]
    result = observe_sdk("child", wire)
    assert result.output == [{"type": "text", "text": "mine"}]
    assert observe_sdk("nobody", wire).output == []
    assert (
        observe_sdk("nobody", wire).diagnostic
        == "Subagent failure (provider: DSH SDK; stage: session-run; category: missing-terminal)"
    )
    observer = SdkObserver("child")
    for notification in sdk_notifications("child", child[:3]):
        observer.push(notification)
    assert observer.result(cancelled=True).stop_reason == "aborted"


def test_acp_observer_reads_only_agent_message_chunks() -> None:
    messages = [
        {
            "method": "session/update",
            "params": {
                "update": {
                    "sessionUpdate": "agent_thought_chunk",
                    "content": {"type": "text", "text": "think"},
                }
            },
        },
        {
            "method": "session/update",
            "params": {
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "partial "},
                }
            },
        },
        {
            "method": "session/update",
            "params": {
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "image", "data": "x"},
                }
            },
        },
        {
            "method": "session/update",
            "params": {"update": {"sessionUpdate": "tool_call", "toolCallId": "t"}},
        },
        {
            "method": "session/update",
            "params": {
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "answer"},
                }
            },
        },
        {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "refusal"}},
    ]
    result = observe_acp(messages)
    assert (result.output, result.stop_reason) == (
        [{"type": "text", "text": "partial answer"}],
        "refusal",
    )
    assert observe_acp(messages[:-1]).stop_reason == "error"  # never answered


def test_acp_wire_streams_deltas_and_whole_blocks_without_deltas() -> None:
    events = run(
        Encoding.V2,
        [
            [
                delta("a"),
                delta("b"),
                {"type": "block-end", "index": 0, "block": {"type": "text", "text": "ab"}},
                {"type": "block-start", "index": 1, "blockType": "text"},
                {"type": "block-end", "index": 1, "block": {"type": "text", "text": "whole"}},
                {"type": "finish", "reason": {"kind": "stop"}},
            ]
        ],
    )
    chunks = [
        m["params"]["update"]["content"]["text"] for m in acp_messages("s", events) if "method" in m
    ]
    assert chunks == ["a", "b", "whole"]


def test_activation_epoch_reports_only_its_own_output() -> None:  # case 25
    loop = AgentLoop()

    def turn(answer: str | None) -> list[dict[str, Any]]:
        out = loop.begin_turn()
        if answer is None:
            return out + loop.end_turn()
        out += loop.begin_step() + loop.chunk(delta(answer))
        settled, _ = loop.end_stream()
        return out + settled + loop.end_step() + loop.end_turn()

    inbox = {"type": "agent/inbox/spliced", "data": {"inserted": [{"content": []}]}}
    epoch1 = [inbox, *turn("first answer")]
    epoch2 = [inbox, *turn("second answer")]
    epoch3 = [{"type": "session/end-seed", "data": {}}, inbox, *turn(None)]
    capture = LastEpochCapture()
    for event in epoch1 + epoch2:
        capture.push(event)
    assert capture.capture.end()["lastAssistantMessage"] == [
        {"type": "text", "text": "second answer"}
    ]
    for event in epoch3:
        capture.push(event)
    # A resumed epoch with no answer does not report the previous one.
    assert capture.capture.end() == {"stopReason": "completed"}
    assert capture_activation(epoch1, teardown_failed=True) == {"stopReason": "error"}


@needs_snapshots
def test_snapshot_child_through_every_consumer() -> None:
    header, events = read_log(
        SNAPSHOTS / "acp-agent__subagent-max-tokens-partial" / "session.1.jsonl"
    )
    own = list(child_owned(events, header))
    assert header.id is not None
    views = consumer_views(header.id, own)
    assert views.in_process.output == views.sdk.output == views.activation["lastAssistantMessage"]
    assert views.in_process.tool_result() == views.sdk.tool_result() == views.acp.tool_result()


# The three full-view consumers agree exactly on arbitrary runs; ACP agrees with the rule over
# the text it was sent.
steps = st.lists(
    st.lists(
        st.one_of(
            st.sampled_from(["x", " ", ""]).map(delta),
            st.just({"type": "reasoning-delta", "index": 1, "text": "r"}),
            st.just(
                {
                    "type": "tool-call-delta",
                    "index": 2,
                    "id": "c",
                    "name": "n",
                    "argumentsDelta": "{}",
                }
            ),
        ),
        max_size=4,
    ).map(lambda cs: [*cs, {"type": "finish", "reason": {"kind": "tool-calls"}}]),
    min_size=1,
    max_size=3,
)


@given(
    steps,
    st.sampled_from([Encoding.V1, Encoding.V2]),
    st.none() | st.integers(0, 4),
    st.sampled_from(["stop", "max-tokens"]),
)
def test_consumers_agree(
    plan: list[list[dict[str, Any]]], encoding: Encoding, cancel_after: int | None, last: str
) -> None:
    plan[-1][-1] = {"type": "finish", "reason": {"kind": last}}
    events = run(encoding, plan, cancel_after)
    views = consumer_views("child", events)
    assert views.in_process.output == views.sdk.output
    assert views.in_process.output == (final_output(events) or [])
    assert views.activation.get("lastAssistantMessage", []) == views.in_process.output
    assert views.in_process.stop_reason == views.sdk.stop_reason == views.acp.stop_reason
    fold = OutputFold()
    for message in acp_messages("child", events):
        if (
            message.get("params", {}).get("update", {}).get("sessionUpdate")
            == "agent_message_chunk"
        ):
            fold.push_text(message["params"]["update"]["content"]["text"])
    assert views.acp.output == (fold.collect() or [])
    capture = ActivationCapture()
    for event in events:
        capture.push(event)
    assert capture.output() == final_output(events)
    assert read_result(events).end_data() == {k: v for k, v in views.activation.items()}
