"""Reading a file a user names, bounded before it is read (docs/inputs.md#size-limits).

Every reader of user files opens them here: a folder or a device (``/dev/zero``, a terminal) is
refused before a byte is read, a regular file larger than its limit by its size, and any other
stream (a pipe, ``/proc`` files, which report size 0) is read in chunks and refused as soon as it
passes the limit, so no input costs more memory than its limit. A pipe with nothing to read for
``PIPE_WAIT_SECONDS`` (a named pipe no one writes) is refused rather than waited on forever.
Every failure is an :class:`InputError` naming the file, never an ``OSError``.
"""

from __future__ import annotations

import io
import os
import select
import stat
from collections.abc import Iterator
from typing import Any, BinaryIO

from actors.errors import InputError

MIB = 2**20
# Limits, in bytes (docs/inputs.md). Each admits the largest input its format's own ranges
# allow in practice: a schedule of 10,000,000 choices, a results file of 100,000 results.
MAX_SCENARIO_BYTES = 64 * MIB
MAX_SCHEDULE_BYTES = 512 * MIB
MAX_RESULTS_BYTES = 256 * MIB
MAX_LOG_LINE_BYTES = 64 * MIB  # a session log is read a line at a time
MAX_LOG_BYTES = 4096 * MIB
_CHUNK = MIB

BOM = b"\xef\xbb\xbf"  # UTF-8's byte-order mark, which some editors write first: skipped


def _size(limit: int) -> str:
    return f"{limit // MIB:,} MiB" if limit >= MIB else f"{limit:,} bytes"


def _too_big(path: str, limit: int, line: int | None = None, what: str = "file") -> InputError:
    return InputError(path, line, "", f"the {what} is larger than the {_size(limit)} limit")


# A pipe (``<(cmd)``, a named pipe) is read as its writer writes; this long without a byte (no
# writer at all, or one that stalled) and it is refused instead of waited on forever.
PIPE_WAIT_SECONDS = 5.0


class _Pipe(io.RawIOBase):
    """A pipe's descriptor, each read waiting at most ``PIPE_WAIT_SECONDS`` for data."""

    def __init__(self, fd: int, path: str) -> None:
        super().__init__()
        self._fd = fd
        self._path = path

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def readinto(self, buffer: Any) -> int:
        ready, _, _ = select.select([self._fd], [], [], PIPE_WAIT_SECONDS)
        if not ready:
            raise InputError(self._path, None, "", f"a pipe with nothing to read for "
                             f"{PIPE_WAIT_SECONDS:g} s (no writer?)")
        try:
            data = os.read(self._fd, len(buffer))
        except BlockingIOError:  # woken with nothing after all
            return self.readinto(buffer)
        buffer[:len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            os.close(self._fd)
        super().close()


def _open(path: str, limit: int) -> BinaryIO:
    """Open ``path`` for reading, refusing folders, devices and regular files over ``limit``.
    Opened without waiting: a named pipe with no writer would otherwise block the open."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise InputError(path, None, "", "is a folder, not a file") from None
    except OSError as err:
        raise InputError(path, None, "", f"cannot read: {err.strerror or err}") from None
    try:
        mode = os.fstat(fd)
    except OSError as err:
        os.close(fd)
        raise InputError(path, None, "", f"cannot read: {err.strerror or err}") from None
    problem = None
    if stat.S_ISDIR(mode.st_mode):
        problem = InputError(path, None, "", "is a folder, not a file")
    elif stat.S_ISCHR(mode.st_mode) or stat.S_ISBLK(mode.st_mode):
        problem = InputError(path, None, "", "is a device, not a file")
    elif stat.S_ISREG(mode.st_mode) and mode.st_size > limit:
        problem = _too_big(path, limit)
    if problem is not None:
        os.close(fd)
        raise problem
    try:
        if stat.S_ISFIFO(mode.st_mode):
            return io.BufferedReader(_Pipe(fd, path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except OSError as err:
        os.close(fd)
        raise InputError(path, None, "", f"cannot read: {err.strerror or err}") from None


def read_bounded(path: str, limit: int) -> bytes:
    """The whole file, at most ``limit`` bytes of it (else an error), a leading BOM dropped."""
    handle = _open(path, limit)
    parts: list[bytes] = []
    total = 0
    with handle:
        while True:
            try:
                part = handle.read(min(_CHUNK, limit + 1 - total))
            except OSError as err:
                raise InputError(path, None, "", f"cannot read: {err.strerror or err}") from None
            if not part:
                break
            parts.append(part)
            total += len(part)
            if total > limit:
                raise _too_big(path, limit)
    data = b"".join(parts)
    return data[len(BOM):] if data.startswith(BOM) else data


def bounded_lines(path: str, line_limit: int = MAX_LOG_LINE_BYTES,
                  limit: int = MAX_LOG_BYTES) -> Iterator[tuple[int, bytes]]:
    """``(line number, line)`` from 1, one line in memory at a time; a line longer than
    ``line_limit`` or a file longer than ``limit`` is refused when reached. A leading BOM is
    dropped."""
    handle = _open(path, limit)
    total = 0
    with handle:
        number = 0
        while True:
            try:
                raw = handle.readline(line_limit + 1)
            except OSError as err:
                raise InputError(path, number + 1 if number else None, "",
                                 f"cannot read: {err.strerror or err}") from None
            if not raw:
                return
            number += 1
            total += len(raw)
            if len(raw) > line_limit:
                raise _too_big(path, line_limit, number, "line")
            if total > limit:
                raise _too_big(path, limit, number)
            if number == 1 and raw.startswith(BOM):
                raw = raw[len(BOM):]
            yield number, raw
