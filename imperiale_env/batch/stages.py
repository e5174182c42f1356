"""The stage machine of the batched engine: the Python side of the compiled step
(:mod:`imperiale_env.batch.stages_kernels`).

:class:`StageMachine` calls the kernels on the batch state's own arrays and does what
needs Python around them: empties the score event buffers into the engine's event log,
archives the deals of games paused at a deal's end (``keep_history``, the only reason a game
pauses) and resumes them, and tells the engine which games ended, in the order it numbers
the games that follow.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

import numba
import numpy as np

from imperiale_env.batch.addresses import STALE_CACHE
from imperiale_env.batch.card_play import illegal_actions
from imperiale_env.batch.stages_kernels import (
    PAUSED,
    RESUME,
    STALE,
    START,
    STEP,
    run_at,
    run_slice,
    step_at,
    step_slice,
    step_threaded,
)
from imperiale_env.batch.state import BatchState
from imperiale_env.batch.tables import Tables

_NO_SEEDS = np.zeros(0, dtype=np.uint64)
_NO_ROWS = np.zeros(0, dtype=np.int64)
_NO_BITS = np.zeros(0, dtype=np.uint64)
_NOTHING = nullcontext()


def _wrapping() -> AbstractContextManager:
    """With ``NUMBA_DISABLE_JIT`` the kernels run as Python on numpy integers, where the seeded
    hashes wrap around with a warning; compiled, there is nothing to silence (nor to pay a call)."""
    return np.errstate(over="ignore") if numba.config.DISABLE_JIT else _NOTHING


#: Event rows a buffer holds beyond the bound of one game (a slice flushes and goes on when full).
_EVENT_ROWS = 1 << 14


class StageMachine:
    """The compiled stages of a batch of ``n`` games under ``tables``, with the buffers they write.

    It holds no engine: each call takes the state and the given deal orders, hands the events the
    kernels wrote to ``log_events``, and, with ``archive_deals``, the games paused at a deal's end
    (to keep their history) before running them on."""

    def __init__(self, tables: Tables, n: int, threads: int, record_events: bool,
                 log_events: Callable[[np.ndarray], None], archive_deals: Callable[[np.ndarray], None] | None):
        self.tables, self.n, self.threads = tables, n, threads
        self._log_events, self._archive_deals = log_events, archive_deals
        bound = tables.arrays.event_bound
        rows = 2 * bound + _EVENT_ROWS if record_events else 0
        self.events = np.zeros((threads, rows, 5), dtype=np.int64)
        self.counts = np.zeros((threads, 1), dtype=np.int64)
        #: What each game did in the last call (kernels.batch_stages: waiting, paused, or its end's order key).
        self.flags = np.full(n, -1, dtype=np.int64)
        self._ends = (np.arange(1, threads + 1) * n) // threads
        #: Scratch space of each slice's deal (the kernels allocate nothing).
        self._keys = np.zeros((threads, len(tables.pack)), dtype=np.int32)
        self._record_events = record_events
        #: Compiled kernels read the state by address; with NUMBA_DISABLE_JIT they run as Python on the tuples.
        self._compiled = not numba.config.DISABLE_JIT
        self._next = _NO_BITS
        #: (how many, the first) games whose action the last :meth:`step` refused.
        self.illegal = (0, -1)
        #: The legal actions the last :meth:`step` found for the next decision, if it did.
        self.next_bits: np.ndarray | None = None

    def _kernel_args(self, state: BatchState, deal_orders: np.ndarray) -> tuple:
        """The state and tables as the kernels take them, the given deals and the scratch keys."""
        return state.packed(), self.tables.packed, deal_orders, self._keys

    def step(self, state: BatchState, deal_orders: np.ndarray, actions: np.ndarray,
             bits: np.ndarray) -> np.ndarray | None:
        """Apply every game's action and run the games on; returns the games that ended, in order,
        or None, with :attr:`illegal` set, when an action is not in ``bits`` (then nothing moved).
        :attr:`next_bits` is then the batch's next legal actions when the step found them too (one
        thread, no game paused for the caller to archive), else None."""
        self.next_bits = None
        n = self.n
        if self.threads == 1 and self._compiled:
            # The common case, a batch of one above all: one compiled call, no context to enter.
            lo, illegal, first, ended = step_at(state.header(), actions, bits, self.tables.by_address, deal_orders,
                                                self.events, self.counts, self.flags, self._keys, self._bits_out())
            if lo == STALE:
                raise RuntimeError(STALE_CACHE)
            return self._after_step(state, deal_orders, actions, lo, illegal, first, ended)
        s, t, deals, keys = self._kernel_args(state, deal_orders)
        with _wrapping():
            if self.threads == 1:
                found = step_slice(actions, bits, s, t, deals, self.events, self.counts, self.flags, keys,
                                   self._bits_out())
                return self._after_step(state, deal_orders, actions, *found)
            count, first = illegal_actions(state, actions, bits)
            if count:
                self.illegal = count, first
                return None
            starts = np.concatenate(([0], self._ends[:-1]))
            while (starts < self._ends).any():
                step_threaded(self.threads, starts, _NO_ROWS, actions, _NO_SEEDS, s, t, deals, self.events,
                              self.counts, self.flags, keys)
                self._flush()
        if self._archive_deals is not None:
            self._resume_paused(state, deal_orders, np.arange(n))
        return self.ended()

    def _bits_out(self) -> np.ndarray:
        """A new array for the next legal actions (the engine hands it out; it must not change under a caller)."""
        self._next = np.empty(self.n, dtype=np.uint64)
        return self._next

    def _after_step(self, state: BatchState, deal_orders: np.ndarray, actions: np.ndarray, lo: int, illegal: int,
                    first: int, ended: int) -> np.ndarray | None:
        """The one-thread step's end: refuse, or run on the games the event buffer stopped, archive
        and resume paused games, and say which games ended."""
        if illegal:
            self.illegal = illegal, first
            return None
        n = self.n
        if self._record_events:
            self._flush()
        if lo == n and self._archive_deals is None:  # no game paused to resume
            self.next_bits = self._next
            if not ended:
                return _NO_ROWS
        while lo < n:
            lo = self._run(state, deal_orders, lo, n, STEP, _NO_ROWS, actions, _NO_SEEDS)
            self._flush()
        if self._archive_deals is not None:
            self._resume_paused(state, deal_orders, np.arange(n))
        return self.ended()

    def start(self, state: BatchState, deal_orders: np.ndarray, rows: np.ndarray, seeds: np.ndarray) -> np.ndarray:
        """Start a game with ``seeds`` in each slot ``rows`` and run it to its first decision;
        returns the games that ended before any, in order."""
        self._advance(state, deal_orders, rows, seeds, START)
        self._resume_paused(state, deal_orders, rows)
        return self.ended(rows)

    def ended(self, rows: np.ndarray | None = None) -> np.ndarray:
        """The games (of ``rows``, else of the batch) that ended in the last call, in the order
        they ended: by deal begun, then stage, then slot."""
        done = np.flatnonzero(self.flags >= 0) if rows is None else rows[self.flags[rows] >= 0]
        return done[np.argsort(self.flags[done], kind="stable")]

    def _advance(self, state: BatchState, deal_orders: np.ndarray, rows: np.ndarray, seeds: np.ndarray,
                 mode: int) -> None:
        """Start (``seeds``) or resume the games ``rows``."""
        lo = 0
        while lo < len(rows):
            lo = self._run(state, deal_orders, lo, len(rows), mode, rows, _NO_ROWS, seeds)
            self._flush()

    def _run(self, state: BatchState, deal_orders: np.ndarray, lo: int, hi: int, mode: int, rows: np.ndarray,
             actions: np.ndarray, seeds: np.ndarray) -> int:
        """One call of the compiled stages on one thread (:func:`~.stages_kernels.run_games`): by address
        when compiled, on the tuples with NUMBA_DISABLE_JIT; returns where it stopped."""
        if self._compiled:
            lo = run_at(state.header(), self.tables.by_address, lo, hi, mode, rows, actions, seeds, deal_orders,
                        self.events, self.counts, self.flags, self._keys)
            if lo == STALE:
                raise RuntimeError(STALE_CACHE)
            return lo
        s, t, deals, keys = self._kernel_args(state, deal_orders)
        with _wrapping():
            return run_slice(lo, hi, mode, rows, actions, seeds, s, t, deals, self.events[0], self.counts[0],
                             self.flags, keys[0])

    def _resume_paused(self, state: BatchState, deal_orders: np.ndarray, rows: np.ndarray) -> None:
        """Archive the deals of the games paused at a deal's end, then run them on."""
        if self._archive_deals is None:
            return
        while True:
            paused = rows[self.flags[rows] == PAUSED]
            if not len(paused):
                return
            self._archive_deals(paused)
            self._advance(state, deal_orders, paused, _NO_SEEDS, RESUME)

    def _flush(self) -> None:
        """Hand the events the kernels wrote to the engine's log."""
        if not self.events.shape[1]:
            return
        rows = self.events.shape[1]
        if (self.counts[:, 0] > rows).any():  # event_bound is a proven bound: this is the engine's own error
            raise RuntimeError(f"the batched engine logged {int(self.counts[:, 0].max())} score events in one call, "
                               f"more than its buffer's {rows} rows (tables.event_bound is too small for these "
                               "rules): please report it with the rules and the seed")
        for c in np.flatnonzero(self.counts[:, 0]):
            self._log_events(self.events[c, : self.counts[c, 0]].copy())
            self.counts[c, 0] = 0
