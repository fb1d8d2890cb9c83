"""The layout's limits (issues 22, 33), from the import graph read off the source: no import cycle
in actors/ or sim/, no two packages importing each other, no module over 450 lines, no folder of
more than a dozen modules, no function in actors/ over 80 lines, and every package in one layer of
the layers contract in pyproject.toml (lint-imports checks the contract)."""

from __future__ import annotations

from pathlib import Path

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


def test_no_function_in_the_model_is_over_80_lines() -> None:
    lengths = diagram.function_lengths()
    assert len(lengths) > 500  # it read the model
    over = {where: lines for where, lines in lengths.items()
            if lines > diagram.MAX_FUNCTION_LINES}
    assert over == {}, "split it along its protocol's own steps"


def test_the_function_check_finds_a_long_function_and_its_closure(tmp_path: Path) -> None:
    (tmp_path / "actors" / "p").mkdir(parents=True)
    (tmp_path / "sim").mkdir()
    for init in ("actors", "actors/p", "sim"):
        (tmp_path / init / "__init__.py").write_text("")
    short = ["def short() -> None:", *(f"    x{i} = {i}" for i in range(79))]  # 80: the limit
    run = ["async def run() -> None:", "    def handle() -> None:",
           *(f"        y{i} = {i}" for i in range(40)), "    handle()",
           *(f"    z{i} = {i}" for i in range(40))]  # 83 lines, 41 of them its closure's
    (tmp_path / "actors" / "p" / "a.py").write_text("\n".join([*short, "", "", *run]) + "\n")
    (tmp_path / "sim" / "s.py").write_text("\n".join(run) + "\n")  # not the model
    lengths = diagram.function_lengths(tmp_path)
    assert lengths == {"actors/p/a.py:short:1": 80, "actors/p/a.py:run:83": 83,
                       "actors/p/a.py:handle:84": 41}
    over = {where for where, lines in lengths.items() if lines > diagram.MAX_FUNCTION_LINES}
    assert over == {"actors/p/a.py:run:83"}


def test_no_folder_holds_more_than_a_dozen_modules() -> None:
    folders: dict[str, list[str]] = {}
    for path in diagram.modules().values():
        if path.name != "__init__.py":
            folders.setdefault(path.parent.relative_to(ROOT).as_posix(), []).append(path.name)
    crowded = {folder: len(names) for folder, names in folders.items()
               if len(names) > diagram.MAX_SIBLINGS}
    assert crowded == {}


def test_no_two_packages_import_each_other() -> None:
    assert diagram.two_way(diagram.package_edges(diagram.import_graph())) == []


def test_the_pair_finder_finds_two_packages_importing_each_other(tmp_path: Path) -> None:
    # sim.p.a imports sim.q.b and sim.q.c imports sim.p.d: no module cycle, but a package pair.
    for folder in ("actors", "sim", "sim/p", "sim/q"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "sim" / "p" / "a.py").write_text("from sim.q import b\n")
    (tmp_path / "sim" / "p" / "d.py").write_text("")
    (tmp_path / "sim" / "q" / "b.py").write_text("")
    (tmp_path / "sim" / "q" / "c.py").write_text("from sim.p import d\n")
    graph = diagram.import_graph(tmp_path)
    assert diagram.cycles(diagram.with_package_inits(graph)) == []
    assert diagram.two_way(diagram.package_edges(graph)) == [("sim.p", "sim.q")]


def test_every_package_and_top_module_sits_in_one_layer() -> None:
    """Every node (a package, or a module directly in actors/ or sim/) is in exactly one layer,
    so lint-imports checks all of them; the top packages' own __init__ imports nothing."""
    modules = diagram.modules()
    packages = {name for name, path in modules.items()
                if path.name == "__init__.py" and name.count(".") == 1}
    assert packages - set(diagram.SUBSYSTEMS) == set(), "add it to sim/diagram.py's SUBSYSTEMS"
    nodes = {diagram.package_of(name) for name in modules} - set(diagram.TOPS)
    placed = [node for layer in diagram.layers() for node in layer]
    assert len(placed) == len(set(placed)), "a node sits in two layers"
    assert nodes - set(placed) == set(), "place it in a layer (pyproject.toml)"
    assert set(placed) - nodes == set(), "the contract names a node that does not exist"
    assert len(diagram.layers()) == len(diagram.LAYER_TITLES)
    graph = diagram.import_graph()
    assert {top: graph[top] for top in diagram.TOPS} == {top: set() for top in diagram.TOPS}


def test_the_package_map_is_current() -> None:
    text = diagram.DOC.read_text(encoding="utf-8")
    _, _, rest = text.partition(diagram.BEGIN_LAYERS)
    assert rest, "docs/architecture.md has no layer diagram"
    assert diagram.render(text) == text, "docs are stale: run python -m sim.diagram"
