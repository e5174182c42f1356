"""The exact perfect-information solver of :mod:`imperiale_agents.search.solver`, compiled with numba.

Same positions, same values, same interface (:class:`CompiledSolver` ``.move_values``); the
pure-Python :class:`imperiale_agents.search.solver.Solver` stays as the oracle the tests compare it with.  The
search is the same alpha-beta over cards (the solving seat maximises, the others minimise:
*paranoid* with three players), on the shared rule kernels of :mod:`imperiale_env.kernels`,
with

* a **transposition table** in fixed-size arrays (one per thread), indexed by a hash of the
  hands, the leader and the tricks won (or, with linear two-player scoring, only the capot
  state), each entry holding the full key so that a hash collision is never a wrong hit; a
  stamp per call and (trump, seat) replaces clearing the table: the positions of one call that
  share them share the table (a sampled world reuses what another one searched);
* **move ordering**: the best card found before in the position (from the table) first; the
  follower tries its cheapest winning card first, then the cheapest loser; the leader its
  masters first, then its high cards, the trumps and honours that are not masters last;
* **equivalent cards**: only the first card of a run of equivalent cards (same suit, same
  honour status, no live card of another hand between them) is searched; the others share its
  value.  The runs are those of the Python solver, so the values are the same numbers.

:func:`solve_positions` solves many positions (any hands, trump, seat, leader, trick) in one
compiled call, :meth:`CompiledSolver.values` many sampled deals of one position (what ``pimc``
needs), optionally spread over threads with ``prange``: each position's values are exact and
independent of the table's state, so the result is the same whatever the thread count.
"""

from __future__ import annotations

import functools
import threading
from collections import namedtuple
from typing import NamedTuple

import numba
import numpy as np
from numba import njit, prange

from imperiale_env.core.cards import NUM_CARDS, NUM_RANKS
from imperiale_env.core.rules import Rules, rule_record
from imperiale_env.core.tricks import TRICKS_PER_DEAL, play_out_scoring
from imperiale_env.kernels.mask_ops import BIT, ONE, STRONGER, SUIT_MASK, ZERO, card_count, lowest_card
from imperiale_env.kernels.trick_rules import beats, legal_plays

#: Table index bits of a solve from the first trick, by player count (2**bits entries, about 1 MiB
#: each 32k).  Three players search a far larger tree (two hidden hands to play out, a tricks-won
#: count per seat in the key): with 16 bits the table thrashed and ``pimc:16`` took 490 ms a
#: decision in academie3, with 20 bits 200 ms; two players are fastest with 16 (1.8 ms a
#: ``pimc:16`` decision in academie, 2.5 ms with 20: the larger table misses the processor's cache).
TT_BITS = {2: 16, 3: 20}
#: The fewest table index bits a solve uses.  A solve uses its player count's ``TT_BITS`` minus the
#: tricks played (one bit less a trick played, ``MIN_TT_BITS`` at least): a small search spread over the whole
#: table would miss the cache at every probe, and it needs only a few entries.
MIN_TT_BITS = 10
#: Plies of a deal (36 cards at most) plus the root.
MAX_DEPTH = NUM_CARDS + 1
EXACT, LOWER, UPPER = 0, 1, 2
#: What a search reads of the rules, for one position's trump and seat: the rules record
#: (:func:`~imperiale_env.core.rules.rule_record`: the play rules by name), the int and float
#: settings, the trump's honours and the final trick scores of the solving seat.
Consts = namedtuple("Consts", ["rules", "cfg", "fcfg", "honours", "final"])
#: One thread's search memory: the transposition table and the stack of plies.
Memory = namedtuple("Memory", ["tt", "moves", "si", "sf", "tr", "skey"])
# cfg slots (int64): players, trump, me, linear scoring, table bits (the play rules are read from the
# rules record).
_P, _TRUMP, _ME, _LINEAR, _TTBITS = range(5)
# fcfg slots (float64), from PlayOutScoring: the points of a trick won under linear scoring, the share of
# each other seat, the points of a captured honour, then the prize of each trick 0..11.
_PER_TRICK, _SHARE, _HONOUR_POINTS, _PRIZE = range(4)
_HASH_A = np.uint64(0x9E3779B97F4A7C15)
_HASH_B = np.uint64(0xC2B2AE3D27D4EB4F)
_HASH_C = np.uint64(0x165667B19E3779F9)
# A table entry is four words: hands 0 and 1; hand 2 with the leader and the tricks state above
# bit 36 and the best card found (plus one; 0 for none, tried first on a revisit) from bit 56;
# the solve's stamp, the bound flag and twice the value (an integer: every value is a multiple of
# 1/2), biased to be non-negative.
_POS_SHIFT = np.uint64(NUM_CARDS)
_HINT_SHIFT = np.uint64(56)
_KEY_BITS = np.uint64((1 << 56) - 1)
_STAMP_SHIFT = np.uint64(34)
_FLAG_SHIFT = np.uint64(32)
_LOW32 = np.uint64(0xFFFFFFFF)
_LOW2 = np.uint64(3)
_BIAS = 1 << 31
#: Stamps fit in 30 bits.
MAX_STAMP = 1 << 30
_DECK = np.uint64((1 << NUM_CARDS) - 1)
#: Every card but the strongest of each suit (the card a run can continue to from a stronger one).
_NOT_STRONGEST = _DECK & ~np.uint64(sum(1 << (NUM_RANKS * s) for s in range(4)))
_S1, _S2, _S4, _S8 = (np.uint64(k) for k in (1, 2, 4, 8))


