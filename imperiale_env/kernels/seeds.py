"""The seeded hashes of :mod:`imperiale_env.core.shuffle`, compiled for one game at a time: the
deal's card order, the first dealer and the next game's seed.

The same SplitMix64 function and numbers (the tests compare the results with the numpy versions
the reference engine deals with), so that the batched engine deals game ``i`` as the reference
engine deals a lone game with the same seed.  uint64 arithmetic wraps around in compiled code;
with ``NUMBA_DISABLE_JIT=1`` the callers run it under ``np.errstate(over="ignore")``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from imperiale_env.core.shuffle import DEALER_SALT, GOLDEN, NEXT_GAME_SALT, SEED_MASK, mix64

_ONE = np.uint64(1)
#: The SplitMix64 finaliser on one value: :func:`imperiale_env.core.shuffle.mix64` itself, compiled.
splitmix64 = njit(cache=True)(mix64)


@njit(cache=True)
def first_dealer(seed: np.uint64, players: int) -> int:
    """:func:`imperiale_env.core.shuffle.first_dealer` of one seed."""
    return np.int64(splitmix64(seed ^ DEALER_SALT) % np.uint64(players))


@njit(cache=True)
def next_game_seed(seed: np.uint64) -> np.uint64:
    """:func:`imperiale_env.core.shuffle.next_game_seed` of one seed."""
    return splitmix64(seed ^ NEXT_GAME_SALT) & SEED_MASK


@njit(cache=True)
def deal_order(seed: np.uint64, deal_index: int, pack: np.ndarray, keys: np.ndarray, out: np.ndarray) -> None:
    """:func:`imperiale_env.core.shuffle.shuffled` of one game into ``out``: the pack sorted by each
    card's hash key, ties (never seen, but possible) in pack order as numpy's stable sort
    leaves them.  ``keys`` is scratch space of the pack's length."""
    deal_key = splitmix64(seed ^ splitmix64(np.uint64(deal_index) + _ONE))
    n = pack.shape[0]
    for k in range(n):  # insertion sort: stable, and quick on 32 or 36 cards
        key = splitmix64(deal_key + np.uint64(k) * GOLDEN)
        at = k
        while at > 0 and keys[at - 1] > key:
            keys[at] = keys[at - 1]
            out[at] = out[at - 1]
            at -= 1
        keys[at] = key
        out[at] = pack[k]
