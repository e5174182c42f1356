"""The observation encoder of the batched engine, compiled: :data:`~imperiale_env.core.observation.OBS_SIZE`
bytes a game, written into the caller's buffer (the layout is declared in
:mod:`imperiale_env.core.observation`).

A row is cleared, then only its non-zero entries are written: a card block is a walk over the
set bits of a 36-bit mask (at most 12 cards in a hand; ``tzcnt`` finds each), so most of a row
costs one store of its zero bytes.  The order of play is copied card by card without a branch
(36 bytes of the trick, 36 of the player), which is quicker than walking the cards played.
The order of play comes from the arrays the card play keeps
(``played_in``, ``played_by``, ``leaders``, ``not_held``: :func:`~imperiale_env.batch.card_play_kernels.play_card`),
so the encoder never replays the deal.

One loop over a range of rows, called on the whole batch or on one slice a thread
(:func:`encode_threaded`).  The block offsets come in as an array (``offsets``, from
:data:`~imperiale_env.core.observation.OFFSETS` by the names of :data:`OFFSET_NAMES`) rather
than being frozen into the cached machine code, so a change of layout cannot meet a stale cache.
The indices are unsigned (``np.uint64``) where they index: numba adds a fix-up for negative
indices to every signed read and write.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit, prange

from imperiale_env.batch.addresses import arrays_at, compiled_fingerprint
from imperiale_env.batch.state import NONE, QUESTION, layout
from imperiale_env.core.declarations import CB_ITEM, FOUR_ITEMS_START, SEQUENCE_ITEMS
from imperiale_env.core.observation import NUM_SHOWN_ITEMS, OFFSETS, POINT_DECLARED, POINT_SUNK, TURNED_IMPERIALE_ITEM
from imperiale_env.kernels.mask_ops import ONE, ZERO, lowest_card

#: The blocks the encoder writes, in the order of the ``offsets`` array it is given.
OFFSET_NAMES = ("hand", "played_by", "played_in", "leaders", "shown_by", "turned", "trump", "not_held", "voids",
                "phase", "question_kind", "question_cards", "shown_items", "point", "point_count", "point_value",
                "imperiales", "points", "tricks", "dealer", "tricks_played", "players")
#: Where each block starts, in the order of :data:`OFFSET_NAMES`.
BLOCK_STARTS = np.array([OFFSETS[name].start for name in OFFSET_NAMES], dtype=np.int64)
_CARDS = 36
_SUITS = 4
_FIRST_SEQUENCE_ITEM = SEQUENCE_ITEMS.start  # the plain integer a kernel reads
_POINTS_CAP = 24


@njit(cache=True)
def _seat(x: int, P: int) -> int:
    """``x % P`` for ``0 <= x < 2 P``, without the slow integer division (P is not a constant)."""
    return x - P if x >= P else x


@njit(cache=True)
def _put(out: np.ndarray, r: int, at: int, value: int) -> None:
    """``out[r, at] = value``, through an unsigned index like every write of the encoder."""
    out[r, np.uint64(at)] = value


@njit(cache=True)
def _cards(out: np.ndarray, r: int, at: int, mask: np.uint64, value: int) -> None:
    """``out[r, at + c] = value`` for every card ``c`` of ``mask``."""
    m = mask
    while m != ZERO:
        _put(out, r, at + lowest_card(m), value)
        m &= m - ONE


#: The arrays of the batch state the encoder reads (the kernels' form: a named tuple of them).
SEEN_FIELDS = ("kind", "current_player", "dealer", "trump", "turned", "stage", "trick_len", "tricks_played",
               "hands", "played", "revealed", "dealt", "voids", "pending", "shown", "turned_shown", "point_suit",
               "point_answered", "point_count", "point_value", "imperiales", "points", "tricks", "played_in",
               "played_by", "leaders", "not_held")
SeenState = namedtuple("SeenState", SEEN_FIELDS)
#: What the encoder reads of the batch's tables: the block starts (:data:`OFFSET_NAMES` order), the
#: rules record (the target caps the impériales), the turned-card stages and the item cards.
SeenTables = namedtuple("SeenTables", ["offsets", "rules", "is_turned_stage", "item_mask"])


@njit(cache=True)
def encode(lo: int, hi: int, out: np.ndarray, rows: np.ndarray, players: np.ndarray, s: SeenState,
           t: SeenTables) -> None:
    """Rows ``lo .. hi-1`` of ``out``: row ``r`` is game ``rows[r]`` seen by the seat ``players[r]``
    (by the player to act when ``players`` is empty; a player who is not to act sees no
    pending decision)."""
    o = t.offsets
    (o_hand, o_played_by, o_played_in, o_leaders, o_shown_by, o_turned, o_trump, o_not_held, o_voids, o_phase,
     o_question_kind, o_question_cards, o_shown_items, o_point, o_point_count, o_point_value, o_imperiales, o_points,
     o_tricks, o_dealer, o_tricks_played, o_players) = (
        o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7], o[8], o[9], o[10], o[11], o[12], o[13], o[14], o[15], o[16],
        o[17], o[18], o[19], o[20], o[21])
    target = t.rules[0]["target_imperiales"]
    P = s.hands.shape[1]
    for r in range(lo, hi):
        out[r, :] = 0
        i = np.uint64(rows[r])
        k, now = s.kind[i], s.current_player[i]
        cur = players[r] if players.shape[0] else max(now, 0)
        me = np.uint64(cur)
        _cards(out, r, o_hand, s.hands[i, me], 1)
        # Every card at once, without a branch: its trick (0 if not played: the state's own
        # numbering) and its player relative to the observer (0 if not played, the state's -1).
        for c in range(_CARDS):
            by = s.played_by[i, np.uint64(c)]
            rel = by - cur
            rel += P if rel < 0 else 0
            _put(out, r, o_played_by + c, rel + 1 if by >= 0 else 0)
            _put(out, r, o_played_in + c, s.played_in[i, np.uint64(c)])
        led = s.tricks_played[i] + (1 if s.trick_len[i] > 0 else 0)
        for trick in range(led):
            _put(out, r, o_leaders + trick, 1 + _seat(s.leaders[i, np.uint64(trick)] - cur + P, P))
        for rel in range(P):
            q = np.uint64(_seat(cur + rel, P))
            _cards(out, r, o_shown_by, s.revealed[i, q], 1 + rel)
            if rel > 0:
                _cards(out, r, o_not_held + _CARDS * (rel - 1), s.not_held[i, q], 1)
            for suit in range(_SUITS):
                if (s.voids[i, q] >> suit) & 1:
                    _put(out, r, o_voids + _SUITS * rel + suit, 1)
            at = o_shown_items + NUM_SHOWN_ITEMS * rel
            for item in range(TURNED_IMPERIALE_ITEM):
                if (s.shown[i, q] >> item) & 1:
                    _put(out, r, at + item, 1)
            if q == s.dealer[i] and s.turned_shown[i]:
                _put(out, r, at + TURNED_IMPERIALE_ITEM, 1)
            if s.point_suit[i, q] >= 0:
                _put(out, r, o_point + rel, POINT_DECLARED)
                _put(out, r, o_point_count + rel, s.point_count[i, q])
                _put(out, r, o_point_value + rel, s.point_value[i, q])
            elif s.point_answered[i, q]:
                _put(out, r, o_point + rel, POINT_SUNK)
            _put(out, r, o_imperiales + rel, min(s.imperiales[i, q], target))
            _put(out, r, o_points + rel, min(s.points[i, q], _POINTS_CAP))
            _put(out, r, o_tricks + rel, s.tricks[i, q])
        if P == 3:
            _put(out, r, o_shown_by + s.turned[i], 1 + _seat(s.dealer[i] - cur + P, P))
        _put(out, r, o_turned, s.turned[i])
        _put(out, r, o_trump, s.trump[i])
        if k != NONE and cur == now:
            _put(out, r, o_phase, 1 + k)
            if k == QUESTION:
                if t.is_turned_stage[s.stage[i]]:
                    _put(out, r, o_question_kind, 5)
                    _put(out, r, o_question_cards + s.turned[i], 1)
                else:
                    pend = np.uint64(s.pending[i, me])
                    item = lowest_card(pend) if pend != ZERO else -1  # -1: nothing pending (never asked)
                    _put(out, r, o_question_kind, 1 + (0 if item == CB_ITEM else 1 if item < _FIRST_SEQUENCE_ITEM
                                                       else 2 if item < FOUR_ITEMS_START else 3))
                    _cards(out, r, o_question_cards, s.dealt[i, me] if item == CB_ITEM else t.item_mask[max(item, 0)],
                           1)
        _put(out, r, o_dealer, _seat(s.dealer[i] - cur + P, P))
        _put(out, r, o_tricks_played, s.tricks_played[i])
        _put(out, r, o_players, P)


@njit(cache=True)
def encode_slice(lo: int, hi: int, out: np.ndarray, rows: np.ndarray, players: np.ndarray, seen, tables) -> None:
    """:func:`encode` called from Python: ``seen`` and ``tables`` come as plain tuples (numba types
    those in C, named ones in Python, which cost more than encoding one row) and are named here."""
    encode(lo, hi, out, rows, players, SeenState(*seen), SeenTables(*tables))


_seen_at = arrays_at(layout(SEEN_FIELDS))
_seen_fingerprint = compiled_fingerprint(layout(SEEN_FIELDS))


@njit(cache=True)
def encode_at(head: np.ndarray, lo: int, hi: int, out: np.ndarray, rows: np.ndarray, players: np.ndarray,
              tables) -> bool:
    """:func:`encode_slice` on the seen arrays given by their header
    (:meth:`~imperiale_env.batch.state.BatchState.header` of :data:`SEEN_FIELDS`: one array to pass
    where they are 27).  Returns False, writing nothing, when the header is of another layout than
    the one this code was compiled for (a disk cache older than ``state.py``)."""
    if head[0] != _seen_fingerprint():
        return False
    encode(lo, hi, out, rows, players, SeenState(*_seen_at(head)), SeenTables(*tables))
    return True


@njit(cache=True, parallel=True)
def encode_threaded(chunks: int, out: np.ndarray, rows: np.ndarray, players: np.ndarray, seen, tables) -> None:
    """:func:`encode_slice` of every row, in ``chunks`` slices run on numba's threads (each row is
    written by one thread, so the thread count never changes a value)."""
    n = rows.shape[0]
    s, t = SeenState(*seen), SeenTables(*tables)
    for c in prange(chunks):
        encode(c * n // chunks, (c + 1) * n // chunks, out, rows, players, s, t)
