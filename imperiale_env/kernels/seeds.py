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
_ZERO = np.uint64(0)
#: The top half of a 64-bit key, and the bit that turns it into an ordered int32.
_TOP = np.uint64(32)
_SIGN32 = np.uint64(1 << 31)
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
def _card_key(deal_key: np.uint64, k: int) -> np.uint64:
    """The sort key of the ``k``-th card of the pack in the deal keyed ``deal_key``."""
    return splitmix64(deal_key + np.uint64(k) * GOLDEN)


@njit(cache=True)
def deal_order(seed: np.uint64, deal_index: int, pack: np.ndarray, keys: np.ndarray, out: np.ndarray) -> None:
    """:func:`imperiale_env.core.shuffle.shuffled` of one game into ``out``: the pack sorted by each
    card's hash key, ties in pack order as numpy's stable sort leaves them.  ``keys``: int32
    scratch space of the pack's length.

    Each card goes straight to its rank, the number of keys below its own, counted on the keys'
    top 32 bits (as ordered int32: the compiler compares eight at a time, without a branch; an
    insertion sort of the 64-bit keys mispredicted a branch at nearly every card, 430 ns a deal
    against some 130).  When two cards share their top 32 bits (about one deal in ten million)
    two ranks collide, and the deal is ranked again on the whole keys, ties in pack order."""
    deal_key = splitmix64(seed ^ splitmix64(np.uint64(deal_index) + _ONE))
    n = pack.shape[0]
    for k in range(n):
        keys[k] = np.int32((_card_key(deal_key, k) >> _TOP) ^ _SIGN32)
    filled = _ZERO
    for k in range(n):
        key = keys[k]
        rank = 0
        for j in range(n):
            rank += keys[j] < key
        out[rank] = pack[k]
        filled |= _ONE << np.uint64(rank)
    if filled == (_ONE << np.uint64(n)) - _ONE:
        return
    for k in range(n):  # two cards share their top bits: rank on the whole keys
        key = _card_key(deal_key, k)
        rank = 0
        for j in range(n):
            other = _card_key(deal_key, j)
            rank += other < key or (other == key and j < k)
        out[rank] = pack[k]
