"""Declarations decided by sampled worlds: the ``search`` option of :class:`imperiale_agents.search.pimc.PIMCAgent`.

A declaration (show or hide an impériale in hand or carte blanche, show or hide the
turned-card impériale, declare a point suit or sink) is decided like a card: for each sampled
deal of the unseen cards (:func:`imperiale_agents.search.pimc.sample_worlds`, from the observation alone) and
each legal answer, the value of the deal after it, and the answer of best mean value wins.

The value of an answer in one world is measured on the reference engine
(:class:`imperiale_env.reference.game.Game`), so no scoring rule is written twice:

1. the world's deal is replayed up to the current decision, each earlier decision answered as
   the observation shows it was (an item whose cards that seat revealed was shown, else
   hidden; a declared point is the suit of the declared count and value, a sunk one a sink;
   the elder's first lead where the rules put it before the dealer's questions), and the
   scores are set to the observed ones;
2. the answer is applied, and the decisions after it (every seat's, the acting player's
   included) are the heuristic's, up to the first card played after the last declaration (the
   first lead; in Foster the dealer answers after the elder's first lead) or the end of the
   deal;
3. the value is the change of score (24 points an impériale, wipes included) of the acting
   player minus the mean change of the others', plus the exact value of the card play that
   follows for him (:func:`imperiale_agents.search.compiled_solver.solve_positions`, the scale of ``pimc``'s
   card values).  Where every answer reaches the same position of play in a world, that value
   is the same for each and is left out (no solve needed); it counts where an answer ends the
   deal (a shown carte blanche that ends it, the target reached) or changes the play.

A world whose replay does not reach the current decision (a three-player sample that misses
a declared point: the sampler's rejection gave up) is left out; with none left, the heuristic
answers.  Ties (within a rounding) go to the heuristic's answer.
"""

from __future__ import annotations

import numpy as np

from imperiale_agents.observation_view import View, deck_mask
from imperiale_agents.policies.heuristic import HeuristicAgent
from imperiale_agents.search.compiled_solver import Positions, solve_positions
from imperiale_env.core import actions as act
from imperiale_env.core.cards import NUM_CARDS
from imperiale_env.core.declarations import point_of, turned_imperiale_cards
from imperiale_env.core.events import POINTS_PER_IMPERIALE
from imperiale_env.core.observation import PHASES
from imperiale_env.core.rules import Rules
from imperiale_env.reference.game import Deal, Decision, Game
from imperiale_env.reference.observe import observe

#: Most decisions replayed before the current one (every question and point of a deal, a lead).
MAX_REPLAY = 64


def _cards(mask: np.ndarray) -> frozenset[int]:
    return frozenset(int(c) for c in np.flatnonzero(mask))


def world_deal(v: View, world: np.ndarray, players: int) -> Deal:
    """The deal of a sampled world (seats relative to the acting player, who is seat 0): each
    seat's sampled hand plus the cards it played; with two players the talon is the rest."""
    hands = tuple(_cards(world[s] | v.played[0, s]) for s in range(players))
    turned = int(np.argmax(v.turned[0]))
    talon: tuple[int, ...] = ()
    if players == 2:
        dealt = frozenset().union(*hands) | {turned}
        talon = tuple(int(c) for c in np.flatnonzero(deck_mask(v.players)[0]) if int(c) not in dealt)
    return Deal(int(v.dealer[0]), hands, turned, talon)


def _past_answer(rules: Rules, game: Game, d: Decision, v: View) -> int | None:
    """The answer the observation shows seat ``d.player`` gave to an earlier decision (``None``
    when this world cannot have given it)."""
    p = d.player
    hand = frozenset(game.state.hands[p])
    if d.kind == "question":
        q = d.question
        cards = turned_imperiale_cards(rules, hand, game.state.deal.turned) if q.kind == "turned_imperiale" \
            else q.cards
        return act.SHOW if cards and cards <= _cards(v.revealed[0, p]) else act.HIDE
    if d.kind == "point":
        if v.sunk[0, p]:
            return act.SINK
        if not v.declared[0, p]:
            return None
        wanted = (int(v.point_count[0, p]), int(v.point_value[0, p]))
        return next((a for a in d.legal if a != act.SINK and point_of(hand, a - act.POINT_BASE) == wanted), None)
    # A card played before this decision (the elder's first lead): the one not yet replayed.
    left = _cards(v.played[0, p]) - (game.state.deal.hands[p] - hand)
    return next(iter(left)) if len(left) == 1 else None


def replay(rules: Rules, v: View, obs: np.ndarray, world: np.ndarray) -> Game | None:
    """The reference game of ``world`` at the acting player's current decision (``None`` if this
    world does not lead to it), with the observed scores."""
    deal = world_deal(v, world, rules.players)
    game = Game(rules, dealer=deal.dealer, deals=lambda i, _dealer: deal if i == 0 else None, single_deal=True)
    kind = PHASES[int(v.phase[0])]
    asked = _cards(v.question_cards[0])
    for _ in range(MAX_REPLAY):
        d = game.decision
        if d is None:
            return None
        if d.player == 0 and d.kind == kind and (kind != "question" or d.question.cards == asked):
            P = rules.players
            game.imperiales[:] = [int(x) for x in v.imperiales[0, :P]]
            game.points[:] = [int(x) for x in v.points[0, :P]]
            return game
        answer = _past_answer(rules, game, d, v)
        if answer is None or answer not in d.legal:
            return None
        game.step(answer)
    return None


