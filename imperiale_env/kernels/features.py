"""The network's input features, version 2: the observation's bytes made into floats anchored to now.

The observation (:mod:`imperiale_env.core.observation`, version 1) is exact and lossless: for
every card the trick it fell in and who played it.  A network reads that badly: "the card to
follow and beat" is the card whose trick number equals ``tricks_played + 1``, a conjunction an
MLP learns slowly, and 43 % of a plain one-hot expansion encodes the absolute order of play.
This plan derives from the same bytes what a player looks at (docs/training.md measures it):

- the **trick in progress** by relative seat, its leader, the suit led, the card winning it so
  far (whose seat, whether a trump) and which of the observer's cards would take it;
- **who plays next**, the **last trick** and who won it, and every card's age in tricks;
- the **unseen** cards (whose place the observer does not know), what each other seat **may
  still hold** (unseen and not proven absent by its plays, or shown and not played) and what it
  is **known to hold**; the **master** card of each suit; counts of each per suit;
- the rest of the observation (declarations, score, phase, question) one-hot or scaled.

Everything is a float in ``[0, 1]``: flags, one-hot categories and counts divided by their
largest value.  :data:`FEATURE_LAYOUT` declares the blocks (the offsets, the size and the table
in ``docs/training.md`` follow from it); :func:`policy_features` computes them in one compiled
pass over the rows, the only implementation: the trainer, the numpy forward pass of exported
policies and the environments' ``features`` observation all call it.  Its oracle is a direct
computation from the reference engine's state (``tests/test_features.py``).

Block offsets (of the observation and of the features) reach the compiled code as arrays, so a
change of either layout cannot meet a stale disk cache.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from imperiale_env.core.observation import (
    MAX_POINT_COUNT,
    MAX_POINT_VALUE,
    OBS_DTYPE,
    OBS_SIZE,
    OFFSETS,
    TRICKS,
    block_offsets,
)

#: The version of the feature plan, stored in checkpoints and exported policies.  Version 1 was
#: the one-hot expansion of the observation's bytes (:data:`~imperiale_env.core.observation.FEATURES`).
FEATURE_VERSION = 2

_C, _S, _R = 36, 4, 9


@dataclass(frozen=True)
class FeatureBlock:
    """One block of the features: its name, shape and meaning (every entry a float in ``[0, 1]``)."""

    name: str
    shape: tuple[int, ...]
    meaning: str

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))


FEATURE_LAYOUT: tuple[FeatureBlock, ...] = (
    FeatureBlock("hand", (_C,), "the observer's cards"),
    FeatureBlock("trump_cards", (_C,), "the cards of the trump suit in the pack"),
    FeatureBlock("turned", (_C,), "the turned card"),
    FeatureBlock("question_cards", (_C,), "the cards of the pending question"),
    FeatureBlock("unseen", (_C,), "cards of the pack whose place the observer does not know: not his, not played, "
                 "not turned (two players), not shown (another hand or, with two players, the talon)"),
    FeatureBlock("may_hold", (2, _C), "seats 1 and 2: the cards it may still hold (unseen and not proven absent by "
                 "its plays, or shown and not played)"),
    FeatureBlock("known_held", (2, _C), "seats 1 and 2: the cards it showed and has not played"),
    FeatureBlock("trick", (3, _C), "the trick in progress: the card each seat played to it"),
    FeatureBlock("winning", (_C,), "the card winning the trick in progress"),
    FeatureBlock("beats_winning", (_C,), "the observer's cards that would take the trick from the winning card"),
    FeatureBlock("last_trick", (_C,), "the cards of the last completed trick"),
    FeatureBlock("played", (2, _C), "seats 1 and 2: the cards it played this deal"),
    FeatureBlock("recency", (_C,), "per card played: (13 - tricks ago) / 13, the trick in progress 0 tricks ago; "
                 "0 not played"),
    FeatureBlock("masters", (_C,), "per suit: its strongest card neither played nor turned (two players; it may lie "
                 "in the talon)"),
    FeatureBlock("suit_counts", (4, _S), "per suit / 9: the observer's cards, the unseen ones, the ones seat 1 and "
                 "seat 2 may hold"),
    FeatureBlock("cards_left", (3,), "per seat: the cards in its hand / 12"),
    FeatureBlock("next_player", (3,), "one-hot: the seat that plays the next card (none after the 12th trick)"),
    FeatureBlock("trick_leader", (3,), "one-hot: the seat that led the trick in progress"),
    FeatureBlock("trick_size", (3,), "one-hot: 0, 1 or 2 cards on the table"),
    FeatureBlock("led_suit", (_S,), "one-hot: the suit led to the trick in progress"),
    FeatureBlock("winning_seat", (3,), "one-hot: the seat winning the trick in progress"),
    FeatureBlock("winning_trump", (1,), "the trick in progress is won by a trump"),
    FeatureBlock("last_winner", (3,), "one-hot: the seat that won the last trick"),
    FeatureBlock("trump", (_S,), "one-hot: the trump suit"),
    FeatureBlock("phase", (4,), "one-hot: not to act, question, point, play"),
    FeatureBlock("question_kind", (6,), "one-hot: none, carte blanche, quart major, sequence, four, turned impériale"),
    FeatureBlock("shown_items", (3, 15), "per seat: the items it showed (the observation's block)"),
    FeatureBlock("point", (3, 3), "per seat, one-hot: not answered, declared, sunk"),
    FeatureBlock("point_count", (3,), f"per seat: the cards of its declared point / {MAX_POINT_COUNT}"),
    FeatureBlock("point_value", (3,), f"per seat: the value of its declared point / {MAX_POINT_VALUE}"),
    FeatureBlock("imperiales", (3,), "per seat: impériales won / 5"),
    FeatureBlock("points", (3,), "per seat: points towards the next impériale / 24"),
    FeatureBlock("tricks", (3,), "per seat: tricks won this deal / 12"),
    FeatureBlock("dealer", (3,), "one-hot: the dealer's seat"),
    FeatureBlock("tricks_played", (TRICKS + 1,), "one-hot: tricks played this deal (0-12)"),
    FeatureBlock("players", (2,), "one-hot: two or three players"),
    FeatureBlock("voids", (3, _S), "per seat: the suits it is known to lack"),
)

FEATURE_BLOCKS: dict[str, FeatureBlock] = {b.name: b for b in FEATURE_LAYOUT}
#: Where each block lies, and the width of the features.
FEATURE_OFFSETS, FEATURE_SIZE = block_offsets(FEATURE_LAYOUT)

#: The observation blocks the kernel reads, in the order of its ``src`` array.
_SOURCE = ("hand", "played_by", "played_in", "leaders", "shown_by", "turned", "trump", "not_held", "voids", "phase",
           "question_kind", "question_cards", "shown_items", "point", "point_count", "point_value", "imperiales",
           "points", "tricks", "dealer", "tricks_played", "players")
(S_HAND, S_PLAYED_BY, S_PLAYED_IN, S_LEADERS, S_SHOWN_BY, S_TURNED, S_TRUMP, S_NOT_HELD, S_VOIDS, S_PHASE,
 S_QUESTION_KIND, S_QUESTION_CARDS, S_SHOWN_ITEMS, S_POINT, S_POINT_COUNT, S_POINT_VALUE, S_IMPERIALES, S_POINTS,
 S_TRICKS, S_DEALER, S_TRICKS_PLAYED, S_PLAYERS) = range(len(_SOURCE))
_SRC = np.array([OFFSETS[name].start for name in _SOURCE], dtype=np.int64)
(D_HAND, D_TRUMP_CARDS, D_TURNED, D_QUESTION_CARDS, D_UNSEEN, D_MAY_HOLD, D_KNOWN_HELD, D_TRICK, D_WINNING,
 D_BEATS_WINNING, D_LAST_TRICK, D_PLAYED, D_RECENCY, D_MASTERS, D_SUIT_COUNTS, D_CARDS_LEFT, D_NEXT_PLAYER,
 D_TRICK_LEADER, D_TRICK_SIZE, D_LED_SUIT, D_WINNING_SEAT, D_WINNING_TRUMP, D_LAST_WINNER, D_TRUMP, D_PHASE,
 D_QUESTION_KIND, D_SHOWN_ITEMS, D_POINT, D_POINT_COUNT, D_POINT_VALUE, D_IMPERIALES, D_POINTS, D_TRICKS, D_DEALER,
 D_TRICKS_PLAYED, D_PLAYERS, D_VOIDS) = range(len(FEATURE_LAYOUT))
_DST = np.array([FEATURE_OFFSETS[b.name].start for b in FEATURE_LAYOUT], dtype=np.int64)
#: The divisors of the counts, in the order (point_count, point_value, imperiales, points, tricks).
_SCALES = np.array([MAX_POINT_COUNT, MAX_POINT_VALUE, 5, 24, TRICKS], dtype=np.float32)


@njit(cache=True)
def _winner(cards: np.ndarray, n: int, led: int, trump: int) -> int:
    """The card winning the ``n`` cards ``cards`` of a trick led with card ``led``: the strongest
    trump, else the strongest card of the suit led (a lower rank index is stronger)."""
    best = -1
    for k in range(n):
        c = cards[k]
        if c // _R == trump and (best < 0 or c < best):
            best = c
    if best >= 0:
        return best
    for k in range(n):
        c = cards[k]
        if c // _R == led // _R and (best < 0 or c < best):
            best = c
    return best


@njit(cache=True)
def _features(obs: np.ndarray, out: np.ndarray, src: np.ndarray, dst: np.ndarray, scales: np.ndarray) -> None:
    table = np.empty(3, dtype=np.int64)
    last = np.empty(3, dtype=np.int64)
    for r in range(obs.shape[0]):
        o, f = obs[r], out[r]
        f[:] = 0.0
        P = int(o[src[S_PLAYERS]])
        if P < 2:  # not an observation the engine gives: the all-zero padding of libraries, all-zero features
            continue
        trump = int(o[src[S_TRUMP]])
        turned = int(o[src[S_TURNED]])
        tp = int(o[src[S_TRICKS_PLAYED]])
        dealer = int(o[src[S_DEALER]])
        low = 8 if P == 3 else 7
        current = tp + 1
        lead_seat = int(o[src[S_LEADERS] + tp]) - 1 if tp < TRICKS else -1
        last_lead = int(o[src[S_LEADERS] + tp - 1]) - 1 if tp > 0 else -1
        n_table, n_last, led_card, last_led = 0, 0, -1, -1
        played_count = np.zeros(3, dtype=np.int64)
        for c in range(_C):
            by = int(o[src[S_PLAYED_BY] + c]) - 1
            t = int(o[src[S_PLAYED_IN] + c])
            if by < 0:
                continue
            played_count[by] += 1
            f[dst[D_RECENCY] + c] = (13 - (current - t)) / 13.0
            if by > 0:
                f[dst[D_PLAYED] + (by - 1) * _C + c] = 1.0
            if t == current:
                f[dst[D_TRICK] + by * _C + c] = 1.0
                table[n_table] = c
                n_table += 1
                if by == lead_seat:
                    led_card = c
            elif t == tp:
                f[dst[D_LAST_TRICK] + c] = 1.0
                last[n_last] = c
                n_last += 1
                if by == last_lead:
                    last_led = c
        win = _winner(table, n_table, led_card, trump) if n_table else -1
        if n_table:
            f[dst[D_WINNING] + win] = 1.0
            f[dst[D_TRICK_LEADER] + lead_seat] = 1.0
            f[dst[D_LED_SUIT] + led_card // _R] = 1.0
            f[dst[D_WINNING_SEAT] + int(o[src[S_PLAYED_BY] + win]) - 1] = 1.0
            f[dst[D_WINNING_TRUMP]] = 1.0 if win // _R == trump else 0.0
            nxt = lead_seat + n_table
            f[dst[D_NEXT_PLAYER] + (nxt - P if nxt >= P else nxt)] = 1.0
        elif tp > 0 and tp < TRICKS:
            f[dst[D_NEXT_PLAYER] + int(o[src[S_PLAYED_BY] + _winner(last, n_last, last_led, trump)]) - 1] = 1.0
        elif tp == 0:
            f[dst[D_NEXT_PLAYER] + (dealer + 1) % P] = 1.0
        if tp > 0:
            f[dst[D_LAST_WINNER] + int(o[src[S_PLAYED_BY] + _winner(last, n_last, last_led, trump)]) - 1] = 1.0
        f[dst[D_TRICK_SIZE] + n_table] = 1.0
        for s in range(P):
            f[dst[D_CARDS_LEFT] + s] = (TRICKS - played_count[s]) / TRICKS
        f[dst[D_TURNED] + turned] = 1.0
        for suit in range(_S):
            master = False
            for rank in range(low + 1):
                c = suit * _R + rank
                mine = o[src[S_HAND] + c] != 0
                played = o[src[S_PLAYED_BY] + c] != 0
                out_of_play = played or (P == 2 and c == turned)
                shown = int(o[src[S_SHOWN_BY] + c]) - 1
                if mine:
                    f[dst[D_HAND] + c] = 1.0
                    f[dst[D_SUIT_COUNTS] + suit] += 1.0 / _R
                    if win >= 0 and ((suit == win // _R and c < win) or (suit == trump and win // _R != trump)):
                        f[dst[D_BEATS_WINNING] + c] = 1.0
                if suit == trump:
                    f[dst[D_TRUMP_CARDS] + c] = 1.0
                f[dst[D_QUESTION_CARDS] + c] = o[src[S_QUESTION_CARDS] + c]
                if not out_of_play and not master:
                    f[dst[D_MASTERS] + c] = 1.0
                    master = True
                unseen = not mine and not out_of_play and shown < 0
                if unseen:
                    f[dst[D_UNSEEN] + c] = 1.0
                    f[dst[D_SUIT_COUNTS] + _S + suit] += 1.0 / _R
                for s in range(1, P):
                    known = shown == s and not played
                    if known:
                        f[dst[D_KNOWN_HELD] + (s - 1) * _C + c] = 1.0
                    if known or (unseen and o[src[S_NOT_HELD] + (s - 1) * _C + c] == 0):
                        f[dst[D_MAY_HOLD] + (s - 1) * _C + c] = 1.0
                        f[dst[D_SUIT_COUNTS] + (s + 1) * _S + suit] += 1.0 / _R
        f[dst[D_TRUMP] + trump] = 1.0
        f[dst[D_PHASE] + int(o[src[S_PHASE]])] = 1.0
        f[dst[D_QUESTION_KIND] + int(o[src[S_QUESTION_KIND]])] = 1.0
        for k in range(45):
            f[dst[D_SHOWN_ITEMS] + k] = o[src[S_SHOWN_ITEMS] + k]
        for s in range(3):
            f[dst[D_POINT] + 3 * s + int(o[src[S_POINT] + s])] = 1.0
            f[dst[D_POINT_COUNT] + s] = o[src[S_POINT_COUNT] + s] / scales[0]
            f[dst[D_POINT_VALUE] + s] = o[src[S_POINT_VALUE] + s] / scales[1]
            f[dst[D_IMPERIALES] + s] = o[src[S_IMPERIALES] + s] / scales[2]
            f[dst[D_POINTS] + s] = o[src[S_POINTS] + s] / scales[3]
            f[dst[D_TRICKS] + s] = o[src[S_TRICKS] + s] / scales[4]
        f[dst[D_DEALER] + dealer] = 1.0
        f[dst[D_TRICKS_PLAYED] + tp] = 1.0
        f[dst[D_PLAYERS] + P - 2] = 1.0
        for k in range(12):
            f[dst[D_VOIDS] + k] = o[src[S_VOIDS] + k]


def policy_features(obs: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``(B, FEATURE_SIZE)`` float32 features of the observations ``obs`` (``(B, OBS_SIZE)`` or
    ``(OBS_SIZE,)`` bytes; a single row gives ``(FEATURE_SIZE,)``), written into ``out`` if given.
    A row whose ``players`` entry is 0 (the all-zero observation libraries fill in where there is
    none; the engine never gives one) has all-zero features."""
    rows = np.asarray(obs)
    if rows.shape[-1:] != (OBS_SIZE,) or rows.dtype != OBS_DTYPE or rows.ndim not in (1, 2):
        raise ValueError(f"features are made of observation rows of {OBS_SIZE} uint8 bytes (version 1), "
                         f"got an array of shape {rows.shape} and dtype {rows.dtype}")
    batch = np.ascontiguousarray(rows.reshape(-1, OBS_SIZE))
    if out is None:
        out = np.empty((len(batch), FEATURE_SIZE), dtype=np.float32)
    elif out.shape != (len(batch), FEATURE_SIZE) or out.dtype != np.float32:
        raise ValueError(f"out must be a float32 array of shape {(len(batch), FEATURE_SIZE)}")
    if len(batch):
        _features(batch, out, _SRC, _DST, _SCALES)
    return out[0] if rows.ndim == 1 else out


def read_feature(features: np.ndarray, name: str) -> np.ndarray:
    """Block ``name`` of features ``(..., FEATURE_SIZE)`` as ``(..., *shape)`` (a view)."""
    b = FEATURE_BLOCKS[name]
    return features[..., FEATURE_OFFSETS[name]].reshape(*features.shape[:-1], *b.shape)


def feature_table() -> str:
    """The feature plan as a markdown table (docs/training.md holds it, checked by a test)."""
    rows = ["| block | shape | offset | meaning |", "|---|---|---:|---|"]
    for b in FEATURE_LAYOUT:
        shape = " x ".join(map(str, b.shape))
        rows.append(f"| `{b.name}` | {shape} | {FEATURE_OFFSETS[b.name].start} | {b.meaning} |")
    return "\n".join(rows)
