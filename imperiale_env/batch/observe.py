"""The observation encoder of the batched engine (the layout is documented in :mod:`~imperiale_env.observation`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..bitcards import BIT, ONE, lowest_bit_index
from ..cards import NUM_CARDS, NUM_SUITS
from ..events import POINTS_PER_IMPERIALE
from ..observation import OBS_SIZE, OFFSETS
from .state import NONE, QUESTION
from .tables import CB_ITEM

if TYPE_CHECKING:
    from .engine import BatchGame

#: ``VOID_BITS[v]``: the four suit flags of a void mask, as float32.
VOID_BITS = ((np.arange(16)[:, None] >> np.arange(NUM_SUITS)) & 1).astype(np.float32)


def observe(
    g: BatchGame, out: np.ndarray | None = None, players: np.ndarray | None = None, rows: np.ndarray | None = None
) -> np.ndarray:
    """Observations ``(N, OBS_SIZE)`` float32 (layout in :mod:`observation`) of the acting
    player in every game, or of ``players`` (one seat per game; a player who is not to act
    sees no pending decision).  ``rows`` encodes only those games (``players`` then has
    one seat per row).  Pass ``out`` to fill a preallocated buffer.

    The card blocks are one bitmask per block, unpacked in a single call; every block is
    written whole, so the buffer is never cleared first (the observation is memory-bound).
    The score blocks are clipped to 1: a finished game can hold more than the target in
    impériales, or 24 points or more left by the award that won it."""
    P = g.players
    gi = g._ar if rows is None else np.asarray(rows, dtype=np.int64)
    n = len(gi)
    if out is None:
        out = np.empty((n, OBS_SIZE), dtype=np.float32)
    kind, current = g.kind[gi], g.current_player[gi]
    cur = np.maximum(current, 0) if players is None else np.asarray(players, dtype=np.int64)
    acting = (kind != NONE) & (cur == current)
    local = np.arange(n)
    seats = (cur[:, None] + g.seats) % P  # relative seat -> absolute
    flat = gi[:, None] * P + seats
    # Card blocks: hand, played x3, trick x3, revealed x3, turned, question cards.
    masks = g._obs_masks[:n]
    masks[:, 0] = g.hands.reshape(-1)[flat[:, 0]]
    tc = g.trick_cards[gi]
    by_pos = np.where(tc >= 0, BIT[np.maximum(tc, 0)], np.uint64(0)).reshape(-1)
    leader = g.leader[gi]
    masks[:, 4 : 4 + P] = by_pos[local[:, None] * P + (seats - leader[:, None]) % P]
    masks[:, 1 : 1 + P] = g.played.reshape(-1)[flat]
    masks[:, 7 : 7 + P] = g.revealed.reshape(-1)[flat]
    masks[:, 10] = BIT[g.turned[gi]]
    q = acting & (kind == QUESTION)
    masks[:, 11] = 0
    if q.any():
        item = question_item(g, gi[q], cur[q])
        turned_q = g.tables.is_turned_stage[g.stage[gi[q]]]
        masks[q, 11] = np.where(
            turned_q, BIT[g.turned[gi[q]]],
            np.where(item == CB_ITEM, g.dealt.reshape(-1)[flat[q, 0]], g.tables.item_mask[np.maximum(item, 0)]),
        )
    bits = np.unpackbits(masks.view(np.uint8).reshape(n, 12, 8), axis=-1, bitorder="little", count=NUM_CARDS)
    cards_end = OFFSETS["turned"].stop
    out[:, :cards_end] = bits[:, :11].reshape(n, cards_end)
    out[:, cards_end:] = 0.0
    out[:, OFFSETS["question_cards"]] = bits[:, 11]
    out[local, OFFSETS["trump"].start + g.trump[gi]] = 1.0
    sl = OFFSETS["voids"].start
    out[:, sl : sl + 4 * P] = VOID_BITS[g.voids.reshape(-1)[flat]].reshape(n, -1)
    out[local[acting], OFFSETS["phase"].start + kind[acting]] = 1.0
    if q.any():
        question_kind = np.select([item == CB_ITEM, item < 5, item < 9], [0, 1, 2], 3)
        out[local[q], OFFSETS["question_kind"].start + np.where(turned_q, 4, question_kind)] = 1.0
    declared = g.point_suit.reshape(-1)[flat] >= 0
    point = out[:, OFFSETS["declared_point"]].reshape(n, 3, 4)
    point[:, :P, 0] = declared
    point[:, :P, 1] = g.point_answered.reshape(-1)[flat] & ~declared
    point[:, :P, 2] = g.point_count.reshape(-1)[flat] / 12.0
    point[:, :P, 3] = g.point_value.reshape(-1)[flat] / 120.0
    for name, values, scale in (
        ("imperiales", g.imperiales, g.rules.target_imperiales),
        ("points", g.points, POINTS_PER_IMPERIALE),
        ("tricks", g.tricks, 12.0),
    ):
        sl = OFFSETS[name].start
        out[:, sl : sl + P] = np.minimum(values.reshape(-1)[flat] / scale, 1.0)
    out[local, OFFSETS["dealer"].start + (g.dealer[gi] - cur) % P] = 1.0
    led = g.trick_len[gi] > 0
    out[local[led], OFFSETS["leader"].start + ((leader - cur) % P)[led]] = 1.0
    sl = OFFSETS["progress"].start
    out[:, sl] = g.tricks_played[gi] / 12.0
    out[:, sl + 1] = float(P == 3)
    return out

def question_item(g: BatchGame, gi: np.ndarray, seat: np.ndarray) -> np.ndarray:
    """The in-hand item slot a player is asked about (-1 for the turned-card question)."""
    pending = g.pending.reshape(-1)[gi * g.players + seat].astype(np.uint64)
    return np.where(pending != 0, lowest_bit_index(np.where(pending != 0, pending, ONE)), -1)