@njit(cache=True, _nrt=False)
def _run_followers(cls: np.uint64, dead: np.uint64) -> np.uint64:
    """The cards of ``cls`` whose nearest stronger live card (same suit, skipping ``dead`` cards)
    is also of ``cls``: a fill of ``cls`` towards the weaker cards through the dead ones, every
    suit at once (a fill never crosses into the next suit's strongest card)."""
    d = dead & _NOT_STRONGEST
    y = cls
    y |= d & (y << _S1)
    d &= d << _S1
    y |= d & (y << _S2)
    d &= d << _S2
    y |= d & (y << _S4)
    d &= d << _S4
    y |= d & (y << _S8)
    return cls & (y << _S1) & _NOT_STRONGEST


@njit(cache=True, _nrt=False)
def equivalent_heads(mine: np.uint64, others: np.uint64, honours: np.uint64, legal: np.uint64) -> np.uint64:
    """The cards of ``legal`` (a subset of ``mine``) that head a run of equivalent cards: no live
    card of ``others`` between two cards of a run, all of one honour status.  A card of mine
    heads a run unless the nearest stronger live card of its suit is mine, of its status."""
    dead = _DECK & ~(mine | others)
    followers = _run_followers(mine & honours, dead) | _run_followers(mine & ~honours, dead)
    return legal & ~followers


@njit(cache=True, _nrt=False)
def _ordered_moves(hands, P, seat, legal, trick, ntrick, win, trump, honours, hint, out) -> int:
    """Write the cards to search (one per run of equivalent cards) into ``out``, best first:
    ``hint`` (the best card found here before, from the table; -1 if none) leads."""
    if legal & (legal - ONE) == ZERO:
        out[0] = lowest_card(legal)
        return 1
    live = ZERO
    for s in range(P):
        live |= hands[s]
    mine = hands[seat]
    others = live & ~mine
    for k in range(ntrick):
        others |= BIT[trick[k]]
    reps = equivalent_heads(mine, others, honours, legal)
    trump_mask = SUIT_MASK[trump]
    beat = ZERO
    if ntrick:
        beat = STRONGER[win]
        if win // NUM_RANKS != trump:
            beat |= trump_mask
    n = 0
    while reps:
        c = lowest_card(reps)
        reps &= reps - ONE
        bit = BIT[c]
        is_trump = 1 if bit & trump_mask else 0
        if ntrick:
            # Follower: cheapest winner (plain before trump), then losers (honours last, trumps late).
            if bit & beat:
                key = is_trump * 64 + (63 - c)
            else:
                key = 1000 + (200 if bit & honours else 0) + is_trump * 64 + (63 - c)
        else:
            # Leader: masters (no stronger live card elsewhere) first, then by strength, the
            # trumps and honours that are not masters late.
            key = c % NUM_RANKS
            if others & STRONGER[c] != ZERO:
                key += 100 + 20 * is_trump + (50 if bit & honours else 0)
        if c == hint:
            key = -1
        # Insertion sort by key (at most 12 cards); ties keep card order.
        j = n
        while j > 0 and out[NUM_CARDS + j - 1] > key:
            out[j] = out[j - 1]
            out[NUM_CARDS + j] = out[NUM_CARDS + j - 1]
            j -= 1
        out[j] = c
        out[NUM_CARDS + j] = key
        n += 1
    return n


@njit(cache=True, _nrt=False, inline="always")
def _legal(k, hand, led, win, first) -> np.uint64:
    """The cards of ``hand`` that may be played (the shared rule kernel, the rules read by name)."""
    r = k.rules[0]
    return legal_plays(hand, led, win, k.cfg[_TRUMP], first, r["must_beat"] != 0, r["must_trump"] != 0,
                       r["overtrump"] != 0, r["first_lead_trump"] != 0)


@njit(cache=True, _nrt=False)
def _tkey(cfg, tricks) -> int:
    """What of the tricks won the future depends on: all of them, or (linear scoring) the capot state."""
    if cfg[_LINEAR]:
        t = tricks[cfg[_ME]]
        total = tricks[0] + tricks[1] + tricks[2]
        return 1 if t == total else (2 if t == 0 else 0)
    return 1 + tricks[0] + 13 * tricks[1] + 169 * tricks[2]


