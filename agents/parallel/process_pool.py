"""Worker processes that never leave their caller waiting: a dead worker is an error that says what it did.

``multiprocessing.Pool`` replaces a worker killed mid-task (the out-of-memory killer, ``kill -9``)
and waits forever for the task it held.  :class:`WorkerPool` runs on
:class:`concurrent.futures.ProcessPoolExecutor`, which notices the death and fails every pending
task; the error names the work and the worker's end.  The start method is explicit: ``forkserver``
on Linux by default (a fork of a process that runs numba or torch threads can deadlock), ``spawn``
where there is no forkserver, ``fork`` on request.  Workers ignore Ctrl-C (the parent stops them and
keeps what was done) and die quietly on SIGTERM, so a terminal's signal to the whole process group
prints no ``BrokenPipeError`` from them.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

START_METHODS = ("forkserver", "spawn", "fork")


class WorkerError(RuntimeError):
    """A worker process died (killed, out of memory) while it held a task: named, never waited on."""


def cpu_count() -> int:
    """The cores this process may use (``os.process_cpu_count`` where Python has it, 3.13+)."""
    count = getattr(os, "process_cpu_count", os.cpu_count)()
    return max(1, count or 1)


def default_start_method() -> str:
    """``forkserver`` where it exists (Linux, macOS), else ``spawn``."""
    return "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"


def _quiet_worker() -> None:
    """Ctrl-C goes to the parent, which stops the pool; SIGTERM ends a worker at once, silently."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


class WorkerPool:
    """``workers`` processes doing ``what`` (a phrase for messages: "pimc searches")."""

    def __init__(self, workers: int, what: str, start_method: str | None = None):
        method = start_method or default_start_method()
        if method not in START_METHODS:
            raise ValueError(f"start method {method!r}: allowed: {', '.join(START_METHODS)}")
        self.workers, self.what, self.start_method = workers, what, method
        self._executor = ProcessPoolExecutor(workers, mp_context=mp.get_context(method), initializer=_quiet_worker)

    def map(self, fn: Callable[[Any], Any], jobs: Iterable[Any], chunksize: int = 1) -> list[Any]:
        """``[fn(job) for job in jobs]`` across the workers, in order; :class:`WorkerError` if one dies."""
        jobs = list(jobs)
        try:
            return list(self._executor.map(fn, jobs, chunksize=chunksize))
        except BrokenProcessPool:
            self.close()
            raise WorkerError(f"a worker process died while doing {self.what} ({len(jobs)} tasks, "
                              f"{self.workers} workers, start method {self.start_method}): killed or out of "
                              "memory; the pool is closed and nothing of this batch is used") from None

    def close(self) -> None:
        """Stop the workers now (a search under way is not waited for; what finished was returned)."""
        processes = list((self._executor._processes or {}).values())  # the executor offers no terminate
        self._executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        for process in processes:
            process.join()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LazyPool:
    """Searches on ``workers`` processes, started at the first batch of two or more (one worker, or
    one search: they run here, and no process is ever started); :meth:`close` stops them."""

    def __init__(self, workers: int, what: str):
        self.workers, self.what = workers, what
        self._pool: WorkerPool | None = None

    def map(self, fn: Callable[[Any], Any], jobs: list[Any], chunksize: int = 1) -> list[Any]:
        """``[fn(job) for job in jobs]``, across the workers when there are several of each."""
        if self.workers <= 1 or len(jobs) <= 1:
            return [fn(job) for job in jobs]
        if self._pool is None:
            self._pool = WorkerPool(self.workers, self.what)
        return self._pool.map(fn, jobs, chunksize=chunksize)

    def close(self) -> None:
        """Stop the worker processes, if any were started."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def __del__(self):  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:
            pass


STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))
"""A batch scheduler's end of a job, and a closed terminal: treated as Ctrl-C by the commands that write."""


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


@contextlib.contextmanager
def signals_as_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP raise ``KeyboardInterrupt`` inside the block, so that what was done is kept
    exactly as on Ctrl-C (main thread only: Python delivers signals there); the earlier handlers
    are restored after it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    earlier = {sig: signal.signal(sig, _interrupt) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in earlier.items():
            signal.signal(sig, handler)
