"""The play rules on bitmasks, compiled (docs/rules.md section 4 step 5): legal cards, the card that
wins a trick, the honours a trick captures.

The same logic as :meth:`imperiale_env.reference.game.Game.legal_plays` (the oracle), written once for
every compiled caller: the solver calls it at each node, the batched engine per game.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from imperiale_env.kernels.mask_ops import BIT, STRONGER, SUIT_MASK, ZERO, card_count


@njit(cache=True)
def beats(c: int, win: int, trump: int) -> bool:
    """Does card ``c`` beat ``win``, the card winning the trick so far?  A higher card of its
    suit, or a trump on a plain card."""
    sc, sw = c // 9, win // 9
    return (sc == sw and c < win) or (sc == trump and sw != trump)


@njit(cache=True)
def legal_plays(hand: np.uint64, led_suit: int, win: int, trump: int, first_trick: bool, must_beat: bool,
                must_trump: bool, overtrump: bool, first_lead_trump: bool) -> np.uint64:
    """The legal cards of ``hand``.

    ``led_suit`` is -1 when the player leads (then ``win`` is ignored), else the suit of the
    trick's first card; ``win`` is the card winning the trick so far.  The rules' flags:
    must follow (always), must beat the winning card of the led suit, must trump when void,
    must overtrump a trump (else anything), the first lead of the deal in trumps."""
    trumps = hand & SUIT_MASK[trump]
    if led_suit < 0:
        if first_lead_trump and first_trick and trumps != ZERO:
            return trumps
        return hand
    follow = hand & SUIT_MASK[led_suit]
    if follow != ZERO:
        if must_beat and win // 9 == led_suit:
            higher = follow & STRONGER[win]
            if higher != ZERO:
                return higher
        return follow
    if trumps != ZERO and must_trump:
        if overtrump and win // 9 == trump:
            over = trumps & STRONGER[win]
            return over if over != ZERO else hand
        return trumps
    return hand


@njit(cache=True)
def trick_winner(cards: np.ndarray, n: int, trump: int) -> int:
    """Position (0 .. n-1) of the winning card among the first ``n`` cards of a trick."""
    best = 0
    for k in range(1, n):
        if beats(cards[k], cards[best], trump):
            best = k
    return best


@njit(cache=True)
def trick_honours(cards: np.ndarray, n: int, honours: np.uint64) -> int:
    """How many of the honour cards (mask ``honours``) the first ``n`` cards of a trick hold."""
    mask = ZERO
    for k in range(n):
        mask |= BIT[cards[k]]
    return card_count(mask & honours)
