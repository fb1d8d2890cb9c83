"""Flags several ``handoff`` commands share: the world to load, mutants, fault kinds, output
files, and the one-line repro command."""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sim.cli.style import bad_input as _bad_input
from sim.explore.worlds import default_world_path as default_world_path
from sim.textout import printable

# The model and the world are imported where a flag is checked, not here: `handoff --help`
# imports this module and should not pay for them (sim/cli/lazy.py).
if TYPE_CHECKING:
    from sim import scenario as scenario_mod


def load_world(path: str | None) -> scenario_mod.Scenario:
    from sim import scenario as scenario_mod

    return scenario_mod.load(path or default_world_path())


def check_mutants(names: Sequence[str]) -> tuple[str, ...]:
    from actors.mutants import MUTANTS

    for name in names:
        if name not in MUTANTS:
            _bad_input(f"--mutant: unknown mutant {name!r} (known: {', '.join(MUTANTS)})")
    return tuple(names)


def parse_faults(value: str | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    from sim.faults.plan import FAULT_KINDS

    if value.strip() == "all":
        return tuple(FAULT_KINDS)
    if value.strip() == "none":
        return ()
    kinds = tuple(k.strip() for k in value.split(",") if k.strip())
    if not kinds:
        _bad_input("--faults: names no fault kind (give kinds, 'all', or 'none' for no faults)")
    for kind in kinds:
        if kind not in FAULT_KINDS:
            _bad_input(f"--faults: unknown fault kind {kind!r} "
                       f"(known: {', '.join(FAULT_KINDS)}, 'all' or 'none')")
    return kinds


def repro_command(seed: int, world_path: str | None, mutants: Sequence[str],
                  faults: Sequence[str] | None, strategy: str | None,
                  branch_from: str | None = None, branch_at: int | None = None,
                  moment: str | None = None) -> str:
    parts = ["handoff", "replay"]
    if moment:  # a guided sweep's branch (sim/explore/guided.py)
        parts += ["--moment", moment]
    elif branch_from is not None:
        parts += ["--from", branch_from, "--at", str(branch_at)]
    parts += ["--seed", str(seed)]
    if world_path is not None:
        parts += ["--scenario", world_path]
    for mutant in mutants:
        parts += ["--mutant", mutant]
    if faults is not None:
        parts += ["--faults", ",".join(faults)]
    if strategy is not None:
        parts += ["--strategy", strategy]
    parts += ["--format", "text"]
    return shlex.join(parts)


def check_writable(option: str, path: str) -> None:
    """An output file's folder must exist and be writable: checked before anything runs."""
    target = Path(path)
    folder = target.parent
    if target.is_dir():
        _bad_input(f"{option}: {path}: is a folder")
    if not folder.is_dir():
        _bad_input(f"{option}: {path}: cannot write: no such folder {str(folder)!r}")
    if not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        _bad_input(f"{option}: {path}: cannot write: permission denied")


def check_folder(option: str, path: str) -> None:
    """An output folder (created when needed) must be a folder, or be creatable where its
    nearest existing parent is a writable folder: checked before anything runs."""
    target = Path(path)
    if target.exists():
        if not target.is_dir():
            _bad_input(f"{option}: {path}: is not a folder")
        if not os.access(target, os.W_OK):
            _bad_input(f"{option}: {path}: cannot write: permission denied")
        return
    parent = target.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        _bad_input(f"{option}: {path}: cannot create: {str(parent)!r} is not a folder")
    if not os.access(parent, os.W_OK):
        _bad_input(f"{option}: {path}: cannot create: permission denied")


def write_output(path: str, option: str, text: str) -> None:
    try:
        Path(path).write_text(printable(text), encoding="utf-8")
    except BrokenPipeError:  # `--trace-out /dev/stdout | head`: its reader had enough
        raise SystemExit(0) from None
    except OSError as exc:
        _bad_input(f"{option}: {path}: cannot write: {exc.strerror or exc}")
