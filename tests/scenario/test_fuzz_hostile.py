"""Hostile files and streams (issue 26): every reader given ``/dev/zero``, a folder, an oversized
file and ``/proc/self/mem``; every command with its standard output on a full disk
(``/dev/full``) and into a closed pipe.

The property: bad input is exit status 2 and exactly one line on stderr, ``handoff: ...``, naming
the file, never a traceback; a full standard output is status 2 and one line naming ``stdout``; a
closed pipe is a quiet status 0. Readers run in-process (click's ``CliRunner``); the streams need
real file descriptors, so those commands run as processes, each on a small input.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from actors.errors import InputError
from actors.inputs.files import (
    MAX_LOG_LINE_BYTES,
    MAX_RESULTS_BYTES,
    MAX_SCENARIO_BYTES,
    MAX_SCHEDULE_BYTES,
    bounded_lines,
    read_bounded,
)
from sim.cli.root import main
from tests.conftest import EXAMPLES, SCENARIOS

ROOT = Path(__file__).resolve().parent.parent.parent
SCENARIO = str(SCENARIOS / "redrive-while-ack-delayed.toml")
LOG = str(EXAMPLES / "child-v2.jsonl")
RESULTS = str(EXAMPLES / "results.json")

# Every reader: a command with ``{}`` where the file goes, and the limit of what it reads.
READERS = {
    "run": (["run", "{}"], MAX_SCENARIO_BYTES),
    "explore --scenario": (["explore", "--seeds", "1", "--jobs", "1", "--scenario", "{}"],
                           MAX_SCENARIO_BYTES),
    "replay --scenario": (["replay", "--scenario", "{}"], MAX_SCENARIO_BYTES),
    "shrink --scenario": (["shrink", "--seed", "1", "--scenario", "{}"], MAX_SCENARIO_BYTES),
    "replay --schedule": (["replay", "--schedule", "{}"], MAX_SCHEDULE_BYTES),
    "replay --from": (["replay", "--from", "{}", "--at", "1"], MAX_SCHEDULE_BYTES),
    "explore --from": (["explore", "--from", "{}", "--at", "1", "--seeds", "1", "--jobs", "1"],
                       MAX_SCHEDULE_BYTES),
    "output": (["output", "{}"], MAX_LOG_LINE_BYTES),
    "announce": (["announce", "{}"], MAX_RESULTS_BYTES),
}


def _one_line_error(args: list[str], path: str) -> str:
    result = CliRunner().invoke(main, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2, (args, result.output)
    lines = result.stderr.splitlines()
    # `handoff: PATH: ...`, or click's own check of a file argument: `handoff: LOG.jsonl: file
    # 'PATH' is a directory.`
    assert len(lines) == 1 and lines[0].startswith("handoff: ") and path in lines[0], \
        (args, result.stderr)
    return lines[0]


@pytest.fixture(scope="module")
def oversized(tmp_path_factory: pytest.TempPathFactory) -> dict[int, str]:
    """Sparse files one byte over each limit: their size is refused before a byte is read."""
    folder = tmp_path_factory.mktemp("oversized")
    files = {}
    for limit in {limit for _, limit in READERS.values()}:
        path = folder / f"over-{limit}"
        with open(path, "wb") as handle:
            handle.truncate(limit + 1)
        files[limit] = str(path)
    return files


@pytest.mark.parametrize("reader", READERS)
def test_every_reader_refuses_devices_folders_and_oversized_files(
        reader: str, oversized: dict[int, str], tmp_path: Path) -> None:
    args, limit = READERS[reader]
    folder = tmp_path / "folder.toml"
    folder.mkdir()
    cases = {"/dev/zero": "is a device", str(folder): "a folder" if reader != "output" and
             reader != "announce" else "is a directory",
             oversized[limit]: f"larger than the {limit // 2**20:,} MiB limit",
             "/proc/self/mem": "cannot read"}
    for path, what in cases.items():
        # `run FOLDER` runs the *.toml under it: here, one that is a folder itself.
        given = str(tmp_path) if reader == "run" and path == str(folder) else path
        line = _one_line_error([given if a == "{}" else a for a in args], path)
        assert what in line, (reader, line)


def test_a_stream_is_read_no_further_than_its_limit(tmp_path: Path) -> None:
    # /proc files say they are empty, as pipes say nothing: those are read in chunks, refused
    # once past the limit.
    with pytest.raises(InputError, match="larger than the 100 bytes limit"):
        read_bounded("/proc/self/maps", 100)
    long_line = tmp_path / "long.jsonl"
    long_line.write_bytes(b"{}\n" + b"x" * 200)
    with pytest.raises(InputError, match=r"long.jsonl:2: the line is larger than the 100 bytes"):
        list(bounded_lines(str(long_line), line_limit=100))
    assert list(bounded_lines(str(long_line), line_limit=300)) == [(1, b"{}\n"), (2, b"x" * 200)]


def test_a_byte_order_mark_is_skipped(tmp_path: Path) -> None:
    log = tmp_path / "bom.jsonl"
    log.write_bytes(b"\xef\xbb\xbf" + Path(LOG).read_bytes())
    results = tmp_path / "bom.json"
    results.write_bytes(b"\xef\xbb\xbf" + Path(RESULTS).read_bytes())
    for args in (["output", str(log)], ["announce", str(results)]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output


def test_a_literal_reply_is_bounded_like_reply_chars(tmp_path: Path) -> None:
    path = tmp_path / "big-reply.toml"
    path.write_text('[[sessions]]\nkey = "agent:main:main"\n\n[[children]]\nid = "c1"\n'
                    f'reply = "{"x" * 10_000_001}"\n', encoding="utf-8")
    line = _one_line_error(["run", str(path)], str(path))
    assert "children[0].reply: is 10,000,001 characters long, over the limit of 10,000,000" \
        in line


def _schedule(tmp_path: Path) -> str:
    path = tmp_path / "seed7.schedule.json"
    result = CliRunner().invoke(main, ["replay", "--seed", "7", "--format", "jsonl",
                                       "--trace-out", str(tmp_path / "t.jsonl"),
                                       "--schedule-out", str(path)])
    assert result.exit_code in (0, 1), result.output
    return str(path)


# Every command, each on a small input (bench is engineer detect's, and its quickest run takes
# most of a minute: its own help stands in for it).
def _commands(schedule: str) -> dict[str, list[str]]:
    return {
        "explore": ["explore", "--seeds", "2", "--jobs", "1"],
        "explore --list-mutants": ["explore", "--list-mutants"],
        "explore --from": ["explore", "--from", schedule, "--at", "50", "--seeds", "1",
                           "--jobs", "1"],
        "replay": ["replay", "--seed", "7"],
        "replay --schedule": ["replay", "--schedule", schedule, "--format", "mermaid"],
        "run": ["run", SCENARIO],
        "shrink": ["shrink", "--scenario", str(SCENARIOS / "mutant-key-without-run-id.toml"),
                   "--seed", "1", "--max-runs", "3"],
        "output": ["output", LOG],
        "announce": ["announce", RESULTS],
        "bench --help": ["bench", "--help"],
        "--help": ["--help"],
        "--version": ["--version"],
    }


def _spawn(args: list[str], stdout: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "sim", *args], stdout=stdout,
                            stderr=subprocess.PIPE, env=env, cwd=ROOT)


def test_every_command_on_a_full_disk_and_into_a_closed_pipe(tmp_path: Path) -> None:
    for name, args in _commands(_schedule(tmp_path)).items():
        # The two at once (two cores): a full disk, and a closed pipe whose reader went away
        # before the first line (`| head -0`).
        with open("/dev/full", "wb") as full:
            on_full = _spawn(args, full.fileno())
        into_closed = _spawn(args, subprocess.PIPE)
        assert into_closed.stdout is not None
        into_closed.stdout.close()
        _, err = on_full.communicate()
        assert on_full.returncode == 2, (name, err)
        assert err.decode().splitlines() == [
            "handoff: stdout: cannot write: No space left on device"], (name, err)
        _, err = into_closed.communicate()
        assert (into_closed.returncode, err) == (0, b""), (name, err)


def test_an_output_file_on_a_full_disk() -> None:
    result = CliRunner().invoke(main, ["replay", "--seed", "7", "--trace-out", "/dev/full"])
    assert result.exit_code == 2
    assert result.stderr == "handoff: --trace-out: /dev/full: cannot write: No space left on " \
        "device\n"


def test_output_paths_and_jobs_are_checked_before_a_sweep(tmp_path: Path) -> None:
    # Ten million seeds: a check made after the sweep would never be reached in this test.
    sweep = ["explore", "--seeds", "10000000"]
    a_file = tmp_path / "a-file"
    a_file.write_text("", encoding="utf-8")
    cases = {
        (*sweep, "--save-failures", str(a_file)): f"--save-failures: {a_file}: is not a folder",
        (*sweep, "--save-failures", f"{a_file}/sub"): "is not a folder",
        (*sweep, "--jobs", str(len(os.sched_getaffinity(0)) + 1)): "add --force",
        ("shrink", "--seed", "1", "--save", str(tmp_path / "none" / "x.toml")): "no such folder",
    }
    for args, what in cases.items():
        result = CliRunner().invoke(main, list(args))
        assert result.exit_code == 2 and what in result.stderr, (args, result.stderr)
        assert len(result.stderr.splitlines()) == 1