@njit(cache=True, _nrt=False, inline="always")
def _last_trick(hands, leader, k, tricks) -> float:
    """Value for ``me`` of the last trick, one card in each hand (nothing to choose): its honours
    and trick, plus the final trick score (the sum the search would make, in the same order)."""
    P, me, trump = k.cfg[_P], k.cfg[_ME], k.cfg[_TRUMP]
    mask = ZERO
    win = 0
    wseat = leader
    for j in range(P):
        seat = (leader + j) % P
        c = lowest_card(hands[seat])
        mask |= BIT[c]
        if j == 0 or beats(c, win, trump):
            win, wseat = c, seat
    hv = card_count(mask & k.honours) * k.fcfg[_HONOUR_POINTS] + k.fcfg[_PRIZE + TRICKS_PER_DEAL - 1]
    r = hv + k.fcfg[_PER_TRICK] if wseat == me else -k.fcfg[_SHARE] * hv
    tricks[wseat] += 1
    v = k.final[tricks[0], tricks[1], tricks[2]]
    tricks[wseat] -= 1
    return v + r


# Per-ply frame fields of the search stack (int64 and float64 rows).
_N, _K, _SEAT, _NTRICK, _LEADER, _WIN, _WSEAT, _PLAYED, _CARD, _WON, _SLOT, _BOUND, _BESTC = range(13)
_ALPHA, _BETA, _BEST, _A0, _B0, _R = range(6)


@njit(cache=True, _nrt=False, inline="always")
def _start(k, m, trick0, ntrick0, leader0, win0, wseat0, played0, only) -> None:
    """Ply 0, the root: the position before card ``only`` (the one card to value) is played."""
    si, sf = m.si, m.sf
    si[0, _NTRICK] = ntrick0
    si[0, _LEADER] = leader0
    si[0, _WIN] = win0
    si[0, _WSEAT] = wseat0
    si[0, _PLAYED] = played0
    si[0, _SEAT] = (leader0 + ntrick0) % k.cfg[_P]
    si[0, _N] = 1
    si[0, _K] = 0
    si[0, _BOUND] = 0
    for j in range(3):
        m.tr[0, j] = trick0[j]
    m.moves[0, 0] = only
    sf[0, _ALPHA] = -np.inf
    sf[0, _BETA] = np.inf
    sf[0, _BEST] = -np.inf if si[0, _SEAT] == k.cfg[_ME] else np.inf


@njit(cache=True, _nrt=False, inline="always")
def _play_next(k, m, hands, tricks, d) -> tuple[float, float]:
    """Play the next card of ply ``d``: ply ``d + 1`` is the position after it (a trick it ends is
    scored: its honours now, the trick in ``tricks``).  The window of ply ``d + 1``."""
    si, sf, tr = m.si, m.sf, m.tr
    P, me = k.cfg[_P], k.cfg[_ME]
    c = m.moves[d, si[d, _K]]
    si[d, _K] += 1
    seat = si[d, _SEAT]
    ntrick = si[d, _NTRICK]
    hands[seat] &= ~BIT[c]
    win, wseat = si[d, _WIN], si[d, _WSEAT]
    if ntrick == 0 or beats(c, win, k.cfg[_TRUMP]):
        win, wseat = c, seat
    e = d + 1
    for j in range(3):
        tr[e, j] = tr[d, j]
    tr[e, ntrick] = c
    si[e, _CARD] = c
    r = 0.0
    if ntrick + 1 < P:
        si[e, _NTRICK] = ntrick + 1
        si[e, _LEADER] = si[d, _LEADER]
        si[e, _WIN] = win
        si[e, _WSEAT] = wseat
        si[e, _PLAYED] = si[d, _PLAYED]
        si[e, _WON] = -1
    else:
        mask = ZERO
        for j in range(P):
            mask |= BIT[tr[e, j]]
        hv = card_count(mask & k.honours) * k.fcfg[_HONOUR_POINTS] + k.fcfg[_PRIZE + si[d, _PLAYED]]
        r = hv + k.fcfg[_PER_TRICK] if wseat == me else -k.fcfg[_SHARE] * hv
        tricks[wseat] += 1
        si[e, _NTRICK] = 0
        si[e, _LEADER] = wseat
        si[e, _WIN] = 0
        si[e, _WSEAT] = 0
        si[e, _PLAYED] = si[d, _PLAYED] + 1
        si[e, _WON] = wseat
    sf[e, _R] = r
    return sf[d, _ALPHA] - r, sf[d, _BETA] - r


