"""The thread count of the compiled loops: checked once, set around each call.

numba's thread count is one setting for the process; a batch that asks for ``threads``
sets it for the length of its own kernel calls and puts the previous value back, so two
batches (or the solver) with different counts do not disturb each other.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

import numba


def check_threads(threads: Any) -> int:
    """``threads`` as an int from 1 to the cores numba may use, or a ValueError saying so."""
    most = numba.config.NUMBA_NUM_THREADS
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= most:
        raise ValueError(f"threads must be a whole number from 1 to {most} (the cores numba may use, "
                         f"NUMBA_NUM_THREADS), got {threads!r}")
    return threads


#: The context of a call on one thread: nothing to set (a step at batch 1 is a few microseconds,
#: and entering a generator context manager costs one).
_ONE_THREAD = nullcontext()


def numba_threads(threads: int) -> AbstractContextManager[None]:
    """Run the enclosed compiled calls on ``threads`` threads (one thread: the callers run their
    plain loops, which start no thread pool, so there is nothing to set)."""
    return _ONE_THREAD if threads == 1 else _set_threads(threads)


@contextmanager
def _set_threads(threads: int) -> Iterator[None]:
    previous = numba.get_num_threads()
    if previous == threads:
        yield
        return
    numba.set_num_threads(threads)
    try:
        yield
    finally:
        numba.set_num_threads(previous)
