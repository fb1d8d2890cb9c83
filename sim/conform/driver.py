"""The Python end of the Node driver (``node/driver.mjs``): one process per conformance run,
JSON lines both ways.

Requests are written with ``ensure_ascii`` so lone surrogates travel as ``\\udXXX`` escapes,
which JavaScript's ``JSON.parse`` turns back into lone surrogates (and its ``JSON.stringify``
escapes them the same way on the way back).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Any

from sim.conform.install import Installed

_NODE_DIR = "node"


class DriverError(Exception):
    """The driver answered with an error, or died."""


def manifest_path(version: str) -> Path | None:
    """The per-version manifest shipped with handoff, or None when this version has none."""
    candidate = resources.files("sim.conform").joinpath(_NODE_DIR, f"{version}.json")
    return Path(str(candidate)) if candidate.is_file() else None


def known_versions() -> list[str]:
    folder = resources.files("sim.conform").joinpath(_NODE_DIR)
    return sorted(item.name.removesuffix(".json") for item in folder.iterdir()
                  if item.name.endswith(".json"))


class Driver:
    """A running ``driver.mjs``; :meth:`request` sends one op and waits for its answer."""

    def __init__(self, installed: Installed, manifest: Path) -> None:
        script = Path(str(resources.files("sim.conform").joinpath(_NODE_DIR, "driver.mjs")))
        # OpenClaw's state (the session store the stats line reads) goes to a folder of this
        # run, never to the user's ~/.openclaw.
        self._state = tempfile.TemporaryDirectory(prefix="handoff-openclaw-")
        env = {**os.environ, "HOME": self._state.name,
               "OPENCLAW_STATE_DIR": str(Path(self._state.name) / "state")}
        self._process = subprocess.Popen(
            [str(installed.node), str(script), str(installed.package / "dist"), str(manifest)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, encoding="utf-8", errors="surrogatepass", bufsize=1, env=env)
        self._next = 0
        self.round_trips = 0
        self.round_trip_s = 0.0

    def request(self, op: str, **fields: Any) -> Any:
        assert self._process.stdin is not None and self._process.stdout is not None
        self._next += 1
        line = json.dumps({"id": self._next, "op": op, **fields}, ensure_ascii=True,
                          allow_nan=False)
        started = time.perf_counter()  # wall-clock ok: round-trip figure for handoff bench
        try:
            self._process.stdin.write(line + "\n")
            self._process.stdin.flush()
        except BrokenPipeError as err:
            raise DriverError("the node driver exited") from err
        answer = self._process.stdout.readline()
        self.round_trip_s += time.perf_counter() - started  # wall-clock ok: reported only
        self.round_trips += 1
        if not answer:
            raise DriverError(f"the node driver exited (status {self._process.poll()})")
        reply = json.loads(answer)
        if reply.get("id") != self._next:
            raise DriverError(f"the node driver answered out of turn: {answer[:200]}")
        if "error" in reply:
            raise DriverError(str(reply["error"]).splitlines()[0])
        return reply.get("ok")

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()
        self._state.cleanup()

    def __enter__(self) -> Driver:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
