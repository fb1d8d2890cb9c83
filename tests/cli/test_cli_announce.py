"""``handoff announce`` on good and bad input (SPEC §4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from actors.announce import parse_payload
from sim.cli.announce import announce_command


def result(key: str, **overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "session_key": key,
        "session_id": f"sid-{key}",
        "task": f"task {key}",
        "status": "ok",
        "error": None,
        "text": f"answer from {key}",
        "created_at": 1,
    }
    base.update(overrides)
    base.setdefault("ended_at", base["created_at"] + 1)
    return base


def run(tmp_path: Path, content: str, *args: str) -> Any:
    path = tmp_path / "results.json"
    path.write_text(content, encoding="utf-8")
    return CliRunner().invoke(announce_command, [str(path), *args])


def test_prints_payload(tmp_path: Path) -> None:
    doc = {"results": [result("b", created_at=2), result("a", text=None)]}
    out = run(tmp_path, json.dumps(doc))
    assert out.exit_code == 0, out.output
    payload = out.stdout[:-1]  # click.echo adds one newline
    parsed = parse_payload(payload)
    assert [c.session_key for c in parsed.children] == ["a", "b"]
    assert parsed.children[0].no_output
    assert parsed.children[1].text == "answer from b"


def test_json_output(tmp_path: Path) -> None:
    doc = {
        "results": [result(f"k{i}", text="x" * 10_000, created_at=i) for i in range(12)],
        "cap": 20_000,
    }
    out = run(tmp_path, json.dumps(doc), "--json")
    assert out.exit_code == 0, out.output
    document = json.loads(out.stdout)
    assert set(document) == {"payload", "length", "shown", "summarized"}
    assert document["length"] == len(document["payload"]) <= 20_000
    shown = document["shown"]
    assert [s["session_key"] for s in shown] + document["summarized"] == [
        f"k{i}" for i in range(12)
    ]
    assert all(set(s) == {"session_key", "truncated", "omitted_chars"} for s in shown)
    assert all(s["truncated"] and s["omitted_chars"] > 0 for s in shown)
    assert document["summarized"]


def test_default_cap_and_summary(tmp_path: Path) -> None:
    doc = {"results": [result(f"k{i:03d}", text="y" * 3_000, created_at=i) for i in range(80)]}
    document = json.loads(run(tmp_path, json.dumps(doc), "--json").stdout)
    assert document["length"] <= 160_000
    assert len(document["shown"]) + len(document["summarized"]) == 80


BAD_CASES = [
    ("{not json", ":1: invalid JSON"),
    ("[1, 2]", ":1: must be an object, not an array"),
    ('{"cap": 5000}', ":1: results: is missing"),
    ('{\n  "results": {}\n}', ":2: results: must be an array of objects, not an object"),
    (
        '{"results": [\n  {"session_key": "a", "status": "ok", "created_at": 1},\n'
        '  {"session_key": "b",\n   "status": "done", "created_at": 2}\n]}',
        ":4: results[1].status: 'done' is not one of: ok, error, timeout, unknown",
    ),
    (
        '{"results": [\n  {"session_key": "a",\n   "created_at": 1}\n]}',
        ":2: results[0].status: is missing",
    ),
    (
        '{"results": [\n  {"session_key": "a", "status": "ok",\n   "created_at": "yesterday"}\n]}',
        ":3: results[0].created_at: must be a number, not a string",
    ),
    (
        '{"results": [\n  {"session_key": "a", "status": "ok", "created_at": 1,\n'
        '   "text": 42}\n]}',
        ":3: results[0].text: must be a string, not an integer",
    ),
    (
        '{"results": [{"session_key": "a", "status": "ok", "created_at": 1, "txt": "x"}]}',
        ":1: results[0].txt: unknown field (expected one of: ",
    ),
    ('{"results": [], \n"cap": 10}', ":2: cap: must be at least 2048"),
    ('{"results": [7]}', ":1: results[0]: must be an object, not an integer"),
    ('{"results": [],\n "kap": 5000}', ':2: kap: unknown field (expected one of: results, cap)'),
    ('{"results": [{"session_key": "a", "status": "ok", "created_at": 1e300}]}',
     ":1: results[0].created_at: must be at most 1e+13 (the limit)"),
]


@pytest.mark.parametrize(("content", "expected"), BAD_CASES)
def test_bad_input_exits_2_with_one_line(tmp_path: Path, content: str, expected: str) -> None:
    out = run(tmp_path, content)
    assert out.exit_code == 2
    assert out.stdout == ""
    message = out.stderr
    assert message.count("\n") == 1, message
    assert message.startswith("handoff: " + str(tmp_path / "results.json") + expected), message
    assert "Traceback" not in message


def test_missing_file(tmp_path: Path) -> None:
    out = CliRunner().invoke(announce_command, [str(tmp_path / "nope.json")])
    assert out.exit_code == 2
    assert "cannot read" in out.stderr


def test_a_result_that_ends_before_it_was_created_is_refused(tmp_path: Path) -> None:
    doc = {"results": [result("a"), result("b", created_at=5000, ended_at=4000)]}
    out = run(tmp_path, json.dumps(doc))
    assert out.exit_code == 2
    assert out.stderr.endswith("results[1].ended_at: 4000 is before created_at (5000): a child "
                               "cannot end before it was created\n"), out.stderr
