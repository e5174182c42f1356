"""The feature wrappers hand a library the one-hot features of the observation, inside their space."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import imperiale_env  # noqa: F401  (registers the envs)
from imperiale_env.core.observation import FEATURES
from imperiale_env.envs.features import FeatureObservation, VectorFeatureObservation


def test_the_single_env_gives_features_that_pass_the_checker():
    env = FeatureObservation(gymnasium.make("Imperiale-v1", rules="foster"))
    check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=3)
    raw, _ = env.unwrapped.reset(seed=3)
    assert obs.shape == (FEATURES.size,) and obs.dtype == np.float32 and obs in env.observation_space
    assert np.array_equal(obs, FEATURES.expand(raw[None])[0])


def test_the_vector_env_gives_one_feature_row_a_game():
    vec = VectorFeatureObservation(gymnasium.make_vec("ImperialeSelfPlay-v1", num_envs=3))
    obs, _ = vec.reset(seed=1)
    assert obs.shape == (3, FEATURES.size) and obs in vec.observation_space
    raw = vec.env
    ended = 0
    for _ in range(400):
        mask = raw.engine.legal_action_mask()
        obs, _, terminated, _, info = vec.step(np.argmax(mask, axis=1))
        assert obs.shape == (3, FEATURES.size) and obs.dtype == np.float32
        for i in np.flatnonzero(terminated):
            final = info["final_obs"][i]
            assert final.shape == (FEATURES.size,) and final in vec.single_observation_space
            ended += 1
    assert ended > 0


def test_an_env_of_another_observation_is_refused():
    with pytest.raises(ValueError, match="observation version 1"):
        FeatureObservation(gymnasium.make("CartPole-v1"))