@njit(cache=True, _nrt=False, inline="always")
def _probe(k, m, hands, tricks, d, alpha, beta, stamp, shift) -> tuple[bool, float, int]:
    """Look ply ``d`` (a trick boundary) up in the table: (a usable value, the value, the best card
    stored there or -1).  Ply ``d`` remembers its slot and key, to store its value later."""
    leader = m.si[d, _LEADER]
    tt = m.tt
    key2 = hands[2] | (np.uint64(_tkey(k.cfg, tricks) * 4 + leader) << _POS_SHIFT)
    h = (hands[0] * _HASH_A) ^ (hands[1] * _HASH_B) ^ (key2 * _HASH_C)
    slot = np.int64(h >> shift)
    word = tt[slot, 3]
    hit = False
    v = 0.0
    hint = -1
    if (word >> _STAMP_SHIFT == np.uint64(stamp) and tt[slot, 0] == hands[0]
            and tt[slot, 1] == hands[1] and tt[slot, 2] & _KEY_BITS == key2):
        hint = np.int64(tt[slot, 2] >> _HINT_SHIFT) - 1
        v = (np.int64(word & _LOW32) - _BIAS) * 0.5
        flag = np.int64((word >> _FLAG_SHIFT) & _LOW2)
        hit = flag == EXACT or (flag == LOWER and v >= beta) or (flag == UPPER and v <= alpha)
    m.si[d, _BOUND] = 1
    m.si[d, _SLOT] = slot
    m.skey[d] = key2
    return hit, v, hint


@njit(cache=True, _nrt=False, inline="always")
def _open(k, m, hands, d, alpha, beta, hint) -> None:
    """Ply ``d`` to search: its cards in order (``hint`` first), its window and its best so far."""
    si, sf = m.si, m.sf
    leader = si[d, _LEADER]
    ntrick = si[d, _NTRICK]
    seat = (leader + ntrick) % k.cfg[_P]
    led = m.tr[d, 0] // NUM_RANKS if ntrick else -1
    legal = _legal(k, hands[seat], led, si[d, _WIN], si[d, _PLAYED] == 0)
    si[d, _N] = _ordered_moves(hands, k.cfg[_P], seat, legal, m.tr[d], ntrick, si[d, _WIN], k.cfg[_TRUMP],
                               k.honours, hint, m.moves[d])
    si[d, _K] = 0
    si[d, _SEAT] = seat
    sf[d, _ALPHA] = alpha
    sf[d, _BETA] = beta
    sf[d, _A0] = alpha
    sf[d, _B0] = beta
    sf[d, _BEST] = -np.inf if seat == k.cfg[_ME] else np.inf
    si[d, _BESTC] = -1


@njit(cache=True, _nrt=False, inline="always")
def _enter(k, m, hands, tricks, d, alpha, beta, stamp, shift) -> tuple[bool, float]:
    """Enter ply ``d``: (True, its value) for a final position, a last trick or a table hit;
    else (False, 0) with its cards to search."""
    leader = m.si[d, _LEADER]
    ntrick = m.si[d, _NTRICK]
    m.si[d, _BOUND] = 0
    if ntrick == 0 and hands[leader] == ZERO:
        return True, k.final[tricks[0], tricks[1], tricks[2]]
    if ntrick == 0 and hands[leader] & (hands[leader] - ONE) == ZERO:
        return True, _last_trick(hands, leader, k, tricks)
    hint = -1
    if ntrick == 0:
        hit, v, hint = _probe(k, m, hands, tricks, d, alpha, beta, stamp, shift)
        if hit:
            return True, v
    _open(k, m, hands, d, alpha, beta, hint)
    return False, 0.0


@njit(cache=True, _nrt=False, inline="always")
def _store(m, hands, d, v, stamp) -> None:
    """The searched value ``v`` of ply ``d`` into its table slot, with its bound and best card."""
    si, sf, tt = m.si, m.sf, m.tt
    slot = si[d, _SLOT]
    flag = EXACT
    if v <= sf[d, _A0]:
        flag = UPPER
    elif v >= sf[d, _B0]:
        flag = LOWER
    tt[slot, 0] = hands[0]
    tt[slot, 1] = hands[1]
    tt[slot, 2] = m.skey[d] | (np.uint64(si[d, _BESTC] + 1) << _HINT_SHIFT)
    tt[slot, 3] = ((np.uint64(stamp) << _STAMP_SHIFT) | (np.uint64(flag) << _FLAG_SHIFT)
                   | np.uint64(np.int64(v * 2.0) + _BIAS))


