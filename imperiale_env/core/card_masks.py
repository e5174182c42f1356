"""Bitmask tables for the batched engine: a hand is a uint64 with bit ``c`` for card ``c``.

Every table is indexed by card, suit or rank and built once from :mod:`cards`, so that the
engine's hot paths are array lookups and bit operations with no Python loop over games.
"""

from __future__ import annotations

import numpy as np

from imperiale_env.core.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS, POINT_VALUE, card, rank_of, suit_of

#: ``BIT[c]`` is the mask of card ``c``.
BIT = np.array([1 << c for c in range(NUM_CARDS)], dtype=np.uint64)
#: ``SUIT_MASK[s]``: the nine cards of suit ``s``.
SUIT_MASK = np.array([sum(1 << card(s, r) for r in range(NUM_RANKS)) for s in range(NUM_SUITS)], dtype=np.uint64)
#: ``RANK_MASK[r]``: the four cards of rank ``r``.
RANK_MASK = np.array([sum(1 << card(s, r) for s in range(NUM_SUITS)) for r in range(NUM_RANKS)], dtype=np.uint64)
#: ``STRONGER[c]``: the cards of ``c``'s suit that beat ``c`` in a trick (lower rank index).
STRONGER = np.array(
    [sum(1 << card(suit_of(c), r) for r in range(rank_of(c))) for c in range(NUM_CARDS)], dtype=np.uint64
)
CARD_SUIT = np.array([suit_of(c) for c in range(NUM_CARDS)], dtype=np.int64)
CARD_RANK = np.array([rank_of(c) for c in range(NUM_CARDS)], dtype=np.int64)
CARD_POINT_VALUE = np.array([POINT_VALUE[rank_of(c)] for c in range(NUM_CARDS)], dtype=np.int64)


def unpack(x: np.ndarray, width: int) -> np.ndarray:
    """Bits ``0 .. width-1`` of uint64 values as a trailing bool axis."""
    x = np.ascontiguousarray(x, dtype=np.uint64)
    bits = np.unpackbits(x.view(np.uint8).reshape(*x.shape, 8), axis=-1, bitorder="little")
    return bits[..., :width].astype(bool)
