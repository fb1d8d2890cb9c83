"""Any user (issue 39): as an unprivileged user (uid 65534), a path the user cannot enter is
one line and exit 2, and /dev/null and /dev/stdout work as outputs."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hostile.proc import as_nobody

ROOT = Path(__file__).parents[2]


@pytest.fixture
def locked() -> Iterator[Path]:
    """A folder everyone may use (pytest's own are root's alone) holding ``locked``, a folder
    nobody may enter (root's, mode 700) with a subfolder and a scenario."""
    base = Path(tempfile.mkdtemp(prefix="handoff-users-"))
    base.chmod(0o777)
    folder = base / "locked"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "w.toml").write_text((ROOT / "sim" / "default_world.toml").read_text())
    folder.chmod(0o700)
    try:
        yield base
    finally:
        for path in (folder, folder / "sub"):
            if path.exists():
                path.chmod(0o755)
        shutil.rmtree(base)


def _one_line(done: subprocess.CompletedProcess[str], *parts: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    line = done.stderr.strip()
    assert "\n" not in line and line.startswith("handoff: "), done.stderr
    for part in parts:
        assert part in line, line


@pytest.mark.parametrize("option", ["--trace-out", "--schedule-out"])
def test_an_output_in_a_folder_nobody_may_enter(locked: Path, option: str) -> None:
    out = locked / "locked" / "x.txt"
    _one_line(as_nobody(["replay", "--seed", "7", option, str(out)], cwd=locked),
              option, "permission denied")


def test_shrink_save_report_and_save_failures_in_a_locked_folder(locked: Path) -> None:
    inside = locked / "locked"
    _one_line(as_nobody(["shrink", "--seed", "40", "--mutant", "fresh-key-after-restart",
                         "--save", str(inside / "k.toml")], cwd=locked), "--save",
              "permission denied")
    _one_line(as_nobody(["explore", "--seeds", "1", "--report", str(inside / "r.html")],
                        cwd=locked), "--report", "permission denied")
    _one_line(as_nobody(["explore", "--seeds", "1", "--save-failures", str(inside / "f")],
                        cwd=locked), "--save-failures", "permission denied")


def test_inputs_in_a_folder_nobody_may_enter(locked: Path) -> None:
    world = locked / "locked" / "sub" / "w.toml"
    _one_line(as_nobody(["run", str(locked / "locked")], cwd=locked), "cannot read",
              "Permission denied")
    _one_line(as_nobody(["run", str(world)], cwd=locked), "cannot read")
    _one_line(as_nobody(["replay", "--scenario", str(world)], cwd=locked), "cannot read")


def test_run_names_a_subfolder_it_cannot_read(locked: Path) -> None:
    inside = locked / "locked"
    inside.chmod(0o755)
    (inside / "sub").chmod(0o700)
    done = as_nobody(["run", str(inside)], cwd=locked)
    _one_line(done, f"{inside / 'sub'}: cannot read: Permission denied")


def test_devices_are_outputs_for_any_user() -> None:
    done = as_nobody(["replay", "--seed", "7", "--trace-out", "/dev/null"], cwd="/")
    assert done.returncode == 0, done.stderr
    done = as_nobody(["replay", "--seed", "7", "--format", "jsonl", "--trace-out",
                      "/dev/stdout"], cwd="/")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith('{"seq":0'), done.stdout[:80]


def test_trace_to_stdout_piped_into_head_for_any_user() -> None:
    # The README's `--trace-out /dev/stdout | head`: a pipe root made, written by nobody.
    proc = subprocess.Popen(["head", "-1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdin is not None
    done = as_nobody(["replay", "--seed", "7", "--trace-out", "/dev/stdout"], cwd="/",
                     stdout=proc.stdin.fileno())
    proc.stdin.close()
    assert proc.stdout is not None
    with proc.stdout:
        first = proc.stdout.read()
    proc.wait(timeout=30)
    assert done.returncode == 0, done.stderr
    assert "world.start" in first