@njit(cache=True, _nrt=False, inline="always")
def _back_up(k, m, hands, tricks, d, v) -> None:
    """Back from ply ``d`` to ``d - 1``: take its card back and fold its value ``v`` in."""
    si, sf = m.si, m.sf
    won = si[d, _WON]
    if won >= 0:
        tricks[won] -= 1
    v += sf[d, _R]
    c = si[d, _CARD]
    d -= 1
    seat = si[d, _SEAT]
    hands[seat] |= BIT[c]
    if seat == k.cfg[_ME]:
        if v > sf[d, _BEST]:
            sf[d, _BEST] = v
            si[d, _BESTC] = c
            if v > sf[d, _ALPHA]:
                sf[d, _ALPHA] = v
    elif v < sf[d, _BEST]:
        sf[d, _BEST] = v
        si[d, _BESTC] = c
        if v < sf[d, _BETA]:
            sf[d, _BETA] = v


@njit(cache=True, _nrt=False)
def _play_value(hands, tricks, trick0, ntrick0, leader0, win0, wseat0, played0, only, k, m, stamp, shift) -> float:
    """Exact value for ``me`` of playing card ``only`` now: future honours and final trick score.

    Alpha-beta over an explicit stack of plies (the :data:`Memory` ``m``, one row a ply; numba's
    cached code cannot call itself).  ``hands`` and ``tricks`` are changed and restored around
    each card.  The transposition table is probed and stored at trick boundaries, in its first
    ``2 ** (64 - shift)`` entries."""
    _start(k, m, trick0, ntrick0, leader0, win0, wseat0, played0, only)
    d = 0
    while True:
        if m.si[d, _K] < m.si[d, _N] and m.sf[d, _ALPHA] < m.sf[d, _BETA]:
            alpha, beta = _play_next(k, m, hands, tricks, d)
            d += 1
            known, v = _enter(k, m, hands, tricks, d, alpha, beta, stamp, shift)
            if not known:
                continue
        else:
            v = m.sf[d, _BEST]
            if m.si[d, _BOUND]:
                _store(m, hands, d, v, stamp)
            if d == 0:
                return v
        _back_up(k, m, hands, tricks, d, v)
        d -= 1


@njit(cache=True)
def _root_values(hands, leader, trick0, ntrick, tricks0, played, k, m, stamp, out) -> None:
    """Exact value of every legal card of the seat to play into ``out`` (NaN for the others)."""
    P = k.cfg[_P]
    trump = k.cfg[_TRUMP]
    trick = np.zeros(3, dtype=np.int64)
    tricks = tricks0.copy()
    win, win_seat = 0, 0
    for j in range(ntrick):
        trick[j] = trick0[j]
        if j == 0 or beats(trick0[j], win, trump):
            win, win_seat = trick0[j], (leader + j) % P
    seat = (leader + ntrick) % P
    led = trick[0] // NUM_RANKS if ntrick else -1
    legal = _legal(k, hands[seat], led, win, played == 0)
    order = np.zeros(2 * NUM_CARDS, dtype=np.int64)
    n = _ordered_moves(hands, P, seat, legal, trick, ntrick, win, trump, k.honours, -1, order)
    out[:] = np.nan
    offset = k.fcfg[_PER_TRICK] * (tricks0[k.cfg[_ME]] - 6) if k.cfg[_LINEAR] else 0.0
    shift = np.uint64(64 - max(MIN_TT_BITS, k.cfg[_TTBITS] - played))
    for j in range(n):
        c = order[j]
        out[c] = _play_value(hands, tricks, trick, ntrick, leader, win, win_seat, played, c, k, m, stamp,
                             shift) + offset
    # Equivalent cards share the value of their run's head: the nearest stronger legal card.
    rest = legal
    prev = -1
    while rest:
        c = lowest_card(rest)
        rest &= rest - ONE
        if np.isnan(out[c]):
            out[c] = out[prev]
        prev = c


# Columns of the packed positions (int64, one row a position); the last is the position's table
# stamp, counted from the call's first stamp.
_PTRUMP, _PME, _PLEADER, _PNTRICK, _PTRICK, _PTRICKS, _PPLAYED, _PSTAMP = 0, 1, 2, 3, 4, 7, 10, 11
_PCOLUMNS = 12


@njit(cache=True)
def _solve_chunk(hands, pos, rules, rcfg, fcfg, honours, final, memory, stamp, t, chunks, out) -> None:
    """Root values of positions ``t, t + chunks, ...`` with table and stack ``memory[t]``: the
    rules' settings ``rcfg`` with each position's trump and seat, its trump's honours and the
    final scores for its seat.  Positions of one stamp share the table's entries (a position's
    value depends only on its hands, leader and tricks, given the trump and the seat)."""
    cfg = rcfg.copy()
    m = Memory(memory.tt[t], memory.moves[t], memory.si[t], memory.sf[t], memory.tr[t], memory.skey[t])
    for i in range(t, hands.shape[0], chunks):
        trump = pos[i, _PTRUMP]
        me = pos[i, _PME]
        cfg[_TRUMP] = trump
        cfg[_ME] = me
        k = Consts(rules, cfg, fcfg, honours[trump], final[me])
        _root_values(hands[i], pos[i, _PLEADER], pos[i, _PTRICK:_PTRICK + 3], pos[i, _PNTRICK],
                     pos[i, _PTRICKS:_PTRICKS + 3], pos[i, _PPLAYED], k, m, stamp + pos[i, _PSTAMP], out[i])


