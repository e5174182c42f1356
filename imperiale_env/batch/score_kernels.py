"""Scoring in the batched engine, compiled: award and gain (docs/rules.md section 3), the score
events, and the automatic stages that score a deal, for one game ``i`` at a time.

Every function takes the few arrays it reads and changes (award and gain the :data:`Scores`
``c``, the scoring stages also what they score), the rules ``r`` (the one record of
:func:`~imperiale_env.core.rules.rule_record`, read by field name), the event buffer ``eb``
with its row count ``en[0]`` (a buffer of no rows: events are not recorded), and the game
``i``: never the whole state, because a compiled call passes each array of a named tuple as
separate numbers, and the state is hundreds of them.
A game that reaches the target stops being scored at once, as in the reference engine: every
scoring function does nothing on a game that is over.

The event codes (``E_*``) are the order of :data:`imperiale_env.core.events.EVENT_KINDS` and the
item slots those of :mod:`imperiale_env.batch.tables`, written here as numbers so that the
cached machine code cannot outlive a change of them unnoticed (the tests compare them).
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np
from numba import njit

from imperiale_env.core import events as ev
from imperiale_env.core.declarations import CB_ITEM, FOUR_ITEMS_START, NUM_ITEMS, SEQUENCE_ITEMS
from imperiale_env.core.rules import FALLEN_IMPERIALES, POINT_TIES
from imperiale_env.kernels.mask_ops import ONE, SUIT_MASK, ZERO, card_count

# Event codes, each read from its declaration (imperiale_env.core.events: row code i is EVENT_KINDS[i]).
E_TURNED_HONOUR, E_CARTE_BLANCHE = ev.CODE[ev.TURNED_HONOUR], ev.CODE[ev.CARTE_BLANCHE]
E_QUART_MAJOR, E_FOUR_OF_A_KIND = ev.CODE[ev.QUART_MAJOR], ev.CODE[ev.FOUR_OF_A_KIND]
E_TURNED_IMPERIALE, E_POINT, E_HONOURS = ev.CODE[ev.TURNED_IMPERIALE], ev.CODE[ev.POINT], ev.CODE[ev.HONOURS]
E_FALLEN_IMPERIALE, E_TRICKS, E_CAPOT = ev.CODE[ev.FALLEN_IMPERIALE], ev.CODE[ev.TRICKS], ev.CODE[ev.CAPOT]
E_WIPE, E_IMPERIALE, E_GAME_OVER = ev.CODE[ev.WIPE], ev.CODE[ev.IMPERIALE], ev.CODE[ev.GAME_OVER]
#: ``r["fallen_imperiale"]``: the fallen impériale rule, by its index in rules.FALLEN_IMPERIALES.
FALLEN_OFF, FALLEN_TRICKS = FALLEN_IMPERIALES.index("off"), FALLEN_IMPERIALES.index("tricks")
FALLEN_TOMBEE, FALLEN_CAPTURE = FALLEN_IMPERIALES.index("tombee"), FALLEN_IMPERIALES.index("capture")
#: ``r["point_tie"]``: by its index in rules.POINT_TIES.
POINT_PRIORITY, POINT_SPLIT = POINT_TIES.index("priority"), POINT_TIES.index("split")
POINTS_PER_IMPERIALE = ev.POINTS_PER_IMPERIALE
# Item slots (imperiale_env.core.declarations), as the plain integers a kernel reads.
FIRST_SEQUENCE_ITEM, FIRST_FOUR_ITEM = SEQUENCE_ITEMS.start, FOUR_ITEMS_START


#: What award and gain read and change: the score, the end of the game, what an event row names.
Scores = namedtuple("Scores", ["points", "imperiales", "over", "winner", "game_id", "deal_index", "dealer",
                               "turned_honour_scored", "trump"])


@njit(cache=True, inline="always", _nrt=False)
def scores(s) -> Scores:
    """The :data:`Scores` arrays of the state ``s``."""
    return Scores(s.points, s.imperiales, s.over, s.winner, s.game_id, s.deal_index, s.dealer,
                  s.turned_honour_scored, s.trump)


@njit(cache=True, _nrt=False)
def priority_seat(dealer: int, k: int, players: int) -> int:
    """The seat at priority position ``k`` (the dealer's left hand first, the dealer last)."""
    return (dealer + 1 + k) % players


@njit(cache=True, _nrt=False)
def log(c: Scores, eb: np.ndarray, en: np.ndarray, i: int, kind: int, player: int, amount: int) -> None:
    """One score event of game ``i``: a row ``(game_id, deal_index, kind, player, amount)``.  A row
    past the buffer's end is counted, not written (compiled code checks no index): the caller finds
    ``en[0]`` above the buffer's rows and stops with an error instead of memory written over."""
    if eb.shape[0] == 0:
        return
    at = en[0]
    if at < eb.shape[0]:
        eb[at, 0] = c.game_id[i]
        eb[at, 1] = c.deal_index[i]
        eb[at, 2] = kind
        eb[at, 3] = player
        eb[at, 4] = amount
    en[0] = at + 1


@njit(cache=True, _nrt=False)
def award(c: Scores, r: Any, eb: np.ndarray, en: np.ndarray, i: int, p: int, n: int, kind: int,
          protect: bool) -> None:
    """award(p, n) of docs/rules.md section 3: ``n`` points, each 24 an impériale (the remainder
    kept); ``protect``: the impériales it makes spare the turned honour (see :func:`gain`)."""
    if c.over[i]:
        return
    log(c, eb, en, i, kind, p, n)
    c.points[i, p] += n
    while c.points[i, p] >= POINTS_PER_IMPERIALE:
        c.points[i, p] -= POINTS_PER_IMPERIALE
        gain(c, r, eb, en, i, p, 1, True, protect)
        if c.over[i]:
            return


@njit(cache=True, _nrt=False)
def gain(c: Scores, r: Any, eb: np.ndarray, en: np.ndarray, i: int, p: int, k: int, wipe: bool,
         protect: bool) -> None:
    """gain(p, k): ``k`` impériales, the wipe of every opponent's points (unless ``wipe`` is
    false), the end of the game at the target.  With ``protect`` (Académie step 2) the dealer
    keeps at most the turned honour's points."""
    if c.over[i]:
        return
    c.imperiales[i, p] += k
    log(c, eb, en, i, E_IMPERIALE, p, k)
    if wipe:
        shield = protect and c.turned_honour_scored[i]
        for q in range(c.points.shape[1]):
            if q == p:
                continue
            had = c.points[i, q]
            keep = min(had, r["turned_honour_points"]) if shield and q == c.dealer[i] else 0
            if had > keep:
                log(c, eb, en, i, E_WIPE, q, had - keep)
                c.points[i, q] = keep
    if c.imperiales[i, p] >= r["target_imperiales"]:
        c.over[i] = True
        c.winner[i] = p
        log(c, eb, en, i, E_GAME_OVER, p, 0)


@njit(cache=True, _nrt=False)
def score_imperiales(c: Scores, r: Any, eb: np.ndarray, en: np.ndarray, i: int, p: int, value: int, kind: int,
                     wipe: bool, protect: bool) -> None:
    """An impériale-valued event: a gain, or 24 points an impériale with ``imperiales_as_points``."""
    if c.over[i]:
        return
    if r["imperiales_as_points"]:
        award(c, r, eb, en, i, p, POINTS_PER_IMPERIALE * value, kind, protect)
        return
    log(c, eb, en, i, kind, p, value)
    gain(c, r, eb, en, i, p, value, wipe, protect)


@njit(cache=True, _nrt=False)
def score_item(c: Scores, r: Any, eb: np.ndarray, en: np.ndarray, i: int, p: int, j: int, wipe: bool,
               protect: bool) -> None:
    """Score the shown in-hand item ``j`` of player ``p`` (see Game._score_in_hand)."""
    if c.over[i]:
        return
    if j == CB_ITEM:
        if r["carte_blanche_points"]:
            award(c, r, eb, en, i, p, r["carte_blanche_points"], E_CARTE_BLANCHE, protect)
            return
        log(c, eb, en, i, E_CARTE_BLANCHE, p, r["carte_blanche_imperiales"])
        gain(c, r, eb, en, i, p, r["carte_blanche_imperiales"], wipe, protect)
        return
    value = r["trump_quart_imperiales"] if j < FIRST_SEQUENCE_ITEM and c.trump[i] == j - 1 else 1
    kind = E_FOUR_OF_A_KIND if j >= FIRST_FOUR_ITEM else E_QUART_MAJOR
    score_imperiales(c, r, eb, en, i, p, value, kind, wipe, protect)


@njit(cache=True, _nrt=False)
def shows(shown: int, j: int) -> bool:
    """Does a player who showed the items ``shown`` (bit ``j``: item ``j``) show item ``j``?"""
    return (shown >> j) & 1 == 1


@njit(cache=True, _nrt=False)
def score_turned(c: Scores, r: Any, eb: np.ndarray, en: np.ndarray, i: int) -> None:
    """The dealer's shown turned-card impériale."""
    score_imperiales(c, r, eb, en, i, c.dealer[i], 1, E_TURNED_IMPERIALE, True, False)


# ---------------------------------------------------------------------- the scoring stages
# Each takes the arrays it reads (not the whole state: see the module's docstring).


@njit(cache=True, _nrt=False)
def score_carte_blanche(c: Scores, shown: np.ndarray, r: Any, eb: np.ndarray, en: np.ndarray, i: int,
                        wipe: bool) -> None:
    """Every shown carte blanche, in priority order."""
    P = shown.shape[1]
    for k in range(P):
        p = priority_seat(c.dealer[i], k, P)
        if shows(shown[i, p], CB_ITEM):
            score_item(c, r, eb, en, i, p, CB_ITEM, wipe, False)


@njit(cache=True, _nrt=False)
def score_compared(c: Scores, shown: np.ndarray, r: Any, eb: np.ndarray, en: np.ndarray, i: int) -> None:
    """Foster: carte blanche, then the best sequence's holder takes all his sequences, then
    likewise the fours; no wipes if every player showed something in hand."""
    P = shown.shape[1]
    wipe = True
    if r["mutual_show_no_wipe"]:
        wipe = False
        for q in range(P):
            if shown[i, q] == 0:
                wipe = True
    score_carte_blanche(c, shown, r, eb, en, i, wipe)
    fours = card_count(np.uint64(r["four_ranks"]))
    for first, last in ((1, FIRST_FOUR_ITEM), (FIRST_FOUR_ITEM, FIRST_FOUR_ITEM + fours)):
        if c.over[i]:
            return
        # The strongest shown item of the category: a quart major over a sequence, trumps over
        # the other suits; fours by their place in four_ranks; ties to the earlier position.
        best, winner = 0, -1
        for k in range(P):
            p = priority_seat(c.dealer[i], k, P)
            for j in range(first, last):
                if shows(shown[i, p], j):
                    if j >= FIRST_FOUR_ITEM:
                        strength = 1 + fours - (j - FIRST_FOUR_ITEM)
                    else:
                        strength = 1
                        if j < FIRST_SEQUENCE_ITEM:
                            strength += 2
                        if c.trump[i] == (j - 1) % 4:
                            strength += 1
                    if strength > best:
                        best, winner = strength, p
        if winner >= 0:
            for j in range(first, last):
                if shows(shown[i, winner], j):
                    score_item(c, r, eb, en, i, winner, j, wipe, False)


@njit(cache=True, _nrt=False)
def score_by_number(c: Scores, shown: np.ndarray, turned_shown: np.ndarray, r: Any, eb: np.ndarray,
                    en: np.ndarray, i: int) -> None:
    """Imperijal: those who showed the most impériales score 24 points each."""
    P = shown.shape[1]
    dealer = c.dealer[i]
    most, leaders = 0, 0
    for q in range(P):
        count = card_count(np.uint64(shown[i, q]) & ~ONE) + (1 if q == dealer and turned_shown[i] else 0)
        if count > most:
            most, leaders = count, 0
        if count == most:
            leaders += 1
    if most == 0 or leaders == P:
        return
    for k in range(P):
        p = priority_seat(dealer, k, P)
        count = card_count(np.uint64(shown[i, p]) & ~ONE) + (1 if p == dealer and turned_shown[i] else 0)
        if count != most:
            continue
        for j in range(1, NUM_ITEMS):
            if shows(shown[i, p], j):
                score_item(c, r, eb, en, i, p, j, True, False)
        if p == dealer and turned_shown[i]:
            score_turned(c, r, eb, en, i)


@njit(cache=True, _nrt=False)
def _point_key(point_suit: np.ndarray, point_count: np.ndarray, point_value: np.ndarray, i: int, p: int) -> int:
    """What ranks player ``p``'s point: its count, then its value; -1 if he sank it.  In int64,
    since the fields are int8 / int16 (as plain Python, with JIT disabled, numpy would overflow)."""
    if point_suit[i, p] < 0:
        return -1
    return np.int64(point_count[i, p]) * 1000 + np.int64(point_value[i, p])


@njit(cache=True, _nrt=False)
def score_point(c: Scores, point_suit: np.ndarray, point_count: np.ndarray, point_value: np.ndarray,
                revealed: np.ndarray, dealt: np.ndarray, r: Any, eb: np.ndarray, en: np.ndarray,
                i: int) -> None:
    """The best declared point (count, then value) scores, shown to all; a tie goes to the
    earlier position, or splits the points (``point_tie='split'``)."""
    P = point_suit.shape[1]
    best, leaders, first = -1, 0, -1
    for k in range(P):
        p = priority_seat(c.dealer[i], k, P)
        key = _point_key(point_suit, point_count, point_value, i, p)
        if key > best:
            best, leaders, first = key, 0, k
        if key == best:
            leaders += 1
    if best < 0:
        return
    split = r["point_tie"] == POINT_SPLIT and leaders > 1
    points = r["point_points"] // 2 if split else r["point_points"]
    for k in range(first, P):
        p = priority_seat(c.dealer[i], k, P)
        key = _point_key(point_suit, point_count, point_value, i, p)
        if c.over[i] or key != best or (k != first and not split):
            continue
        revealed[i, p] |= dealt[i, p] & SUIT_MASK[point_suit[i, p]]
        award(c, r, eb, en, i, p, points, E_POINT, False)


@njit(cache=True, _nrt=False)
def score_honours(c: Scores, where: np.ndarray, honour_mask: np.ndarray, per: int, r: Any, eb: np.ndarray,
                  en: np.ndarray, i: int) -> None:
    """``per`` points for each trump honour of ``where`` (the hands, or the captured cards)."""
    if not per:
        return
    honours = honour_mask[c.trump[i]]
    P = where.shape[1]
    for k in range(P):
        p = priority_seat(c.dealer[i], k, P)
        n = card_count(where[i, p] & honours)
        if n > 0:
            award(c, r, eb, en, i, p, per * n, E_HONOURS, False)


@njit(cache=True, _nrt=False)
def score_fallen(c: Scores, dealt: np.ndarray, captured: np.ndarray, fallen_held: np.ndarray,
                 fallen_want: np.ndarray, r: Any, eb: np.ndarray, en: np.ndarray, i: int) -> None:
    """The fallen impériale (``fallen_imperiale``): ``fallen_want[trump]`` captured, with
    ``fallen_held[trump]`` dealt to the player; ``tombee``: the wanted cards were dealt to
    another player; ``capture``: they were not dealt to the player."""
    mode = r["fallen_imperiale"]
    trump = c.trump[i]
    held, want = fallen_held[trump], fallen_want[trump]
    P = dealt.shape[1]
    for k in range(P):
        p = priority_seat(c.dealer[i], k, P)
        mine, cap = dealt[i, p], captured[i, p]
        fallen = (mine & held) == held and (cap & want) == want
        if mode == FALLEN_TOMBEE:
            others = ZERO
            for q in range(P):
                others |= dealt[i, q]
            fallen = fallen and (others & ~mine & want) == want
        elif mode == FALLEN_CAPTURE:
            fallen = fallen and (mine & want) == ZERO
        if fallen:
            score_imperiales(c, r, eb, en, i, p, 1, E_FALLEN_IMPERIALE, True, False)


@njit(cache=True, _nrt=False)
def score_tricks(c: Scores, tricks: np.ndarray, trick_points: np.ndarray, r: Any, eb: np.ndarray,
                 en: np.ndarray, i: int) -> None:
    """The cards (:func:`~imperiale_env.core.tricks.trick_points`): capot impériales, else the trick
    points, then capot points, each player in priority order."""
    P = tricks.shape[1]
    for k in range(P):
        p = priority_seat(c.dealer[i], k, P)
        points, capot_points, capot_imperiales = (trick_points[tricks[i, p], 0], trick_points[tricks[i, p], 1],
                                                  trick_points[tricks[i, p], 2])
        if c.over[i]:
            return
        if capot_imperiales > 0:
            log(c, eb, en, i, E_CAPOT, p, capot_imperiales)
            gain(c, r, eb, en, i, p, capot_imperiales, True, False)
        elif points > 0:
            award(c, r, eb, en, i, p, points, E_TRICKS, False)
        if capot_points > 0:
            award(c, r, eb, en, i, p, capot_points, E_CAPOT, False)
