"""The play of the cards on bitmasks, for the agents and the tables of the batched engine.

A hand is a bitmask with bit ``c`` for card ``c`` (the numbering of :mod:`cards`); a lower
rank index is a stronger card in a trick.  :func:`beats` takes numpy arrays (one row per
game); :func:`legal_cards_one` is the legality rule on Python ints, for scalar Python code
(the batched engine and the compiled solver use :mod:`imperiale_env.kernels.trick_rules`).  The reference
engine (:mod:`game`) keeps its own readable version: it is the oracle these are tested
against (the differential check, and ``tests/test_tricks.py`` for the two forms here).

:func:`trick_points` is the after-play trick score of docs/rules.md section 4 step 6.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from imperiale_env.core.card_masks import CARD_POINT_VALUE, CARD_RANK, CARD_SUIT, STRONGER, SUIT_MASK
from imperiale_env.core.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS, TRICK_STRENGTH
from imperiale_env.core.rules import Rules

TRICKS_PER_DEAL = 12
#: Per card index: strength in a trick (K=8 ... 6=0) and value for the point.
CARD_STRENGTH = np.array([TRICK_STRENGTH[r] for r in CARD_RANK], dtype=np.int64)
POINT_VALUE_OF_CARD = CARD_POINT_VALUE
#: ``SUIT_ONEHOT[s, c]``: card ``c`` is of suit ``s``.
SUIT_ONEHOT = CARD_SUIT[None, :] == np.arange(NUM_SUITS)[:, None]
#: The same tables as Python ints, for scalar code.
SUIT_BITS: tuple[int, ...] = tuple(int(m) for m in SUIT_MASK)
STRONGER_BITS: tuple[int, ...] = tuple(int(m) for m in STRONGER)

__all__ = [
    "CARD_RANK", "CARD_STRENGTH", "CARD_SUIT", "NUM_CARDS", "POINT_VALUE_OF_CARD", "STRONGER_BITS", "SUIT_BITS",
    "SUIT_ONEHOT", "TRICKS_PER_DEAL", "TrickScore", "beats", "beats_one", "legal_cards_one",
    "trick_points", "trick_points_table",
]


def beats(card: np.ndarray, win: np.ndarray, trump: np.ndarray) -> np.ndarray:
    """Does ``card`` take the trick from the winning card ``win``?  A higher card of its suit,
    or a trump on a non-trump."""
    suit_c, suit_w = CARD_SUIT[card], CARD_SUIT[win]
    return ((suit_w == suit_c) & (CARD_RANK[card] < CARD_RANK[win])) | ((suit_c == trump) & (suit_w != trump))


def beats_one(card: int, win: int, trump: int) -> bool:
    """:func:`beats` for one card (Python ints)."""
    sc, sw = card // NUM_RANKS, win // NUM_RANKS
    return (sc == sw and card < win) or (sc == trump and sw != trump)


def legal_cards_one(rules: Rules, hand: int, trump: int, led: int, win: int, first_trick: bool) -> int:
    """:func:`legal_cards` for one hand (Python ints), the same rule branch by branch."""
    trumps = hand & SUIT_BITS[trump]
    if led < 0:
        return trumps if rules.first_lead_trump and first_trick and trumps else hand
    follow = hand & SUIT_BITS[led // NUM_RANKS]
    if follow:
        higher = follow & STRONGER_BITS[win] if rules.must_beat else 0
        return higher or follow
    if not rules.must_trump or not trumps:
        return hand
    if rules.overtrump and win // NUM_RANKS == trump:
        return (trumps & STRONGER_BITS[win]) or hand
    return trumps


class TrickScore(NamedTuple):
    """What a player's tricks score after the play: trick points, capot points, capot impériales."""

    points: int
    capot_points: int
    capot_imperiales: int


def trick_points(rules: Rules, tricks: int) -> TrickScore:
    """The score of a player with ``tricks`` tricks after the play (section 4 step 6).

    ``excess``: 4 a trick above the quota; ``difference`` (two players): 4 a trick above
    the other player's; ``bonus``: 4 for more than the quota.  All 12 tricks are capot,
    worth ``capot_imperiales`` instead of the trick points, or ``capot_points`` on top."""
    capot = tricks == TRICKS_PER_DEAL
    if capot and rules.capot_imperiales:
        return TrickScore(0, 0, rules.capot_imperiales)
    if rules.trick_scoring == "excess":
        points = 4 * max(tricks - rules.trick_quota, 0)
    elif rules.trick_scoring == "difference":
        points = 4 * max(2 * tricks - TRICKS_PER_DEAL, 0)
    else:
        points = 4 if tricks > rules.trick_quota else 0
    return TrickScore(points, rules.capot_points if capot else 0, 0)


def trick_points_table(rules: Rules) -> np.ndarray:
    """``(13, 3)``: :func:`trick_points` for 0 .. 12 tricks, for array lookups."""
    return np.array([trick_points(rules, t) for t in range(TRICKS_PER_DEAL + 1)], dtype=np.int64)
