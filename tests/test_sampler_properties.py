"""Property test of pimc's sampler: no world it draws contradicts what the player knows.

Each example is a random position of a random rule variant (every preset with every rules
field changed, as in test_properties.py): a deal played with random legal actions up to a card
decision.  Every sampled world must agree with the observation: the hand, the cards played and
seen, the voids, the cards the play proves absent (``not_held``), the shown cards and a
declared point.  The true deal satisfies the same checks, so they test the sampler and not an
over-strict reading of the observation.
"""

from __future__ import annotations

import random

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from imperiale_agents.observation_view import POINT_VALUE, View, decode
from imperiale_agents.search.belief_model import OUTPUTS, BeliefNet
from imperiale_agents.search.pimc import sample_worlds
from imperiale_cli.devtools.rule_variants import rule_variants
from imperiale_env import Game
from imperiale_env.core.cards import NUM_CARDS
from imperiale_env.core.observation import FEATURES
from imperiale_env.reference.observe import observe

VARIANTS = [rules for _, rules in rule_variants()]


def _position(rules, seed: int, stop: float, rng: random.Random) -> Game | None:
    """A game of ``rules`` at a card decision about ``stop`` of the way through the deal."""
    game = Game(rules, seed=seed, single_deal=True)
    target = int(stop * 12)
    while game.current_player is not None:
        d = game.decision
        if d.kind == "play" and game.state.tricks_played >= target and len(d.legal) > 1:
            return game
        game.step(rng.choice(game.legal_actions()))
    return None


def _check(v: View, world: np.ndarray, players: int) -> None:
    assert (world[0] == v.hand[0]).all()
    seen = v.played[0].any(axis=0) | v.hand[0]
    for s in range(1, players):
        w = world[s]
        assert w.sum() == 12 - v.played[0, s].sum()
        assert not (w & seen).any()
        assert not (w & v.not_held[0, s]).any()
        for suit in np.flatnonzero(v.voids[0, s]):
            assert not w[suit * 9 : suit * 9 + 9].any()
        assert (w >= v.revealed[0, s] & ~v.played[0, s]).all()
        if v.declared[0, s]:
            held = w | v.played[0, s]
            suits = [slice(x * 9, x * 9 + 9) for x in range(4)]
            per = {(int(held[x].sum()), int(POINT_VALUE[x][held[x]].sum())) for x in suits}
            assert (int(v.point_count[0, s]), int(v.point_value[0, s])) in per
    if players == 3:
        assert not (world[1] & world[2]).any()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(VARIANTS), st.integers(0, 2**63 - 1), st.floats(0.0, 0.95), st.randoms(use_true_random=False))
def test_sampled_worlds_agree_with_everything_known(rules, seed, stop, rng):
    game = _position(rules, seed, stop, rng)
    if game is None:  # the deal ended before (carte blanche)
        return
    seat = game.current_player
    obs = observe(game, seat)[None]
    v = decode(obs)
    P = rules.players
    truth = np.zeros((3, NUM_CARDS), dtype=bool)
    for s in range(P):
        truth[s, sorted(game.state.hands[(seat + s) % P])] = True
    _check(v, truth, P)
    worlds = sample_worlds(obs, rules, 8, np.random.default_rng(seed))
    for w in worlds:
        _check(v, w, P)


def _random_belief(seed: int) -> BeliefNet:
    """A belief network of random weights: its worlds lean hard one way or another."""
    rng = np.random.default_rng(seed)
    return BeliefNet(((rng.normal(0, 0.3, (8, FEATURES.size)).astype(np.float32), np.zeros(8, np.float32)),
                      (rng.normal(0, 2.0, (OUTPUTS, 8)).astype(np.float32), np.zeros(OUTPUTS, np.float32))),
                     "relu", {})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(VARIANTS), st.integers(0, 2**63 - 1), st.floats(0.0, 0.95), st.randoms(use_true_random=False))
def test_belief_resampled_worlds_agree_with_everything_known(rules, seed, stop, rng):
    """pimc:N:belief: the worlds a belief picks are still the sampler's, every fact kept."""
    game = _position(rules, seed, stop, rng)
    if game is None:
        return
    obs = observe(game, game.current_player)[None]
    v = decode(obs)
    for w in _random_belief(seed % 1000).worlds(rules, obs[0], v, seed, 8):
        _check(v, w, rules.players)