@njit(cache=True)
def _solve_serial(hands, pos, rules, rcfg, fcfg, honours, final, memory, stamp, chunks, out) -> None:
    """Every position's root values, one after the other (no thread pool to wake: the cheap path)."""
    _solve_chunk(hands, pos, rules, rcfg, fcfg, honours, final, memory, stamp, 0, 1, out)


@njit(cache=True, parallel=True)
def _solve_parallel(hands, pos, rules, rcfg, fcfg, honours, final, memory, stamp, chunks, out) -> None:
    """Every position's root values, ``chunks`` threads (position ``i`` in chunk ``i % chunks``)."""
    for t in prange(chunks):
        _solve_chunk(hands, pos, rules, rcfg, fcfg, honours, final, memory, stamp, t, chunks, out)


class _Tables:
    """Per-thread search memory, allocated once per process and reused (a stamp per call and
    (trump, seat) tells its table entries from older ones, so nothing is cleared between calls)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.chunks = 0
        self.stamp = 1
        self._allocate(1)

    def _allocate(self, chunks: int) -> None:
        self.chunks = chunks
        self.tt = np.zeros((chunks, 1 << max(TT_BITS.values()), 4), dtype=np.uint64)
        self.moves = np.zeros((chunks, MAX_DEPTH, 2 * NUM_CARDS), dtype=np.int64)
        self.si = np.zeros((chunks, MAX_DEPTH, 13), dtype=np.int64)
        self.sf = np.zeros((chunks, MAX_DEPTH, 6), dtype=np.float64)
        self.tr = np.zeros((chunks, MAX_DEPTH, 3), dtype=np.int64)
        self.skey = np.zeros((chunks, MAX_DEPTH), dtype=np.uint64)

    def reserve(self, chunks: int, solves: int) -> int:
        """Make room for ``chunks`` tables and claim ``solves`` fresh stamps; the first one."""
        if self.chunks < chunks:
            self._allocate(chunks)
        if self.stamp + solves >= MAX_STAMP:  # stamps run out: start over on cleared tables
            self.tt[:] = 0
            self.stamp = 1
        first = self.stamp
        self.stamp += solves
        return first

    def memory(self) -> Memory:
        """Every thread's search memory (each array has one row a thread)."""
        return Memory(self.tt, self.moves, self.si, self.sf, self.tr, self.skey)


_TABLES = _Tables()


