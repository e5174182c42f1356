"""Scoring in the batched engine: award and gain (docs/rules.md section 3), the event log, and the
automatic stages that score a deal.

Every function takes the engine ``g`` and the games ``idx`` it applies to (with one player
per game where it matters); a game that reaches the target stops being scored at once,
as in the reference engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import events as ev
from ..bitcards import BIT, SUIT_MASK, popcount
from ..cards import A, J, K, Q, low_rank
from ..events import POINTS_PER_IMPERIALE
from .tables import CB_ITEM, FOUR_ITEMS_START, ITEM_KIND, NUM_ITEMS, QUART_ITEMS, SEQUENCE_ITEMS, Stage

if TYPE_CHECKING:
    from .engine import BatchGame


def log(g: BatchGame, idx: np.ndarray, kind: str, player: np.ndarray, amount: np.ndarray | int) -> None:
    """Log one event per game of ``idx`` (when the engine records events)."""
    if not g.record_events or len(idx) == 0:
        return
    amount = np.broadcast_to(np.asarray(amount, dtype=np.int64), idx.shape)
    g._events.append(
        np.stack([g.game_id[idx], g.deal_index[idx], np.full(len(idx), ev.CODE[kind]),
                  np.asarray(player, np.int64), amount], axis=1)
    )


def alive(g: BatchGame, idx: np.ndarray, *arrays: np.ndarray):
    """The games of ``idx`` not over yet, with the matching rows of ``arrays``."""
    keep = ~g.over[idx]
    return (idx[keep], *(a[keep] for a in arrays))


def award(g: BatchGame, idx: np.ndarray, p: np.ndarray, n: np.ndarray | int, kind: str, *,
          protect: bool = False) -> None:
    """award(p, n) of docs/rules.md section 3, for the games ``idx`` (each with its player);
    ``protect``: the impériales it makes spare the turned honour (see :func:`gain`)."""
    if not len(idx):
        return
    log(g, idx, kind, p, n)
    P = g.players
    points = g.points.reshape(-1)
    fi = idx * P + p
    points[fi] += n
    crossed = points[fi] >= POINTS_PER_IMPERIALE
    while crossed.any():
        idx, p = idx[crossed], p[crossed]
        points[idx * P + p] -= POINTS_PER_IMPERIALE
        gain(g, idx, p, 1, protect=protect)
        idx, p = alive(g, idx, p)
        crossed = points[idx * P + p] >= POINTS_PER_IMPERIALE


def gain(g: BatchGame, idx: np.ndarray, p: np.ndarray, k: np.ndarray | int, *, wipe: np.ndarray | bool = True,
         protect: bool = False) -> None:
    """gain(p, k): impériales, the wipe of every opponent, the end of the game at the target.

    With ``protect`` (Académie step 2) the dealer keeps at most the turned honour's points."""
    if not len(idx):
        return
    imperiales = g.imperiales.reshape(-1)
    fi = idx * g.players + p
    imperiales[fi] += k
    log(g, idx, ev.IMPERIALE, p, k)
    points = g.points[idx]
    opponent = g.seats != p[:, None]
    if wipe is not True:
        opponent &= np.asarray(wipe)[:, None]
    keep = 0
    if protect:
        shield = g.turned_honour_scored[idx, None] & (g.seats == g.dealer[idx, None])
        keep = np.where(shield, np.minimum(points, g.rules.turned_honour_points), 0)
    after = np.where(opponent, keep, points)
    if g.record_events:
        lost = points - after
        for q in range(g.players):
            wiped = lost[:, q] > 0
            log(g, idx[wiped], ev.WIPE, np.full(wiped.sum(), q), lost[wiped, q])
    g.points[idx] = after
    reached = imperiales[fi] >= g.rules.target_imperiales
    if reached.any():
        ri = idx[reached]
        g.over[ri] = True
        g.winner[ri] = p[reached]
        log(g, ri, ev.GAME_OVER, p[reached], 0)


def score_imperiales(g: BatchGame, idx: np.ndarray, p: np.ndarray, value: np.ndarray | int, kind: str,
                     *, wipe: np.ndarray | bool = True, protect: bool = False) -> None:
    """An impériale-valued event: a gain, or 24 points an impériale with ``imperiales_as_points``."""
    if g.rules.imperiales_as_points:
        award(g, idx, p, POINTS_PER_IMPERIALE * value, kind, protect=protect)
        return
    log(g, idx, kind, p, value)
    gain(g, idx, p, value, wipe=wipe, protect=protect)


