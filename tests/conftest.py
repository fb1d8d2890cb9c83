from __future__ import annotations

import os
from pathlib import Path

import pytest

from sim import scenario
from sim.conform import install

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"
EXAMPLES = ROOT / "examples"
DEFAULT_WORLD = ROOT / "sim" / "default_world.toml"

# Real DeepSeek Harness session logs the conformance tests compare against. They are not in this
# repository: HANDOFF_SNAPSHOTS names the folder, else ../shared/data/dsh-snapshots beside
# the clone.
SNAPSHOTS = Path(os.environ.get("HANDOFF_SNAPSHOTS")
                 or ROOT.parent / "shared" / "data" / "dsh-snapshots")
# Set by .ci/run: there a missing snapshot folder fails the run instead of skipping.
REQUIRE_SNAPSHOTS = os.environ.get("HANDOFF_REQUIRE_SNAPSHOTS", "") not in ("", "0")
SNAPSHOTS_MISSING = (
    f"conformance tests skipped: no snapshot data at {SNAPSHOTS} (set HANDOFF_SNAPSHOTS to the "
    "dsh-snapshots folder, or clone beside shared/ so ../shared/data/dsh-snapshots exists)")

needs_snapshots = pytest.mark.snapshots

# The conform tests call the released openclaw package through Node 24; `handoff conform` (or
# `python -m sim.conform.install`) installs both into a cache folder. Without them the tests skip
# with one line, unless .ci/run requires them (HANDOFF_REQUIRE_CONFORM=1: there they fail).
REQUIRE_CONFORM = os.environ.get("HANDOFF_REQUIRE_CONFORM", "") not in ("", "0")
CONFORM_MISSING = (
    f"conform tests skipped: Node >= 24.16 or openclaw {install.PINNED_OPENCLAW} is not in "
    f"{install.cache_root()} (run `handoff conform` once to install them)")
_conform_ready: bool | None = None


def conform_ready() -> bool:
    global _conform_ready
    if _conform_ready is None:
        _conform_ready = install.find_installed(install.PINNED_OPENCLAW) is not None
    return _conform_ready


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    conform = [item for item in items if item.get_closest_marker("conform") is not None]
    if conform and not REQUIRE_CONFORM and not conform_ready():
        skip_conform = pytest.mark.skip(reason="openclaw or Node 24 not installed (see the "
                                        "summary line)")
        for item in conform:
            item.add_marker(skip_conform)
    if SNAPSHOTS.is_dir() or REQUIRE_SNAPSHOTS:
        return  # present, or required: tests that need the data run (and fail without it)
    skip = pytest.mark.skip(reason="no conformance snapshot data (see the summary line)")
    for item in items:
        if item.get_closest_marker("snapshots") is not None:
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _conform_ready is False and not REQUIRE_CONFORM:
        terminalreporter.write_line(CONFORM_MISSING)
    if not SNAPSHOTS.is_dir() and not REQUIRE_SNAPSHOTS:
        terminalreporter.write_line(SNAPSHOTS_MISSING)


@pytest.fixture(scope="session")
def default_world() -> scenario.Scenario:
    return scenario.load(DEFAULT_WORLD)
