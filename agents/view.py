"""Decoding the documented observation vector (:mod:`imperiale_env.core.observation`) into arrays.

Everything an agent knows is here, for a batch of ``B`` observations; seats are relative
(0 = the acting player).  Nothing in this module touches the engine's hidden state.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from imperiale_env.core.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from imperiale_env.core.observation import OFFSETS
from imperiale_env.core.tricks import CARD_RANK, CARD_SUIT, SUIT_ONEHOT, TRICKS_PER_DEAL, beats
from imperiale_env.core.tricks import CARD_STRENGTH as STRENGTH
from imperiale_env.core.tricks import POINT_VALUE_OF_CARD as POINT_VALUE

# The card tables the agents read, from the module the batched engine plays with.
__all__ = ["CARD_RANK", "CARD_SUIT", "POINT_VALUE", "STRENGTH", "SUIT_ONEHOT", "View", "decode", "deck_mask",
           "honour_mask", "trick_winner", "beats"]


@dataclass
class View:
    """A batch of decoded observations (``B`` rows)."""

    hand: np.ndarray  # (B, 36) bool
    played: np.ndarray  # (B, 3, 36) bool, by relative seat
    trick: np.ndarray  # (B, 3, 36) bool
    revealed: np.ndarray  # (B, 3, 36) bool
    turned: np.ndarray  # (B, 36) bool
    trump: np.ndarray  # (B,) int
    voids: np.ndarray  # (B, 3, 4) bool
    phase: np.ndarray  # (B,) int: 0 question, 1 point, 2 play (-1 none)
    question_kind: np.ndarray  # (B,) int (-1 none)
    declared: np.ndarray  # (B, 3) bool
    sunk: np.ndarray  # (B, 3) bool
    point_count: np.ndarray  # (B, 3) int
    point_value: np.ndarray  # (B, 3) int
    tricks: np.ndarray  # (B, 3) int
    dealer: np.ndarray  # (B,) relative seat
    leader: np.ndarray  # (B,) relative seat of the current trick's leader (-1 before a lead)
    tricks_played: np.ndarray  # (B,) int
    players: np.ndarray  # (B,) int: 2 or 3

    @property
    def n(self) -> int:
        return len(self.trump)


def _argmax_or(a: np.ndarray, default: int = -1) -> np.ndarray:
    return np.where(a.any(axis=1), a.argmax(axis=1), default)


def decode(obs: np.ndarray) -> View:
    obs = np.atleast_2d(np.asarray(obs, dtype=np.float32))
    b = len(obs)

    def block(name: str) -> np.ndarray:
        return obs[:, OFFSETS[name]]

    dp = block("declared_point").reshape(b, 3, 4)
    progress = block("progress")
    return View(
        hand=block("hand") > 0.5,
        played=block("played").reshape(b, 3, NUM_CARDS) > 0.5,
        trick=block("trick").reshape(b, 3, NUM_CARDS) > 0.5,
        revealed=block("revealed").reshape(b, 3, NUM_CARDS) > 0.5,
        turned=block("turned") > 0.5,
        trump=block("trump").argmax(axis=1),
        voids=block("voids").reshape(b, 3, NUM_SUITS) > 0.5,
        phase=_argmax_or(block("phase") > 0.5),
        question_kind=_argmax_or(block("question_kind") > 0.5),
        declared=dp[:, :, 0] > 0.5,
        sunk=dp[:, :, 1] > 0.5,
        point_count=np.rint(dp[:, :, 2] * 12).astype(np.int64),  # the layout's scale: 12 cards
        point_value=np.rint(dp[:, :, 3] * 120).astype(np.int64),
        tricks=np.rint(block("tricks") * TRICKS_PER_DEAL).astype(np.int64),
        dealer=block("dealer").argmax(axis=1),
        leader=_argmax_or(block("leader") > 0.5),
        tricks_played=np.rint(progress[:, 0] * TRICKS_PER_DEAL).astype(np.int64),
        players=np.where(progress[:, 1] > 0.5, 3, 2),
    )


def deck_mask(players: np.ndarray) -> np.ndarray:
    """(B, 36) bool: the cards in play (no sixes with two players)."""
    six = CARD_RANK == NUM_RANKS - 1
    return ~six[None, :] | (players[:, None] == 3)


def honour_mask(rules, trump: np.ndarray) -> np.ndarray:
    """(B, 36) bool: the honours (trump cards of ``rules.honour_ranks``)."""
    from imperiale_env.core.rules import rank_index

    ranks = [rank_index(x, rules.players) for x in rules.honour_ranks]
    is_rank = np.isin(CARD_RANK, ranks)
    return is_rank[None, :] & (CARD_SUIT[None, :] == trump[:, None])


def trick_winner(view: View) -> tuple[np.ndarray, np.ndarray]:
    """(winning card, its relative seat) of the current trick; -1 where no card is down."""
    b = view.n
    on_table = view.trick.any(axis=1)  # (B, 36)
    is_trump = CARD_SUIT[None, :] == view.trump[:, None]
    led_card = np.full(b, -1)
    has = view.leader >= 0
    if has.any():
        led_card[has] = view.trick[np.flatnonzero(has), view.leader[has]].argmax(axis=1)
    led_suit = np.where(led_card >= 0, CARD_SUIT[np.maximum(led_card, 0)], -1)
    any_trump = (on_table & is_trump).any(axis=1)
    eligible = on_table & np.where(any_trump[:, None], is_trump, CARD_SUIT[None, :] == led_suit[:, None])
    score = np.where(eligible, STRENGTH[None, :], -1)
    win = np.where(has, score.argmax(axis=1), -1)
    seat = np.where(has, view.trick[np.arange(b), :, np.maximum(win, 0)].argmax(axis=1), -1)
    return win, seat
