"""One thread at a time inside an object that holds a game: a second thread is refused, not mixed in.

An environment or a batched engine holds games whose state a step rewrites in several places; two
threads stepping it at once would interleave those writes into a game no rule allows, silently.
:func:`one_thread` guards a method with a non-blocking lock per object, kept outside the object
(so that copies and pickles carry none): a call while another thread is inside a guarded method
of the same object raises ``RuntimeError`` saying what to do instead.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable
from typing import Any

_IN_USE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_IN_USE_LOCK = threading.Lock()


def one_thread(method: Callable) -> Callable:
    """``method`` refused (``RuntimeError``) while another thread is inside a guarded method of the
    same object."""

    @functools.wraps(method)
    def guarded(self, *args: Any, **kwargs: Any) -> Any:
        with _IN_USE_LOCK:
            lock = _IN_USE.setdefault(self, threading.Lock())
        if not lock.acquire(blocking=False):
            raise RuntimeError(f"{type(self).__name__}.{method.__name__}(): another thread is using this "
                               f"{type(self).__name__} right now; it is stepped by one thread at a time: give each "
                               "thread its own (or one vector env / BatchGame for all)")
        try:
            return method(self, *args, **kwargs)
        finally:
            lock.release()

    return guarded
