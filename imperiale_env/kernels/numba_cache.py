"""numba's on-disk cache, keyed on every source the kernels may read.

numba checks a cached kernel against its own file only: a kernel that reads a constant of
another module (a rule table of ``core/``, a stage code of ``batch/tables.py``) or inlines a kernel
of another file keeps running its old machine code after that file changes, silently.  So the
cache lives in a folder named by a digest of every Python source of :mod:`imperiale_env` (the
package all kernels and everything they read live in): a change to any of them starts a new folder
and a cold compile (about a minute), never a stale kernel.

The folder is ``imperiale-<digest>`` under ``$NUMBA_CACHE_DIR`` if set, else under
``$XDG_CACHE_HOME/imperiale/numba`` (``~/.cache/imperiale/numba``); only the
:data:`KEEP` most recently used folders of our own are kept there.  Child processes (Ray workers,
process pools, tests that run a script) inherit the setting and compute the same digest.
:func:`use_keyed_cache` runs when :mod:`imperiale_env.kernels` is first imported, before any
kernel is declared.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
PREFIX = "imperiale-"
KEEP = 8


def source_digest(package: Path = PACKAGE) -> str:
    """A digest of the path and contents of every ``.py`` file under ``package``."""
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def keyed_cache_dir(environ: os._Environ | dict[str, str] = os.environ, package: Path = PACKAGE) -> Path:
    """The cache folder for the sources as they are now (see the module's docstring)."""
    name = PREFIX + source_digest(package)
    given = environ.get("NUMBA_CACHE_DIR", "")
    if given and Path(given).name == name:  # set so by a parent process of the same sources
        return Path(given)
    if given:
        return Path(given) / name
    base = Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "imperiale" / "numba" / name


def _prune(folder: Path) -> None:
    """Drop all but the :data:`KEEP` most recently used ``imperiale-*`` folders beside ``folder``."""
    ours = sorted((p for p in folder.parent.glob(PREFIX + "*") if p.is_dir() and p != folder),
                  key=lambda p: p.stat().st_mtime, reverse=True)
    for old in ours[KEEP - 1:]:
        shutil.rmtree(old, ignore_errors=True)


def use_keyed_cache() -> Path | None:
    """Point numba's cache at :func:`keyed_cache_dir` (for this process and its children); the
    folder, or ``None`` where it cannot be made (numba then uses its own default)."""
    import numba

    folder = keyed_cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        os.utime(folder)  # "most recently used", for the pruning of other processes
        _prune(folder)
    except OSError:
        return None
    os.environ["NUMBA_CACHE_DIR"] = str(folder)
    numba.config.CACHE_DIR = str(folder)
    return folder
