"""Bit operations on uint64 card masks, compiled.

Every constant is a ``np.uint64`` (a module-level array or scalar is frozen into the compiled
code): numba types ``uint64 op int64`` as float64, so a bare integer literal next to a mask
would silently turn a hand into a float.

The bit counts are written twice: as shifts and adds, which also run as plain Python on numpy
scalars (no overflow warnings) with JIT disabled, and, for compiled callers, as the processor's
own instructions (``popcnt``, ``tzcnt``: one cycle where the shifts and adds take some fifteen, in
loops that walk every card of a mask).  Compiled code sees only the second
(:func:`numba.extending.overload`); the tests compare the two on random masks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, types
from numba.extending import intrinsic, overload

from imperiale_env.core.card_masks import BIT, STRONGER, SUIT_MASK

ZERO = np.uint64(0)
ONE = np.uint64(1)
_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_S1, _S2, _S4, _S8, _S16, _S32 = (np.uint64(s) for s in (1, 2, 4, 8, 16, 32))
_LOW7 = np.uint64(0x7F)

__all__ = ["BIT", "ONE", "STRONGER", "SUIT_MASK", "ZERO", "card_count", "lowest_card", "suit_cards"]


def card_count(x: np.uint64) -> int:
    """Number of cards (set bits) in the mask ``x``."""
    x = x - ((x >> _S1) & _M1)
    x = (x & _M2) + ((x >> _S2) & _M2)
    x = (x + (x >> _S4)) & _M4
    x = x + (x >> _S8)
    x = x + (x >> _S16)
    x = x + (x >> _S32)
    return np.int64(x & _LOW7)


def lowest_card(x: np.uint64) -> int:
    """The lowest card index of a non-empty mask (the strongest card of its lowest suit); 64 for
    an empty mask."""
    return card_count((x & (~x + ONE)) - ONE)


@intrinsic
def _popcount(typingctx: Any, x: types.Type) -> Any:
    """The set bits of the integer ``x``, as the processor counts them (LLVM ``ctpop``)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.ctpop(args[0])

    return x(x), codegen


@intrinsic
def _trailing_zeros(typingctx: Any, x: types.Type) -> Any:
    """The zero bits below the lowest set bit of ``x`` (its width for 0: LLVM ``cttz``, zero defined)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.cttz(args[0], context.get_constant(types.boolean, False))

    return x(x), codegen


@overload(card_count, jit_options={"cache": True})
def _card_count_compiled(x: Any) -> Any:  # x: a numba type; impl takes the same names
    def impl(x: Any) -> int:
        return np.int64(_popcount(np.uint64(x)))
    return impl


@overload(lowest_card, jit_options={"cache": True})
def _lowest_card_compiled(x: Any) -> Any:  # x: a numba type; impl takes the same names
    def impl(x: Any) -> int:
        return np.int64(_trailing_zeros(np.uint64(x)))
    return impl


@njit(cache=True)
def suit_cards(hand: np.uint64, suit: int) -> np.uint64:
    """The cards of ``suit`` in ``hand``."""
    return hand & SUIT_MASK[suit]
