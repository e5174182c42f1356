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
(:func:`encode_threaded`).  The block offsets are constants read by name from
:data:`~imperiale_env.core.observation.OFFSETS` (``O_HAND``, ...), frozen into the compiled code:
numba's disk cache is keyed on every source of the package, so a change of layout cannot meet a
stale cache.
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

#: Where each block the encoder writes starts, read by name from the layout (frozen into the compiled
#: code: numba's cache is keyed on the sources, imperiale_env.kernels.numba_cache).  int64, as the
#: array it replaces was: with NUMBA_DISABLE_JIT a Python int plus an int8 field stays int8 and wraps.
O_HAND = np.int64(OFFSETS["hand"].start)
O_PLAYED_BY = np.int64(OFFSETS["played_by"].start)
O_PLAYED_IN = np.int64(OFFSETS["played_in"].start)
O_LEADERS = np.int64(OFFSETS["leaders"].start)
O_SHOWN_BY = np.int64(OFFSETS["shown_by"].start)
O_TURNED = np.int64(OFFSETS["turned"].start)
O_TRUMP = np.int64(OFFSETS["trump"].start)
O_NOT_HELD = np.int64(OFFSETS["not_held"].start)
O_VOIDS = np.int64(OFFSETS["voids"].start)
O_PHASE = np.int64(OFFSETS["phase"].start)
O_QUESTION_KIND = np.int64(OFFSETS["question_kind"].start)
O_QUESTION_CARDS = np.int64(OFFSETS["question_cards"].start)
O_SHOWN_ITEMS = np.int64(OFFSETS["shown_items"].start)
O_POINT = np.int64(OFFSETS["point"].start)
O_POINT_COUNT = np.int64(OFFSETS["point_count"].start)
O_POINT_VALUE = np.int64(OFFSETS["point_value"].start)
O_IMPERIALES = np.int64(OFFSETS["imperiales"].start)
O_POINTS = np.int64(OFFSETS["points"].start)
O_TRICKS = np.int64(OFFSETS["tricks"].start)
O_DEALER = np.int64(OFFSETS["dealer"].start)
O_TRICKS_PLAYED = np.int64(OFFSETS["tricks_played"].start)
O_PLAYERS = np.int64(OFFSETS["players"].start)
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
#: What the encoder reads of the batch's tables: the
#: rules record (the target caps the impériales), the turned-card stages and the item cards.
SeenTables = namedtuple("SeenTables", ["rules", "is_turned_stage", "item_mask"])


@njit(cache=True)
def encode(lo: int, hi: int, out: np.ndarray, rows: np.ndarray, players: np.ndarray, s: SeenState,
           t: SeenTables) -> None:
    """Rows ``lo .. hi-1`` of ``out``: row ``r`` is game ``rows[r]`` seen by the seat ``players[r]``
    (by the player to act when ``players`` is empty; a player who is not to act sees no
    pending decision)."""
    target = t.rules[0]["target_imperiales"]
    P = s.hands.shape[1]
    for r in range(lo, hi):
        out[r, :] = 0
        i = np.uint64(rows[r])
        k, now = s.kind[i], s.current_player[i]
        cur = players[r] if players.shape[0] else max(now, 0)
        me = np.uint64(cur)
        _cards(out, r, O_HAND, s.hands[i, me], 1)
        # Every card at once, without a branch: its trick (0 if not played: the state's own
        # numbering) and its player relative to the observer (0 if not played, the state's -1).
        for c in range(_CARDS):
            by = s.played_by[i, np.uint64(c)]
            rel = by - cur
            rel += P if rel < 0 else 0
            _put(out, r, O_PLAYED_BY + c, rel + 1 if by >= 0 else 0)
            _put(out, r, O_PLAYED_IN + c, s.played_in[i, np.uint64(c)])
        led = s.tricks_played[i] + (1 if s.trick_len[i] > 0 else 0)
        for trick in range(led):
            _put(out, r, O_LEADERS + trick, 1 + _seat(s.leaders[i, np.uint64(trick)] - cur + P, P))
        for rel in range(P):
            q = np.uint64(_seat(cur + rel, P))
            _cards(out, r, O_SHOWN_BY, s.revealed[i, q], 1 + rel)
            if rel > 0:
                _cards(out, r, O_NOT_HELD + _CARDS * (rel - 1), s.not_held[i, q], 1)
            for suit in range(_SUITS):
                if (s.voids[i, q] >> suit) & 1:
                    _put(out, r, O_VOIDS + _SUITS * rel + suit, 1)
            at = O_SHOWN_ITEMS + NUM_SHOWN_ITEMS * rel
            for item in range(TURNED_IMPERIALE_ITEM):
                if (s.shown[i, q] >> item) & 1:
                    _put(out, r, at + item, 1)
            if q == s.dealer[i] and s.turned_shown[i]:
                _put(out, r, at + TURNED_IMPERIALE_ITEM, 1)
            if s.point_suit[i, q] >= 0:
                _put(out, r, O_POINT + rel, POINT_DECLARED)
                _put(out, r, O_POINT_COUNT + rel, s.point_count[i, q])
                _put(out, r, O_POINT_VALUE + rel, s.point_value[i, q])
            elif s.point_answered[i, q]:
                _put(out, r, O_POINT + rel, POINT_SUNK)
            _put(out, r, O_IMPERIALES + rel, min(s.imperiales[i, q], target))
            _put(out, r, O_POINTS + rel, min(s.points[i, q], _POINTS_CAP))
            _put(out, r, O_TRICKS + rel, s.tricks[i, q])
        if P == 3:
            _put(out, r, O_SHOWN_BY + s.turned[i], 1 + _seat(s.dealer[i] - cur + P, P))
        _put(out, r, O_TURNED, s.turned[i])
        _put(out, r, O_TRUMP, s.trump[i])
        if k != NONE and cur == now:
            _put(out, r, O_PHASE, 1 + k)
            if k == QUESTION:
                if t.is_turned_stage[s.stage[i]]:
                    _put(out, r, O_QUESTION_KIND, 5)
                    _put(out, r, O_QUESTION_CARDS + s.turned[i], 1)
                else:
                    pend = np.uint64(s.pending[i, me])
                    item = lowest_card(pend) if pend != ZERO else -1  # -1: nothing pending (never asked)
                    _put(out, r, O_QUESTION_KIND, 1 + (0 if item == CB_ITEM else 1 if item < _FIRST_SEQUENCE_ITEM
                                                       else 2 if item < FOUR_ITEMS_START else 3))
                    _cards(out, r, O_QUESTION_CARDS, s.dealt[i, me] if item == CB_ITEM else t.item_mask[max(item, 0)],
                           1)
        _put(out, r, O_DEALER, _seat(s.dealer[i] - cur + P, P))
        _put(out, r, O_TRICKS_PLAYED, s.tricks_played[i])
        _put(out, r, O_PLAYERS, P)


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
