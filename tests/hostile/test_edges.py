"""The rest of issue 39, each one line and its documented exit status: surrogates in a
schedule's embedded scenario, unwritable or closed standard streams, pipes as inputs, an empty
--scenario, duplicate JSON keys, --moment ranges, the trace format from --trace-out's
extension."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from sim.cli.root import main
from tests.hostile.proc import handoff


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def one_line(result: Result, text: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.output == f"handoff: {text}\n"


@pytest.fixture(scope="module")
def schedule(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    path = tmp_path_factory.mktemp("s") / "s.json"
    assert invoke("replay", "--seed", "7", "--schedule-out", str(path)).exit_code == 0
    doc: dict[str, object] = json.loads(path.read_text())
    return doc


def test_a_lone_surrogate_in_a_schedules_scenario_text_is_refused(
        tmp_path: Path, schedule: dict[str, object]) -> None:
    scenario = dict(schedule["scenario"])  # type: ignore[call-overload]
    scenario["text"] += "# \ud800\n"
    path = tmp_path / "s.json"
    path.write_text(json.dumps({**schedule, "scenario": scenario}))
    one_line(invoke("replay", "--schedule", str(path)),
             f"{path}:1: scenario.text: holds a lone surrogate (a \\udXXX escape that is not "
             "text): not a scenario file's text")


def test_a_key_given_twice_is_refused(tmp_path: Path, schedule: dict[str, object]) -> None:
    path = tmp_path / "s.json"
    text = json.dumps(schedule, indent=1).replace('"seed": 7,', '"seed": 7,\n "seed": 8,')
    path.write_text(text)
    line = text.splitlines().index(' "seed": 8,') + 1
    one_line(invoke("replay", "--schedule", str(path)),
             f"{path}:{line}: invalid JSON: the key 'seed' appears twice in one object")
    results = tmp_path / "r.json"
    results.write_text('{"results": [], "cap": 5000, "cap": 6000}')
    one_line(invoke("announce", str(results)),
             f"{results}:1: invalid JSON: the key 'cap' appears twice in one object")


def test_an_empty_scenario_flag_is_refused() -> None:
    for command in (["explore", "--seeds", "1"], ["replay", "--seed", "1"],
                    ["shrink", "--seed", "1"]):
        one_line(invoke(*command, "--scenario", ""),
                 "--scenario: is empty (leave it out for the built-in default world)")


@pytest.mark.parametrize(("moment", "message"), [
    ("9223372036854775808@1", "seed 9223372036854775808 is above the largest seed, "
                              "9223372036854775807"),
    ("1@10000001", "step 10000001 is above 10,000,000"),
    ("/".join(["1@1"] * 1001), "a chain of 1,001 moments; at most 1,000"),
    ("1@", "'1@' is not SEED@AT (e.g. 17@120)"),
    ("١@1", "'١@1' is not SEED@AT (e.g. 17@120)"),
])
def test_moment_ranges(moment: str, message: str) -> None:
    one_line(invoke("replay", "--seed", "1", "--moment", moment), f"--moment: {message}")


@pytest.mark.parametrize(("name", "first"), [("t.jsonl", '{"seq":0'), ("t.html", "<!DOCTYPE"),
                                             ("t.txt", "00:00:00.000")])
def test_the_format_follows_the_trace_files_extension(tmp_path: Path, name: str,
                                                      first: str) -> None:
    out = tmp_path / name
    assert invoke("replay", "--seed", "7", "--trace-out", str(out)).exit_code == 0
    assert out.read_text().startswith(first)


def test_an_unknown_extension_needs_a_format(tmp_path: Path) -> None:
    one_line(invoke("replay", "--seed", "7", "--trace-out", str(tmp_path / "t.out")),
             f"--trace-out: {tmp_path / 't.out'}: cannot tell the format from .out; give "
             "--format (jsonl, text, perfetto, mermaid, html)")


def _shell(command: str) -> subprocess.CompletedProcess[str]:
    from tests.hostile.proc import env

    return subprocess.run(["sh", "-c", command], env=env(), capture_output=True, text=True,
                          check=False, timeout=120, cwd=Path(__file__).parents[2])


@pytest.mark.parametrize(("redirect", "args", "status"), [
    ("2>/dev/full", "explore --seeds 0", 2),
    ("2>&-", "explore --seeds 0", 2),
    ("2>/dev/full", "replay --seed 7 >/dev/null", 0),
    ("2>&-", "replay --seed 7 >/dev/null", 0),
    ("2>&-", "replay --seed 7 --mutant nope >/dev/null", 2),
    (">&-", "replay --seed 7", 2),
    (">&-", "replay --seed 7 --trace-out /dev/null", 0),
])
def test_exit_status_when_a_standard_stream_cannot_be_written(redirect: str, args: str,
                                                              status: int) -> None:
    import sys

    done = _shell(f"{sys.executable} -m sim {args} {redirect}")
    assert done.returncode == status, done.stderr
    assert "Traceback" not in done.stderr


def test_a_closed_stdout_is_said_not_silent() -> None:
    import sys

    done = _shell(f"{sys.executable} -m sim replay --seed 7 >&-")
    assert done.stderr.splitlines()[0] == \
        "handoff: stdout: cannot write: it was closed when handoff started"


def test_a_named_pipe_with_no_writer_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "in.toml"
    os.mkfifo(fifo)
    started = time.monotonic()
    done = handoff(["run", str(fifo)], timeout=60)
    assert time.monotonic() - started < 30
    assert done.returncode == 2
    assert done.stderr == f"handoff: {fifo}: a pipe with nothing to read for 5 s (no writer?)\n"


def test_a_pipe_with_a_writer_is_read(tmp_path: Path) -> None:
    import sys

    results = Path(__file__).parents[2] / "examples" / "results.json"
    done = _shell(f"cat {results} | {sys.executable} -m sim announce /dev/stdin")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Child completion results")
