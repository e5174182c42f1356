"""The observation of one seat of a reference :class:`~imperiale_env.reference.game.Game`, from the documented layout.

This is the oracle of the batched encoder (:mod:`imperiale_env.batch.observe`): it is written
from the table in :mod:`imperiale_env.core.observation`, block by block, out of the reference
engine's own state, with no code shared with the encoder beyond the layout's offsets.  The
differential check compares the two for every seat at every decision.

What the reference engine does not keep it derives from the deal's decisions: the cards a
seat has played (dealt minus held), the suits a seat is known to lack (it played another suit
to a trick led in that suit) and whether a seat has answered the point (a point or sink
action of that seat).
"""

from __future__ import annotations

import numpy as np

from imperiale_env.core import actions as act
from imperiale_env.core.cards import NUM_CARDS, NUM_SUITS, suit_of
from imperiale_env.core.observation import OBS_SIZE, OFFSETS, PHASES, QUESTION_KINDS, SCALES
from imperiale_env.reference.game import Game

MAX_SEATS = 3
_SCALE = SCALES[0]


def observe(game: Game, seat: int) -> np.ndarray:
    """The float32 observation of ``seat`` (layout in :mod:`~imperiale_env.core.observation`).

    Seats in the vector are relative to ``seat``; a seat that is not to act sees no pending
    decision (phase, question kind and question cards all zero)."""
    s = game.state
    if s is None:
        raise ValueError("the game has no deal to observe (no deal was given)")
    P = game.players
    out = np.zeros(OBS_SIZE, dtype=np.float32)

    def seat_of(rel: int) -> int:
        return (seat + rel) % P

    def put_cards(block: str, rel: int, cards) -> None:
        start = OFFSETS[block].start + rel * NUM_CARDS
        for c in cards:
            out[start + c] = 1.0

    put_cards("hand", 0, s.hands[seat])
    trick_seats = {p: c for p, c in s.trick}
    for rel in range(P):
        p = seat_of(rel)
        put_cards("played", rel, set(s.deal.hands[p]) - s.hands[p])
        put_cards("revealed", rel, s.revealed[p])
        if p in trick_seats:
            put_cards("trick", rel, [trick_seats[p]])
    put_cards("turned", 0, [s.deal.turned])
    out[OFFSETS["trump"].start + s.deal.trump] = 1.0
    voids = _voids(game)
    for rel in range(P):
        for suit in voids[seat_of(rel)]:
            out[OFFSETS["voids"].start + rel * NUM_SUITS + suit] = 1.0
    decision = game.decision
    if decision is not None and decision.player == seat:
        out[OFFSETS["phase"].start + PHASES.index(decision.kind)] = 1.0
        if decision.kind == "question":
            q = decision.question
            assert q is not None
            out[OFFSETS["question_kind"].start + QUESTION_KINDS.index(q.kind)] = 1.0
            put_cards("question_cards", 0, q.cards)
    answered = {p for p, a in s.actions if act.is_point(a) or a == act.SINK}
    for rel in range(P):
        p = seat_of(rel)
        at = OFFSETS["declared_point"].start + 4 * rel
        declared = s.declared_points[p]
        if declared is not None:
            _, count, value = declared
            out[at : at + 4] = (1.0, 0.0, count / _SCALE["point_count"], value / _SCALE["point_value"])
        elif p in answered:
            out[at + 1] = 1.0
        for block, amount, scale in (
            ("imperiales", game.imperiales[p], game.rules.target_imperiales),
            ("points", game.points[p], _SCALE["points"]),
            ("tricks", s.tricks[p], _SCALE["tricks"]),
        ):
            out[OFFSETS[block].start + rel] = min(amount / scale, 1.0)
    out[OFFSETS["dealer"].start + (s.deal.dealer - seat) % P] = 1.0
    if s.trick:
        out[OFFSETS["leader"].start + (s.trick[0][0] - seat) % P] = 1.0
    out[OFFSETS["progress"].start] = s.tricks_played / _SCALE["tricks"]
    out[OFFSETS["progress"].start + 1] = float(P == MAX_SEATS)
    return out


def _voids(game: Game) -> list[set[int]]:
    """The suits each seat has shown it lacks this deal: it played off-suit to a led suit."""
    s = game.state
    P = game.players
    voids: list[set[int]] = [set() for _ in range(P)]
    plays = [(p, a) for p, a in s.actions if act.is_play(a)]
    for start in range(0, len(plays), P):
        trick = plays[start : start + P]
        led = suit_of(trick[0][1])
        for p, c in trick[1:]:
            if suit_of(c) != led:
                voids[p].add(led)
    return voids
