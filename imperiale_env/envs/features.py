"""The observation as a network's input features, for an env made with the default bytes.

The environments give the observation's bytes by default (version 1, ``uint8``: flags, counts and
category codes such as "1 + a seat").  A library whose default network reads the observation as
floats (Stable-Baselines3, Tianshou, RLlib's default models...) would read a category code as a
magnitude; it should read the features our own trainer reads instead
(:mod:`imperiale_env.kernels.features`, feature version 2: ``float32`` in ``[0, 1]``,
:data:`FEATURE_SIZE` wide, the trick in progress, what each seat may hold, one-hot categories and
scaled counts).  Every env gives them with ``obs_type="features"``; these wrappers do the same
for an env already made::

    env = FeatureObservation(gymnasium.make("Imperiale-v1"))
    vec = VectorFeatureObservation(gymnasium.make_vec("ImperialeSelfPlay-v1", num_envs=8))
"""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import RecordConstructorArgs
from gymnasium.vector import VectorEnv, VectorWrapper
from gymnasium.vector.utils import batch_space

from imperiale_env.core.observation import OBS_SIZE
from imperiale_env.kernels.features import FEATURE_SIZE, policy_features

__all__ = ["FeatureObservation", "VectorFeatureObservation", "feature_space"]


def feature_space() -> spaces.Box:
    """The space of one observation's features."""
    return spaces.Box(0.0, 1.0, (FEATURE_SIZE,), dtype=np.float32)


class FeatureObservation(gymnasium.ObservationWrapper, RecordConstructorArgs):
    """``Imperiale-v1`` with the features as its observation."""

    def __init__(self, env: gymnasium.Env):
        RecordConstructorArgs.__init__(self)
        gymnasium.ObservationWrapper.__init__(self, env)
        if env.observation_space.shape != (OBS_SIZE,):
            raise ValueError(f"FeatureObservation wraps an env of observation version 1 ({OBS_SIZE} bytes), "
                             f"not one of shape {env.observation_space.shape}")
        self.observation_space = feature_space()

    def observation(self, observation: np.ndarray) -> np.ndarray:
        return policy_features(observation)


class VectorFeatureObservation(VectorWrapper):
    """``ImperialeSelfPlay-v1`` with the features as its observations (one row a game), the
    final observations of ended games (``info["final_obs"]``, same-step autoreset) included."""

    def __init__(self, env: VectorEnv):
        super().__init__(env)
        if env.single_observation_space.shape != (OBS_SIZE,):
            raise ValueError(f"VectorFeatureObservation wraps an env of observation version 1 ({OBS_SIZE} bytes), "
                             f"not one of shape {env.single_observation_space.shape}")
        self.single_observation_space = feature_space()
        self.observation_space = batch_space(self.single_observation_space, env.num_envs)

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return policy_features(obs), info

    def step(self, actions):
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        if "final_obs" in info:
            final = np.full(len(obs), None, dtype=object)
            ended = np.flatnonzero(info["_final_obs"])
            if len(ended):
                final[ended] = list(policy_features(np.stack(info["final_obs"][ended])))
            info = {**info, "final_obs": final}
        return policy_features(obs), rewards, terminated, truncated, info
