"""Output files (``--trace-out``, ``--schedule-out``, ``--report``, ``--save``,
``--save-failures``): checked before anything runs, written so that nothing a user has is lost.

Checked first (:func:`check_outputs`): each output's folder exists and this user may enter and
write it; an existing regular file is replaced only with ``--force``; an output that is one of
the command's inputs, or two outputs that are one file, are refused. Each failure is one line,
``handoff: --FLAG: FILE: what is wrong``, and exit status 2.

Written then (:func:`write_output`): a regular file goes to a temporary file beside it
(``.NAME.PID.tmp``), flushed to disk and renamed over the old one, so a failed write (a full
disk, ``ulimit -f``) or a killed process leaves the old file whole (a kill may leave the
temporary file behind, never a cut one in its place). A device (``/dev/null``, ``/dev/stdout``)
or a pipe is written directly; a named pipe with no reader is refused instead of waiting.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Sequence
from pathlib import Path

from sim.cli.style import bad_input
from sim.textout import printable

# (option, path): a flag and the file it names (None: the flag was not given).
Named = tuple[str, str | None]


def _why(err: OSError) -> str:
    if err.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    return str(err.strerror or err)


def _stat(option: str, path: str) -> os.stat_result | None:
    """``path``'s status, following links; None when it does not exist."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        bad_input(f"{option}: {path}: cannot write: a part of the path is not a folder")
    except OSError as err:
        bad_input(f"{option}: {path}: cannot write: {_why(err)}")


def _identity(path: str) -> tuple[int, int] | str | None:
    """What names one file however it is spelled: its device and inode when it exists, else
    its resolved path (None: not a file a path can name)."""
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return os.path.realpath(path)
    except OSError:
        return None
    if not stat.S_ISREG(status.st_mode):
        return None  # a device or a pipe: /dev/null twice is no conflict
    return status.st_dev, status.st_ino


def check_output(option: str, path: str, force: bool) -> None:
    """One output file: writable by this user, not a folder, not replaced without ``force``."""
    if not path:
        bad_input(f"{option}: is empty (give a file name)")
    status = _stat(option, path)
    if status is not None and stat.S_ISDIR(status.st_mode):
        bad_input(f"{option}: {path}: is a folder")
    if status is not None and not stat.S_ISREG(status.st_mode):  # a device or a pipe
        if _standard_stream(status) is None and not os.access(path, os.W_OK):
            bad_input(f"{option}: {path}: cannot write: permission denied")
        return
    folder = Path(os.path.realpath(path)).parent
    folder_status = _stat(option, str(folder))
    if folder_status is None or not stat.S_ISDIR(folder_status.st_mode):
        bad_input(f"{option}: {path}: cannot write: no such folder {str(folder)!r}")
    if not os.access(folder, os.W_OK | os.X_OK):
        bad_input(f"{option}: {path}: cannot write: permission denied (folder {str(folder)!r})")
    if status is not None and not force:
        bad_input(f"{option}: {path}: exists; add --force to replace it")


def check_outputs(outputs: Sequence[Named], inputs: Sequence[Named] = (),
                  force: bool = False) -> None:
    """Every output of a command, before it runs: each one checked (:func:`check_output`), none
    of them one of the command's ``inputs``, no two of them the same file."""
    seen: dict[tuple[int, int] | str, str] = {}
    for option, path in inputs:
        if path:
            key = _identity(path)
            if key is not None:
                seen.setdefault(key, f"the {option} input")
    for option, path in outputs:
        if path is None:
            continue
        check_output(option, path, force)
        key = _identity(path)
        if key is None:
            continue
        if key in seen:
            bad_input(f"{option}: {path}: is also {seen[key]}; give another file")
        seen[key] = f"the {option} output"


def check_folder(option: str, path: str) -> None:
    """An output folder (created when needed) must be a folder, or be creatable where its
    nearest existing parent is a folder this user may write: checked before anything runs."""
    if not path:
        bad_input(f"{option}: is empty (give a folder)")
    target = Path(path)
    status = _stat(option, path)
    if status is not None:
        if not stat.S_ISDIR(status.st_mode):
            bad_input(f"{option}: {path}: is not a folder")
        if not os.access(target, os.W_OK | os.X_OK):
            bad_input(f"{option}: {path}: cannot write: permission denied")
        return
    parent = target.parent
    while _stat(option, str(parent)) is None and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        bad_input(f"{option}: {path}: cannot create: {str(parent)!r} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        bad_input(f"{option}: {path}: cannot create: permission denied")


def write_output(path: str, option: str, text: str) -> None:
    """Write ``text`` (UTF-8) to an output file; a failure is one line and exit status 2."""
    data = printable(text).encode("utf-8")
    try:
        status = os.stat(path)
    except FileNotFoundError:
        status = None
    except OSError as err:
        bad_input(f"{option}: {path}: cannot write: {_why(err)}")
    try:
        if status is not None and not stat.S_ISREG(status.st_mode):
            _write_stream(path, status, data)
        else:
            _replace(os.path.realpath(path), data, status)
    except BrokenPipeError:  # `--trace-out /dev/stdout | head`: its reader had enough
        raise SystemExit(0) from None
    except OSError as err:
        bad_input(f"{option}: {path}: cannot write: {_why(err)}")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _standard_stream(status: os.stat_result) -> int | None:
    """The descriptor (1 or 2) of the standard stream that is this file, if one is: what
    ``/dev/stdout`` names is written through the open descriptor (reopening a pipe or terminal
    by name needs permissions on it that the descriptor does not)."""
    for fd in (1, 2):
        try:
            if os.path.samestat(status, os.fstat(fd)):
                return fd
        except OSError:
            continue
    return None


def _write_stream(path: str, status: os.stat_result, data: bytes) -> None:
    """A device or a pipe, written in place. A named pipe is opened without waiting: with no
    reader that fails (ENXIO) instead of blocking forever."""
    standard = _standard_stream(status)
    if standard is not None:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()  # what was printed before goes first
        _write_all(standard, data)
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as err:
        if err.errno == errno.ENXIO:
            raise OSError(errno.ENXIO, "a named pipe with no reader") from None
        raise
    try:
        os.set_blocking(fd, True)
        _write_all(fd, data)
    finally:
        os.close(fd)


def _replace(target: str, data: bytes, old: os.stat_result | None) -> None:
    """A temporary file beside ``target``, written, synced and renamed over it."""
    folder, name = os.path.split(target)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for attempt in range(100):
        suffix = f"-{attempt}" if attempt else ""
        temporary = os.path.join(folder, f".{name}.{os.getpid()}{suffix}.tmp")
        try:
            fd = os.open(temporary, flags, 0o666)  # the umask applies, as for any new file
            break
        except FileExistsError:
            continue
    else:
        raise OSError(errno.EEXIST, "cannot make a temporary file beside it")
    try:
        try:
            if old is not None:  # the replaced file's permissions carry over
                os.fchmod(fd, stat.S_IMODE(old.st_mode))
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
