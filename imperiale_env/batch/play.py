"""The play of the cards in the batched engine: legal cards and playing one card per game."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..bitcards import BIT, CARD_SUIT, mask_of
from ..tricks import TRICKS_PER_DEAL, beats, legal_cards

if TYPE_CHECKING:
    from .engine import BatchGame


def legal_plays(g: BatchGame, idx: np.ndarray) -> np.ndarray:
    """Legal card masks (section 4 step 5) for games whose decision is a play."""
    return legal_cards(
        g.rules,
        g.hands[idx, g.current_player[idx]],
        g.trump[idx],
        np.where(g.trick_len[idx] == 0, -1, g.trick_cards[idx, 0]),
        g.win_card[idx],
        g.tricks_played[idx] == 0,
    )


def apply_play(g: BatchGame, idx: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Play the cards; returns the games that leave the play stage (no trick left, or
    the Foster first lead); the others wait on the next card at once."""
    if not len(idx):
        return idx
    P = g.players
    p = g.current_player[idx]
    fi = idx * P + p
    c = a[idx]
    bit = BIT[c]
    hands, played = g.hands.reshape(-1), g.played.reshape(-1)
    hands[fi] &= ~bit
    played[fi] |= bit
    pos = g.trick_len[idx]
    trick = g.trick_cards.reshape(-1)
    trick[idx * P + pos] = c
    first = pos == 0
    suit_c = CARD_SUIT[c]
    suit_led = np.where(first, suit_c, CARD_SUIT[trick[idx * P]])
    voids = g.voids.reshape(-1)
    voids[fi] |= np.where(suit_c != suit_led, 1 << suit_led, 0)
    win = g.win_card[idx]
    take = first | beats(c, win, g.trump[idx])
    g.win_card[idx] = np.where(take, c, win)
    winner = np.where(take, p, g.win_player[idx])
    g.win_player[idx] = winner
    length = pos + 1
    done = length == P
    g.trick_len[idx] = np.where(done, 0, length)
    di = idx[done]
    if len(di):
        w = winner[done]
        wi = di * P + w
        g.captured.reshape(-1)[wi] |= mask_of(g.trick_cards[di])
        g.tricks.reshape(-1)[wi] += 1
        g.tricks_played[di] += 1
        g.trick_cards[di] = -1
        g.leader[di] = w
    leader = g.leader[idx]
    g.current_player[idx] = np.where(done, leader, (leader + length) % P)
    return idx[(done & (g.tricks_played[idx] == TRICKS_PER_DEAL)) | ~g.tables.is_play_stage[g.stage[idx]]]
