"""Trained policies as agents.

:class:`NeuralAgent` plays the policy of a file: an exported policy (``.npz``, the form of the
shipped champions; numpy only, no torch) or a training checkpoint written by ``imperiale train``
(read with torch when it is installed).  Either way the network runs in numpy
(:mod:`imperiale_agents.policies.policy_net`), so a bot plays the same moves in the core install as in a
training environment.  :class:`PolicyAgent` wraps a torch network held in memory, which is how
training evaluates the policy it is learning.

Both see only the observation and the legal mask (a ``perfect`` critic's extra inputs are not
used to act).  Batched: one forward pass per call, then the masked argmax (``greedy=True``) or a
masked sample drawn with the generator handed to ``act``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from imperiale_agents.policies.policy_file import read_policy
from imperiale_agents.policies.policy_net import log_softmax, sample_actions
from imperiale_env.core.observation import OBS_SIZE, OBS_VERSION
from imperiale_env.kernels.features import policy_features


def _rows(obs: np.ndarray) -> np.ndarray:
    """``obs`` as ``(B, OBS_SIZE)`` rows; a clear error for rows of another width (an observation
    of another version)."""
    obs = np.asarray(obs)
    if obs.shape[-1:] != (OBS_SIZE,):
        raise ValueError(f"observations are rows of {OBS_SIZE} (version {OBS_VERSION}), got shape {obs.shape}")
    return obs.reshape(-1, OBS_SIZE)


class _LogitsAgent:
    """What both agents share: acting and log-probabilities from masked logits."""

    greedy: bool

    def reset(self) -> None:
        pass

    def _masked_logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        obs = _rows(obs)
        if not len(obs):
            return np.zeros(0, dtype=np.int64)
        mask = np.asarray(mask, dtype=bool).reshape(len(obs), -1)
        if not self.greedy and rng is None:
            rng = np.random.default_rng()
        return sample_actions(self._masked_logits(obs, mask), rng, greedy=self.greedy).astype(np.int64)

    def log_probs(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """``(B, 43)`` log-probabilities of the policy's distribution over the legal actions
        (``-inf`` for the others), greedy or not: how likely it finds each play, which is what an
        opponent model needs (:mod:`imperiale_agents.search.play_likelihood`)."""
        obs = _rows(obs)
        mask = np.asarray(mask, dtype=bool).reshape(len(obs), -1)
        return np.where(mask, log_softmax(self._masked_logits(obs, mask)), -np.inf)


class NeuralAgent(_LogitsAgent):
    """The policy of ``path``, an exported policy file or a training checkpoint; raises
    :class:`imperiale_agents.policies.policy_file.CheckpointError` on a bad file.

    ``rules``: the rules it will play (optional); ``self.train_rules`` holds the rules record it
    was trained under, ``self.config`` the run's configuration (a dict), ``self.provenance`` how
    it was trained (seed, iteration, ...).
    """

    def __init__(self, path, greedy: bool = True, rules: Any = None):
        loaded = read_policy(path)
        self.net = loaded.net
        self.config = loaded.config
        self.train_rules = loaded.rules
        self.provenance = loaded.provenance
        self.iteration = int(loaded.provenance.get("iteration", 0))
        self.play_rules = rules
        self.greedy = greedy
        self.name = f"neural:{path}"

    def _masked_logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return self.net.logits(obs, mask)


class PolicyAgent(_LogitsAgent):
    """An in-memory torch :class:`imperiale_train.model.Policy` as an agent (training's evaluations
    and opponents).  torch is imported here only, so the module loads without it."""

    def __init__(self, policy, *, greedy: bool = True, device: Any = "cpu", name: str = "neural"):
        import torch

        self.policy, self.greedy, self.name = policy, greedy, name
        self.device = torch.device(device)

    def _masked_logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        import torch

        with torch.no_grad():
            was_training = self.policy.training
            self.policy.eval()
            x = torch.from_numpy(policy_features(obs)).to(self.device)
            logits = self.policy(x, torch.from_numpy(mask).to(self.device))
            self.policy.train(was_training)
        return logits.float().cpu().numpy()
