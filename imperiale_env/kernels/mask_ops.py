"""Bit operations on uint64 card masks, compiled.

Every constant is a ``np.uint64`` (a module-level array or scalar is frozen into the compiled
code): numba types ``uint64 op int64`` as float64, so a bare integer literal next to a mask
would silently turn a hand into a float.  The bit counts use shifts and adds only, so that
they also run as plain Python on numpy scalars (no overflow warnings) with JIT disabled.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from imperiale_env.core.card_masks import BIT, STRONGER, SUIT_MASK

ZERO = np.uint64(0)
ONE = np.uint64(1)
_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_S1, _S2, _S4, _S8, _S16, _S32 = (np.uint64(s) for s in (1, 2, 4, 8, 16, 32))
_LOW7 = np.uint64(0x7F)

__all__ = ["BIT", "ONE", "STRONGER", "SUIT_MASK", "ZERO", "card_count", "lowest_card", "suit_cards"]


@njit(cache=True)
def card_count(x: np.uint64) -> int:
    """Number of cards (set bits) in the mask ``x``."""
    x = x - ((x >> _S1) & _M1)
    x = (x & _M2) + ((x >> _S2) & _M2)
    x = (x + (x >> _S4)) & _M4
    x = x + (x >> _S8)
    x = x + (x >> _S16)
    x = x + (x >> _S32)
    return np.int64(x & _LOW7)


@njit(cache=True)
def lowest_card(x: np.uint64) -> int:
    """The lowest card index of a non-empty mask (the strongest card of its lowest suit)."""
    return card_count((x & (~x + ONE)) - ONE)


@njit(cache=True)
def suit_cards(hand: np.uint64, suit: int) -> np.uint64:
    """The cards of ``suit`` in ``hand``."""
    return hand & SUIT_MASK[suit]
