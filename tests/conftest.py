from __future__ import annotations

from pathlib import Path

import pytest

from sim import scenario

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"
DEFAULT_WORLD = ROOT / "sim" / "default_world.toml"


@pytest.fixture(scope="session")
def default_world() -> scenario.Scenario:
    return scenario.load(DEFAULT_WORLD)
