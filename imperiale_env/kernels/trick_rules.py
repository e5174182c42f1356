"""The play rules on bitmasks, compiled (docs/rules.md section 4 step 5): legal cards, the card that
wins a trick, the honours a trick captures.

The same logic as :meth:`imperiale_env.reference.game.Game.legal_plays` (the oracle), written once for
every fast caller: the compiled solver calls it at each node, the batched engine per game, and
scalar Python code (the Python solver, the policy-weighted worlds) through :func:`legal_cards`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from imperiale_env.core.cards import NUM_RANKS
from imperiale_env.kernels.mask_ops import BIT, STRONGER, SUIT_MASK, ZERO, card_count


@njit(cache=True)
def beats(c: int, win: int, trump: int) -> bool:
    """Does card ``c`` beat ``win``, the card winning the trick so far?  A higher card of its
    suit, or a trump on a plain card."""
    sc, sw = c // NUM_RANKS, win // NUM_RANKS
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
        if must_beat and win // NUM_RANKS == led_suit:
            higher = follow & STRONGER[win]
            if higher != ZERO:
                return higher
        return follow
    if trumps != ZERO and must_trump:
        if overtrump and win // NUM_RANKS == trump:
            over = trumps & STRONGER[win]
            return over if over != ZERO else hand
        return trumps
    return hand


def legal_cards(rules, hand: int, trump: int, led: int, win: int, first_trick: bool) -> int:
    """:func:`legal_plays` for Python callers: ``hand`` and the result as Python ints, ``led`` the
    trick's first card (-1 when the player leads), ``win`` the card winning it, the flags read
    from ``rules`` (:class:`~imperiale_env.core.rules.Rules`)."""
    led_suit = led // NUM_RANKS if led >= 0 else -1
    return int(legal_plays(np.uint64(hand), led_suit, win, trump, first_trick, rules.must_beat, rules.must_trump,
                           rules.overtrump, rules.first_lead_trump))


@njit(cache=True)
def proven_absent(c: int, led_suit: int, win: int, trump: int, first_trick: bool, must_beat: bool,
                  must_trump: bool, overtrump: bool, first_lead_trump: bool) -> np.uint64:
    """The cards the player of ``c`` cannot hold, since ``c`` was legal (arguments as for
    :func:`legal_plays`, before ``c`` is played).

    :func:`legal_plays` lets a card be played exactly when the hand holds no card of a higher
    obligation (a card of the led suit over one that is not; a card that beats the winning card
    over one that does not, under must beat or overtrump; a trump over another suit, under must
    trump; a trump to the first lead): so ``c`` proves the hand holds none of the cards of a
    higher obligation than its own.  The reference observer computes the same set from the
    definition (a card ``x`` is absent when ``c`` is not legal from the hand ``{c, x}``); the
    differential check compares them."""
    sc = c // NUM_RANKS
    if led_suit < 0:
        if first_lead_trump and first_trick and sc != trump:
            return SUIT_MASK[trump]
        return ZERO
    if sc == led_suit:
        if must_beat and win // NUM_RANKS == led_suit and not c < win:
            return SUIT_MASK[led_suit] & STRONGER[win]
        return ZERO
    absent = SUIT_MASK[led_suit]
    if must_trump:
        if overtrump and win // NUM_RANKS == trump:
            if not (sc == trump and c < win):
                absent |= SUIT_MASK[trump] & STRONGER[win]
        elif sc != trump:
            absent |= SUIT_MASK[trump]
    return absent


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
