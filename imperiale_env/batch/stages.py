"""The stage machine of the batched engine: the Python side of the compiled step
(:mod:`imperiale_env.batch.stages_kernels`).

:class:`StageMachine` calls the kernels on the batch state's own arrays and does what
needs Python around them: empties the score event buffers into the engine's event log,
archives the deals of games paused at a deal's end (``keep_history``, the only reason a game
pauses) and resumes them, and tells the engine which games ended, in the order it numbers
the games that follow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from imperiale_env.batch.score_kernels import R_EVENT_BOUND
from imperiale_env.batch.stages_kernels import PAUSED, RESUME, START, STEP, run_games, step_threaded

if TYPE_CHECKING:
    from imperiale_env.batch.engine import BatchGame

_NO_SEEDS = np.zeros(0, dtype=np.uint64)
_NO_ROWS = np.zeros(0, dtype=np.int64)
#: Event rows a buffer holds beyond the bound of one game (a slice flushes and goes on when full).
_EVENT_ROWS = 1 << 14


class StageMachine:
    """The compiled stages of one :class:`~.engine.BatchGame`, with the buffers they write."""

    def __init__(self, game: BatchGame):
        self.game = game
        chunks = game.threads
        bound = int(game.tables.arrays.rules[R_EVENT_BOUND])
        rows = 2 * bound + _EVENT_ROWS if game.record_events else 0
        self.events = np.zeros((chunks, rows, 5), dtype=np.int64)
        self.counts = np.zeros((chunks, 1), dtype=np.int64)
        #: What each game did in the last call (kernels.batch_stages: waiting, paused, or its end's order key).
        self.flags = np.full(game.n, -1, dtype=np.int64)
        self._ends = (np.arange(1, chunks + 1) * game.n) // chunks
        #: Scratch space of each slice's deal (the kernels allocate nothing).
        self._keys = np.zeros((chunks, len(game.tables.pack)), dtype=np.uint64)

    def _kernel_args(self) -> tuple:
        """The state, tables and per-deal arrays as the kernels take them, and the given deals."""
        g = self.game
        return g.state.arrays(), g.tables.arrays, g.state.deal_fields(), g.deal_orders, self._keys

    def step(self, actions: np.ndarray) -> np.ndarray:
        """Apply every game's action and run the games on; returns the games that ended, in order."""
        g = self.game
        s, t, d, deals, keys = self._kernel_args()
        with np.errstate(over="ignore"):  # NUMBA_DISABLE_JIT: the seeded hashes wrap around
            if g.threads == 1:
                lo = 0
                while lo < g.n:
                    lo = run_games(lo, g.n, STEP, _NO_ROWS, actions, _NO_SEEDS, s, t, d, deals, self.events[0],
                                   self.counts[0], self.flags, keys[0])
                    self._flush()
            else:
                starts = np.concatenate(([0], self._ends[:-1]))
                while (starts < self._ends).any():
                    step_threaded(g.threads, starts, _NO_ROWS, actions, _NO_SEEDS, s, t, d, deals, self.events,
                                  self.counts, self.flags, keys)
                    self._flush()
        self._resume_paused(g._ar)
        return self.ended()

    def start(self, rows: np.ndarray, seeds: np.ndarray) -> np.ndarray:
        """Start a game with ``seeds`` in each slot ``rows`` and run it to its first decision;
        returns the games that ended before any, in order."""
        self._advance(rows, seeds, START)
        self._resume_paused(rows)
        return self.ended(rows)

    def ended(self, rows: np.ndarray | None = None) -> np.ndarray:
        """The games (of ``rows``, else of the batch) that ended in the last call, in the order
        they ended: by deal begun, then stage, then slot."""
        done = np.flatnonzero(self.flags >= 0) if rows is None else rows[self.flags[rows] >= 0]
        return done[np.argsort(self.flags[done], kind="stable")]

    def _advance(self, rows: np.ndarray, seeds: np.ndarray, mode: int) -> None:
        """Start (``seeds``) or resume the games ``rows``."""
        s, t, d, deals, keys = self._kernel_args()
        lo = 0
        with np.errstate(over="ignore"):
            while lo < len(rows):
                lo = run_games(lo, len(rows), mode, rows, _NO_ROWS, seeds, s, t, d, deals, self.events[0],
                               self.counts[0], self.flags, keys[0])
                self._flush()

    def _resume_paused(self, rows: np.ndarray) -> None:
        """Archive the deals of the games paused at a deal's end, then run them on."""
        if not self.game.keep_history:
            return
        while True:
            paused = rows[self.flags[rows] == PAUSED]
            if not len(paused):
                return
            self.game._archive_deals(paused)
            self._advance(paused, _NO_SEEDS, RESUME)

    def _flush(self) -> None:
        """Move the events the kernels wrote into the engine's log."""
        for c in np.flatnonzero(self.counts[:, 0]):
            self.game._events.append(self.events[c, : self.counts[c, 0]].copy())
            self.counts[c, 0] = 0
