"""The AEC environment in the shape RLlib's action-masking PPO module reads (docs/rllib.md).

RLlib's ``ActionMaskingTorchRLModule`` (``ray.rllib.examples.rl_modules.classes``) expects
every observation to be a dict ``{"observations": ..., "action_mask": ...}`` with a float
mask; PettingZoo classic environments, this one included, give ``{"observation": ...,
"action_mask": int8}``.  :class:`RLlibObservations` renames the key and casts the mask (the
module takes its logarithm) and changes nothing else: same agents, order, rewards, seeds.

:func:`rllib_env` is the env creator RLlib calls (the wrapped env inside RLlib's own
``PettingZooEnv`` adapter, which turns the AEC turn order into multi-agent steps), and
:func:`register` registers it under a name.  Its observations are the float32 features
(``obs_type="features"``, :mod:`imperiale_env.kernels.features`) unless the env config asks for
the bytes: RLlib's default encoders are float layers, which cannot read ``uint8`` input.  Only
those two import Ray; the wrapper needs only PettingZoo, so its logic is tested without RLlib.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseWrapper

from imperiale_env.envs.aec import env as make_env

ENV_NAME = "imperiale"


class RLlibObservations(BaseWrapper):
    """Observations ``{"observations": the wrapped env's observation, "action_mask": float32 0/1}``."""

    def observation_space(self, agent: str) -> spaces.Dict:
        inner = self.env.observation_space(agent)
        mask = inner["action_mask"]
        return spaces.Dict({
            "observations": inner["observation"],
            "action_mask": spaces.Box(0.0, 1.0, shape=mask.shape, dtype=np.float32),
        })

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = self.env.observe(agent)
        return {"observations": obs["observation"], "action_mask": obs["action_mask"].astype(np.float32)}


def rllib_env(config: dict[str, Any] | None = None):
    """RLlib's env creator: ``config`` holds the arguments of :func:`imperiale_env.envs.aec.env`
    (``rules``, ``episode``, ``obs_type``: ``"features"`` unless given).  Returns a ``ray.rllib``
    ``PettingZooEnv``."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    return PettingZooEnv(RLlibObservations(make_env(**{"obs_type": "features", **dict(config or {})})))


def register(name: str = ENV_NAME) -> str:
    """Register :func:`rllib_env` with Ray Tune under ``name`` (what ``PPOConfig().environment(name)`` takes)."""
    from ray.tune.registry import register_env

    register_env(name, rllib_env)
    return name
