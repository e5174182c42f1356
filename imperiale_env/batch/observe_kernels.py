"""The observation encoder of the batched engine, compiled: 485 float32 a game, written into the
caller's buffer (the layout is documented in :mod:`imperiale_env.core.observation`).

Almost every block of a row is a set of bits: the card blocks are 36-bit masks (a card on the
table or the turned card is a mask of one bit), the suits, seats, phase and question kind are
one-hot bits, the voids four bits a seat.  Each of those blocks is written by looking its bits
up a byte at a time in :data:`_BYTE_FLOATS`, whose row ``b`` is the eight floats of byte ``b``
(``1.0`` where the bit is set), and copying those eight floats (one 32-byte load and store): a
card block is four and a half copies instead of 36 shifts, tests and integer-to-float
conversions.  Every entry of a row is written exactly once, zeros included (the third seat's
blocks with two players), so the buffer is neither cleared first nor written twice.  What is
left is mostly the cost of the stores themselves: encoding a batch takes well under twice as long
as clearing its buffer.

Two details keep the compiled loop short: the indices are made unsigned (``np.uint64``) where
they index, because numba adds a fix-up for negative indices to every signed read and write;
and the small helpers are left for LLVM to inline (numba's own ``inline="always"`` would add
reference counting of ``out`` to every call).

One loop over a range of rows, called on the whole batch or on one slice a thread
(:func:`encode_threaded`).  The block offsets come in as an array (``offsets``, from
:data:`~imperiale_env.core.observation.OFFSETS`) rather than being frozen into the cached machine
code, so a change of layout cannot meet a stale cache.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit, prange

from imperiale_env.batch.state import NONE, QUESTION
from imperiale_env.kernels.mask_ops import BIT, ZERO, lowest_card

#: Indices into ``offsets``: the start of each block, in the order of ``OFFSET_NAMES``.
OFFSET_NAMES = ("hand", "played", "trick", "revealed", "turned", "trump", "voids", "phase", "question_kind",
                "question_cards", "declared_point", "imperiales", "points", "tricks", "dealer", "leader", "progress")
_CARDS = 36
_SEATS = 3
_CB_ITEM = 0
#: ``_BYTE_FLOATS[b, j]`` is bit ``j`` of the byte ``b`` as a float32 (8 KiB: it stays in the L1 cache).
_BYTE_FLOATS = np.array([[(b >> j) & 1 for j in range(8)] for b in range(256)], dtype=np.float32)


@njit(cache=True)
def _seat(x: int, P: int) -> int:
    """``x % P`` for ``0 <= x < 2 P``, without the slow integer division (P is not a constant)."""
    return x - P if x >= P else x


@njit(cache=True)
def _put(out: np.ndarray, r: int, at: int, value: float) -> None:
    """``out[r, at] = value``, through an unsigned index like every write of the encoder."""
    out[r, np.uint64(at)] = value


@njit(cache=True)
def _bits(out: np.ndarray, r: int, at: int, width: int, bits: int) -> None:
    """``out[r, at : at + width]`` (``width <= 8``) = the low ``width`` bits of ``bits`` as floats."""
    base = np.uint64(at)
    for j in range(width):
        out[r, base + np.uint64(j)] = _BYTE_FLOATS[bits & 255, j]


@njit(cache=True)
def _cards(out: np.ndarray, r: int, at: int, mask: np.uint64) -> None:
    """``out[r, at : at + 36]`` = the card mask ``mask`` as floats: four bytes and a half, by the table."""
    m = np.int64(mask)  # signed: a 36-bit mask fits, and int64 shifts stay int64
    base = np.uint64(at)
    for k in range(4):
        byte = (m >> (8 * k)) & 255
        for j in range(8):
            out[r, base + np.uint64(8 * k + j)] = _BYTE_FLOATS[byte, j]
    _bits(out, r, at + 32, 4, m >> 32)


#: The arrays of the batch state the encoder reads (the kernels' form: a named tuple of them).
SEEN_FIELDS = ("kind", "current_player", "dealer", "leader", "trump", "turned", "stage", "trick_len", "tricks_played",
               "hands", "played", "revealed", "dealt", "trick_cards", "voids", "pending", "point_suit",
               "point_answered", "point_count", "point_value", "imperiales", "points", "tricks")
SeenState = namedtuple("SeenState", SEEN_FIELDS)
#: What the encoder reads of the batch's tables: the block starts (:data:`OFFSET_NAMES` order), the
#: rules record (the target scales the impériales), the other scales
#: (:data:`~imperiale_env.core.observation.SCALES`), the turned-card stages and the item cards.
SeenTables = namedtuple("SeenTables", ["offsets", "rules", "scales", "is_turned_stage", "item_mask"])


@njit(cache=True)
def encode(lo: int, hi: int, out: np.ndarray, rows: np.ndarray, players: np.ndarray, s: SeenState,
           t: SeenTables) -> None:
    """Rows ``lo .. hi-1`` of ``out``: row ``r`` is game ``rows[r]`` seen by the seat ``players[r]``
    (by the player to act when ``players`` is empty; a player who is not to act sees no
    pending decision).  Every entry of each row is written once (a seat missing with two
    players is written as zeros)."""
    (kind, current_player, dealer, leader, trump, turned, stage, trick_len, tricks_played, hands, played, revealed,
     dealt, trick_cards, voids, pending, point_suit, point_answered, point_count, point_value, imperiales, points,
     tricks) = s
    offsets, is_turned_stage, item_mask = t.offsets, t.is_turned_stage, t.item_mask
    target = t.rules[0]["target_imperiales"]
    scale = t.scales[0]
    by_count, by_value = scale["point_count"], scale["point_value"]
    by_points, by_tricks = scale["points"], scale["tricks"]
    (o_hand, o_played, o_trick, o_revealed, o_turned, o_trump, o_voids, o_phase, o_question_kind,
     o_question_cards, o_point, o_imperiales, o_points, o_tricks, o_dealer, o_leader, o_progress) = (
        offsets[0], offsets[1], offsets[2], offsets[3], offsets[4], offsets[5], offsets[6], offsets[7], offsets[8],
        offsets[9], offsets[10], offsets[11], offsets[12], offsets[13], offsets[14], offsets[15], offsets[16])
    P = hands.shape[1]
    for r in range(lo, hi):
        i = np.uint64(rows[r])
        k, now = kind[i], current_player[i]
        cur = players[r] if players.shape[0] else max(now, 0)
        me = np.uint64(cur)
        acting = k != NONE and cur == now
        _cards(out, r, o_hand, hands[i, me])
        for s in range(_SEATS):
            if s < P:
                rel = _seat(cur + s, P)
                seat = np.uint64(rel)
                c = trick_cards[i, np.uint64(_seat(rel - leader[i] + P, P))]
                _cards(out, r, o_played + _CARDS * s, played[i, seat])
                _cards(out, r, o_trick + _CARDS * s, BIT[c] if c >= 0 else ZERO)
                _cards(out, r, o_revealed + _CARDS * s, revealed[i, seat])
                _bits(out, r, o_voids + 4 * s, 4, voids[i, seat])
                declared = point_suit[i, seat] >= 0
                at = o_point + 4 * s
                _put(out, r, at, 1.0 if declared else 0.0)
                _put(out, r, at + 1, 1.0 if point_answered[i, seat] and not declared else 0.0)
                _put(out, r, at + 2, point_count[i, seat] / by_count)
                _put(out, r, at + 3, point_value[i, seat] / by_value)
                _put(out, r, o_imperiales + s, min(imperiales[i, seat] / target, 1.0))
                _put(out, r, o_points + s, min(points[i, seat] / by_points, 1.0))
                _put(out, r, o_tricks + s, min(tricks[i, seat] / by_tricks, 1.0))
            else:
                _cards(out, r, o_played + _CARDS * s, ZERO)
                _cards(out, r, o_trick + _CARDS * s, ZERO)
                _cards(out, r, o_revealed + _CARDS * s, ZERO)
                _bits(out, r, o_voids + 4 * s, 4, 0)
                _bits(out, r, o_point + 4 * s, 4, 0)
                _put(out, r, o_imperiales + s, 0.0)
                _put(out, r, o_points + s, 0.0)
                _put(out, r, o_tricks + s, 0.0)
        _cards(out, r, o_turned, BIT[turned[i]])
        _bits(out, r, o_trump, 4, 1 << trump[i])
        phase = question_kind = 0
        question_cards = ZERO
        if acting:
            phase = 1 << k
            if k == QUESTION:
                if is_turned_stage[stage[i]]:
                    question_kind = 1 << 4
                    question_cards = BIT[turned[i]]
                else:
                    pend = np.uint64(pending[i, me])
                    item = lowest_card(pend) if pend != ZERO else -1  # -1: nothing pending (never asked)
                    question_kind = 1 << (0 if item == _CB_ITEM else 1 if item < 5 else 2 if item < 9 else 3)
                    question_cards = dealt[i, me] if item == _CB_ITEM else item_mask[max(item, 0)]
        _bits(out, r, o_phase, 3, phase)
        _bits(out, r, o_question_kind, 5, question_kind)
        _cards(out, r, o_question_cards, question_cards)
        _bits(out, r, o_dealer, 3, 1 << _seat(dealer[i] - cur + P, P))
        _bits(out, r, o_leader, 3, 1 << _seat(leader[i] - cur + P, P) if trick_len[i] > 0 else 0)
        _put(out, r, o_progress, tricks_played[i] / by_tricks)
        _put(out, r, o_progress + 1, 1.0 if P == 3 else 0.0)


@njit(cache=True, parallel=True)
def encode_threaded(chunks: int, out: np.ndarray, rows: np.ndarray, players: np.ndarray, s: SeenState,
                    t: SeenTables) -> None:
    """:func:`encode` of every row, in ``chunks`` slices run on numba's threads (each row is
    written by one thread, so the thread count never changes a value)."""
    n = rows.shape[0]
    for c in prange(chunks):
        encode(c * n // chunks, (c + 1) * n // chunks, out, rows, players, s, t)
