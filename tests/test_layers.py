"""Every module of the model is either a pure core (listed in the import-linter contract that
keeps IO out of it) or one of the named shells, so a new module cannot slip past the contract."""

from __future__ import annotations

import tomllib
from typing import Any

from tests.conftest import ROOT

# The modules allowed to do IO: the Trio shells, the Port they run on, the SQLite store.
SHELLS = {"actors.child.shell", "actors.child.receipts", "actors.delivery.shell",
          "actors.delivery.wakes.delivery_wakes", "actors.delivery.wakes.delivery_waves",
          "actors.requester.turns", "actors.requester.actor", "actors.requester.spawning",
          "actors.requester.receiving", "actors.requester.reads", "actors.child.session_log",
          "actors.requester.waves", "actors.delivery.sweeper", "actors.child.restart",
          "actors.requester.notices",
          "actors.gateway.shell", "actors.requester.shell", "actors.runtime",
          "actors.store.sqlite", "actors.store.schema"}


def _pure_contract() -> dict[str, Any]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts = config["tool"]["importlinter"]["contracts"]
    (pure,) = [c for c in contracts if "Pure cores" in c["name"]]
    return dict(pure)


def _model_modules() -> set[str]:
    """Every module of actors/ by dotted name, packages' ``__init__`` left out."""
    modules = set()
    for path in sorted((ROOT / "actors").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__" or any(p.startswith((".", "_")) for p in parts):
            continue
        modules.add(".".join(parts))
    return modules


def _covered(module: str, names: set[str]) -> bool:
    """Whether a module or one of the packages holding it is named."""
    parts = module.split(".")
    return any(".".join(parts[:k]) in names for k in range(2, len(parts) + 1))


def test_every_model_module_is_a_listed_pure_core_or_a_shell() -> None:
    modules = _model_modules()
    pure = set(_pure_contract()["source_modules"])
    assert pure & SHELLS == set()
    both = sorted(m for m in modules if _covered(m, pure) and _covered(m, SHELLS))
    assert both == [], "a module is both pure and a shell"
    loose = sorted(m for m in modules if not _covered(m, pure) and not _covered(m, SHELLS))
    assert loose == [], "classify it: pure (pyproject.toml) or a shell"
    known = {".".join(m.split(".")[:k]) for m in modules for k in range(2, len(m.split(".")) + 1)}
    assert pure - known == set(), "the contract names a module that does not exist"
    assert SHELLS - known == set(), "a shell named here does not exist"


def test_the_pure_contract_forbids_io_and_the_simulator() -> None:
    forbidden = set(_pure_contract()["forbidden_modules"])
    assert forbidden == {"trio", "sqlite3", "time", "random", "sim"}
