"""The layout's limits (issue 22), from the import graph read off the source: no import cycle in
actors/ or sim/, no module over 450 lines, no folder of more than a dozen modules, and every
package's imports stated by a contract in pyproject.toml (lint-imports checks the contracts)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from sim import diagram
from tests.conftest import ROOT


def test_no_import_cycle_in_the_model_or_the_simulator() -> None:
    assert diagram.cycles(diagram.with_package_inits(diagram.import_graph())) == []


def test_the_cycle_finder_finds_a_cycle_through_a_packages_init(tmp_path: Path) -> None:
    # sim.q imports sim.p.s, which runs sim.p's __init__ first, and that imports sim.q back.
    (tmp_path / "actors").mkdir()
    (tmp_path / "sim" / "p").mkdir(parents=True)
    (tmp_path / "actors" / "__init__.py").write_text("")
    (tmp_path / "sim" / "__init__.py").write_text("")
    (tmp_path / "sim" / "p" / "__init__.py").write_text("from sim import q\n")
    (tmp_path / "sim" / "p" / "s.py").write_text("")
    (tmp_path / "sim" / "q.py").write_text("from sim.p import s\n")
    graph = diagram.import_graph(tmp_path)
    assert diagram.cycles(graph) == []  # the modules' own imports make no cycle
    assert diagram.cycles(diagram.with_package_inits(graph)) == [["sim.p", "sim.q"]]


def test_the_cycle_finder_finds_a_cycle_through_a_lazy_import(tmp_path: Path) -> None:
    (tmp_path / "actors").mkdir()
    (tmp_path / "sim").mkdir()
    (tmp_path / "actors" / "__init__.py").write_text("")
    (tmp_path / "sim" / "__init__.py").write_text("")
    (tmp_path / "sim" / "a.py").write_text("from sim import b\n")
    (tmp_path / "sim" / "b.py").write_text("def f() -> None:\n    from sim.a import g\n")
    (tmp_path / "sim" / "c.py").write_text("from sim.b import f\n")
    assert diagram.cycles(diagram.import_graph(tmp_path)) == [["sim.a", "sim.b"]]


def test_no_module_over_the_line_limit() -> None:
    over = {path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
            for path in diagram.modules().values()}
    over = {path: lines for path, lines in over.items() if lines > diagram.MAX_LINES}
    assert over == {}


def test_no_folder_holds_more_than_a_dozen_modules() -> None:
    folders: dict[str, list[str]] = {}
    for path in diagram.modules().values():
        if path.name != "__init__.py":
            folders.setdefault(path.parent.relative_to(ROOT).as_posix(), []).append(path.name)
    crowded = {folder: len(names) for folder, names in folders.items()
               if len(names) > diagram.MAX_SIBLINGS}
    assert crowded == {}


def _contracts() -> list[dict[str, Any]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return list(config["tool"]["importlinter"]["contracts"])


def test_every_package_is_on_the_map_and_has_an_import_contract() -> None:
    packages = {name for name, path in diagram.modules().items()
                if path.name == "__init__.py" and name.count(".") == 1}
    assert packages - set(diagram.SUBSYSTEMS) == set(), "add it to sim/diagram.py's SUBSYSTEMS"
    stated = {c["source_modules"][0] for c in _contracts()
              if c["name"].endswith("imports only the packages it needs")}
    assert set(diagram.SUBSYSTEMS) - stated == set(), "state what it may import (pyproject.toml)"


def test_each_import_contract_forbids_exactly_the_packages_not_imported_today() -> None:
    """A contract that forbids less than it could would let a new dependency in unseen; one that
    forbids a package imported today would fail lint-imports. Either way the map is stale."""
    edges = diagram.package_edges(diagram.import_graph())
    for contract in _contracts():
        if not contract["name"].endswith("imports only the packages it needs"):
            continue
        (source,) = contract["source_modules"]
        not_imported = set(diagram.SUBSYSTEMS) - {source} - edges.get(source, set())
        assert set(contract["forbidden_modules"]) == not_imported, source
        assert contract.get("allow_indirect_imports") is True, source


def test_the_package_map_is_current() -> None:
    text = diagram.DOC.read_text(encoding="utf-8")
    _, _, rest = text.partition(diagram.BEGIN_PACKAGES)
    assert rest, "docs/architecture.md has no package map"
    assert diagram.render(text) == text, "docs are stale: run python -m sim.diagram"
