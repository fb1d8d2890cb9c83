"""Tables a person reads fit the terminal (issue 37 item 5): in 80 columns ``handoff run`` and
``handoff bench`` wrap at spaces or leave a column out (and say so), and never split a file name
or cut a value."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console
from rich.table import Table

from sim.bench.report import print_figures
from sim.cli import root
from sim.textout import fit
from tests.conftest import ROOT

WIDTH = 80


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


def test_fit_wraps_at_spaces_then_drops_columns_and_never_cuts() -> None:
    table = Table()
    table.add_column("file", no_wrap=True)
    table.add_column("count", justify="right")
    table.add_column("notes")
    name = "scenarios/a-rather-long-file-name-of-forty-odd.toml"
    table.add_row(name, "1,234,567", "several words that can wrap onto lines of their own")
    console = Console(width=WIDTH, record=True, file=io.StringIO())
    assert fit(table, WIDTH, drop=("notes",)) == []  # wrapping the notes is enough
    console.print(table)
    text = console.export_text()
    assert all(len(line) <= WIDTH for line in _lines(text))
    assert name in text and "1,234,567" in text and "several" in text and "their" in text
    wide = Table()
    for header in ("file", "extra", "more"):
        wide.add_column(header, no_wrap=True)
    wide.add_row(name, "x" * 30, "y" * 20)
    assert fit(wide, WIDTH, drop=("extra", "more")) == ["extra"]
    assert [c.header for c in wide.columns] == ["file", "more"]


def test_run_fits_80_columns_and_splits_no_file_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")
    longest = sorted((ROOT / "scenarios").rglob("*.toml"), key=lambda p: -len(str(p)))[:4]
    failing = "a-failing-scenario-with-a-name-long-enough-to-matter.toml"
    (tmp_path / failing).write_text(
        '[[sessions]]\nkey = "agent:main:main"\n\n[[children]]\nid = "c1"\nrun_for = 5\n'
        'reply = "done"\n\n[expect]\nviolations = ["at-most-once"]\n', encoding="utf-8")
    paths = [str(p.relative_to(ROOT)) for p in longest] + [failing]
    assert max(map(len, paths)) > WIDTH // 2 + 20  # names long enough to crowd the table out
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(root, "console", lambda stderr=False: Console(
        width=WIDTH, highlight=False, soft_wrap=True))
    done = CliRunner().invoke(root.main, ["run", *paths])
    assert done.exit_code == 1, done.output
    lines = _lines(done.stdout)
    table = [line for line in lines if not line.startswith(("FAIL ", "("))]
    assert all(len(line) <= WIDTH for line in table), done.stdout
    for path in paths:  # each file name whole, on a row of its own
        assert sum(line.startswith(path + " ") for line in table) == 1, (path, done.stdout)
    assert len(lines) <= len(paths) + 5, done.stdout  # one line a row, not two or three
    # The columns left out are named, and the failure's reason is still printed.
    assert any(line.startswith("(") and "left out" in line for line in lines)
    assert f"FAIL {failing}: expected a violation of at-most-once" in done.stdout
    assert "4 passed, 1 failed" in done.stdout


def test_bench_tables_fit_80_columns_and_cut_no_value(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    results = ROOT / "benchmarks" / "results" / "2026-12-02T0934-2core.json"
    figures = json.loads(results.read_text(encoding="utf-8"))
    figures.update(shrink={name: {"first_seed": 7, "records_before": 104_467, "records_after": 77,
                                  "ratio": 0.303, "runs": 12_345, "cpu_seconds": 1.5}
                           for name in list(figures["detection"])[:3]},
                   shrink_within_tenth=2, shrink_rows=3, shrink_runs=30_000,
                   shrink_cpu_seconds=4.5)
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    print_figures(figures)
    out = capsys.readouterr().out
    table_lines = [line for line in _lines(out) if line[:1] in "┃│┏┡└ ─" and line.strip()]
    assert table_lines and all(len(line) <= WIDTH for line in table_lines), out
    for row in figures["formatter"]:
        assert f"{row['output_chars']:,}" in out and f"{row['input_chars']:,}" in out
    for row in figures["scale"]:
        assert str(row["records"]) in out
    for name in figures["detection"]:
        assert name in out


def test_list_mutants_wraps_at_words_in_an_80_column_terminal(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import os
    import types

    from actors.mutant_catalogue import MUTANTS
    from sim.cli import probes

    monkeypatch.setattr(probes, "sys", types.SimpleNamespace(
        stdout=types.SimpleNamespace(isatty=lambda: True)))
    monkeypatch.setattr(probes.shutil, "get_terminal_size", lambda: os.terminal_size((WIDTH, 24)))
    probes.print_mutants(as_json=False)
    out = capsys.readouterr().out
    assert all(len(line) <= WIDTH for line in out.splitlines())
    words = " ".join(out.split())  # every description whole, its words in order
    for name, description in MUTANTS.items():
        assert name in words and " ".join(description.split()) in words
