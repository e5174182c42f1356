"""The play of the cards in the batched engine, compiled: the legal actions of every game, and one
card played in one game (called by the step of :mod:`.stages_kernels`).

The arrays are the batch state's own, changed in place.  Each loop runs over a range of games
``lo .. hi-1``: the engine calls it on the whole batch on one thread, or through its
``*_threaded`` twin, which runs one slice a thread (``prange`` over slices: starting the
thread pool costs more than a small loop on one core, and a compiled call that takes arrays
costs more than a game, so neither happens per game).  Each game is independent of the
others, so the thread count changes the speed, never a result.
The card rules are the shared scalar kernels of :mod:`imperiale_env.kernels.trick_rules`, so the batch, the solver and
the tests all run one implementation.  The decision kinds and action ids are those of
:mod:`imperiale_env.batch.state` and :mod:`imperiale_env.core.actions` (checked by the tests).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from imperiale_env.batch.state import NONE, PLAY, POINT, QUESTION
from imperiale_env.core.actions import HIDE, POINT_BASE, SHOW, SINK
from imperiale_env.core.cards import NUM_RANKS
from imperiale_env.core.tricks import TRICKS_PER_DEAL
from imperiale_env.kernels.mask_ops import BIT, ONE, SUIT_MASK, ZERO
from imperiale_env.kernels.trick_rules import beats, legal_plays, proven_absent

_QUESTION_BITS = (ONE << np.uint64(SHOW)) | (ONE << np.uint64(HIDE))
_SINK_BIT = ONE << np.uint64(SINK)
_POINT_BITS = np.array([ONE << np.uint64(POINT_BASE + s) for s in range(4)], dtype=np.uint64)
_NUM_SUITS = 4


@njit(cache=True)
def action_bits(lo: int, hi: int, kind: np.ndarray, current_player: np.ndarray, hands: np.ndarray,
                trump: np.ndarray, trick_cards: np.ndarray, trick_len: np.ndarray, win_card: np.ndarray,
                tricks_played: np.ndarray, r: np.ndarray, out: np.ndarray) -> None:
    """The legal actions of games ``lo .. hi-1`` as bitmasks over the action layout, into ``out``.

    ``r``: the rules (:func:`~imperiale_env.core.rules.rule_record`); the play reads must beat,
    must trump, overtrump and first lead in trumps (as :func:`.trick_rules.legal_plays` does)."""
    must_beat, must_trump = r[0]["must_beat"] != 0, r[0]["must_trump"] != 0
    overtrump, first_lead_trump = r[0]["overtrump"] != 0, r[0]["first_lead_trump"] != 0
    for i in range(lo, hi):
        k = kind[i]
        if k == PLAY:
            led = -1 if trick_len[i] == 0 else trick_cards[i, 0] // NUM_RANKS
            out[i] = legal_plays(hands[i, current_player[i]], led, win_card[i], trump[i], tricks_played[i] == 0,
                                 must_beat, must_trump, overtrump, first_lead_trump)
        elif k == QUESTION:
            out[i] = _QUESTION_BITS
        elif k == POINT:
            hand = hands[i, current_player[i]]
            bits = _SINK_BIT
            for s in range(_NUM_SUITS):
                if hand & SUIT_MASK[s] != ZERO:
                    bits |= _POINT_BITS[s]
            out[i] = bits
        else:
            out[i] = ZERO


@njit(cache=True, parallel=True)
def action_bits_threaded(chunks: int, kind: np.ndarray, current_player: np.ndarray, hands: np.ndarray,
                         trump: np.ndarray, trick_cards: np.ndarray, trick_len: np.ndarray, win_card: np.ndarray,
                         tricks_played: np.ndarray, r: np.ndarray, out: np.ndarray) -> None:
    """:func:`action_bits` of every game, in ``chunks`` slices run on numba's threads."""
    n = kind.shape[0]
    for c in prange(chunks):
        action_bits(c * n // chunks, (c + 1) * n // chunks, kind, current_player, hands, trump, trick_cards,
                    trick_len, win_card, tricks_played, r, out)


@njit(cache=True)
def unpack_actions(bits: np.ndarray, out: np.ndarray) -> None:
    """``out[i, a]``: whether action ``a`` is in ``bits[i]``, for the ``out.shape[1]`` first actions (the legal
    mask as the environments give it; one compiled call, where numpy's unpacking made three arrays)."""
    for i in range(bits.shape[0]):
        b = bits[i]
        for a in range(out.shape[1]):
            out[i, a] = (b >> np.uint64(a)) & ONE != ZERO


@njit(cache=True)
def illegal_actions(actions: np.ndarray, bits: np.ndarray, kind: np.ndarray) -> tuple[int, int]:
    """(how many, the first) games waiting on a decision whose action is not legal; (0, -1) if none."""
    count, first = 0, -1
    for i in range(kind.shape[0]):
        if kind[i] == NONE:
            continue
        a = actions[i]
        if a < 0 or a >= 64 or (bits[i] >> np.uint64(a)) & ONE == ZERO:
            if count == 0:
                first = i
            count += 1
    return count, first


@njit(cache=True, inline="always", _nrt=False)
def play_card(s, r: np.ndarray, i: int, a: int, in_play: bool) -> bool:
    """The player to act in game ``i`` plays card ``a`` (legal); a full trick goes to its
    winner, who leads next.  ``s``: the batch state's arrays (a named tuple); ``r``: the rules
    record; ``in_play``: the game is at the play stage (not the Foster first lead).  Returns
    whether the game must go on through the stages: the play is over, or the card was the
    Foster first lead.  The play is also recorded for the observation: its trick and player,
    the trick's leader, and what it proves the player does not hold."""
    P = s.hands.shape[1]
    p = s.current_player[i]
    bit = BIT[a]
    s.hands[i, p] &= ~bit
    s.played[i, p] |= bit
    pos = s.trick_len[i]
    s.trick_cards[i, pos] = a
    t = s.tricks_played[i]
    s.played_in[i, a] = t + 1
    s.played_by[i, a] = p
    if pos == 0:
        s.leaders[i, t] = p
    suit = a // NUM_RANKS
    led = suit if pos == 0 else s.trick_cards[i, 0] // NUM_RANKS
    if suit != led:
        s.voids[i, p] |= 1 << led
    s.not_held[i, p] |= proven_absent(a, -1 if pos == 0 else led, s.win_card[i], s.trump[i], t == 0,
                                      r[0]["must_beat"] != 0, r[0]["must_trump"] != 0, r[0]["overtrump"] != 0,
                                      r[0]["first_lead_trump"] != 0)
    if pos == 0 or beats(a, s.win_card[i], s.trump[i]):
        s.win_card[i] = a
        s.win_player[i] = p
    length = pos + 1
    if length < P:
        s.trick_len[i] = length
        s.current_player[i] = (s.leader[i] + length) % P
        return not in_play
    w = s.win_player[i]
    taken = ZERO
    for j in range(P):
        taken |= BIT[s.trick_cards[i, j]]
        s.trick_cards[i, j] = -1
    s.captured[i, w] |= taken
    s.tricks[i, w] += 1
    s.tricks_played[i] += 1
    s.leader[i] = w
    s.trick_len[i] = 0
    s.current_player[i] = w
    return s.tricks_played[i] == TRICKS_PER_DEAL or not in_play
