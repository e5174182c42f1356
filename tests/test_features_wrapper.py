"""Every env gives the trainer's float features with ``obs_type="features"`` (and the wrappers do
for an env made with the bytes): the features of the very bytes the default env gives, inside
their declared space, on every preset."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test

import imperiale_env  # noqa: F401  (registers the envs)
from imperiale_agents.policies.heuristic import HeuristicAgent
from imperiale_env.envs.aec import env as make_aec
from imperiale_env.envs.features import FeatureObservation, VectorFeatureObservation
from imperiale_env.kernels.features import FEATURE_SIZE, policy_features

PRESETS = ("academie", "academie3", "foster", "imperijal")


def test_the_single_env_gives_features_that_pass_the_checker():
    env = FeatureObservation(gymnasium.make("Imperiale-v1", rules="foster"))
    check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=3)
    raw, _ = env.unwrapped.reset(seed=3)
    assert obs.shape == (FEATURE_SIZE,) and obs.dtype == np.float32 and obs in env.observation_space
    assert np.array_equal(obs, policy_features(raw))


@pytest.mark.parametrize("rules", PRESETS)
def test_imperiale_v1_with_features_gives_the_features_of_the_bytes(rules):
    plain = gymnasium.make("Imperiale-v1", rules=rules, opponent=HeuristicAgent(rules), episode="deal")
    featured = gymnasium.make("Imperiale-v1", rules=rules, opponent=HeuristicAgent(rules), episode="deal",
                              obs_type="features")
    check_env(featured.unwrapped, skip_render_check=True)
    assert featured.observation_space == gymnasium.spaces.Box(0.0, 1.0, (FEATURE_SIZE,), np.float32)
    rng = np.random.default_rng(5)
    for episode in range(3):
        raw, _ = plain.reset(seed=episode)
        obs, info = featured.reset(seed=episode)
        done = False
        while not done:
            assert obs in featured.observation_space and np.array_equal(obs, policy_features(raw))
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            raw, r1, t1, _, _ = plain.step(action)
            obs, r2, done, _, info = featured.step(action)
            assert (r1, t1) == (r2, done)
        assert np.array_equal(obs, policy_features(raw))


@pytest.mark.parametrize("rules", PRESETS)
def test_the_aec_env_with_features_gives_the_features_of_the_bytes(rules):
    plain, featured = make_aec(rules=rules, episode="deal"), make_aec(rules=rules, episode="deal", obs_type="features")
    plain.reset(seed=8)
    featured.reset(seed=8)
    rng = np.random.default_rng(1)
    while plain.agents:
        for agent in plain.possible_agents:  # every agent's view, the one to act and the others
            raw, obs = plain.observe(agent), featured.observe(agent)
            assert obs["observation"] in featured.observation_space(agent)["observation"]
            assert np.array_equal(obs["observation"], policy_features(raw["observation"]))
            assert np.array_equal(obs["action_mask"], raw["action_mask"])
        _, _, terminated, truncated, _ = plain.last()
        mask = plain.observe(plain.agent_selection)["action_mask"]
        action = None if terminated or truncated else int(rng.choice(np.flatnonzero(mask)))
        plain.step(action)
        featured.step(action)
    assert plain.rewards == featured.rewards


def test_the_aec_env_with_features_passes_pettingzoo_api_test():
    api_test(make_aec(rules="academie3", obs_type="features", episode="deal"), num_cycles=200)


@pytest.mark.parametrize("rules", PRESETS)
def test_the_vector_env_with_features_gives_the_features_of_the_bytes(rules):
    plain = gymnasium.make_vec("ImperialeSelfPlay-v1", num_envs=3, rules=rules, episode="deal")
    featured = gymnasium.make_vec("ImperialeSelfPlay-v1", num_envs=3, rules=rules, episode="deal",
                                  obs_type="features")
    wrapped = VectorFeatureObservation(gymnasium.make_vec("ImperialeSelfPlay-v1", num_envs=3, rules=rules,
                                                          episode="deal"))
    raw, info = plain.reset(seed=1)
    obs, _ = featured.reset(seed=1)
    wobs, _ = wrapped.reset(seed=1)
    ended = 0
    for _ in range(200):
        assert obs in featured.observation_space and np.array_equal(obs, policy_features(raw))
        assert np.array_equal(wobs, obs)
        actions = np.argmax(info["action_mask"], axis=1)
        raw, _, terminated, _, info = plain.step(actions)
        obs, _, _, _, finfo = featured.step(actions)
        wobs, _, _, _, winfo = wrapped.step(actions)
        for i in np.flatnonzero(terminated):
            final = finfo["final_obs"][i]
            assert final in featured.single_observation_space
            assert np.array_equal(final, policy_features(info["final_obs"][i]))
            assert np.array_equal(winfo["final_obs"][i], final)
            ended += 1
    assert ended > 0


def test_a_bad_obs_type_is_refused_naming_the_allowed_ones():
    for make in (lambda: gymnasium.make("Imperiale-v1", obs_type="floats"),
                 lambda: gymnasium.make_vec("ImperialeSelfPlay-v1", num_envs=2, obs_type=1),
                 lambda: make_aec(obs_type="onehot")):
        with pytest.raises(ValueError, match="obs_type must be 'bytes' .* or 'features'"):
            make()


def test_an_env_of_another_observation_is_refused():
    with pytest.raises(ValueError, match="observation version 1"):
        FeatureObservation(gymnasium.make("CartPole-v1"))
