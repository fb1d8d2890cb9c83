"""Nothing a user has is lost (issue 39): outputs replace an existing file only with --force,
never one of the command's inputs or another output, and are written beside and renamed into
place, so a failed or killed write leaves the old file whole."""

from __future__ import annotations

import json
import os
import resource
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from sim.cli.files import outfiles
from sim.cli.root import main
from tests.hostile.proc import handoff


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def one_line(result: Result, *parts: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("handoff: "), result.output
    for part in parts:
        assert part in lines[0], lines[0]


def test_an_existing_output_is_kept_without_force(tmp_path: Path) -> None:
    for option in ("--trace-out", "--schedule-out"):
        kept = tmp_path / f"{option[2:]}.txt"
        kept.write_text("mine\n")
        one_line(invoke("replay", "--seed", "7", option, str(kept)), option, "exists",
                 "--force")
        assert kept.read_text() == "mine\n"
    kept = tmp_path / "keep.toml"
    kept.write_text("mine\n")
    one_line(invoke("shrink", "--seed", "40", "--mutant", "fresh-key-after-restart", "--save",
                    str(kept)), "--save", "exists")
    one_line(invoke("explore", "--seeds", "1", "--report", str(kept)), "--report", "exists")
    assert kept.read_text() == "mine\n"


def test_force_replaces_and_keeps_the_files_permissions(tmp_path: Path) -> None:
    out = tmp_path / "trace.jsonl"
    out.write_text("old\n")
    out.chmod(0o640)
    result = invoke("replay", "--seed", "7", "--format", "jsonl", "--trace-out", str(out),
                    "--force")
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text().splitlines()[0])["kind"] == "world.start"
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trace.jsonl"]  # no temporary left


def test_an_output_that_is_an_input_or_another_output_is_refused(tmp_path: Path) -> None:
    schedule = tmp_path / "s.json"
    assert invoke("replay", "--seed", "7", "--schedule-out", str(schedule)).exit_code == 0
    before = schedule.read_bytes()
    one_line(invoke("replay", "--schedule", str(schedule), "--format", "jsonl", "--trace-out",
                    str(schedule), "--force"), "--trace-out", "is also the --schedule input")
    one_line(invoke("replay", "--seed", "7", "--trace-out", str(tmp_path / "same.txt"),
                    "--schedule-out", f"{tmp_path}/./same.txt"), "is also the --trace-out output")
    world = tmp_path / "mine.toml"
    world.write_text((Path(__file__).parents[2] / "sim" / "default_world.toml").read_text())
    one_line(invoke("replay", "--scenario", str(world), "--format", "jsonl", "--trace-out",
                    str(world), "--force"), "is also the --scenario input")
    link = tmp_path / "link.toml"
    link.symlink_to(world)
    one_line(invoke("shrink", "--seed", "40", "--scenario", str(world), "--save", str(link),
                    "--force"), "--save", "is also the --scenario input")
    assert schedule.read_bytes() == before


def test_save_failures_keeps_an_existing_scenario_without_force(tmp_path: Path) -> None:
    args = ["explore", "--seeds", "30", "--jobs", "1", "--mutant", "last-assistant-message",
            "--save-failures", str(tmp_path), "--max-runs", "50"]
    first = invoke(*args)
    assert first.exit_code == 1, first.output
    saved = sorted(tmp_path.glob("*.toml"))
    assert saved
    saved[0].write_text("# hand-edited\n")
    again = invoke(*args)
    assert again.exit_code == 2 and "exists; add --force" in again.output, again.output
    assert saved[0].read_text() == "# hand-edited\n"
    assert invoke(*args, "--force").exit_code == 1
    assert saved[0].read_text() != "# hand-edited\n"


def test_a_write_over_the_file_size_limit_leaves_the_old_file_whole(tmp_path: Path) -> None:
    out = tmp_path / "keep.jsonl"
    out.write_text("the good old file\n")
    done = handoff(["replay", "--seed", "7", "--format", "jsonl", "--trace-out", str(out),
                    "--force"], limits={resource.RLIMIT_FSIZE: 1024})
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == \
        f"handoff: --trace-out: {out}: cannot write: File too large"
    assert out.read_text() == "the good old file\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.jsonl"]


def test_a_write_interrupted_midway_leaves_the_old_file_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "keep.toml"
    out.write_text("the good old file\n")

    def killed(fd: int) -> None:  # Ctrl-C (or a kill) between the write and the rename
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", killed)
    with pytest.raises(KeyboardInterrupt):
        outfiles.write_output(str(out), "--save", "new text\n" * 1000)
    assert out.read_text() == "the good old file\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.toml"]


def test_devices_and_pipes_are_written_in_place(tmp_path: Path) -> None:
    assert invoke("replay", "--seed", "7", "--trace-out", "/dev/null").exit_code == 0
    done = handoff(["replay", "--seed", "7", "--format", "jsonl", "--trace-out", "/dev/stdout"])
    assert done.returncode == 0 and done.stdout.startswith('{"'), done.stderr
    fifo = tmp_path / "fifo.txt"
    os.mkfifo(fifo)
    done = handoff(["replay", "--seed", "7", "--trace-out", str(fifo)], timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == \
        f"handoff: --trace-out: {fifo}: cannot write: a named pipe with no reader"


def test_empty_and_folder_outputs_are_one_line(tmp_path: Path) -> None:
    one_line(invoke("replay", "--seed", "7", "--trace-out", ""), "--trace-out", "is empty")
    one_line(invoke("replay", "--seed", "7", "--format", "text", "--trace-out", str(tmp_path)),
             "is a folder")
    one_line(invoke("replay", "--seed", "7", "--trace-out", str(tmp_path / "no" / "x.txt")),
             "no such folder")
    one_line(invoke("explore", "--seeds", "1", "--save-failures", ""), "--save-failures",
             "is empty")
