"""Running ``handoff`` the way a hostile or careless user does: in a process of its own, as an
unprivileged user, under resource limits, with signals. Shared by the tests of this folder."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from tests.conftest import ROOT

NOBODY = 65534


def _limits(limits: dict[int, int], uid: int | None) -> Callable[[], None]:
    def apply() -> None:
        for which, value in limits.items():
            resource.setrlimit(which, (value, value))
        if uid is not None:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
    return apply


def env() -> dict[str, str]:
    """The environment of a child ``handoff``: this checkout importable for any user."""
    return {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1"}


def handoff(args: Sequence[str], *, cwd: Path | str = ROOT, limits: dict[int, int] | None = None,
            uid: int | None = None, timeout: float = 120, stdin: int | None = None,
            stdout: int | None = subprocess.PIPE, stderr: int | None = subprocess.PIPE
            ) -> subprocess.CompletedProcess[str]:
    """``python -m sim ARGS`` in a fresh process, with ``limits`` (RLIMIT_* -> value) and as
    ``uid`` when given."""
    return subprocess.run([sys.executable, "-m", "sim", *args], cwd=cwd, env=env(),
                          stdin=stdin, stdout=stdout, stderr=stderr, text=True, check=False,
                          timeout=timeout, preexec_fn=_limits(limits or {}, uid))


def start(args: Sequence[str], *, cwd: Path | str = ROOT) -> subprocess.Popen[str]:
    """``python -m sim ARGS`` started in a session of its own (so a test can signal it and
    look for its leftover workers by session)."""
    return subprocess.Popen([sys.executable, "-m", "sim", *args], cwd=cwd, env=env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def need_root_to_drop() -> None:
    """Dropping to an unprivileged user needs root; say so in one line where it is not."""
    if os.geteuid() != 0:
        pytest.skip("not root: cannot drop to an unprivileged user (run as root to check)")
    if not os.access(sys.executable, os.X_OK):
        pytest.skip("the interpreter is not executable by other users")


def readable_by_all(path: Path) -> None:
    """Let the unprivileged user read this checkout's path down to ``path``."""
    probe = subprocess.run([sys.executable, "-c", "import sim, actors"], env=env(), cwd="/",
                           preexec_fn=_limits({}, NOBODY), capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip("the checkout or the interpreter is not readable by an unprivileged user")
    path.chmod(0o777)
    for parent in path.parents:
        if parent == Path(parent.anchor) or (parent.stat().st_mode & 0o001):
            break
        parent.chmod(parent.stat().st_mode | 0o001)


def session_processes(sid: int) -> list[int]:
    """Processes still in session ``sid`` (from /proc): the leftovers of a killed command."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[3]) == sid and fields[0] != "Z":  # session id; zombies are gone already
            found.append(int(entry))
    return found
