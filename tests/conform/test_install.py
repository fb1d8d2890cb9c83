"""The installer without a registry: one clear line and exit status 2, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sim.conform import install

# A port nothing listens on: both registries refuse at once, and neither client retries.
OFFLINE = {
    "PIP_INDEX_URL": "http://127.0.0.1:9/simple", "PIP_RETRIES": "0", "PIP_TIMEOUT": "2",
    "npm_config_registry": "http://127.0.0.1:9/", "npm_config_fetch_retries": "0",
    "npm_config_fetch_timeout": "2000",
}


def _offline_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "HANDOFF_NODE"}
    return {**env, **OFFLINE, "HANDOFF_CONFORM_CACHE": str(tmp_path / "cache")}


def test_an_unreachable_registry_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "sim", "conform", "--inputs", "1"],
                          env=_offline_env(tmp_path), capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("handoff: ") and "the registry cannot be reached" in last, last
    assert done.stdout == ""
    # Nothing half-installed is left to be taken for a finished install.
    assert install.find_installed(install.PINNED_OPENCLAW, tmp_path / "cache") is None


def test_a_malformed_version_is_refused_before_any_download(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HANDOFF_CONFORM_CACHE", str(tmp_path))
    with pytest.raises(install.InstallError, match="not a version"):
        install.ensure("1.0; rm -rf /", progress=lambda _: None)
    assert list(tmp_path.iterdir()) == []


def test_the_cache_folder_follows_the_environment(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HANDOFF_CONFORM_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert install.cache_root() == tmp_path / "xdg" / "handoff"
    monkeypatch.setenv("HANDOFF_CONFORM_CACHE", str(tmp_path / "own"))
    assert install.cache_root() == tmp_path / "own"
    assert install.package_dir("2026.9.6") == (
        tmp_path / "own" / "openclaw" / "2026.9.6" / "node_modules" / "openclaw")
