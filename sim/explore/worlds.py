"""Where explore's default world lives (sim/default_world.toml): the CLI loads it when no world is
named, the benchmarks measure on it (without importing the CLI above them). Light on purpose:
``handoff --help`` imports it."""

from __future__ import annotations

from importlib import resources


def default_world_path() -> str:
    return str(resources.files("sim").joinpath("default_world.toml"))
