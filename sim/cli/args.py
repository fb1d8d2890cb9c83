"""Flags several ``handoff`` commands share: the world to load, mutants, fault kinds, and the
one-line repro command (output files: sim/cli/files/outfiles.py)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING

from sim.cli.style import bad_input as _bad_input
from sim.explore.worlds import default_world_path as default_world_path

# The model and the world are imported where a flag is checked, not here: `handoff --help`
# imports this module and should not pay for them (sim/cli/lazy.py).
if TYPE_CHECKING:
    from sim import scenario as scenario_mod


def load_world(path: str | None) -> scenario_mod.Scenario:
    from sim import scenario as scenario_mod

    if path is not None and not path.strip():
        _bad_input("--scenario: is empty (leave it out for the built-in default world)")
    return scenario_mod.load(path or default_world_path())


def check_mutants(names: Sequence[str]) -> tuple[str, ...]:
    from actors.mutant_catalogue import MUTANTS

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
