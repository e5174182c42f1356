"""``python -m imperiale_cli.devtools.notebooks [NAME ...]``: every notebook of notebooks/ executed in
place, with the full settings a reader gets, so that a repository page shows their outputs.

Each notebook runs top to bottom in a fresh kernel started in its own folder (as Jupyter starts
it), with ``IMPERIALE_NOTEBOOK_SMALL`` removed from the kernel's environment: the stored outputs are
those of the full-size settings, never of the test suite's small ones.  A notebook is written back
(atomically) only when every cell ran without an error; a failure names the notebook and the cell
and leaves the file as it was.  Cell timings are not recorded, so that a rerun changes only what
the code printed.

Names are the notebooks' file names or stems (``02_train_and_evaluate``); none: all of them, in
order.  Notebook 02 trains for several minutes and notebook 03 simulates thousands of games, so
the whole run takes a quarter of an hour or more on a 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
SMALL_VAR = "IMPERIALE_NOTEBOOK_SMALL"
CELL_TIMEOUT_S = 3600


class NotebookError(RuntimeError):
    """A notebook that could not be found or did not run through; the message says which and why."""


def find_notebooks(folder: Path, names: list[str]) -> list[Path]:
    """The notebooks of ``folder`` named by ``names`` (file names or stems; none: all, sorted), or
    :class:`NotebookError` listing the ones there are, before anything runs."""
    present = sorted(folder.glob("*.ipynb"))
    if not present:
        raise NotebookError(f"no notebook (*.ipynb) in {folder}")
    by_name = {p.name: p for p in present} | {p.stem: p for p in present}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise NotebookError(f"no notebook {', '.join(map(repr, unknown))} in {folder}; there are: "
                            f"{', '.join(p.stem for p in present)}")
    return [by_name[n] for n in names] if names else present


def kernel_environment() -> dict[str, str]:
    """This process's environment without the small-settings switch: the kernel sees what a reader's does."""
    return {k: v for k, v in os.environ.items() if k != SMALL_VAR}


def execute_in_place(path: Path, timeout: int = CELL_TIMEOUT_S) -> int:
    """Run every cell of ``path`` in a fresh kernel started in its folder and write the notebook
    back with its outputs; the number of code cells run.  On an error the file is left unchanged."""
    import nbclient
    import nbformat

    from imperiale_env.core.atomic import write_atomic

    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                                     resources={"metadata": {"path": str(path.parent)}})
    try:
        client.execute(env=kernel_environment())
    except nbclient.exceptions.CellExecutionError as exc:
        raise NotebookError(f"{path.name} failed; the file is left as it was:\n{exc}") from None
    except nbclient.exceptions.CellTimeoutError as exc:
        raise NotebookError(f"{path.name}: a cell ran past {timeout} s; the file is left as it was ({exc})") from None
    except nbclient.exceptions.DeadKernelError:
        raise NotebookError(f"{path.name}: the kernel died (killed, or out of memory); the file is left as it "
                            "was") from None
    nbformat.validate(nb)
    write_atomic(path, nbformat.writes(nb) + "\n", what="notebook")
    return sum(cell.cell_type == "code" for cell in nb.cells)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m imperiale_cli.devtools.notebooks",
                                     description="Execute the notebooks in place with the full settings and store "
                                                 "their outputs.")
    parser.add_argument("names", nargs="*", help="notebooks to run (file name or stem); none: all")
    parser.add_argument("--folder", type=Path, default=NOTEBOOKS, help="the notebooks' folder (default: %(default)s)")
    parser.add_argument("--timeout", type=int, default=CELL_TIMEOUT_S,
                        help="seconds a cell may run before it counts as failed (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.timeout < 1:
        parser.error(f"--timeout must be a positive number of seconds, got {args.timeout}")
    try:
        paths = find_notebooks(args.folder, args.names)
        for path in paths:
            start = time.perf_counter()
            print(f"{path.name}: running ...", flush=True)
            cells = execute_in_place(path, args.timeout)
            print(f"{path.name}: {cells} code cells run and stored, {time.perf_counter() - start:.0f} s", flush=True)
    except NotebookError as exc:
        print(f"imperiale: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
