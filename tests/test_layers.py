"""Every module of the model is either a pure core (listed in the import-linter contract that
keeps IO out of it) or one of the named shells, so a new module cannot slip past the contract."""

from __future__ import annotations

import tomllib
from typing import Any

from tests.conftest import ROOT

# The modules allowed to do IO: the Trio shells, the Port they run on, the SQLite store.
SHELLS = {"actors.child", "actors.delivery", "actors.delivery_wakes", "actors.delivery_waves",
          "actors.requester_turns", "actors.requester_waves",
          "actors.gateway", "actors.requester", "actors.runtime",
          "actors.store_sqlite", "actors.store_schema"}


def _pure_contract() -> dict[str, Any]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts = config["tool"]["importlinter"]["contracts"]
    (pure,) = [c for c in contracts if "Pure cores" in c["name"]]
    return dict(pure)


def test_every_model_module_is_a_listed_pure_core_or_a_shell() -> None:
    modules = set()
    for path in (ROOT / "actors").iterdir():
        if path.name == "__init__.py" or path.name.startswith((".", "_")):
            continue
        if path.suffix == ".py" or (path.is_dir() and (path / "__init__.py").exists()):
            modules.add(f"actors.{path.stem if path.suffix == '.py' else path.name}")
    pure = set(_pure_contract()["source_modules"])
    assert pure & SHELLS == set()
    assert modules - pure - SHELLS == set(), "classify it: pure (pyproject.toml) or a shell"
    assert pure - modules == set(), "the contract names a module that does not exist"


def test_the_pure_contract_forbids_io_and_the_simulator() -> None:
    forbidden = set(_pure_contract()["forbidden_modules"])
    assert forbidden == {"trio", "sqlite3", "time", "random", "sim"}
