"""What keeps a run directory whole: one training process at a time, and SIGTERM/SIGHUP as Ctrl-C.

A second ``imperiale train`` (or a ``--resume``) on a run directory that a live process trains in
would write into the same checkpoint and metrics; :class:`RunLock` refuses it, naming the pid of
the process that holds the run.  The lock is a file ``train.lock`` holding that pid and the
process's start time (Linux's ``/proc/PID/stat``), created with ``O_EXCL``; a lock left by a
process that died (``kill -9``, a crash) names a pid that is no longer alive, or that the system
has given since to another process (its start time differs), and is taken over.

A batch scheduler ends a job with SIGTERM and a closed terminal sends SIGHUP:
:func:`~imperiale_agents.parallel.process_pool.signals_as_interrupt` turns both into
``KeyboardInterrupt`` while training runs, so the last complete iteration is checkpointed and the
resume command printed, exactly as for Ctrl-C.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from imperiale_train.config import ConfigError

LOCK_NAME = "train.lock"


class RunLock:
    """``train.lock`` in ``run_dir`` while this process trains there (a context manager)."""

    def __init__(self, run_dir: Path):
        self.path = Path(run_dir) / LOCK_NAME

    def __enter__(self) -> RunLock:
        for _ in range(2):  # the second try follows the removal of a dead process's lock
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                self._take_over_or_refuse()
                continue
            with os.fdopen(fd, "w") as f:
                f.write(f"{os.getpid()} {_started(os.getpid()) or ''}\n")
            return self
        raise ConfigError(f"cannot take the lock {self.path}: another process keeps creating it")

    def __exit__(self, *exc: object) -> None:
        if self._holder() == os.getpid():
            try:
                self.path.unlink(missing_ok=True)
            except OSError as error:  # a file system turned read-only: the lock is stale once we are gone
                warnings.warn(f"could not remove the lock {self.path} ({error.strerror or error}); it names this "
                              "process, which has ended, so the next run here takes it over", stacklevel=2)

    def _holder(self) -> int | None:
        return self._lock()[0]

    def _lock(self) -> tuple[int | None, str | None]:
        """The pid the lock names and the start time it wrote (``None`` where it wrote none)."""
        try:
            words = self.path.read_text().split()
            return int(words[0]), (words[1] if len(words) > 1 else None)
        except (OSError, ValueError, IndexError):
            return None, None

    def _take_over_or_refuse(self) -> None:
        pid, started = self._lock()
        if pid is not None and started is not None and _started(pid) not in (None, started):
            pid = None  # the pid was given since to another process: the lock's own process is gone
        if pid is not None and pid != os.getpid() and _alive(pid):
            raise ConfigError(f"the run in {self.path.parent} is being trained by process {pid} (lock {self.path}); "
                              "wait for it to end, or stop it (Ctrl-C or kill " f"{pid}) and then --resume")
        self.path.unlink(missing_ok=True)  # a stale lock: its process is gone


def _started(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, field 22 of ``/proc/PID/stat``), or
    ``None`` where that cannot be read (no such process, not Linux)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat[stat.rindex(")") + 2:].split()[19]
    except (OSError, ValueError, IndexError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True
