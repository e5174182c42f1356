"""``ismcts:N``: OpenSpiel's ISMCTS as an agent that sees only its observation (issue 24).

Each decision rebuilds an OpenSpiel state from the observation; these tests check that state
against the engine's (the same observation byte for byte, the same legal actions, in every preset
and from a score other than 0), then the agent in ``imperiale eval``, ``imperiale play``, the env
opponent and a tournament run twice, and the registry's errors."""

from __future__ import annotations

import sys

import gymnasium
import numpy as np
import pytest

import imperiale_env  # noqa: F401  (registers the Gymnasium ids)
from imperiale_agents.observation_view import decode
from imperiale_agents.registry import AgentError, make_agent
from imperiale_agents.search.ismcts import ISMCTSAgent, play_order, rebuild
from imperiale_agents.tournament.match import play_match
from imperiale_cli.cli import main
from imperiale_env import PRESET_NAMES
from imperiale_env.core.rules import make_rules
from imperiale_env.reference.game import Game
from imperiale_env.reference.observe import observe


def _check_every_decision(game: Game, rng: np.random.Generator) -> int:
    """Play ``game`` at random; at every decision, rebuild the acting seat's state and compare."""
    decisions = 0
    while not game.is_over:
        seat = game.current_player
        obs = observe(game, seat)
        state = rebuild(game.rules, obs, rng)
        assert np.array_equal(observe(state.engine, 0), obs)
        assert state.current_player() == 0 and state.legal_actions() == game.legal_actions()
        assert list(state.engine.state.hands[0]) == list(game.state.hands[seat])
        game.step(int(rng.choice(game.legal_actions())))
        decisions += 1
    return decisions


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_the_rebuilt_state_shows_the_seat_its_observation_in_every_preset(preset):
    rules = make_rules(preset)
    game = Game(rules, seed=11, single_deal=True)
    assert _check_every_decision(game, np.random.default_rng(1)) > 20


def test_the_rebuilt_state_starts_from_a_score_it_finds():
    rules = make_rules("academie")
    game = Game(rules, seed=5, imperiales=[3, 2], points=[22, 9], single_deal=True)  # a deal can cross 24 points
    _check_every_decision(game, np.random.default_rng(2))
    state = rebuild(rules, observe(Game(rules, seed=5, imperiales=[3, 2], points=[22, 9]), 0), np.random.default_rng(3))
    assert state.engine.start_imperiales[0] == 3


def test_the_order_of_play_is_read_from_the_observation():
    rules = make_rules("academie3")
    game = Game(rules, seed=3, single_deal=True)
    rng = np.random.default_rng(0)
    while game.state.tricks_played < 3 or game.state.trick:
        game.step(int(rng.choice(game.legal_actions())))
    seat = game.current_player
    played = [(p, a) for p, a in game.state.actions if a < 36]
    assert play_order(decode(observe(game, seat))) == [((p - seat) % 3, a) for p, a in played]


def test_ismcts_plays_legal_deals_in_eval_the_same_for_the_same_seed(capsys):
    assert main(["eval", "--agents", "ismcts:3,random", "--deals", "2", "--seed", "8", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "ismcts:3" in out and "random" in out
    rules = make_rules("academie")
    logs = [play_match(rules, [ISMCTSAgent(rules, 3), make_agent("random", rules)], (0, 1), 1, seed=8,
                       match_index=0, single_deal=True) for _ in range(2)]
    assert np.array_equal(logs[0].deltas, logs[1].deltas) and np.array_equal(logs[0].seeds, logs[1].seeds)


def test_the_same_generator_gives_the_same_actions_with_one_or_two_workers():
    rules = make_rules("academie")
    game, obs, masks = Game(rules, seed=21), [], []
    rng = np.random.default_rng(4)
    while len(obs) < 6:
        if len(game.legal_actions()) > 1 and game.decision.kind == "play":
            obs.append(observe(game, game.current_player))
            masks.append(game.legal_mask())
        game.step(int(rng.choice(game.legal_actions())))
    obs, masks = np.stack(obs), np.stack(masks)
    alone = ISMCTSAgent(rules, 8).act(obs, masks, np.random.default_rng(9))
    pooled_agent = ISMCTSAgent(rules, 8, workers=2)
    try:
        pooled = pooled_agent.act(obs, masks, np.random.default_rng(9))
    finally:
        pooled_agent.close()
    assert alone.tolist() == pooled.tolist()
    assert masks[np.arange(len(alone)), alone].all()


def test_ismcts_plays_a_whole_game_in_the_terminal(monkeypatch, capsys):
    monkeypatch.setattr("builtins.input", lambda prompt="": "1")  # the first legal move, every time
    assert main(["play", "--opponent", "ismcts:2", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "wins the game" in out or "You win the game" in out


def test_ismcts_as_the_env_opponent():
    env = gymnasium.make("Imperiale-v1", opponent=make_agent("ismcts:2"), episode="deal")
    obs, info = env.reset(seed=6)
    terminated = truncated = False
    while not (terminated or truncated):
        obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert terminated


@pytest.mark.parametrize("spec", ["ismcts:0", "ismcts:1", "ismcts:x", "ismcts:", "ismcts:10001", "ismcts:5:5"])
def test_bad_ismcts_specs_say_what_is_allowed(spec):
    with pytest.raises(AgentError, match=r"ismcts:N takes N simulations a decision from 2 to 10000"):
        make_agent(spec)


def test_without_openspiel_the_error_names_the_extra(monkeypatch):
    monkeypatch.delitem(sys.modules, "imperiale_agents.search.ismcts")
    for name in [n for n in sys.modules if n == "pyspiel" or n.partition(".")[0] == "open_spiel"]:
        monkeypatch.setitem(sys.modules, name, None)  # as if never installed: importing any of them fails
    with pytest.raises(AgentError, match=r"OpenSpiel is not installed \(pip install 'imperiale\[openspiel\]'\)"):
        make_agent("ismcts:10")
