"""The play of the cards on bitmasks, for the agents and the tables of the batched engine.

A hand is a bitmask with bit ``c`` for card ``c`` (the numbering of :mod:`cards`); a lower
rank index is a stronger card in a trick.  :func:`beats` takes numpy arrays (one row per
game).  The legality rule is written twice, no more: the reference engine's readable version
(:func:`imperiale_env.reference.game.play_rule_of`, the oracle) and the fast one every other
caller uses (:mod:`imperiale_env.kernels.trick_rules`), held to it by ``tests/test_tricks.py``
and the differential check.

:func:`trick_points` is the after-play trick score of docs/rules.md section 4 step 6, read by both
engines; :func:`play_out_scoring` is the same scoring as both solvers value the rest of a play.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from imperiale_env.core.card_masks import CARD_POINT_VALUE, CARD_RANK, CARD_SUIT, STRONGER, SUIT_MASK
from imperiale_env.core.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS, TRICK_STRENGTH
from imperiale_env.core.declarations import POINTS_PER_CAPTURED_HONOUR, honour_masks
from imperiale_env.core.events import POINTS_PER_IMPERIALE
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
    "SUIT_ONEHOT", "TRICKS_PER_DEAL", "PlayOutScoring", "TrickScore", "beats", "beats_one", "play_out_scoring",
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


class PlayOutScoring(NamedTuple):
    """What the rest of a deal's play is worth, as both solvers value it: the scoring after the play
    (section 4 step 6) as a difference of points for the solving seat ``me``, the others' points
    counted ``share`` each (one opponent: 1; two: a half).  The solvers read the rules' scoring here
    and nowhere else, so a scoring rule is written once for both of them.

    - ``honours[trump]``: the honours as a bitmask; each one captured in a trick is worth
      ``honour_points`` to the trick's winner;
    - ``trick_prize[k]``: what winning trick ``k`` (0-based) scores beyond its honours.  No preset
      scores one; a rule that rewards a particular trick (the last, say) sets it here;
    - ``final[me, t0, t1, t2]``: the trick score of the deal's end (:func:`trick_points`, capot
      included, an impériale counted as its 24 points) by tricks won (``t2`` 0 with two players).
      With two players and a trick score linear in the tricks won (``linear``: excess over 6, or the
      difference), each trick is worth ``per_trick`` as it is taken and ``final`` holds only the
      capot's extra, so a transposition table needs only the capot state; the values then leave out
      ``per_trick * (t_me - 6)`` of the tricks already won, the same for every move."""

    honours: tuple[int, ...]
    honour_points: float
    trick_prize: np.ndarray
    share: float
    linear: bool
    per_trick: float
    final: np.ndarray


@functools.lru_cache(maxsize=256)
def play_out_scoring(rules: Rules) -> PlayOutScoring:
    """:class:`PlayOutScoring` of ``rules`` (built once per rules; its arrays are read-only)."""
    P = rules.players
    worth = [float(s.points + s.capot_points + POINTS_PER_IMPERIALE * s.capot_imperiales)
             for s in (trick_points(rules, t) for t in range(TRICKS_PER_DEAL + 1))]
    linear = P == 2 and (rules.trick_scoring == "difference"
                         or (rules.trick_scoring == "excess" and rules.trick_quota == 6))
    per_trick = (4.0 if rules.trick_scoring == "excess" else 8.0) if linear else 0.0
    capot_extra = worth[TRICKS_PER_DEAL] - 6 * per_trick
    share = 1.0 if P == 2 else 1.0 / (P - 1)
    final = np.zeros((P, 13, 13, 13), dtype=np.float64)
    for t0 in range(13):
        for t1 in range(13 - t0):
            for t2 in range(13 - t0 - t1) if P == 3 else (0,):
                tricks = (t0, t1, t2)[:P]
                for me in range(P):
                    t = tricks[me]
                    if linear:
                        final[me, t0, t1, t2] = capot_extra if t == TRICKS_PER_DEAL else -capot_extra if t == 0 else 0.0
                    else:
                        final[me, t0, t1, t2] = worth[t] - share * (sum(worth[x] for x in tricks) - worth[t])
    trick_prize = np.zeros(TRICKS_PER_DEAL, dtype=np.float64)
    for a in (trick_prize, final):
        a.flags.writeable = False
    return PlayOutScoring(honour_masks(rules), float(POINTS_PER_CAPTURED_HONOUR), trick_prize, share, linear,
                          per_trick, final)