@functools.lru_cache(maxsize=64)
def _rule_tables(rules: Rules) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The solver's constants for these rules, built once and read-only, from the scoring both solvers
    read (:func:`~imperiale_env.core.tricks.play_out_scoring`): the rules record, the int and float
    settings (trump and seat left at 0, set per position), the honours mask by trump and the final
    trick score by solving seat and tricks won."""
    scoring = play_out_scoring(rules)
    cfg = np.array([rules.players, 0, 0, scoring.linear, TT_BITS[rules.players]], dtype=np.int64)
    fcfg = np.array([scoring.per_trick, scoring.share, scoring.honour_points, *scoring.trick_prize], dtype=np.float64)
    honours = np.array(scoring.honours, dtype=np.uint64)
    values = np.concatenate([scoring.final.ravel(), fcfg])
    if not np.array_equal(values * 2, np.round(values * 2)):  # integer rule fields always pass
        raise ValueError("the compiled solver's table holds values in halves; these rules score other fractions")
    for a in (cfg, fcfg, honours):
        a.flags.writeable = False
    return rule_record(rules), cfg, fcfg, honours, scoring.final


class Positions(NamedTuple):
    """Positions to solve, one row each (numpy arrays): ``hands`` ``(n, P)`` uint64 masks by
    seat, ``trump``, ``me`` (the seat whose values they are, who maximises: usually the seat to
    play), ``leader`` and ``played`` (tricks played) ``(n,)``, ``trick`` ``(n, 3)`` the cards of
    the current trick in play order (-1 after them), ``tricks`` ``(n, P)`` the tricks won by seat."""

    hands: np.ndarray
    trump: np.ndarray
    me: np.ndarray
    leader: np.ndarray
    trick: np.ndarray
    tricks: np.ndarray
    played: np.ndarray

    @classmethod
    def of(cls, rows) -> Positions:
        """From ``(trump, hands, leader, trick, tricks, played, me)`` tuples (hands and tricks by
        seat, trick the cards in play order), as :class:`imperiale_agents.search.solver.Solver` takes them."""
        # One table of every number, one row a position: trump, me, leader, played, the trick
        # padded to 3 cards, the hands and the tricks won.
        table = np.array([(r[0], r[6], r[2], r[5], *(tuple(r[3]) + (-1, -1, -1))[:3], *r[1], *r[4]) for r in rows],
                         dtype=np.int64)
        if not len(table):
            table = np.zeros((0, 7), dtype=np.int64)
        P = (table.shape[1] - 7) // 2
        return cls(table[:, 7 : 7 + P].astype(np.uint64), table[:, 0], table[:, 1], table[:, 2], table[:, 4:7],
                   table[:, 7 + P :], table[:, 3])


_PROBLEMS = ("", "trump must be a suit index 0..3", "me must be a seat 0..{last}",
             "the leader must be a seat 0..{last}",
             "inconsistent position: tricks won by seat must add up to the tricks played (0..11), fewer than {P} "
             "cards in the trick")


@njit(cache=True)
def _pack(P, hands, trump, me, leader, trick, tricks, played, full, pos) -> tuple[int, int]:
    """Check each position and write its hands and columns into ``full`` and ``pos``: ``(-1, 0)``,
    or the first bad row and its problem (an index of ``_PROBLEMS``).  Positions of one trump and
    seat get one stamp, counted from 0 in order of appearance."""
    group = np.full(12, -1, dtype=np.int64)
    groups = 0
    for i in range(hands.shape[0]):
        if not 0 <= trump[i] <= 3:
            return i, 1
        if not 0 <= me[i] < P:
            return i, 2
        if not 0 <= leader[i] < P:
            return i, 3
        ntrick = 0
        while ntrick < 3 and trick[i, ntrick] >= 0:
            ntrick += 1
        won = 0
        bad = not 0 <= played[i] <= 11 or ntrick >= P
        for k in range(3):
            bad |= trick[i, k] >= NUM_CARDS or trick[i, k] < -1 or (k >= ntrick and trick[i, k] >= 0)
        for s in range(P):
            bad |= tricks[i, s] < 0
            won += tricks[i, s]
            full[i, s] = hands[i, s]
            pos[i, _PTRICKS + s] = tricks[i, s]
        if bad or won != played[i]:
            return i, 4
        for k in range(3):
            pos[i, _PTRICK + k] = max(trick[i, k], 0)
        pos[i, _PTRUMP] = trump[i]
        pos[i, _PME] = me[i]
        pos[i, _PLEADER] = leader[i]
        pos[i, _PNTRICK] = ntrick
        pos[i, _PPLAYED] = played[i]
        key = trump[i] * 3 + me[i]
        if group[key] < 0:
            group[key] = groups
            groups += 1
        pos[i, _PSTAMP] = group[key]
    return -1, 0


def _packed(rules: Rules, p: Positions) -> tuple[np.ndarray, np.ndarray]:
    """The hands ``(n, 3)`` and the position columns ``(n, 12)`` of ``p``, checked: a position
    that is not one of a deal under ``rules`` is a ValueError naming its row."""
    P = rules.players
    hands = np.asarray(p.hands, dtype=np.uint64)
    n = len(hands)
    arrays = {"hands": (hands, (n, P))}
    for name, shape in (("trump", (n,)), ("me", (n,)), ("leader", (n,)), ("trick", (n, 3)), ("tricks", (n, P)),
                        ("played", (n,))):
        arrays[name] = (np.asarray(getattr(p, name), dtype=np.int64), shape)
    for name, (a, shape) in arrays.items():
        if a.shape != shape:
            raise ValueError(f"positions: {name} must have shape {shape} for {n} positions of {P} players, "
                             f"got {a.shape}")
    full = np.zeros((n, 3), dtype=np.uint64)
    pos = np.zeros((n, _PCOLUMNS), dtype=np.int64)
    k, problem = _pack(P, *(a for a, _ in arrays.values()), full, pos)
    if problem:
        trump, me, leader, trick, tricks, played = (arrays[name][0][k] for name in list(arrays)[1:])
        raise ValueError(f"positions row {k}: {_PROBLEMS[problem].format(P=P, last=P - 1)} (trump {trump}, me {me}, "
                         f"leader {leader}, trick {tuple(int(c) for c in trick)}, tricks won "
                         f"{tuple(int(t) for t in tricks)}, {played} tricks played)")
    return full, pos


def solve_positions(rules: Rules, positions: Positions, threads: int = 1) -> np.ndarray:
    """``(n, 36)`` exact values for ``me`` of every legal card of the seat to play (NaN for the
    others) in each of the ``n`` positions: one compiled call for them all (the batch entry point:
    the per-call cost of Python and numba's dispatch is paid once, not per position)."""
    if not len(positions.hands):
        return np.empty((0, NUM_CARDS), dtype=np.float64)
    return _solve(rules, *_packed(rules, positions), threads)


def _solve(rules: Rules, hands: np.ndarray, pos: np.ndarray, threads: int) -> np.ndarray:
    """The compiled solve of checked, packed positions (``(n, 3)`` hands, ``(n, 12)`` columns)."""
    if not 1 <= threads <= numba.config.NUMBA_NUM_THREADS:
        raise ValueError(f"threads must be between 1 and {numba.config.NUMBA_NUM_THREADS} (the cores numba "
                         f"may use, NUMBA_NUM_THREADS), got {threads}")
    rules_record, cfg, fcfg, honours, final = _rule_tables(rules)
    out = np.empty((len(hands), NUM_CARDS), dtype=np.float64)
    chunks = max(1, min(threads, len(hands)))
    with _TABLES.lock:
        stamp = _TABLES.reserve(chunks, int(pos[:, _PSTAMP].max()) + 1 if len(pos) else 0)
        solve = _solve_serial
        if chunks > 1:
            solve = _solve_parallel
            previous = numba.get_num_threads()
            numba.set_num_threads(min(chunks, numba.config.NUMBA_NUM_THREADS))
        try:
            if numba.config.DISABLE_JIT:  # plain Python on numpy scalars: hashes wrap around with a warning
                with np.errstate(over="ignore"):
                    solve(hands, pos, rules_record, cfg, fcfg, honours, final, _TABLES.memory(), stamp, chunks, out)
            else:
                solve(hands, pos, rules_record, cfg, fcfg, honours, final, _TABLES.memory(), stamp, chunks, out)
        finally:
            if chunks > 1:
                numba.set_num_threads(previous)
    return out


class CompiledSolver:
    """Exact play-out values under ``rules`` with trump suit ``trump``; ``me`` is the seat that
    maximises.  The interface and the values of :class:`imperiale_agents.search.solver.Solver`."""

    def __init__(self, rules: Rules, trump: int, me: int = 0):
        if not 0 <= trump < 4:
            raise ValueError(f"trump must be a suit index 0..3, got {trump}")
        if not 0 <= me < rules.players:
            raise ValueError(f"me must be a seat 0..{rules.players - 1}, got {me}")
        self.rules = rules
        self.P = rules.players
        self.trump = trump
        self.me = me

    def values(self, worlds: np.ndarray, leader: int, trick: tuple[int, ...], tricks: tuple[int, ...],
               played: int, threads: int = 1) -> np.ndarray:
        """``(n, 36)`` values of every legal card (NaN for the others) in each of ``n`` deals
        ``worlds`` (``(n, P)`` hands as uint64 masks by seat), all at the same position."""
        worlds = np.asarray(worlds, dtype=np.uint64)
        if worlds.ndim != 2 or worlds.shape[1] != self.P:
            raise ValueError(f"worlds must be (n, {self.P}) hands, got shape {worlds.shape}")
        P = self.P
        tricks = tuple(int(t) for t in tricks)
        if (len(tricks) != P or min(tricks) < 0 or sum(tricks) != played or not 0 <= played <= 11
                or not 0 <= len(trick) < P or not all(0 <= c < NUM_CARDS for c in trick) or not 0 <= leader < P):
            raise ValueError(f"inconsistent position: tricks won by seat must add up to the tricks played (0..11), "
                             f"fewer than {P} cards in the trick, the leader a seat 0..{P - 1} (leader {leader}, "
                             f"trick {tuple(trick)}, tricks won {tricks}, {played} tricks played)")
        # Every world at the same position: one row of columns, repeated (checked once, here).
        row = np.zeros(_PCOLUMNS, dtype=np.int64)
        row[[_PTRUMP, _PME, _PLEADER, _PNTRICK, _PPLAYED]] = self.trump, self.me, leader, len(trick), played
        row[_PTRICK : _PTRICK + len(trick)] = trick
        row[_PTRICKS : _PTRICKS + P] = tricks
        hands = np.zeros((len(worlds), 3), dtype=np.uint64)
        hands[:, :P] = worlds
        return _solve(self.rules, hands, np.repeat(row[None], len(worlds), axis=0), threads)

    def move_values(self, hands: tuple[int, ...], leader: int, trick: tuple[int, ...], tricks: tuple[int, ...],
                    played: int) -> dict[int, float]:
        """Exact value for ``me`` of every legal card of the seat to play:
        :meth:`imperiale_agents.search.solver.Solver.move_values`."""
        world = np.array([[int(h) for h in hands]], dtype=np.uint64)
        row = self.values(world, leader, trick, tricks, played)[0]
        return {int(c): float(row[c]) for c in np.flatnonzero(~np.isnan(row))}


__all__ = ["CompiledSolver", "Positions", "equivalent_heads", "solve_positions"]
