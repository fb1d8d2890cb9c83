"""Peak memory against input size (``handoff bench``'s ``inputs`` rows; issue 39).

Each documented input limit must be reachable in 2 GiB (docs/inputs.md#size-limits). For the
inputs whose size can grow by the million (a schedule's choices, a session log row's packed
texts), one fresh ``handoff`` process reads an input of each size, and its own peak resident
memory is taken from ``wait4`` (another process's reading never counts). The last rows show
the memory per element, from which the largest documented input's peak follows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def _schedule(path: Path, choices: int) -> list[str]:
    """A well-formed schedule of ``choices`` choices (its replay diverges early: reading it is
    what is measured), and the command that reads it."""
    document = {"seed": 1, "strategy": "random", "versions": {}, "mutants": [],
                "fault_kinds": None, "scenario": None, "subsystems": ["schedule"],
                "choices": [[0, 2, 0]] * choices}
    path.write_text(json.dumps(document), encoding="utf-8")
    return ["replay", "--schedule", str(path), "--trace-out", "/dev/null"]


def _log_row(path: Path, texts: int) -> list[str]:
    """A session log whose one packed row stands for ``texts`` chunk events."""
    row = {"type": "text-chunks", "data": {"turn": 1, "step": 1, "index": 0,
                                           "texts": ["ab"] * texts, "dt": [1] * (texts - 1)}}
    lines = [{"type": "session", "id": "child", "version": 1}, row,
             {"type": "turn/end", "data": {"reason": {"kind": "stop"}}}]
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines),
                    encoding="utf-8")
    return ["output", str(path)]


_INPUTS = {"schedule choices": _schedule, "log row texts": _log_row}


def peak_mib(args: Sequence[str]) -> tuple[float, int]:
    """``handoff ARGS``'s own peak resident memory (MiB) and exit status."""
    process = subprocess.Popen([sys.executable, "-m", "sim", *args], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss / 1024, process.returncode


def input_memory(sizes: Sequence[int]) -> list[dict[str, Any]]:
    """A row per input kind and size: bytes on disk, peak MiB, and MiB per million elements
    over the smallest size's peak (what each further element costs)."""
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="handoff-bench-") as folder:
        for kind, make in _INPUTS.items():
            first: tuple[int, float] | None = None
            for size in sizes:
                path = Path(folder) / f"input-{size}"
                args = make(path, size)
                peak, status = peak_mib(args)
                row: dict[str, Any] = {"input": kind, "elements": size,
                                       "bytes": path.stat().st_size, "peak_mib": round(peak, 1),
                                       "exit": status}
                if first is None:
                    first = (size, peak)
                elif size > first[0]:
                    row["mib_per_million"] = round((peak - first[1]) / (size - first[0]) * 1e6,
                                                   1)
                rows.append(row)
                path.unlink()
    return rows