def score_item(g: BatchGame, idx: np.ndarray, p: np.ndarray, j: int, *, wipe: np.ndarray | bool = True,
               protect: bool = False) -> None:
    """Score shown in-hand item ``j`` for each game (see Game._score_in_hand)."""
    r = g.rules
    kind = ITEM_KIND[j]
    if j == CB_ITEM:
        if r.carte_blanche_points:
            award(g, idx, p, r.carte_blanche_points, ev.CARTE_BLANCHE, protect=protect)
            return
        log(g, idx, ev.CARTE_BLANCHE, p, r.carte_blanche_imperiales)
        gain(g, idx, p, r.carte_blanche_imperiales, wipe=wipe, protect=protect)
        return
    if kind == "quart_major":
        value = np.where(g.trump[idx] == j - QUART_ITEMS[0], r.trump_quart_imperiales, 1)
    else:
        value = np.ones(len(idx), dtype=np.int64)
    event = ev.FOUR_OF_A_KIND if kind == "four_of_a_kind" else ev.QUART_MAJOR
    score_imperiales(g, idx, p, value, event, wipe=wipe, protect=protect)


def score_turned(g: BatchGame, gi: np.ndarray) -> None:
    """The dealer's shown turned-card impériale."""
    score_imperiales(g, gi, g.dealer[gi], 1, ev.TURNED_IMPERIALE)


# ---------------------------------------------------------------------- automatic stages


def stage_score_turned(g: BatchGame, idx: np.ndarray, st: Stage) -> None:
    score_turned(g, idx[g.turned_shown[idx]])
    g.stage[idx] += 1


def stage_score_cb(g: BatchGame, idx: np.ndarray, st: Stage) -> None:
    P = g.players
    for k in range(P):
        gi = idx[~g.over[idx]]
        p = (g.dealer[gi] + 1 + k) % P
        has = ((g.shown[gi, p] >> CB_ITEM) & 1) == 1
        score_item(g, gi[has], p[has], CB_ITEM)
    g.stage[idx] += 1


def stage_score_compared(g: BatchGame, idx: np.ndarray, st: Stage) -> None:
    """Foster: carte blanche, then the best sequence's holder takes all his sequences,
    then likewise the fours; no wipes if both players showed something in hand."""
    P = g.players
    wipe = ~(g.rules.mutual_show_no_wipe & (g.shown[idx] != 0).all(axis=1))
    for k in range(P):
        keep = ~g.over[idx]
        gi, w = idx[keep], wipe[keep]
        p = (g.dealer[gi] + 1 + k) % P
        has = ((g.shown[gi, p] >> CB_ITEM) & 1) == 1
        score_item(g, gi[has], p[has], CB_ITEM, wipe=w[has])
    seq_slots = list(QUART_ITEMS) + list(SEQUENCE_ITEMS)
    four_slots = [FOUR_ITEMS_START + j for j in range(len(g.tables.four_ranks))]
    for slots in (seq_slots, four_slots):
        keep = ~g.over[idx]
        gi, w = idx[keep], wipe[keep]
        # Strength of each priority position's best shown item of the category (0: none).
        best = np.zeros((len(gi), P), dtype=np.int64)
        for k in range(P):
            p = (g.dealer[gi] + 1 + k) % P
            shown = g.shown[gi, p]
            for j in slots:
                if j in QUART_ITEMS or j in SEQUENCE_ITEMS:
                    strength = 1 + 2 * (j in QUART_ITEMS) + (g.trump[gi] == (j - 1) % 4)
                else:
                    strength = np.full(len(gi), 1 + len(slots) - (j - FOUR_ITEMS_START))
                best[:, k] = np.where((shown >> j) & 1 == 1, np.maximum(best[:, k], strength), best[:, k])
        any_shown = best.max(axis=1) > 0
        winner_pos = best.argmax(axis=1)
        gi, w, winner_pos = gi[any_shown], w[any_shown], winner_pos[any_shown]
        p = (g.dealer[gi] + 1 + winner_pos) % P
        for j in slots:
            keep = ~g.over[gi]
            gi, w, p = gi[keep], w[keep], p[keep]
            has = ((g.shown[gi, p] >> j) & 1) == 1
            score_item(g, gi[has], p[has], j, wipe=w[has])
    g.stage[idx] += 1


def stage_score_by_number(g: BatchGame, idx: np.ndarray, st: Stage) -> None:
    """Imperijal: those who showed the most impériales score 24 points each."""
    P = g.players
    counts = popcount(g.shown[idx].astype(np.uint64) & ~np.uint64(1 << CB_ITEM))
    counts[np.arange(len(idx)), g.dealer[idx]] += g.turned_shown[idx]
    most = counts.max(axis=1)
    leaders = counts == most[:, None]
    scoring = (most > 0) & (leaders.sum(axis=1) < P)
    for k in range(P):
        keep = scoring & ~g.over[idx]
        gi = idx[keep]
        p = (g.dealer[gi] + 1 + k) % P
        lead = leaders[keep][np.arange(len(gi)), p]
        gi, p = gi[lead], p[lead]
        for j in range(1, NUM_ITEMS):
            gi, p = alive(g, gi, p)
            has = ((g.shown[gi, p] >> j) & 1) == 1
            score_item(g, gi[has], p[has], j)
        gi, p = alive(g, gi, p)
        ti = (p == g.dealer[gi]) & g.turned_shown[gi]
        score_turned(g, gi[ti])
    g.stage[idx] += 1


