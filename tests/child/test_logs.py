"""OUT-10, OUT-3: reading V1 and V2 logs, the child-owned suffix, and file:line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from actors.child.agent_loop import AgentLoop, Encoding
from actors.child.logs import (
    NO_HEADER,
    EpochTracker,
    LogEvent,
    SessionHeader,
    child_owned,
    iter_log,
    parse_line,
    read_log,
)
from actors.child.output import final_output
from actors.errors import InputError
from tests.conftest import SNAPSHOTS, needs_snapshots


def write_log(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


HEADER = {"type": "session", "version": 0, "id": "child-1", "createdAt": 0, "parentSession": "p"}


@needs_snapshots
def test_header_is_parsed() -> None:
    header, events = read_log(SNAPSHOTS / "acp-agent__subagent-fork-in-process" / "session.1.jsonl")
    assert header == SessionHeader(
        id="ada8966c-9fa3-441b-8721-37ff1e795e6a",
        version=0,
        parent_session="96cf59c9-b347-48b9-b234-a5200913ad05",
        seed_length=42,
    )
    assert all(isinstance(e, dict) and "type" in e for e in events)


@needs_snapshots
def test_packed_v1_rows_expand_so_the_seed_cut_lands_on_the_marker() -> None:
    """``seedLength`` counts expanded chunk events; the first own event is the seed marker."""
    header, events = read_log(SNAPSHOTS / "acp-agent__subagent-fork-in-process" / "session.1.jsonl")
    own = list(child_owned(events, header))
    assert own[0]["type"] == "session/end-seed"
    assert len(events) - len(own) == 42
    # The inherited seed's own answer ("OK") is outside; the child's is inside.
    assert final_output(events[:42]) is not None
    output = final_output(own)
    assert output is not None and output[-1] == {"type": "text", "text": "MARMALADE"}


def test_packed_row_expansion() -> None:
    row = {
        "type": "text-chunks",
        "seq0": 4,
        "time0": 10,
        "data": {"turn": 1, "step": 2, "index": 0, "dt": [1, 2], "texts": ["a", "", "c"]},
    }
    events = parse_line(json.dumps(row), path="x", line=3)
    assert not isinstance(events, SessionHeader)
    assert list(events) == [
        {
            "type": "assistant/chunk",
            "seq": 4 + i,
            "time": t,
            "data": {"turn": 1, "step": 2, "chunk": {"type": "text-delta", "index": 0, "text": s}},
        }
        for i, (t, s) in enumerate([(10, "a"), (11, ""), (13, "c")])
    ]
    tool = {
        "type": "tool-call-chunks",
        "data": {"turn": 1, "step": 1, "index": 1, "id": "c", "name": "n", "args": ["{", "}"]},
    }
    chunks = [e["data"]["chunk"] for e in parse_line(json.dumps(tool))]  # type: ignore[index,union-attr]
    assert chunks == [
        {"type": "tool-call-delta", "index": 1, "id": "c", "name": "n", "argumentsDelta": "{"},
        {"type": "tool-call-delta", "index": 1, "id": "c", "name": "n", "argumentsDelta": "}"},
    ]


@pytest.mark.parametrize("encoding", [Encoding.V1, Encoding.V2])
def test_both_encodings_read_back_to_the_same_output(tmp_path: Path, encoding: Encoding) -> None:
    loop = AgentLoop(encoding=encoding)
    rows: list[Any] = [HEADER, *loop.begin_turn(), *loop.begin_step()]
    for i, piece in enumerate(["partial ", "one"]):
        rows += loop.chunk({"type": "text-delta", "index": 0, "text": piece}, time=i)
    rows += loop.chunk(
        {"type": "tool-call-delta", "index": 1, "id": "c1", "name": "t", "argumentsDelta": "{"}
    )
    rows += loop.chunk({"type": "finish", "reason": {"kind": "max-tokens"}})
    events, _ = loop.end_stream()
    rows += events + loop.end_step() + loop.end_turn()
    header, read = read_log(write_log(tmp_path / "log.jsonl", rows))
    assert header.id == "child-1"
    assert read == rows[1:]
    assert final_output(read) == [{"type": "text", "text": "partial one"}]


def test_log_without_header_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text('\n{"type": "turn/start", "data": {"turn": 1}}\n\n', encoding="utf-8")
    items = list(iter_log(path))
    assert items == [NO_HEADER, LogEvent(2, {"type": "turn/start", "data": {"turn": 1}})]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(InputError, match="no session events"):
        list(iter_log(empty))


def test_iter_log_streams_lazily(tmp_path: Path) -> None:
    """A bad line far down is only reached when iteration gets there: the file is not preloaded."""
    path = tmp_path / "log.jsonl"
    good = json.dumps({"type": "turn/start", "data": {"turn": 1}})
    path.write_text(json.dumps(HEADER) + "\n" + good + "\n" + "{broken\n", encoding="utf-8")
    items = iter_log(path)
    assert next(items) == SessionHeader("child-1", 0, "p", None)
    assert next(items) == LogEvent(2, {"type": "turn/start", "data": {"turn": 1}})
    with pytest.raises(InputError):
        next(items)


def _run(texts: list[Any]) -> dict[str, Any]:
    return {"type": "text-chunks", "time0": 0, "index": 0, "dt": [], "texts": texts}


def message_with_run(texts: list[Any]) -> str:
    data = {"message": {"content": []}, "stream": [_run(texts)]}
    return json.dumps({"type": "assistant/message", "data": data})


def attempt_with_run(texts: list[Any]) -> str:
    return json.dumps({"type": "assistant/attempt", "data": {"stream": [_run(texts)]}})


BAD_LINES = [
    ("{not json", "", "invalid JSON"),
    ("[1, 2]", "", "must be an object, not an array"),
    ('{"data": {}}', "type", "is missing"),
    ('{"type": 3}', "type", "must be a string"),
    (
        '{"type": "assistant/message", "data": {"message": {}}}',
        "data.message.content",
        "is missing",
    ),
    (
        '{"type": "assistant/message", "data": {"message": {"content": {}}}}',
        "data.message.content",
        "must be an array of objects, not an object",
    ),
    (
        '{"type": "assistant/message", "data": {"message": {"content": [{"type": "text"}]}}}',
        "data.message.content[0].text",
        "is missing",
    ),
    (
        message_with_run([]),
        "data.stream[0].texts",
        "must not be empty",
    ),
    (
        attempt_with_run([1]),
        "data.stream[0].texts[0]",
        "must be a string",
    ),
    (
        attempt_with_run(["a", "b"]),
        "data.stream[0].dt",
        "must hold 1 entries",
    ),
    (
        '{"type": "assistant/attempt", "data": {"stream": [{"type": "mystery"}]}}',
        "data.stream[0].type",
        "unknown stream record type",
    ),
    ('{"type": "assistant/attempt", "data": {}}', "data.stream", "is missing"),
    (
        '{"type": "assistant/chunk", "data": {"chunk": {"type": "text-delta", "index": 0}}}',
        "data.chunk.text",
        "is missing",
    ),
    (
        '{"type": "turn/end", "data": {"reason": {"kind": true}}}',
        "data.reason.kind",
        "must be a string",
    ),
    (
        '{"type": "text-chunks", "data": {"index": true, "texts": ["a"]}}',
        "data.index",
        "must be an integer",
    ),
    ('{"type": "todo/write", "data": 5}', "data", "must be an object, not an integer"),
]


@pytest.mark.parametrize(
    ("line", "field", "problem"), BAD_LINES, ids=[b[1] or b[2] for b in BAD_LINES]
)
def test_bad_lines_give_file_line_field_errors(
    tmp_path: Path, line: str, field: str, problem: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(HEADER) + "\n\n" + line + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_log(path)
    err = caught.value
    assert (err.path, err.line, err.field) == (str(path), 3, field)
    assert problem in err.message
    prefix = f"{path}:3: {field}: " if field else f"{path}:3: "
    assert str(err).startswith(prefix)


def test_bad_headers(tmp_path: Path) -> None:
    cases = [
        ({"type": "session", "id": 7}, "id"),
        ({"type": "session", "id": "a", "seedLength": -1}, "seedLength"),
        ({"type": "session", "id": "a", "seedLength": "3"}, "seedLength"),
        ({"type": "session", "id": "a", "parentSession": 1}, "parentSession"),
    ]
    for row, field in cases:
        with pytest.raises(InputError) as caught:
            read_log(write_log(tmp_path / "h.jsonl", [row]))
        assert (caught.value.line, caught.value.field) == (1, field)
    with pytest.raises(InputError, match="only be the first line"):
        read_log(write_log(tmp_path / "h2.jsonl", [HEADER, HEADER]))


def test_missing_file_and_non_utf8(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read: No such file"):
        read_log(tmp_path / "absent.jsonl")
    path = tmp_path / "latin.jsonl"
    path.write_bytes(json.dumps(HEADER).encode() + b"\n\xff\xfe\n")
    with pytest.raises(InputError) as caught:
        read_log(path)
    assert str(caught.value) == f"{path}:2: not UTF-8 text"


# ------------------------------------------------------------------------------------------------
# Epochs of a continuable child.


def spliced(text: str) -> dict[str, Any]:
    message = {"role": "user", "content": [{"type": "text", "text": text}]}
    return {
        "type": "agent/inbox/spliced",
        "data": {"target": "next-turn", "start": 0, "inserted": [message]},
    }


def starts(events: list[dict[str, Any]]) -> list[int]:
    tracker = EpochTracker()
    return [i for i, e in enumerate(events) if tracker.observe(e)]


def test_epochs_split_at_input_after_idle_not_at_queued_turns() -> None:
    loop = AgentLoop()

    def turn(answer: str) -> list[dict[str, Any]]:
        out = [*loop.begin_turn(), *loop.begin_step()]
        out += loop.chunk({"type": "text-delta", "index": 0, "text": answer})
        events, _ = loop.end_stream()
        return out + events + loop.end_step() + loop.end_turn()

    t1 = turn("a")
    first = [spliced("go"), *t1[:3], spliced("queued while running"), *t1[3:]]
    restore = {"type": "session/end-seed", "data": {}}
    log = [*first, *turn("b"), spliced("later, child was idle"), *turn("c"), restore]
    # Turn b ran the queued input without going idle; the later input and the restore did not.
    assert starts(log) == [len(first) + 5, len(log) - 1]
    assert starts([spliced("first")]) == []  # the first epoch starts where the suffix starts


@needs_snapshots
def test_continuable_snapshot_is_one_epoch() -> None:
    header, events = read_log(SNAPSHOTS / "acp-agent__subagent-continuable" / "session.1.jsonl")
    assert starts(list(child_owned(events, header))) == []
