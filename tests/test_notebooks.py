"""The notebooks run top to bottom (SPEC §6). They start simulator subprocesses, so they are
marked ``notebooks``: ``python -m pytest -m notebooks`` (``.ci/run`` runs them)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.notebooks
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_top_to_bottom(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nbclient = pytest.importorskip("nbclient", reason="pip install 'handoff-sim[dev]'")
    nbformat = pytest.importorskip("nbformat", reason="pip install 'handoff-sim[dev]'")
    pytest.importorskip("matplotlib", reason="pip install 'handoff-sim[dev]'")
    # The kernel and the simulator it starts import this source tree, not another install.
    root = str(path.parent.parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (root, os.environ.get("PYTHONPATH")) if p))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = [output for cell in notebook.cells if cell.cell_type == "code"
              for output in cell.get("outputs", []) if output.get("output_type") == "error"]
    assert not errors
