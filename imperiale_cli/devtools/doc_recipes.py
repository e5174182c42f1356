"""``python -m imperiale_cli.devtools.doc_recipes [--fresh] [NAME ...]``: the library recipes of the
docs run as written.

A recipe is a section (``## ...``) of docs/libraries.md, docs/rllib.md or docs/openspiel.md with
something to run: its ```bash blocks hold install lines (``pip ...``) and commands (any other
line but the ``python3 -m venv`` that makes the venv), its ```python blocks the code, joined in
order.  A section without install lines takes those of the page's section before it (an
"Install" section above a "Recipe").  The docs say once, at the top of docs/libraries.md, that
the bash lines run in a virtual environment of their own, in the repository's root.

* Without ``--fresh`` each recipe runs in this interpreter's environment (the ``dev`` extra holds
  every library): the commands in the repository's root with this interpreter first on the
  ``PATH``, the code in a temporary folder so that what it saves lands there.  This is the check
  the test suite makes (``tests/test_doc_recipes.py``).
* With ``--fresh`` each recipe gets what a new user has: a copy of the working tree (the files git
  tracks or would track), a new venv in it, the section's install lines and commands run by bash
  exactly as written, then its code in that venv.  Installing torch and a library takes minutes a
  recipe.

The names are the sections' short names (:data:`SHORT_NAMES`, shown by ``--list``); none: every
recipe.  A failing recipe prints its name, the command and the end of its output; the exit status
is the number of recipes that failed.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ("docs/libraries.md", "docs/rllib.md", "docs/openspiel.md")
TIMEOUT_S = 1800
#: The short name of a recipe, by the first word of its section's heading that names a library.
SHORT_NAMES = {"observation": "features", "stable-baselines3": "sb3", "torchrl": "torchrl", "tianshou": "tianshou",
               "cleanrl-style": "cleanrl", "recipe": "rllib", "l'impériale": "openspiel"}


@dataclasses.dataclass(frozen=True)
class Recipe:
    """One section's runnable content: where it is, its install lines and its Python code."""

    name: str
    doc: str
    heading: str
    installs: tuple[str, ...]
    commands: tuple[str, ...]
    code: str


def _sections(text: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """The ``#`` and ``##`` sections of a Markdown ``text``: each heading with its fenced blocks
    (language, content) in order.  A ``#`` inside a fenced block is code, not a heading."""
    sections: list[tuple[str, list[tuple[str, str]]]] = []
    fence: tuple[str, list[str]] | None = None
    for line in text.splitlines():
        if fence is None and line.startswith("```"):
            fence = (line[3:].strip(), [])
        elif fence is not None and line.strip() == "```":
            if sections:
                sections[-1][1].append((fence[0], "\n".join(fence[1]) + "\n"))
            fence = None
        elif fence is not None:
            fence[1].append(line)
        elif re.match(r"#{1,2} ", line):
            sections.append((line.lstrip("# ").strip(), []))
    return sections


def _short_name(doc: str, heading: str) -> str:
    words = heading.lower().replace(":", " ").split()
    for word in words:
        if word in SHORT_NAMES:
            return SHORT_NAMES[word]
    return f"{Path(doc).stem}:{'-'.join(words[:3])}"


def recipes(root: Path = ROOT) -> list[Recipe]:
    """Every section of :data:`DOCS` with code or commands, its install lines beside them."""
    found = []
    for doc in DOCS:
        earlier: tuple[str, ...] = ()
        for title, blocks in _sections((root / doc).read_text(encoding="utf-8")):
            code = [content for language, content in blocks if language == "python"]
            bash = [content for language, content in blocks if language == "bash"]
            lines = [line.strip() for content in bash for line in content.splitlines()]
            installs = tuple(line for line in lines if line.startswith("pip ")) or earlier
            earlier = installs
            commands = tuple(line for line in lines if line and not line.startswith(("pip ", "python3 -m venv", "#")))
            if not code and not commands:
                continue
            found.append(Recipe(_short_name(doc, title), doc, title, installs, commands, "\n".join(code)))
    names = [r.name for r in found]
    if len(set(names)) != len(names):
        raise RuntimeError(f"two recipes share a short name: {names}")
    return found


def pick(all_recipes: list[Recipe], names: list[str]) -> list[Recipe]:
    """The recipes named (all of them for none), or ``ValueError`` naming those there are."""
    by_name = {r.name: r for r in all_recipes}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ValueError(f"no recipe {', '.join(map(repr, unknown))}; there are: {', '.join(by_name)}")
    return [by_name[n] for n in names] if names else all_recipes


def _copy_tree(destination: Path) -> None:
    """The working tree's files that git tracks or would track, as a new user's clone has them."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                            capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)


def run_recipe(recipe: Recipe, fresh: bool, timeout: int = TIMEOUT_S) -> subprocess.CompletedProcess:
    """Run ``recipe`` (see the module's docstring); the finished process, output and errors together."""
    with tempfile.TemporaryDirectory(prefix=f"recipe-{recipe.name}-") as folder:
        work = Path(folder)
        script = work / "recipe.py"
        script.write_text(recipe.code, encoding="utf-8")
        code = [f"(cd {work} && python {script})"] if recipe.code else []
        if fresh:
            tree = work / "imperiale"
            tree.mkdir()
            _copy_tree(tree)
            lines = ["python3 -m venv .recipe-venv", ". .recipe-venv/bin/activate", *recipe.installs]
            cwd, env = tree, None
        else:
            lines = []
            cwd, env = ROOT, {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
        script_lines = ["set -euo pipefail", *lines, *recipe.commands, *code]
        return subprocess.run(["bash", "-c", "\n".join(script_lines)], cwd=cwd, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=timeout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="recipes to run (default: all; --list shows them)")
    parser.add_argument("--fresh", action="store_true", help="each in a new venv with only its documented installs")
    parser.add_argument("--list", action="store_true", help="show the recipes and their installs, run nothing")
    args = parser.parse_args(argv)
    try:
        chosen = pick(recipes(), args.names)
    except ValueError as error:
        parser.error(str(error))
    if args.list:
        for r in chosen:
            print(f"{r.name:10} {r.doc} \"{r.heading}\": {'; '.join(r.installs) or 'no install line'}"
                  f"{''.join('; ' + c for c in r.commands)}{'; python code' if r.code else ''}")
        return 0
    failed = 0
    for r in chosen:
        start = time.perf_counter()
        print(f"{r.name} ({r.doc}, \"{r.heading}\"){' in a fresh venv' if args.fresh else ''} ...", flush=True)
        try:
            done = run_recipe(r, args.fresh)
            ok, output = done.returncode == 0, done.stdout
        except subprocess.TimeoutExpired as expired:
            ok, output = False, f"timed out after {expired.timeout} s"
        print(f"  {'ran' if ok else 'FAILED'} in {time.perf_counter() - start:.0f} s", flush=True)
        if not ok:
            failed += 1
            print("  " + "\n  ".join((output or "").splitlines()[-40:]), flush=True)
    return failed


if __name__ == "__main__":
    sys.exit(main())
