"""Running ``handoff`` the way a hostile or careless user does: in a process of its own, as an
unprivileged user, under resource limits, with signals. Shared by the tests of this folder."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from tests.conftest import ROOT

NOBODY = 65534


def _limits(limits: dict[int, int], uid: int | None) -> Callable[[], None]:
    def apply() -> None:
        # Ctrl-C as at a terminal, even when the tests run where SIGINT is ignored (started in
        # the background by a script): a child would inherit the ignoring.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
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
                            start_new_session=True, preexec_fn=_limits({}, None))


AS_USER = Path(__file__).with_name("as_user.py")


def as_nobody(args: Sequence[str], *, cwd: Path | str, timeout: float = 120,
              stdout: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    """``handoff ARGS`` as uid/gid 65534 (nobody), started as root and dropped before the
    command touches a file (as_user.py says why); skipped, with one line, when not root."""
    if os.geteuid() != 0:
        pytest.skip("not root: cannot drop to an unprivileged user (run as root to check)")
    return subprocess.run([sys.executable, str(AS_USER), str(NOBODY), *args], cwd=cwd,
                          env=env(), stdout=stdout, stderr=subprocess.PIPE, text=True,
                          check=False, timeout=timeout)


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
