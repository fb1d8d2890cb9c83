"""Reading a file a user names, bounded before it is read (docs/inputs.md#size-limits).

Every reader of user files opens them here: a folder or a device (``/dev/zero``, a terminal) is
refused before a byte is read, a regular file larger than its limit by its size, and any other
stream (a pipe, ``/proc`` files, which report size 0) is read in chunks and refused as soon as it
passes the limit, so no input costs more memory than its limit. Every failure is an
:class:`InputError` naming the file, never an ``OSError``.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from typing import BinaryIO

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


def _open(path: str, limit: int) -> BinaryIO:
    """Open ``path`` for reading, refusing folders, devices and regular files over ``limit``."""
    try:
        handle = open(path, "rb")
    except IsADirectoryError:
        raise InputError(path, None, "", "is a folder, not a file") from None
    except OSError as err:
        raise InputError(path, None, "", f"cannot read: {err.strerror or err}") from None
    try:
        mode = os.fstat(handle.fileno())
    except OSError as err:
        handle.close()
        raise InputError(path, None, "", f"cannot read: {err.strerror or err}") from None
    problem = None
    if stat.S_ISDIR(mode.st_mode):
        problem = InputError(path, None, "", "is a folder, not a file")
    elif stat.S_ISCHR(mode.st_mode) or stat.S_ISBLK(mode.st_mode):
        problem = InputError(path, None, "", "is a device, not a file")
    elif stat.S_ISREG(mode.st_mode) and mode.st_size > limit:
        problem = _too_big(path, limit)
    if problem is not None:
        handle.close()
        raise problem
    return handle


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
