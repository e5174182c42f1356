"""The single-agent Gymnasium environment: Gymnasium's checker, agreement with the reference
engine, illegal actions, opponents, seats."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import imperiale_env  # noqa: F401  (registers Imperiale-v1)
from imperiale_env.core.observation import OBS_SIZE, OFFSETS
from imperiale_env.core.rules import PRESET_NAMES, make_rules
from imperiale_env.envs.gym_env import ImperialeEnv
from imperiale_env.reference.game import Game


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_gymnasium_check_env(preset, capsys):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(gymnasium.make("Imperiale-v1", rules=preset).unwrapped)
        check_env(gymnasium.make("Imperiale-v1", rules=preset, seat="random", episode="deal").unwrapped)
    assert not [str(w.message) for w in caught]


def test_default_make_passes_the_checker():
    check_env(gymnasium.make("Imperiale-v1").unwrapped)


class Recorder:
    """Random legal play for every seat, recording (seat, action) in order."""

    def __init__(self, env: ImperialeEnv, seed: int):
        self.env, self.rng, self.moves = env, np.random.default_rng(seed), []

    def pick(self, mask: np.ndarray) -> int:
        legal = np.flatnonzero(mask)
        return int(legal[self.rng.integers(len(legal))])

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> int:  # the opponent
        assert obs.shape == (OBS_SIZE,) and obs.dtype == np.uint8 and mask.dtype == bool
        action = self.pick(mask)
        self.moves.append((self.env.engine.current_player, action))
        return action


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_same_game_as_the_reference_engine(preset):
    rules = make_rules(preset)
    for seed in range(3):
        env = ImperialeEnv(rules=preset, seat="random")
        rec = Recorder(env, seed)
        env._opponent = env._adapt_opponent(rec)
        obs, info = env.reset(seed=seed)
        total, terminated = 0.0, False
        while not terminated:
            assert env.engine.current_player == env.agent_seat
            action = rec.pick(info["action_mask"])
            rec.moves.append((env.agent_seat, action))
            obs, reward, terminated, truncated, info = env.step(action)
            assert not truncated and type(reward) is float and type(terminated) is bool
            total += reward
        ref = Game(rules, seed=info["game_seed"])
        for player, action in rec.moves:
            assert ref.current_player == player
            ref.step(action)
        assert ref.is_over and info["winner"] == ref.winner
        assert info["imperiales"].tolist() == ref.imperiales and info["points"].tolist() == ref.points
        assert total == (1.0 if ref.winner == env.agent_seat else -1.0 / (rules.players - 1))
        assert not info["illegal_action"] and not info["action_mask"].any()


def test_one_deal_from_a_start_score():
    start = {"imperiales": [1, 2], "points": [12, 4], "dealer": 1}
    env = ImperialeEnv(episode="deal", start=start, seat=1)
    rec = Recorder(env, 0)
    env._opponent = env._adapt_opponent(rec)
    _, info = env.reset(seed=9)
    terminated = False
    while not terminated:
        action = rec.pick(info["action_mask"])
        rec.moves.append((1, action))
        _, reward, terminated, _, info = env.step(action)
    ref = Game("academie", seed=info["game_seed"], single_deal=True, **start)
    for player, action in rec.moves:
        assert ref.current_player == player
        ref.step(action)
    assert ref.is_over and len(ref.history) == 1 and info["points"].tolist() == ref.points


def test_illegal_actions_end_the_episode_with_minus_one():
    env = ImperialeEnv()
    for pick in (0, -1):  # the first and the last illegal id, as a Python int and a numpy integer
        obs, info = env.reset(seed=0)
        action = np.flatnonzero(info["action_mask"] == 0)[pick]
        obs, reward, terminated, truncated, info = env.step(int(action) if pick == 0 else action)
        assert (reward, terminated, truncated) == (-1.0, True, False)
        assert info["illegal_action"] is True and obs in env.observation_space
        assert not info["action_mask"].any() and not env.action_masks().any()
        with pytest.raises(RuntimeError, match="reset"):
            env.step(0)


def test_masks_observation_and_fresh_arrays():
    env = ImperialeEnv(rules="foster")
    obs, info = env.reset(seed=1)
    mask = env.action_masks()
    assert mask.dtype == bool and info["action_mask"].dtype == np.int8
    assert np.array_equal(mask, info["action_mask"].astype(bool)) and mask.any()
    hand = np.flatnonzero(obs[OFFSETS["hand"]])
    assert set(hand.tolist()) == env.engine.state.hands[env.agent_seat]
    obs2, _, _, _, info2 = env.step(int(np.flatnonzero(mask)[0]))
    assert obs2 is not obs and not np.shares_memory(obs, obs2)
    assert info2["action_mask"] is not info["action_mask"]


class BatchedOpponent:
    """The agents' interface: act(obs (B, OBS), mask (B, 43), rng) -> (B,)."""

    def __init__(self):
        self.calls = 0

    def act(self, obs, mask, rng):
        assert obs.shape == (1, OBS_SIZE) and mask.shape == (1, 43) and isinstance(rng, np.random.Generator)
        self.calls += 1
        return np.argmax(mask, axis=1)


