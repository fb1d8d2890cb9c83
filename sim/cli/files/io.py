"""Writing to standard output and standard error that can fail: a full disk (``> /dev/full``), a
closed pipe (``| head -1``).

:func:`guarded_output` wraps every ``handoff`` command (sim/cli/style.py): while it runs,
``sys.stdout`` and ``sys.stderr`` write through :class:`_Guarded`, which tells their failures apart
from any other ``OSError``. A closed pipe ends the command quietly with status 0, as command-line
tools do when their reader has had enough; any other failure to write standard output is one
line, ``handoff: stdout: cannot write: <why>``, and status 2; so is a standard output that was
closed when the command started (``>&-``), once the command writes to it. A standard error that
cannot be written (``2>/dev/full``, closed) is dropped and changes nothing: the command's own
exit status stands. Afterwards the stream's descriptor points at ``/dev/null``, so what it
still holds goes nowhere instead of into a second error at exit. Output files (``--trace-out``...)
are written by ``files.outfiles.write_output``, which reports the same way with the file's name;
input files are read bounded by ``actors.inputs.files``.
"""

from __future__ import annotations

import errno
import io
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO


class StreamFailed(Exception):
    """Writing to standard output or standard error failed (not an ``OSError``, so no handler of
    the commands mistakes it for a file of theirs)."""

    def __init__(self, name: str, fd: int, error: OSError) -> None:
        super().__init__(f"{name}: cannot write: {error.strerror or error}")
        self.name = name
        self.fd = fd
        self.broken_pipe = isinstance(error, BrokenPipeError)


class _Guarded(io.RawIOBase):
    """A file descriptor whose write errors become :class:`StreamFailed`. ``before`` runs
    before each write: standard error flushes standard output first, so the two stay in order
    and a full standard output is found before anything else is said."""

    def __init__(self, fd: int, name: str, before: Callable[[], None] | None = None,
                 closed_at_start: bool = False) -> None:
        super().__init__()
        self._fd = fd
        self._name = name
        self._before = before
        self._closed_at_start = closed_at_start

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        if self._before is not None:
            self._before()
        if self._closed_at_start:
            if self._name == "stderr":
                return len(data)
            raise StreamFailed(self._name, self._fd, OSError(
                errno.EBADF, "it was closed when handoff started"))
        try:
            return os.write(self._fd, data)
        except InterruptedError:
            return 0
        except OSError as err:
            if self._name == "stderr":  # nowhere to say so: the command's own status stands
                _to_null(self._fd)
                return len(data)
            raise StreamFailed(self._name, self._fd, err) from None

    def close(self) -> None:
        """Nothing to close: the descriptor belongs to the process, not to this wrapper."""


def _guard(stream: TextIO | None, name: str, fd: int,
           before: Callable[[], None] | None = None) -> io.TextIOWrapper | None:
    """``stream`` re-made over a guarded descriptor; None when it has no descriptor (a test's
    captured output), which is then left alone. A stream whose descriptor was closed when the
    process started (``>&-``: Python then makes it None) fails on its first write instead of
    dropping what is written; its descriptor is held on /dev/null meanwhile, so that no file
    the command opens takes its number and receives its output."""
    if stream is None and _closed(fd):
        _to_null(fd)
        raw = _Guarded(fd, name, before, closed_at_start=True)
        return io.TextIOWrapper(io.BufferedWriter(raw),  # type: ignore[type-var]
                                encoding="utf-8", errors="strict")
    if stream is None or not isinstance(stream, io.TextIOWrapper):
        return None
    try:
        fd = stream.fileno()
        stream.flush()
    except (OSError, ValueError):
        return None
    raw = _Guarded(fd, name, before)
    return io.TextIOWrapper(io.BufferedWriter(raw),  # type: ignore[type-var]
                            encoding=stream.encoding, errors=stream.errors,
                            line_buffering=stream.line_buffering)


@contextmanager
def guarded_output() -> Iterator[None]:
    """Run a command with guarded standard streams; turn a failed write into an exit status."""
    saved = sys.stdout, sys.stderr
    if sys.stdin is None and _closed(0):  # `<&-`: keep files the command opens off fd 0
        _to_null(0)
    out = _guard(sys.stdout, "stdout", 1)
    err = _guard(sys.stderr, "stderr", 2, None if out is None else out.flush)
    if out is not None:
        sys.stdout = out
    if err is not None:
        sys.stderr = err
    try:
        try:
            yield
        finally:
            for stream in (out, err):
                if stream is not None:
                    stream.flush()
    except StreamFailed as failed:
        _to_null(failed.fd)
        if failed.broken_pipe and failed.name == "stdout":
            _to_null(*(s.fileno() for s in (out, err) if s is not None))
            raise SystemExit(0) from None
        if failed.name != "stderr":
            try:
                print(f"handoff: {failed}", file=saved[1], flush=True)
            except OSError:
                pass
        raise SystemExit(2) from None
    finally:
        sys.stdout, sys.stderr = saved
        for stream in (out, err):
            if stream is not None:
                try:
                    stream.flush()
                except StreamFailed:
                    pass
                stream.detach()


def _closed(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


def _to_null(*fds: int) -> None:
    """Point each descriptor at /dev/null: whatever is still written to it goes there."""
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd in fds:
            os.dup2(null, fd)
    finally:
        os.close(null)
