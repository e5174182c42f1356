"""A uniform random legal policy for benchmarks and baselines, compiled and counter-based.

Game ``i``'s action at step ``t`` is a pure function of ``(seed, i, t)``: a SplitMix64 hash
picks one of the legal actions.  No generator state is carried, so the draws do not depend
on the batch's thread count or on which games were drawn before.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from imperiale_env.core.shuffle import GOLDEN
from imperiale_env.kernels.mask_ops import card_count
from imperiale_env.kernels.seeds import splitmix64
from imperiale_env.kernels.threads import check_threads, numba_threads

_TOP = np.uint64(32)
#: The halves a binary search over a 64-bit mask takes, widest first, and the masks of their low halves.
_WIDTHS = np.array([32, 16, 8, 4, 2, 1], dtype=np.uint64)
_LOW_HALVES = np.array([(1 << w) - 1 for w in (32, 16, 8, 4, 2, 1)], dtype=np.uint64)


@njit(cache=True)
def _nth_action(legal: np.uint64, k: int) -> int:
    """The ``k``-th (from 0) action of the mask ``legal``: a binary search on bit counts, six
    steps without a branch the predictor must guess (stepping over ``k`` actions one at a time
    mispredicted once a game, most of the policy's time)."""
    at = 0
    for step in range(_WIDTHS.shape[0]):
        low = card_count(legal & _LOW_HALVES[step])
        if k >= low:
            k -= low
            legal >>= _WIDTHS[step]
            at += np.int64(_WIDTHS[step])
    return at


@njit(cache=True)
def _draw_one(bits: np.ndarray, key: np.uint64, i: int) -> int:
    """Game ``i``'s draw: SplitMix64 of ``key`` and ``i`` scaled to the count of legal actions (the
    top 32 bits times the count, a multiplication where a remainder took a 64-bit division)."""
    legal = bits[i]
    n = card_count(legal)
    if n == 0:
        return 0
    k = ((splitmix64(key + np.uint64(i) * GOLDEN) >> _TOP) * np.uint64(n)) >> _TOP
    return _nth_action(legal, np.int64(k))


@njit(cache=True)
def _draw(bits: np.ndarray, key: np.uint64, out: np.ndarray) -> None:
    for i in range(bits.shape[0]):
        out[i] = _draw_one(bits, key, i)


@njit(cache=True, parallel=True)
def _draw_threaded(bits: np.ndarray, key: np.uint64, out: np.ndarray) -> None:
    for i in prange(bits.shape[0]):
        out[i] = _draw_one(bits, key, i)


def random_legal_actions(bits: np.ndarray, seed: int, step: int, out: np.ndarray | None = None,
                         threads: int = 1) -> np.ndarray:
    """One uniformly random legal action per game (``bits``: the legal actions as uint64 masks,
    as :meth:`~imperiale_env.batch.BatchGame.action_bits` gives them); 0 for a game with none.
    ``seed`` and ``step`` are integers in ``[0, 2**64)``; ``threads``: as many threads (the
    same draws whatever the count)."""
    bits = np.ascontiguousarray(bits, dtype=np.uint64)
    if out is None:
        out = np.empty(bits.shape[0], dtype=np.int64)
    with np.errstate(over="ignore"):  # NUMBA_DISABLE_JIT: plain Python on numpy scalars, the hash wraps around
        key = np.uint64(splitmix64(np.uint64(seed))) ^ np.uint64(splitmix64(np.uint64(step)))
        if threads == 1:
            _draw(bits, key, out)
        else:
            with numba_threads(check_threads(threads)):
                _draw_threaded(bits, key, out)
    return out
