"""The observation as a network's input features, for libraries that feed it to a network as is.

The environments give the observation's bytes (version 1, ``uint8``: flags, counts and category
codes such as "1 + a seat"); our own networks one-hot encode them on their device
(:data:`~imperiale_env.core.observation.FEATURES`).  A library whose default network reads the
observation as floats (Stable-Baselines3, Tianshou, RLlib's default models...) would read a
category code as a magnitude, so these wrappers hand it the features instead: ``float32`` in
``[0, 1]``, :data:`FEATURES.size` wide, one-hot categories and scaled counts::

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

from imperiale_env.core.observation import FEATURES, OBS_SIZE

__all__ = ["FeatureObservation", "VectorFeatureObservation", "feature_space"]


def feature_space() -> spaces.Box:
    """The space of one observation's features."""
    return spaces.Box(0.0, 1.0, (FEATURES.size,), dtype=np.float32)


class FeatureObservation(gymnasium.ObservationWrapper, RecordConstructorArgs):
    """``Imperiale-v1`` with :data:`FEATURES` as its observation."""

    def __init__(self, env: gymnasium.Env):
        RecordConstructorArgs.__init__(self)
        gymnasium.ObservationWrapper.__init__(self, env)
        if env.observation_space.shape != (OBS_SIZE,):
            raise ValueError(f"FeatureObservation wraps an env of observation version 1 ({OBS_SIZE} bytes), "
                             f"not one of shape {env.observation_space.shape}")
        self.observation_space = feature_space()

    def observation(self, observation: np.ndarray) -> np.ndarray:
        return FEATURES.expand(observation[None])[0]


class VectorFeatureObservation(VectorWrapper):
    """``ImperialeSelfPlay-v1`` with :data:`FEATURES` as its observations (one row a game), the
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
        return FEATURES.expand(obs), info

    def step(self, actions):
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        if "final_obs" in info:
            final = np.full(len(obs), None, dtype=object)
            ended = np.flatnonzero(info["_final_obs"])
            if len(ended):
                final[ended] = list(FEATURES.expand(np.stack(info["final_obs"][ended])))
            info = {**info, "final_obs": final}
        return FEATURES.expand(obs), rewards, terminated, truncated, info