def stage_score_point(g: BatchGame, idx: np.ndarray, st: Stage) -> None:
    P = g.players
    declared = g.point_suit[idx] >= 0
    key = np.where(declared, g.point_count[idx] * 1000 + g.point_value[idx], -1)
    # Rotate to priority order so that argmax and ties follow priority.
    prio = (g.dealer[idx][:, None] + 1 + np.arange(P)[None, :]) % P
    key_prio = np.take_along_axis(key, prio, axis=1)
    best = key_prio.max(axis=1)
    leaders = (key_prio == best[:, None]) & (best[:, None] >= 0)
    n_lead = leaders.sum(axis=1)
    split = (g.rules.point_tie == "split") & (n_lead > 1)
    first = leaders.argmax(axis=1)
    points = np.where(split, g.rules.point_points // 2, g.rules.point_points)
    for k in range(P):
        keep = ~g.over[idx]
        wins = keep & leaders[:, k] & (split | (first == k))
        gi = idx[wins]
        p = prio[wins, k]
        suit = g.point_suit[gi, p]
        g.revealed[gi, p] |= g.dealt[gi, p] & SUIT_MASK[suit]
        award(g, gi, p, points[wins], ev.POINT)
    g.stage[idx] += 1


def stage_honours_in_hand(g: BatchGame, idx: np.ndarray, st: Stage) -> None:
    _score_honours(g, idx, g.hands, g.rules.honours_in_hand_points)
    g.stage[idx] += 1


def stage_honours(g: BatchGame, idx: np.ndarray, st: Stage) -> None:
    _score_honours(g, idx, g.captured, 4)
    g.stage[idx] += 1


def _score_honours(g: BatchGame, idx: np.ndarray, where: np.ndarray, per: int) -> None:
    if not per:
        return
    for k in range(g.players):
        gi = idx[~g.over[idx]]
        p = (g.dealer[gi] + 1 + k) % g.players
        n = popcount(where[gi, p] & g.tables.honour_mask[g.trump[gi]])
        has = n > 0
        award(g, gi[has], p[has], per * n[has], ev.HONOURS)


def stage_fallen(g: BatchGame, idx: np.ndarray, st: Stage) -> None:
    mode = g.rules.fallen_imperiale
    P = g.players
    for k in range(P):
        gi = idx[~g.over[idx]]
        p = (g.dealer[gi] + 1 + k) % P
        t = g.trump[gi]
        dealt, cap = g.dealt[gi, p], g.captured[gi, p]
        kq = BIT[t * 9 + K] | BIT[t * 9 + Q]
        held_kq = (dealt & kq) == kq
        if mode == "tricks":
            quart = g.tables.item_mask[np.asarray(QUART_ITEMS)[t]]
            fallen = (cap & quart) == quart
        elif mode == "tombee":
            want = BIT[t * 9 + J] | BIT[t * 9 + A]
            others = np.bitwise_or.reduce(g.dealt[gi], axis=1) & ~dealt
            fallen = held_kq & ((others & want) == want) & ((cap & want) == want)
        else:
            want = BIT[t * 9 + A] | BIT[t * 9 + low_rank(P)]
            fallen = held_kq & ((dealt & want) == 0) & ((cap & want) == want)
        score_imperiales(g, gi[fallen], p[fallen], 1, ev.FALLEN_IMPERIALE)
    g.stage[idx] += 1


def stage_tricks(g: BatchGame, idx: np.ndarray, st: Stage) -> None:
    """The cards (:func:`~imperiale_env.tricks.trick_points`): capot impériales, else the
    trick points, then capot points, each player in priority order."""
    P = g.players
    for k in range(P):
        gi = idx[~g.over[idx]]
        p = (g.dealer[gi] + 1 + k) % P
        points, capot_points, capot_imperiales = g.tables.trick_points[g.tricks[gi, p]].T
        ci = capot_imperiales > 0
        log(g, gi[ci], ev.CAPOT, p[ci], capot_imperiales[ci])
        gain(g, gi[ci], p[ci], capot_imperiales[ci])
        has = (points > 0) & ~ci
        award(g, gi[has], p[has], points[has], ev.TRICKS)
        gi, p, capot_points = alive(g, gi, p, capot_points)
        has = capot_points > 0
        award(g, gi[has], p[has], capot_points[has], ev.CAPOT)
    g.stage[idx] += 1


HANDLERS = {
    "score_turned": stage_score_turned,
    "score_cb": stage_score_cb,
    "score_compared": stage_score_compared,
    "score_by_number": stage_score_by_number,
    "score_point": stage_score_point,
    "honours_in_hand": stage_honours_in_hand,
    "honours": stage_honours,
    "fallen": stage_fallen,
    "tricks": stage_tricks,
}
