"""The observation of one seat of a reference :class:`~imperiale_env.reference.game.Game`, from the layout.

This is the oracle of the batched encoder (:mod:`imperiale_env.batch.observe`): it is written
from the table in :mod:`imperiale_env.core.observation`, block by block and by name, out of the
reference engine's own state, with no code shared with the encoder.  The differential check
compares the two for every seat at every decision.

The blocks the play determines (:data:`PLAY_BLOCKS`: the order of play, the voids, the cards
proven absent, the tricks won and played) are written in one place, :func:`write_play`, from the
deal's plays alone: the ``(seat, card)`` played so far, in order, possibly ending inside a trick.
:func:`observe` gives it the reference engine's plays; the policy-weighted worlds
(:mod:`imperiale_agents.search.play_likelihood`) give it the plays cut back to each past decision of the
opponent, to rebuild what he saw then.  So a block that changes during the play, written there,
is rebuilt at every past decision with no code of its own.

What the reference engine does not keep, :func:`write_play` derives from the plays, trick by
trick: who played each card in which trick and who led it; the suits a seat lacks (it did
not follow); the tricks each seat won (the reference engine's
:func:`~imperiale_env.reference.game.trick_winner_card`); and the cards a seat's plays prove it
does not hold, from the *definition*:
card ``x`` is proven absent when the card the seat played would not have been legal from a
hand holding ``x`` as well (the reference engine's own legality rule,
:func:`~imperiale_env.reference.game.play_rule_of`, asked for the two-card hand; the rule lets a
card be played exactly when no card of a higher obligation is held, so the pairs decide it).  The
compiled engine uses a closed form instead.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from imperiale_env.core import actions as act
from imperiale_env.core.cards import NUM_CARDS, suit_of
from imperiale_env.core.observation import (
    BLOCKS,
    OBS_DTYPE,
    OBS_SIZE,
    PHASES,
    POINT_DECLARED,
    POINT_SUNK,
    QUESTION_KINDS,
    TURNED_IMPERIALE_ITEM,
    views,
)
from imperiale_env.core.rules import Rules, rank_index
from imperiale_env.reference.game import Game, play_rule_of, trick_winner_card

POINTS_CAP = BLOCKS["points"].high


def observe(game: Game, seat: int) -> np.ndarray:
    """The uint8 observation of ``seat`` (layout in :mod:`~imperiale_env.core.observation`).

    Seats in the vector are relative to ``seat``; a seat that is not to act sees no pending
    decision (phase and question kind 0, no question cards)."""
    s = game.state
    if s is None:
        raise ValueError("the game has no deal to observe (no deal was given)")
    P = game.players
    out = np.zeros(OBS_SIZE, dtype=OBS_DTYPE)
    v = views(out)

    def rel(p: int) -> int:
        return (p - seat) % P

    v["hand"][sorted(s.hands[seat])] = 1
    write_play(v, game.rules, s.deal.trump, [(p, a) for p, a in s.actions if act.is_play(a)], seat, P)
    for p in range(P):
        v["shown_by"][sorted(s.revealed[p])] = 1 + rel(p)
    if P == 3:
        v["shown_by"][s.deal.turned] = 1 + rel(s.deal.dealer)
    v["turned"][0] = s.deal.turned
    v["trump"][0] = s.deal.trump
    decision = game.decision
    if decision is not None and decision.player == seat:
        v["phase"][0] = 1 + PHASES.index(decision.kind)
        if decision.kind == "question":
            q = decision.question
            assert q is not None
            v["question_kind"][0] = 1 + QUESTION_KINDS.index(q.kind)
            v["question_cards"][sorted(q.cards)] = 1
    answered = {p for p, a in s.actions if act.is_point(a) or a == act.SINK}
    for p in range(P):
        r = rel(p)
        for item in s.shown[p]:
            v["shown_items"][r, _item_slot(game.rules, item)] = 1
        if p == s.deal.dealer and s.turned_imperiale_shown:
            v["shown_items"][r, TURNED_IMPERIALE_ITEM] = 1
        declared = s.declared_points[p]
        if declared is not None:
            _, count, value = declared
            v["point"][r] = POINT_DECLARED
            v["point_count"][r] = count
            v["point_value"][r] = value
        elif p in answered:
            v["point"][r] = POINT_SUNK
        v["imperiales"][r] = min(game.imperiales[p], game.rules.target_imperiales)
        v["points"][r] = min(game.points[p], POINTS_CAP)
    v["dealer"][0] = rel(s.deal.dealer)
    v["players"][0] = P
    return out


#: The blocks :func:`write_play` writes: all those the deal's play determines, and only those.
PLAY_BLOCKS = ("played_by", "played_in", "leaders", "not_held", "voids", "tricks", "tricks_played")


def write_play(v: dict[str, np.ndarray], rules: Rules, trump: int, plays: Sequence[tuple[int, int]], seat: int,
               players: int) -> None:
    """Write every block the deal's play determines (:data:`PLAY_BLOCKS`) into ``v``, the named
    views of one observation (:func:`~imperiale_env.core.observation.views`), as ``seat`` sees it.

    ``plays``: the ``(seat, card)`` played this deal so far, in order (the tricks one after the
    other, ``players`` cards each; the last may be unfinished).  The blocks are cleared first, so
    ``v`` may hold another moment's play.  Seats in the vector are relative to ``seat``.  This is the
    one writing of these blocks: the reference observation calls it with the engine's plays, and
    :mod:`imperiale_agents.search.play_likelihood` with the plays cut back to a past decision of the opponent."""
    for name in PLAY_BLOCKS:
        v[name][...] = 0
    for start in range(0, len(plays), players):
        trick = start // players
        cards = plays[start : start + players]
        leader, led = cards[0]
        v["leaders"][trick] = 1 + (leader - seat) % players
        for k, (p, c) in enumerate(cards):
            r = (p - seat) % players
            v["played_by"][c] = 1 + r
            v["played_in"][c] = 1 + trick
            if suit_of(c) != suit_of(led):
                v["voids"][r, suit_of(led)] = 1
            if r > 0:
                win = trick_winner_card(cards[:k], trump) if k else -1
                absent = _proven_absent(rules, c, trump, led if k else -1, win, trick == 0)
                v["not_held"][r - 1, absent] = 1
        if len(cards) == players:
            best = trick_winner_card(cards, trump)
            winner = next(p for p, c in cards if c == best)
            v["tricks"][(winner - seat) % players] += 1
    v["tricks_played"][0] = len(plays) // players


@functools.lru_cache(maxsize=1 << 16)
def _proven_absent(rules: Rules, c: int, trump: int, led: int, win: int, first_trick: bool) -> tuple[int, ...]:
    """The cards ``x`` with which ``c`` would not have been legal: ``c`` not among the legal cards
    of the hand ``{c, x}``.  Remembered per situation (a pure function of its arguments; at most
    36^3 x 8 of them a rules), so an environment observing every step, or play_likelihood rebuilding
    every past decision, does not redo the 35 legality checks of every card played."""
    return tuple(x for x in range(NUM_CARDS)
                 if x != c and c not in play_rule_of(rules, (c, x), trump, led, win, first_trick)[1])


def _item_slot(rules: Rules, item) -> int:
    """The ``shown_items`` slot of an item shown in hand (the canonical question order)."""
    if item.kind == "carte_blanche":
        return 0
    if item.kind == "quart_major":
        return 1 + item.suit
    if item.kind == "sequence":
        return 5 + item.suit
    fours = [rank_index(x, rules.players) for x in rules.four_ranks]
    return 9 + fours.index(item.rank)

