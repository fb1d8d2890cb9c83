"""Any Unicode a JSON log can carry, lone surrogates included, is data: history, announce, logs
and the CLI readers and printers never raise on it (issue 13 item 3)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from actors.announce import (
    ChildResult,
    RequesterKind,
    format_announce,
    format_results,
    parse_payload,
)
from actors.child.agent_loop import AgentLoop, Encoding
from actors.history import ArchiveRecord, ArchiveStore, Reader, read_run_history, sessions_history
from sim.cli.announce import announce_command
from sim.cli.output import output_command
from sim.textout import printable
from sim.trace import Trace

LONE = "bad \ud800 half \udfff end"
ROOT = Path(__file__).resolve().parents[1]
any_unicode = st.text(alphabet=st.characters(exclude_categories=()), max_size=300)


def units(text: str) -> bytes:
    """UTF-16 code units: JSON cannot tell a high and a low surrogate written apart from the
    astral character they make, so round trips are compared in units."""
    return text.encode("utf-16-le", "surrogatepass")


def _log(path: Path, text: str) -> Path:
    loop = AgentLoop(encoding=Encoding.V2)
    rows = [{"type": "session", "id": "c", "version": 2}, *loop.begin_turn(), *loop.begin_step()]
    rows += loop.chunk({"type": "text-delta", "index": 0, "text": text})
    rows += loop.chunk({"type": "block-end", "index": 0, "block": {"type": "text", "text": text}})
    rows += loop.chunk({"type": "finish", "reason": {"kind": "stop"}})
    settled, _ = loop.end_stream()
    rows += settled + loop.end_step() + loop.end_turn()
    # json.dumps escapes the surrogate as \ud800, exactly as a JavaScript writer would.
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _results(path: Path) -> Path:
    child = {"session_key": "agent:main:subagent:a", "status": "error", "created_at": 1,
             "error": "e\udfff", "text": LONE, "task": "t\ud800"}
    path.write_text(json.dumps({"results": [child]}), encoding="utf-8")
    return path


def test_output_cli_reads_and_prints_lone_surrogates(tmp_path: Path) -> None:
    log = _log(tmp_path / "child.jsonl", LONE)
    for consumer in ("in-process", "activation", "sdk", "acp"):
        result = CliRunner().invoke(output_command, [str(log), "--json", "--consumer", consumer])
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["output"] == [{"type": "text", "text": LONE}]
    readable = CliRunner().invoke(output_command, [str(log)])
    assert readable.exit_code == 0
    assert "bad \\ud800 half \\udfff end" in readable.output


def test_announce_cli_reads_and_prints_lone_surrogates(tmp_path: Path) -> None:
    path = _results(tmp_path / "results.json")
    result = CliRunner().invoke(announce_command, [str(path), "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)["payload"]
    assert parse_payload(payload).children[0].text == LONE
    plain = CliRunner().invoke(announce_command, [str(path)])
    assert plain.exit_code == 0 and "status: error: e\\udfff" in plain.output


def test_real_process_stdout_never_raises(tmp_path: Path) -> None:
    """Through a real pipe (CliRunner's stream is not the process's stdout encoder)."""
    log = _log(tmp_path / "child.jsonl", LONE)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"}
    for args in (["output", str(log), "--json"],
                 ["announce", str(_results(tmp_path / "r.json"))]):
        done = subprocess.run([sys.executable, "-m", "sim", *args], capture_output=True,
                              env=env, cwd=ROOT, check=False)
        assert done.returncode == 0, done.stderr.decode()
        assert b"\\ud800" in done.stdout and b"Traceback" not in done.stderr


@settings(max_examples=200, deadline=None)
@given(any_unicode, any_unicode, any_unicode)
def test_property_announce_never_raises_and_parses_back(text: str, task: str, error: str) -> None:
    child = ChildResult("agent:main:subagent:a", "sid", task, "error", error, text, 1.0, 2.0,
                        started_at=0.0)
    for payload in (format_announce([child], RequesterKind.NESTED).payload,
                    format_results([child]).payload):
        parsed = parse_payload(payload).children[0]
        assert parsed.no_output or parsed.text == text
        printable(payload).encode("utf-8")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]),
                                       "content": any_unicode}), max_size=5))
def test_property_history_and_archive_never_raise(messages: list[dict[str, Any]]) -> None:
    result = sessions_history(messages)
    assert [m["content"] for m in result.messages] == [m["content"] for m in messages]
    store = ArchiveStore().with_archive(ArchiveRecord.encode("k", 1, "run-1", messages))
    read = read_run_history(store, "k", "run-1", Reader(gateway_admin=True))
    assert read.history is not None
    assert [units(m["content"]) for m in read.history.messages] == [
        units(m["content"]) for m in messages]


@given(any_unicode)
def test_property_trace_lines_always_encode_and_read_back(text: str) -> None:
    trace = Trace()
    record = trace.append(0, "a", "k", {"text": text})
    line = record.jsonl()
    line.encode("utf-8")
    assert units(json.loads(line)["data"]["text"]) == units(text)
    trace.digest()
