"""pimc with declarations decided by search (``pimc:N:search``, agents/search/declaration_search.py):
legal play in every preset, and its answers against a brute-force evaluation of fixed deals
(every answer played on the reference engine, every position of play solved by the Python
oracle, no shortcut)."""

from __future__ import annotations

import numpy as np
import pytest

from imperiale_agents.base import AgentError, make_agent
from imperiale_agents.observation_view import decode
from imperiale_agents.policies.heuristic import HeuristicAgent
from imperiale_agents.search import declaration_search as ds
from imperiale_agents.search.pimc import PIMCAgent
from imperiale_agents.search.solver import Solver
from imperiale_env.batch import BatchGame
from imperiale_env.core import actions as act
from imperiale_env.core.cards import NUM_CARDS, card, deck
from imperiale_env.core.events import POINTS_PER_IMPERIALE
from imperiale_env.core.rules import PRESET_NAMES, make_rules
from imperiale_env.reference.game import Deal, Game
from imperiale_env.reference.observe import observe

S, H, D, C = range(4)
K, Q, J, A, TEN, NINE, EIGHT, SEVEN = range(8)


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_search_declarations_play_legally_and_deterministically(preset):
    rules = make_rules(preset)
    agent = make_agent("pimc:2:1:search", rules)
    assert agent.declarations == "search" and agent.name == "pimc:2:1:search"
    declarations = 0
    for deal in range(3):
        runs = []
        for _ in range(2):
            bg = BatchGame(rules, 1, single_deal=True)
            bg.reset(deal)
            rng = np.random.default_rng(deal)
            actions = []
            while not bg.done.all():
                obs, mask = bg.observe(), bg.legal_action_mask()
                a = agent.act(obs, mask, rng)
                assert mask[0, a[0]], (preset, deal, a)
                declarations += decode(obs).phase[0] in (0, 1)
                actions.append(int(a[0]))
                bg.step(a)
            runs.append(actions)
        assert runs[0] == runs[1]
    assert declarations >= 6


def test_search_spec_is_read_exactly():
    assert make_agent("pimc:8:9:search").declarations == "search"
    assert make_agent("pimc:8").declarations == "heuristic"
    for spec in ["pimc:search", "pimc:8:search:9", "pimc:8:Search", "pimc:8:9:search:search", "pimc:8::search"]:
        with pytest.raises(AgentError, match=r"pimc:N\[:K\]\[:search\]"):
            make_agent(spec)
    with pytest.raises(ValueError, match="allowed: heuristic, search"):
        PIMCAgent("academie", declarations="guess")


# ---------------------------------------------------------------------- brute force on fixed deals


def _score(game: Game) -> np.ndarray:
    return np.array([POINTS_PER_IMPERIALE * i + p for i, p in zip(game.imperiales, game.points, strict=True)], float)


def brute_force(rules, deal: Deal, answer: int) -> float:
    """The value for seat 0 of ``answer`` to the first decision of ``deal`` (seat 0's): the reference
    engine applies it and the heuristic's later declarations; the Python solver values the play."""
    game = Game(rules, dealer=deal.dealer, deals=lambda i, _d: deal if i == 0 else None, single_deal=True)
    assert game.decision.player == 0 and game.decision.kind != "play"
    before = _score(game)
    game.step(answer)
    heuristic = HeuristicAgent(rules)
    while game.decision is not None and game.decision.kind != "play":
        game.step(int(heuristic.act(observe(game, game.decision.player)[None], game.legal_mask()[None])[0]))
    change = _score(game) - before
    value = change[0] - change[1]
    if game.decision is not None:
        s = game.state
        hands = tuple(sum(1 << c for c in s.hands[p]) for p in range(2))
        solved = Solver(rules, deal.trump, me=0).move_values(hands, s.leader, (), tuple(s.tricks), 0)
        value += max(solved.values()) if s.leader == 0 else min(solved.values())
    return value


def fixed_case(mine: list[int], theirs: list[int], turned: int):
    """Seat 0 (the elder, to answer) holds ``mine``, the dealer (seat 1) ``theirs``: the
    observation, the legal mask and three worlds (the true one and two other deals of the unseen
    cards to the dealer, each with nothing for the dealer to declare before seat 0's decision)."""
    rules = make_rules("academie")
    pack = deck(2)
    talon = tuple(c for c in pack if c not in mine and c not in theirs and c != turned)
    deal = Deal(1, (frozenset(mine), frozenset(theirs)), turned, talon)
    game = Game(rules, dealer=1, deals=lambda i, _d: deal if i == 0 else None, single_deal=True)
    obs, mask = observe(game, 0), game.legal_mask()
    unseen = [c for c in pack if c not in mine and c != turned]
    order = np.random.default_rng(0).permutation(unseen)
    hands = [sorted(theirs), sorted(order[:12].tolist()), sorted(order[7:19].tolist())]
    worlds = np.zeros((3, 3, NUM_CARDS), dtype=bool)
    worlds[:, 0, mine] = True
    for w, hand in enumerate(hands):
        worlds[w, 1, hand] = True
    deals = [Deal(1, (frozenset(mine), frozenset(h)), turned, tuple(c for c in unseen if c not in h)) for h in hands]
    return rules, obs, mask, worlds, deals


def _check(rules, obs, mask, worlds, deals) -> tuple[np.ndarray, np.ndarray]:
    legal = [int(a) for a in np.flatnonzero(mask)]
    expected = np.array([[brute_force(rules, deal, a) for a in legal] for deal in deals])
    got = ds.answer_values(rules, decode(obs[None]), obs, legal, worlds, HeuristicAgent(rules))
    mean = expected.mean(axis=0)
    assert np.isclose(mean, mean.max()).sum() == 1  # one best answer: the case decides something
    assert ds.decide(rules, decode(obs[None]), obs, mask, worlds) == legal[int(np.argmax(mean))]
    return expected, got


def test_carte_blanche_answer_equals_brute_force():
    """Showing carte blanche ends the deal (Académie): its value has no play, hiding's has the
    solved play, so both are computed in full and must equal the brute force exactly."""
    mine = [card(s, r) for s in (S, H, D) for r in (A, TEN, NINE)] + [card(C, TEN), card(C, NINE), card(S, EIGHT)]
    theirs = [card(s, r) for s in range(4) for r in (K, Q, J)]
    rules, obs, mask, worlds, deals = fixed_case(mine, theirs, card(H, EIGHT))
    assert decode(obs[None]).question_kind[0] == 0 and list(np.flatnonzero(mask)) == [act.SHOW, act.HIDE]
    expected, got = _check(rules, obs, mask, worlds, deals)
    assert np.array_equal(got, expected)


def test_point_answer_equals_brute_force():
    """The point: every answer reaches the same position of play, so its value (the same for
    every answer) is left out; the differences between answers equal the brute force's."""
    mine = [card(S, K), card(S, Q), card(S, TEN), card(S, NINE), card(S, EIGHT), card(H, A), card(H, TEN),
            card(H, SEVEN), card(D, J), card(D, NINE), card(C, EIGHT), card(C, SEVEN)]
    theirs = [card(H, K), card(H, Q), card(H, J), card(H, NINE), card(D, K), card(D, Q), card(D, TEN), card(D, EIGHT),
              card(C, K), card(C, J), card(C, TEN), card(C, NINE)]
    rules, obs, mask, worlds, deals = fixed_case(mine, theirs, card(S, A))
    assert decode(obs[None]).phase[0] == 1 and mask[act.SINK]
    expected, got = _check(rules, obs, mask, worlds, deals)
    assert np.allclose(got - got[:, :1], expected - expected[:, :1])
