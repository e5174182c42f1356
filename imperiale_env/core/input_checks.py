"""Checks of what a user hands the suite: files to read, files to write, seeds.

Every command checks its inputs and outputs with these before any long work starts, so that
a typo costs a second, not an overnight run, and so that every such fault reads the same way:
what was given, what is wrong with it, what is allowed. Each check raises ``InputError`` (a
``ValueError``) with that message; the command line turns it into ``imperiale CMD: error: ...``.
"""

from __future__ import annotations

import math
import numbers
import os
import stat
import tempfile
from pathlib import Path

import numpy as np

SEED_LIMIT = 2**63
"""Seeds a user gives lie in ``[0, 2**63)``: they fit a signed 64-bit integer, which is how
numpy, torch, Gymnasium's info dicts and JSON readers in other languages store them."""


class InputError(ValueError):
    """A user-supplied path or value that cannot be used, with the reason and what is allowed."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _text(path: str | os.PathLike[str], what: str) -> str:
    """The path as text, refusing an empty one and one with a NUL byte (no system call takes it)."""
    text = os.fspath(path)
    if not str(text).strip():
        raise InputError(f"the {what} path is empty: give a path")
    if "\x00" in str(text):
        raise InputError(f"the {what} path {str(text)!r} contains a NUL byte, which no file name may hold")
    return str(text)


def _can_create_in(folder: Path) -> bool:
    """Whether a file can really be made in ``folder``: permission bits say yes to root even
    where the file system says no (``/proc``, a read-only mount), so a scratch file is made."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def input_file(path: str | os.PathLike[str], what: str = "file") -> Path:
    """``path`` as a readable regular file, or ``InputError`` saying what it is instead."""
    path = Path(_text(path, what))
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise InputError(f"no such {what}: {str(path)!r}") from None
    except OSError as exc:
        raise InputError(f"cannot read the {what} {str(path)!r}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise InputError(f"the {what} {str(path)!r} is {_kind(mode)}; a regular file is expected")
    if not os.access(path, os.R_OK):
        raise InputError(f"the {what} {str(path)!r} is not readable (permission denied)")
    return path


def output_file(path: str | os.PathLike[str], what: str = "output file", *, may_exist: bool) -> Path:
    """``path`` as a file that can be written: its folder exists and is writable, and it is not a
    directory or special file. With ``may_exist=False`` an existing file is refused, so that
    nothing a user wrote is overwritten."""
    path = Path(_text(path, what))
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"cannot write the {what} {str(path)!r}: no such folder {str(parent)!r}")
    if not os.access(parent, os.W_OK | os.X_OK) or not _can_create_in(parent):
        raise InputError(f"cannot write the {what} {str(path)!r}: the folder {str(parent)!r} is not writable")
    if path.exists() or path.is_symlink():
        mode = path.stat().st_mode if path.exists() else 0
        if not stat.S_ISREG(mode):
            raise InputError(f"the {what} {str(path)!r} is {_kind(mode)}; a regular file is expected")
        if not may_exist:
            raise InputError(f"the {what} {str(path)!r} exists already; it is not overwritten: "
                             "choose another name or move the file away")
        if not os.access(path, os.W_OK):
            raise InputError(f"the {what} {str(path)!r} is not writable (permission denied)")
    return path


def output_dir(path: str | os.PathLike[str], what: str = "output folder") -> Path:
    """``path`` as a folder to write into: an existing writable folder, or one that can be made
    (its nearest existing ancestor is a writable folder). An empty path is refused rather than
    taken as the current directory."""
    path = Path(_text(path, what))
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise InputError(f"the {what} {str(path)!r} cannot be made: {str(probe)!r} is a file, not a folder")
    if not os.access(probe, os.W_OK | os.X_OK) or not _can_create_in(probe):
        raise InputError(f"the {what} {str(path)!r} cannot be written: {str(probe)!r} is not writable")
    return path


def seed(value: object, what: str = "seed") -> int:
    """``value`` as a seed: an integer in ``[0, 2**63)``, numpy's integers included (bools and
    floats are refused), returned as a Python ``int``."""
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            raise InputError(f"the {what} must be an integer in [0, 2**63), got the float {value!r}")
        raise InputError(f"the {what} must be an integer in [0, 2**63), got {value!r}")
    if not 0 <= value < SEED_LIMIT:
        shown = str(value) if abs(value) < 10**30 else f"an integer of {value.bit_length()} bits"
        raise InputError(f"the {what} must be in [0, 2**63) (0 .. {SEED_LIMIT - 1}), got {shown}")
    return value
