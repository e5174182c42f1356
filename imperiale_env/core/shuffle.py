"""Seeded deals that every engine computes identically, one game or thousands at once.

A deal is a pure function of ``(game_seed, deal_index)``: each card gets a 64-bit key from
a counter-based hash (SplitMix64) and the pack is sorted by key.  No generator state is
carried between deals, so the batched engine deals game ``i`` exactly as the reference
engine deals a lone game with the same seed, whatever the batch size, without a Python
loop over the batch.
"""

from __future__ import annotations

import numpy as np

#: The numbers of the hashes, here once: the compiled twins (:mod:`imperiale_env.kernels.seeds`) import them.
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)
DEALER_SALT = np.uint64(0xD1B54A32D192ED03)
NEXT_GAME_SALT = np.uint64(0xA0761D6478BD642F)
SEED_MASK = np.uint64(2**63 - 1)


def mix64(z: np.ndarray) -> np.ndarray:
    """The SplitMix64 finaliser of uint64 ``z`` (wrapping arithmetic), written with plain operators
    so that one function runs on numpy arrays here and, compiled, on one value in
    :mod:`imperiale_env.kernels.seeds`: the engines cannot deal differently."""
    z = z + GOLDEN
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


def splitmix64(x: np.ndarray) -> np.ndarray:
    """The SplitMix64 finaliser, elementwise on uint64 (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        return mix64(np.asarray(x, dtype=np.uint64))


def as_seeds(seed: int | np.ndarray) -> np.ndarray:
    """Game seeds as uint64 (Python ints are taken modulo 2**64)."""
    if isinstance(seed, (int, np.integer)):
        return np.array([int(seed) % 2**64], dtype=np.uint64)
    return np.asarray(seed).astype(np.uint64)


def batch_seeds(seed: int, n: int) -> np.ndarray:
    """The game seeds of a batch reset with one integer seed: game i gets hash(seed, i)."""
    base = splitmix64(as_seeds(seed))
    with np.errstate(over="ignore"):
        return splitmix64(base + np.arange(n, dtype=np.uint64) * GOLDEN)


def next_game_seed(seeds: np.ndarray) -> np.ndarray:
    """The seed of the game that follows (automatic restart in the batched engine), in
    ``[0, 2**63)`` like every seed a user sees (it fits a signed 64-bit integer)."""
    return splitmix64(np.asarray(seeds, dtype=np.uint64) ^ NEXT_GAME_SALT) & SEED_MASK


def first_dealer(seeds: np.ndarray, players: int) -> np.ndarray:
    """The first dealer of each game, uniform over the seats."""
    return (splitmix64(np.asarray(seeds, dtype=np.uint64) ^ DEALER_SALT) % np.uint64(players)).astype(np.int64)


def shuffled(seeds: np.ndarray, deal_index: np.ndarray, pack: np.ndarray) -> np.ndarray:
    """``pack`` (card indices) in a seeded random order for each game: shape (N, len(pack))."""
    seeds = np.asarray(seeds, dtype=np.uint64)
    deal_index = np.asarray(deal_index, dtype=np.uint64)
    with np.errstate(over="ignore"):
        deal_key = splitmix64(seeds ^ splitmix64(deal_index + np.uint64(1)))
        keys = splitmix64(deal_key[:, None] + np.arange(len(pack), dtype=np.uint64)[None, :] * GOLDEN)
    order = np.argsort(keys, axis=1, kind="stable")
    return np.asarray(pack)[order]
