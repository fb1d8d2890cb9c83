"""SPEC §4 ``handoff output``: the selected output, per consumer, and exit status 2 on bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from actors.child.agent_loop import AgentLoop, Encoding
from sim.cli.output import output_command
from tests.conftest import SNAPSHOTS, needs_snapshots

MAX_TOKENS = SNAPSHOTS / "acp-agent__subagent-max-tokens-partial"


def invoke(*args: str) -> Any:
    return CliRunner().invoke(output_command, list(args))


def recorded_tool_result(parent: Path, call_id: str) -> tuple[bool, str]:
    for line in parent.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event["type"] == "tool/result":
            block = event["data"]["message"]["content"][0]
            if block["toolCallId"] == call_id:
                return block["isError"], block["content"][0]["text"]
    raise AssertionError(f"no tool result for {call_id}")


@needs_snapshots
def test_done_criterion_max_tokens_partial() -> None:
    result = invoke(str(MAX_TOKENS / "session.1.jsonl"), "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["stopReason"] == "max-tokens"
    is_error, text = recorded_tool_result(MAX_TOKENS / "session.jsonl", "call_parent_1")
    assert document["toolResult"] == {"isError": is_error, "text": text}
    assert document["output"][0] == {"type": "text", "text": "partial one"}
    assert document["lastAssistantMessage"] == document["output"]
    assert list(document) == ["output", "stopReason", "lastAssistantMessage", "toolResult"]


@needs_snapshots
@pytest.mark.parametrize("consumer", ["in-process", "activation", "sdk", "acp"])
def test_every_consumer_reproduces_the_parents_text(consumer: str) -> None:
    result = invoke(str(MAX_TOKENS / "session.1.jsonl"), "--json", "--consumer", consumer)
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["stopReason"] == "max-tokens"
    assert (
        document["toolResult"]["text"]
        == recorded_tool_result(MAX_TOKENS / "session.jsonl", "call_parent_1")[1]
    )
    # Only ACP never sees the whole message, so only ACP lacks the tool-call block.
    kinds = [block["type"] for block in document["output"]]
    assert kinds == (["text"] if consumer == "acp" else ["text", "tool-call"])


@needs_snapshots
def test_readable_output() -> None:
    result = invoke(str(MAX_TOKENS / "session.1.jsonl"))
    assert result.exit_code == 0
    assert result.output == (
        "stop reason: max-tokens\n"
        "output blocks: text, tool-call\n"
        "text:\n"
        "partial one\n"
        "tool result (error):\n"
        "Error: subagent run hit its token limit before finishing\n"
        "Partial output before the run ended:\n"
        "partial one\n"
    )


@needs_snapshots
def test_fork_reads_only_the_childs_suffix() -> None:
    result = invoke(
        str(SNAPSHOTS / "acp-agent__subagent-fork-in-process" / "session.1.jsonl"), "--json"
    )
    document = json.loads(result.output)
    assert document["toolResult"] == {"isError": False, "text": "MARMALADE"}
    assert document["stopReason"] == "completed"


@needs_snapshots
def test_continuable_epoch_via_activation() -> None:
    path = SNAPSHOTS / "acp-agent__subagent-continuable" / "session.1.jsonl"
    document = json.loads(invoke(str(path), "--json", "--consumer", "activation").output)
    assert document["lastAssistantMessage"] == [{"type": "text", "text": "SECOND_OK"}]
    assert document["stopReason"] == "error"
    assert document["toolResult"] == {
        "isError": True,
        "text": "Error: subagent run failed\nPartial output before the run ended:\nSECOND_OK",
    }


def test_no_output_leaves_the_field_out(tmp_path: Path) -> None:
    loop = AgentLoop(encoding=Encoding.V2)
    rows = [{"type": "session", "id": "c", "version": 2}, *loop.begin_turn(), *loop.begin_step()]
    rows += loop.chunk({"type": "tool-call-delta", "index": 0, "id": "c1", "argumentsDelta": "{"})
    rows += loop.chunk({"type": "finish", "reason": {"kind": "max-tokens"}})
    settled, _ = loop.end_stream()
    rows += settled + loop.end_step() + loop.end_turn()
    path = tmp_path / "child.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    for consumer in ("in-process", "activation", "sdk", "acp"):
        document = json.loads(invoke(str(path), "--json", "--consumer", consumer).output)
        assert document == {
            "output": [],
            "stopReason": "max-tokens",
            "toolResult": {
                "isError": True,
                "text": "Error: subagent run hit its token limit before finishing",
            },
        }
    assert "output: (none)" in invoke(str(path)).output


def test_bad_line_exits_2_with_file_line_message(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"type": "session", "id": "c"}\n{"type": "turn/end", "data": {}}\n', encoding="utf-8"
    )
    result = invoke(str(path), "--json")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == f"handoff: {path}:2: data.reason: is missing\n"
    assert "Traceback" not in result.output


def test_missing_file_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "absent.jsonl"
    result = invoke(str(path))
    assert result.exit_code == 2
    assert result.stderr == f"handoff: {path}: cannot read: No such file or directory\n"


def test_an_empty_file_is_not_a_log(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n", encoding="utf-8")
    result = invoke(str(path))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == f"handoff: {path}: no session events (the file is empty)\n"


@needs_snapshots
def test_unknown_consumer_is_a_usage_error() -> None:
    result = invoke(str(MAX_TOKENS / "session.1.jsonl"), "--consumer", "telepathy")
    assert result.exit_code == 2
    assert result.stderr == ("handoff: --consumer: 'telepathy' is not one of 'in-process', "
                             "'activation', 'sdk', 'acp'.\n")


def test_the_two_example_logs_select_the_same_output() -> None:
    from tests.conftest import EXAMPLES

    v2 = invoke(str(EXAMPLES / "child-v2.jsonl"), "--json")
    v1 = invoke(str(EXAMPLES / "child-v1.jsonl"), "--json")
    assert v2.exit_code == v1.exit_code == 0
    assert v1.stdout == v2.stdout
    assert json.loads(v2.stdout)["stopReason"] == "max-tokens"
