"""The observation encoder of the batched engine, compiled: 485 float32 a game, written into the
caller's buffer (the layout is documented in :mod:`imperiale_env.observation`).

One loop over a range of rows, called on the whole batch or on one slice a thread
(:func:`encode_threaded`).  The
block offsets come in as an array (``offsets``, from :data:`~imperiale_env.observation.OFFSETS`)
rather than being frozen into the cached machine code, so a change of layout cannot meet a
stale cache.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .cards import BIT, ZERO, lowest_card

QUESTION, POINT, PLAY, NONE = 0, 1, 2, 3
#: Indices into ``offsets``: the start of each block, in the order of ``OFFSET_NAMES``.
OFFSET_NAMES = ("hand", "played", "trick", "revealed", "turned", "trump", "voids", "phase", "question_kind",
                "question_cards", "declared_point", "imperiales", "points", "tricks", "dealer", "leader", "progress")
_CARDS = 36
_CB_ITEM = 0
_POINTS_PER_IMPERIALE = 24
#: Card blocks a row holds: hand, played x3, revealed x3, question cards (the trick and the
#: turned card are one card a block, written directly).
_CARD_BLOCKS = 8


@njit(cache=True)
def _seat(x: int, P: int) -> int:
    """``x % P`` for ``0 <= x < 2 P``, without the slow integer division (P is not a constant)."""
    return x - P if x >= P else x


@njit(cache=True)
def encode(lo: int, hi: int, out: np.ndarray, rows: np.ndarray, players: np.ndarray, offsets: np.ndarray, target: int,
           kind: np.ndarray, current_player: np.ndarray, dealer: np.ndarray, leader: np.ndarray, trump: np.ndarray,
           turned: np.ndarray, stage: np.ndarray, trick_len: np.ndarray, tricks_played: np.ndarray,
           hands: np.ndarray, played: np.ndarray, revealed: np.ndarray, dealt: np.ndarray, trick_cards: np.ndarray,
           voids: np.ndarray, pending: np.ndarray, point_suit: np.ndarray, point_answered: np.ndarray,
           point_count: np.ndarray, point_value: np.ndarray, imperiales: np.ndarray, points: np.ndarray,
           tricks: np.ndarray, is_turned_stage: np.ndarray, item_mask: np.ndarray) -> None:
    """Rows ``lo .. hi-1`` of ``out``: row ``r`` is game ``rows[r]`` seen by the seat ``players[r]``
    (by the player to act when ``players`` is empty; a player who is not to act sees no
    pending decision).  Each row is cleared, then its card blocks are written 36 entries at a
    time without branches and the rest entry by entry."""
    (o_hand, o_played, o_trick, o_revealed, o_turned, o_trump, o_voids, o_phase, o_question_kind,
     o_question_cards, o_point, o_imperiales, o_points, o_tricks, o_dealer, o_leader, o_progress) = (
        offsets[0], offsets[1], offsets[2], offsets[3], offsets[4], offsets[5], offsets[6], offsets[7], offsets[8],
        offsets[9], offsets[10], offsets[11], offsets[12], offsets[13], offsets[14], offsets[15], offsets[16])
    P = hands.shape[1]
    width = out.shape[1]
    starts = np.empty(_CARD_BLOCKS, dtype=np.int64)
    masks = np.empty(_CARD_BLOCKS, dtype=np.uint64)
    starts[0] = o_hand
    starts[7] = o_question_cards
    for s in range(3):
        starts[1 + s] = o_played + _CARDS * s
        starts[4 + s] = o_revealed + _CARDS * s
    for r in range(lo, hi):
        i = rows[r]
        for j in range(width):
            out[r, j] = 0.0
        k, now = kind[i], current_player[i]
        cur = players[r] if players.shape[0] else max(now, 0)
        acting = k != NONE and cur == now
        masks[:] = ZERO
        masks[0] = hands[i, cur]
        for s in range(P):
            seat = _seat(cur + s, P)
            masks[1 + s] = played[i, seat]
            masks[4 + s] = revealed[i, seat]
            c = trick_cards[i, _seat(seat - leader[i] + P, P)]
            if c >= 0:
                out[r, o_trick + _CARDS * s + c] = 1.0
            v = voids[i, seat]
            for u in range(4):
                out[r, o_voids + 4 * s + u] = (v >> u) & 1
            declared = point_suit[i, seat] >= 0
            at = o_point + 4 * s
            out[r, at] = 1.0 if declared else 0.0
            out[r, at + 1] = 1.0 if point_answered[i, seat] and not declared else 0.0
            out[r, at + 2] = point_count[i, seat] / 12.0
            out[r, at + 3] = point_value[i, seat] / 120.0
            out[r, o_imperiales + s] = min(imperiales[i, seat] / target, 1.0)
            out[r, o_points + s] = min(points[i, seat] / _POINTS_PER_IMPERIALE, 1.0)
            out[r, o_tricks + s] = min(tricks[i, seat] / 12.0, 1.0)
        out[r, o_turned + turned[i]] = 1.0
        out[r, o_trump + trump[i]] = 1.0
        if acting:
            out[r, o_phase + k] = 1.0
            if k == QUESTION:
                if is_turned_stage[stage[i]]:
                    out[r, o_question_kind + 4] = 1.0
                    masks[7] = BIT[turned[i]]
                else:
                    pend = np.uint64(pending[i, cur])
                    item = lowest_card(pend) if pend != ZERO else -1  # -1: nothing pending (never asked)
                    out[r, o_question_kind + (0 if item == _CB_ITEM else 1 if item < 5 else 2 if item < 9 else 3)] = 1.0
                    masks[7] = dealt[i, cur] if item == _CB_ITEM else item_mask[max(item, 0)]
        out[r, o_dealer + _seat(dealer[i] - cur + P, P)] = 1.0
        if trick_len[i] > 0:
            out[r, o_leader + _seat(leader[i] - cur + P, P)] = 1.0
        out[r, o_progress] = tricks_played[i] / 12.0
        out[r, o_progress + 1] = 1.0 if P == 3 else 0.0
        for b in range(_CARD_BLOCKS):
            m, at = np.int64(masks[b]), starts[b]  # signed: a 36-bit mask fits, and converts to float fast
            if m != 0:
                for c in range(_CARDS):
                    out[r, at + c] = (m >> c) & 1


@njit(cache=True, parallel=True)
def encode_threaded(chunks: int, out: np.ndarray, rows: np.ndarray, players: np.ndarray, offsets: np.ndarray,
           target: int,
           kind: np.ndarray, current_player: np.ndarray, dealer: np.ndarray, leader: np.ndarray, trump: np.ndarray,
           turned: np.ndarray, stage: np.ndarray, trick_len: np.ndarray, tricks_played: np.ndarray,
           hands: np.ndarray, played: np.ndarray, revealed: np.ndarray, dealt: np.ndarray, trick_cards: np.ndarray,
           voids: np.ndarray, pending: np.ndarray, point_suit: np.ndarray, point_answered: np.ndarray,
           point_count: np.ndarray, point_value: np.ndarray, imperiales: np.ndarray, points: np.ndarray,
           tricks: np.ndarray, is_turned_stage: np.ndarray, item_mask: np.ndarray) -> None:
    """:func:`encode` of every row, in ``chunks`` slices run on numba's threads (each row is
    written by one thread, so the thread count never changes a value)."""
    n = rows.shape[0]
    for c in prange(chunks):
        encode(c * n // chunks, (c + 1) * n // chunks, out, rows, players, offsets, target, kind, current_player,
               dealer, leader, trump, turned, stage, trick_len, tricks_played, hands, played, revealed, dealt,
               trick_cards, voids, pending, point_suit, point_answered, point_count, point_value, imperiales,
               points, tricks, is_turned_stage, item_mask)