def _score(game: Game) -> np.ndarray:
    return np.array([POINTS_PER_IMPERIALE * i + p for i, p in zip(game.imperiales, game.points, strict=True)],
                    dtype=np.float64)


def _position(game: Game) -> tuple:
    """(hands as masks by seat, leader, trick cards in play order, tricks won, tricks played)."""
    s = game.state
    hands = tuple(sum(1 << c for c in s.hands[p]) for p in range(game.players))
    leader = s.trick[0][0] if s.trick else s.leader
    return hands, leader, tuple(c for _, c in s.trick), tuple(s.tricks), s.tricks_played


def outcome(rules: Rules, game: Game, answer: int, heuristic: HeuristicAgent) -> tuple[float, tuple | None]:
    """Apply ``answer`` to ``game`` (at the acting player's decision) and let the heuristic take
    every later decision up to the end of the first trick: (the change of score for seat 0
    minus the mean change of the others', the position of play) at the first card after the
    last declaration (Foster's dealer answers after the elder's first lead), or at the end of
    the deal (position ``None``) when it ends before any card."""
    P = rules.players
    before = _score(game)
    game.step(answer)
    snapshot = None
    while (d := game.decision) is not None and not (d.kind == "play" and game.state.tricks_played):
        if d.kind != "play":
            snapshot = None
        elif snapshot is None:
            snapshot = (_score(game), _position(game))
        game.step(int(heuristic.act(observe(game, d.player)[None], game.legal_mask()[None])[0]))
    after, position = snapshot if snapshot is not None else (_score(game), None)
    change = after - before
    share = 1.0 if P == 2 else 1.0 / (P - 1)
    return float(change[0] - share * change[1:].sum()), position


def play_values(rules: Rules, trump: int, positions: list[tuple]) -> list[float]:
    """Exact value for seat 0 of each position of play: his best card when he is to play, the
    worst for him of the cards of the seat to play otherwise (every other seat plays against him)."""
    if not positions:
        return []
    rows = [(trump, hands, leader, trick, tricks, played, 0) for hands, leader, trick, tricks, played in positions]
    values = solve_positions(rules, Positions.of(rows))
    out = []
    for (_, leader, trick, _, _), row in zip(positions, values, strict=True):
        legal = row[~np.isnan(row)]
        out.append(float(legal.max() if (leader + len(trick)) % rules.players == 0 else legal.min()))
    return out


def answer_values(rules: Rules, v: View, obs: np.ndarray, legal: list[int], worlds: np.ndarray,
                  heuristic: HeuristicAgent) -> np.ndarray:
    """``(worlds kept, answers)`` values of each legal answer in each world that replays to the
    current decision (see the module docstring)."""
    effects, reached = [], []
    for world in worlds:
        row, where = [], []
        for answer in legal:
            game = replay(rules, v, obs, world)
            if game is None:
                break
            value, position = outcome(rules, game, answer, heuristic)
            row.append(value)
            where.append(position)
        if len(row) == len(legal):
            effects.append(row)
            reached.append(where)
    values = np.array(effects, dtype=np.float64).reshape(len(effects), len(legal))
    # The play after the answer, where it differs between answers: one solve per distinct position.
    todo = sorted({pos for where in reached if len(set(where)) > 1 for pos in where if pos is not None})
    solved = dict(zip(todo, play_values(rules, int(v.trump[0]), todo), strict=True))
    for w, where in enumerate(reached):
        if len(set(where)) > 1:
            values[w] += [solved[pos] if pos is not None else 0.0 for pos in where]
    return values


def choose(values: np.ndarray, legal: list[int], preferred: int) -> int:
    """The answer of best mean value; among equals (within a rounding) the heuristic's ``preferred``."""
    if not len(values):
        return preferred
    mean = values.mean(axis=0)
    best = np.isclose(mean, mean.max(), atol=1e-9)
    tied = [a for a, b in zip(legal, best, strict=True) if b]
    return preferred if preferred in tied else tied[0]


def decide(rules: Rules, v: View, obs: np.ndarray, mask: np.ndarray, worlds: np.ndarray) -> int:
    """The answer to the acting player's declaration (``v``, ``obs`` and ``mask`` of one row) by
    the sampled ``worlds`` (:func:`imperiale_agents.search.pimc.sample_worlds`)."""
    heuristic = HeuristicAgent(rules)
    preferred = int(heuristic.act(obs[None], mask[None])[0])
    legal = [int(a) for a in np.flatnonzero(mask) if a >= NUM_CARDS]
    if len(legal) < 2:
        return preferred
    return choose(answer_values(rules, v, obs, legal, worlds, heuristic), legal, preferred)


__all__ = ["answer_values", "choose", "decide", "outcome", "play_values", "replay", "world_deal"]
