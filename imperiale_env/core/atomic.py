"""Atomic file writes: a full or read-only disk leaves the last good file and one clear line.

Every file imperiale writes (checkpoints, exported policies, records, ``--out`` results, plots)
goes through :func:`write_atomic`: the bytes go to a temporary file in the same folder (so the
final rename stays on one file system), are flushed and fsynced, and the temporary file is
then renamed over the target (``os.replace``) or linked to a new name (``os.link``, which fails
if the name exists, so a file that appeared meanwhile is never overwritten).  A reader sees the
old file or the new one, never half of one.  On any failure the temporary file is removed and a
:class:`WriteError` names the path and the operating system's reason.  Files that grow by lines
(records, ``metrics.jsonl``) take :func:`append_whole`: the lines are appended whole or not at all.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

Payload = bytes | str | Callable[[BinaryIO], None]
"""What to write: bytes, text (UTF-8), or a function that writes into the open binary file."""


class WriteError(OSError):
    """A file could not be written (full disk, read-only file system, no permission); the
    message names the path and the reason, and says that the earlier file, if any, is kept."""


def write_atomic(path: str | os.PathLike[str], payload: Payload, *, overwrite: bool = True,
                 what: str = "file") -> Path:
    """Write ``payload`` to ``path`` atomically; the path written.

    With ``overwrite=False`` an existing ``path`` raises ``FileExistsError`` (not a
    :class:`WriteError`: the caller decides whether to choose another name).  The new file
    keeps the mode of the file it replaces, else the usual ``0o666 & ~umask``.
    """
    path = Path(path)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o666 & ~_umask()
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _write_error(path, what, exc) from None
    try:
        with os.fdopen(fd, "wb") as f:
            _fill(f, payload)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        if overwrite:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError as exc:
        raise _write_error(path, what, exc) from None
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
    return path


def _fill(f: BinaryIO, payload: Payload) -> None:
    if isinstance(payload, str):
        f.write(payload.encode("utf-8"))
    elif isinstance(payload, bytes | bytearray | memoryview):
        f.write(payload)
    else:
        payload(f)


def _write_error(path: Path, what: str, exc: OSError) -> WriteError:
    kept = "the earlier file is kept" if path.exists() else "nothing was written"
    error = WriteError(f"cannot write the {what} {path}: {exc.strerror or exc} ({kept})")
    error.errno = exc.errno
    return error


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def append_whole(path: str | os.PathLike[str], data: bytes, what: str = "file") -> None:
    """Append ``data`` to ``path`` (created if missing) whole or not at all: if a write or the
    fsync fails (a full disk, a file system turned read-only) the file is cut back to its size
    before and :class:`WriteError` says so.  ``data`` is written as given."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o666)
    except OSError as exc:
        raise _append_error(path, what, exc, "nothing was appended") from None
    try:
        size = os.fstat(fd).st_size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except OSError as exc:
            try:
                os.ftruncate(fd, size)
                kept = "nothing was appended, the file is as it was"
            except OSError:
                kept = f"the file may end in part of a line (its first {size} bytes are as they were)"
            raise _append_error(path, what, exc, kept) from None
    finally:
        os.close(fd)


def _append_error(path: str | os.PathLike[str], what: str, exc: OSError, kept: str) -> WriteError:
    error = WriteError(f"cannot append to the {what} {str(path)!r}: {exc.strerror or exc}; {kept}")
    error.errno = exc.errno
    return error
