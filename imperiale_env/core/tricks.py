"""The play of the cards on bitmasks, for the agents and the tables of the batched engine.

A hand is a bitmask with bit ``c`` for card ``c`` (the numbering of :mod:`cards`); a lower
rank index is a stronger card in a trick.  :func:`beats` takes numpy arrays (one row per
game).  The legality rule is written twice, no more: the reference engine's readable version
(:func:`imperiale_env.reference.game.play_rule_of`, the oracle) and the fast one every other
caller uses (:mod:`imperiale_env.kernels.trick_rules`), held to it by ``tests/test_tricks.py``
and the differential check.

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
    "SUIT_ONEHOT", "TRICKS_PER_DEAL", "TrickScore", "beats", "beats_one",
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
