"""The notebooks: stored with the outputs of a full-settings run (``python -m imperiale_cli.devtools.notebooks``),
each re-runnable in the same folder without losing what an earlier run wrote (small settings here), and the
regeneration command itself."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from imperiale_cli.devtools import notebooks as regen

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
CELL_TIMEOUT_S = 180
REGENERATE = "python -m imperiale_cli.devtools.notebooks"


def code_cells(nb) -> list:
    return [cell for cell in nb.cells if cell.cell_type == "code"]


def output_text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def error_outputs(nb) -> list:
    return [o for cell in code_cells(nb) for o in cell.outputs if o.output_type == "error"]


def test_the_notebooks_are_there():
    names = [p.name for p in NOTEBOOKS]
    assert names == ["01_quickstart.ipynb", "02_train_and_evaluate.ipynb", "03_rules_variants.ipynb",
                     "04_champion_and_envs.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_stored_with_full_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    cells = code_cells(nb)
    counts = [cell.execution_count for cell in cells]
    assert counts == list(range(1, len(cells) + 1)), f"{path.name}: not run top to bottom; run {REGENERATE}"
    assert not error_outputs(nb), f"{path.name}: a stored cell failed"
    first = output_text(cells[0])
    assert "full settings" in first and "small settings" not in first, (
        f"{path.name}: the stored outputs must be the full settings' ({REGENERATE}, without IMPERIALE_NOTEBOOK_SMALL)")
    assert all(cell.outputs for cell in cells if "print(" in cell.source or "display(" in cell.source
               or "plt.show()" in cell.source), f"{path.name}: a cell that shows something has no output"
    text = path.read_text()
    # neither this checkout nor the one the notebook was run in (CI's checkout is elsewhere)
    absolute = re.findall(r"(?:/(?:work|home|root|tmp|check|Users)/|[A-Z]:\\\\)[^\s\"']*", text)
    assert str(ROOT) not in text and not absolute, f"{path.name}: the outputs name a machine's own path: {absolute[:3]}"


def test_the_figures_are_stored():
    """Every notebook but the quickstart draws figures; a repository page shows them as PNGs."""
    for path in NOTEBOOKS[1:]:
        nb = nbformat.read(path, as_version=4)
        images = [o for cell in code_cells(nb) for o in cell.outputs if "image/png" in o.get("data", {})]
        assert images, f"{path.name} stores no figure"


def _execute(path: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()  # raises CellExecutionError naming the failing cell
    return nb


def _files(folder: Path, leave_out: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file() and p != leave_out}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_runs_twice_in_the_same_folder(path, tmp_path, monkeypatch):
    """Run top to bottom twice in one folder (small settings): both runs succeed, and every file the
    first one wrote is still there, unchanged (notebook 02 trains in a new run folder each time)."""
    if "train" in path.stem:
        pytest.importorskip("torch")
    monkeypatch.setenv("IMPERIALE_NOTEBOOK_SMALL", "1")  # the kernel inherits the environment
    copy = tmp_path / path.name
    shutil.copy(path, copy)
    first = _execute(copy)
    written = _files(tmp_path, copy)
    second = _execute(copy)
    for nb in (first, second):
        assert not error_outputs(nb)
        assert "small settings" in output_text(code_cells(nb)[0])
    assert {p: p.read_bytes() for p in written if p.is_file()} == written, "the second run changed the first's files"
    if "train" in path.stem:
        runs = tmp_path / "runs" / "notebook_ppo_small"
        assert sorted(p.name for p in runs.iterdir()) == ["001", "002"]
        for run in ("001", "002"):
            for part in ("scratch", "fine_tuned"):
                assert (runs / run / part / "checkpoint.pt").is_file()
        assert "earlier runs, kept as they are: 001" in output_text(code_cells(second)[0])


def _tiny_notebook(folder: Path, source: str) -> Path:
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    nb.cells = [nbformat.v4.new_code_cell(source)]
    path = folder / "t.ipynb"
    nbformat.write(nb, path)
    return path


def test_regeneration_runs_with_the_full_settings(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("IMPERIALE_NOTEBOOK_SMALL", "1")  # set here, and the kernel must not see it
    path = _tiny_notebook(tmp_path, 'import os\nprint(repr(os.environ.get("IMPERIALE_NOTEBOOK_SMALL")), os.getcwd())')
    assert regen.main(["--folder", str(tmp_path), "t"]) == 0
    (cell,) = code_cells(nbformat.read(path, as_version=4))
    assert cell.execution_count == 1
    assert output_text(cell) == f"None {tmp_path}\n"  # run in the notebook's folder
    assert "1 code cells run and stored" in capsys.readouterr().out


def test_regeneration_leaves_a_failing_notebook_as_it_was(tmp_path, capsys):
    path = _tiny_notebook(tmp_path, 'raise RuntimeError("boom")')
    before = path.read_bytes()
    assert regen.main(["--folder", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "t.ipynb failed; the file is left as it was" in err and "boom" in err
    assert path.read_bytes() == before


def test_regeneration_refuses_an_unknown_name_before_running(tmp_path, capsys):
    _tiny_notebook(tmp_path, "print(1)")
    assert regen.main(["--folder", str(tmp_path), "t", "05_missing"]) == 1
    err = capsys.readouterr().err
    assert "no notebook '05_missing'" in err and "there are: t" in err
    assert code_cells(nbformat.read(tmp_path / "t.ipynb", as_version=4))[0].execution_count is None


def test_regeneration_says_when_the_kernel_dies(tmp_path, capsys):
    path = _tiny_notebook(tmp_path, "import os\nos._exit(3)")
    before = path.read_bytes()
    assert regen.main(["--folder", str(tmp_path)]) == 1
    assert "t.ipynb: the kernel died (killed, or out of memory); the file is left as it was" in capsys.readouterr().err
    assert path.read_bytes() == before