class TwoArgOpponent:
    def act(self, obs, mask):
        return np.argmax(mask, axis=1)


@pytest.mark.parametrize("opponent", [BatchedOpponent(), TwoArgOpponent(), lambda obs, mask: int(np.argmax(mask))])
def test_opponents_of_every_kind(opponent):
    env = ImperialeEnv(opponent=opponent, seat=1)
    _, info = env.reset(seed=3)
    terminated, steps = False, 0
    while not terminated:
        _, reward, terminated, _, info = env.step(int(np.argmax(info["action_mask"])))
        steps += 1
    assert reward in (1.0, -1.0) and steps > 10
    if isinstance(opponent, BatchedOpponent):
        assert opponent.calls > 10


def test_an_illegal_opponent_action_raises():
    env = ImperialeEnv(opponent=lambda obs, mask: int(np.argmin(mask)), seat=1)
    with pytest.raises(ValueError, match="opponent"):
        for seed in range(5):
            env.reset(seed=seed)
            env.step(int(np.argmax(env.action_masks())))
    with pytest.raises(TypeError):
        ImperialeEnv(opponent=42)


def test_random_seat_covers_every_seat_and_bad_seats_are_refused():
    env = ImperialeEnv(rules="academie3", seat="random")
    seats = set()
    for seed in range(30):
        _, info = env.reset(seed=seed)
        seats.add(info["seat"])
        assert env.engine.current_player == info["seat"]
    assert seats == {0, 1, 2}
    for bad in (2, -1, "north", True):
        with pytest.raises(ValueError):
            ImperialeEnv(seat=bad)


def test_render_modes(capsys):
    env = ImperialeEnv(render_mode="ansi", seat=1)
    env.reset(seed=2)
    text = env.render()
    assert "player_1 (you)" in text and "player_0 holds 12 cards" in text
    assert "\nHand" in text and "\nMoves:   1) " in text  # the agent's hand and moves: it is to act
    human = ImperialeEnv(render_mode="human")
    human.reset(seed=2)
    assert human.render() is None
    assert "Trump" in capsys.readouterr().out


def test_a_spec_string_without_an_agents_package_says_what_to_do(monkeypatch):
    """Where no installed package declares the builder (an env installed without its metadata), the
    spec is refused with the reason and the way out, never guessed at."""
    import importlib.metadata

    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: [])
    with pytest.raises(TypeError, match=r"opponent 'heuristic' is an agent spec, and no installed package builds "
                                        r"agents from specs .*imperiale.agent_specs.*pass an agent object instead"):
        ImperialeEnv(opponent="heuristic")


def test_an_opponent_given_as_a_spec_string_is_built_for_the_envs_rules():
    """``opponent="heuristic"`` as everywhere else a spec is taken: the agents package builds it (found
    through its entry point; the envs never import it), for the env's own rules."""
    import gymnasium

    from imperiale_agents.base import AgentError
    from imperiale_agents.policies.heuristic import HeuristicAgent

    env = gymnasium.make("Imperiale-v1", rules="foster", opponent="heuristic", seat=1)
    opponent = env.unwrapped._opponent
    assert isinstance(opponent, HeuristicAgent) and opponent.rules.preset == "foster"
    plain = gymnasium.make("Imperiale-v1", rules="foster", opponent=HeuristicAgent("foster"), seat=1)
    assert np.array_equal(env.reset(seed=5)[0], plain.reset(seed=5)[0])  # the same opponent's moves before seat 1's
    with pytest.raises(AgentError, match="bad agent 'pimc:abc'.*takes N samples"):
        gymnasium.make("Imperiale-v1", opponent="pimc:abc")
    with pytest.raises(AgentError, match="unknown agent 'nobody'"):
        ImperialeEnv(opponent="nobody")
