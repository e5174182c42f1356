"""Decoding the documented observation (version 1) (:mod:`imperiale_env.core.observation`) into arrays.

Everything an agent knows is here, for a batch of ``B`` observations; seats are relative
(0 = the acting player).  Nothing in this module touches the engine's hidden state.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from imperiale_env.core.cards import NUM_CARDS, NUM_RANKS
from imperiale_env.core.declarations import honour_masks
from imperiale_env.core.observation import MAX_SEATS, OBS_DTYPE, OBS_VERSION, POINT_DECLARED, POINT_SUNK, read
from imperiale_env.core.tricks import CARD_RANK, CARD_SUIT, SUIT_ONEHOT, TRICKS_PER_DEAL, beats
from imperiale_env.core.tricks import CARD_STRENGTH as STRENGTH
from imperiale_env.core.tricks import POINT_VALUE_OF_CARD as POINT_VALUE

# The card tables the agents read, from the module the batched engine plays with.
__all__ = ["CARD_RANK", "CARD_SUIT", "POINT_VALUE", "STRENGTH", "SUIT_ONEHOT", "View", "decode", "deck_mask",
           "honour_mask", "trick_winner", "beats"]


@dataclass
class View:
    """A batch of decoded observations (``B`` rows); seats relative, -1 for "none"."""

    hand: np.ndarray  # (B, 36) bool
    played: np.ndarray  # (B, 3, 36) bool: the cards each seat played this deal (current trick included)
    trick: np.ndarray  # (B, 3, 36) bool: the cards on the table in the current trick, by seat
    revealed: np.ndarray  # (B, 3, 36) bool: the cards each seat showed
    turned: np.ndarray  # (B, 36) bool: the turned card
    trump: np.ndarray  # (B,) int
    voids: np.ndarray  # (B, 3, 4) bool
    not_held: np.ndarray  # (B, 3, 36) bool: cards the play proves a seat lacks (row 0: none)
    played_in: np.ndarray  # (B, 36) int: the trick (0-11) each card fell in, -1 not played
    played_by: np.ndarray  # (B, 36) int: the seat that played each card, -1 not played
    leaders: np.ndarray  # (B, 12) int: the seat that led each trick, -1 not led yet
    shown_items: np.ndarray  # (B, 3, 15) bool: the items each seat showed this deal
    phase: np.ndarray  # (B,) int: 0 question, 1 point, 2 play (-1 none)
    question_kind: np.ndarray  # (B,) int (-1 none)
    question_cards: np.ndarray  # (B, 36) bool
    declared: np.ndarray  # (B, 3) bool
    sunk: np.ndarray  # (B, 3) bool
    point_count: np.ndarray  # (B, 3) int
    point_value: np.ndarray  # (B, 3) int
    imperiales: np.ndarray  # (B, 3) int, capped at the target
    points: np.ndarray  # (B, 3) int, capped at 24
    tricks: np.ndarray  # (B, 3) int
    dealer: np.ndarray  # (B,) relative seat
    leader: np.ndarray  # (B,) relative seat of the current trick's leader (-1 before a lead)
    tricks_played: np.ndarray  # (B,) int
    players: np.ndarray  # (B,) int: 2 or 3

    @property
    def n(self) -> int:
        return len(self.trump)


def decode(obs: np.ndarray) -> View:
    """The :class:`View` of a batch of observations ``(B, OBS_SIZE)`` (or one row)."""
    obs = np.atleast_2d(np.asarray(obs))
    if obs.dtype != OBS_DTYPE:
        raise TypeError(f"observations are {np.dtype(OBS_DTYPE).name} (version {OBS_VERSION}), got {obs.dtype}")
    b = len(obs)

    def block(name: str) -> np.ndarray:
        return read(obs, name).astype(np.int64)

    seats = np.arange(MAX_SEATS)[None, :, None]
    played_by = block("played_by") - 1
    played_in = block("played_in") - 1
    tricks_played = block("tricks_played")[:, 0]
    leaders = block("leaders") - 1
    current = np.minimum(tricks_played, TRICKS_PER_DEAL - 1)
    leader = np.where(tricks_played < TRICKS_PER_DEAL, leaders[np.arange(b), current], -1)
    in_trick = (played_in == tricks_played[:, None]) & (played_by >= 0)
    not_held = np.zeros((b, MAX_SEATS, NUM_CARDS), dtype=bool)
    not_held[:, 1:] = block("not_held") > 0
    point = block("point")
    return View(
        hand=block("hand") > 0,
        played=played_by[:, None, :] == seats,
        trick=in_trick[:, None, :] & (played_by[:, None, :] == seats),
        revealed=block("shown_by")[:, None, :] - 1 == seats,
        turned=np.arange(NUM_CARDS)[None, :] == block("turned"),
        trump=block("trump")[:, 0],
        voids=block("voids") > 0,
        not_held=not_held,
        played_in=played_in,
        played_by=played_by,
        leaders=leaders,
        shown_items=block("shown_items") > 0,
        phase=block("phase")[:, 0] - 1,
        question_kind=block("question_kind")[:, 0] - 1,
        question_cards=block("question_cards") > 0,
        declared=point == POINT_DECLARED,
        sunk=point == POINT_SUNK,
        point_count=block("point_count"),
        point_value=block("point_value"),
        imperiales=block("imperiales"),
        points=block("points"),
        tricks=block("tricks"),
        dealer=block("dealer")[:, 0],
        leader=leader,
        tricks_played=tricks_played,
        players=block("players")[:, 0],
    )


def deck_mask(players: np.ndarray) -> np.ndarray:
    """(B, 36) bool: the cards in play (no sixes with two players)."""
    six = CARD_RANK == NUM_RANKS - 1
    return ~six[None, :] | (players[:, None] == 3)


def honour_mask(rules, trump: np.ndarray) -> np.ndarray:
    """(B, 36) bool: the honours (trump cards of ``rules.honour_ranks``)."""
    masks = np.array(honour_masks(rules), dtype=np.uint64)[trump]
    return (masks[:, None] >> np.arange(NUM_CARDS, dtype=np.uint64)) & np.uint64(1) == 1


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
