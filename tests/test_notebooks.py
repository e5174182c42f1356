"""Every notebook in notebooks/ runs top to bottom (small settings) and is stored without outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
CELL_TIMEOUT_S = 180


def test_the_notebooks_are_there():
    names = [p.name for p in NOTEBOOKS]
    assert names == ["01_quickstart.ipynb", "02_train_and_evaluate.ipynb", "03_rules_variants.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_stored_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, f"{path.name}: clear the outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, monkeypatch):
    if "train" in path.stem:
        pytest.importorskip("torch")
    monkeypatch.setenv("IMPERIALE_NOTEBOOK_SMALL", "1")  # the kernel inherits the environment
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()  # raises CellExecutionError naming the failing cell
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    assert any(o.output_type in ("stream", "display_data") for c in nb.cells if c.cell_type == "code"
               for o in c.outputs)
