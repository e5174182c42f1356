"""A trained policy as an agent: ``NeuralAgent(path)`` loads a checkpoint written by ``imperiale train``
or a policy exported from one (``imperiale export``, the form of the shipped champions).

The agent sees only the observation and the legal mask (the policy network; a ``perfect``
critic's extra inputs are not used to act).  Batched: one forward pass per call, then the
masked argmax (``greedy=True``) or a masked sample drawn with the generator handed to ``act``.
"""

from __future__ import annotations

import numpy as np
import torch

from imperiale_env.core.observation import OBS_SIZE


class PolicyAgent:
    """An in-memory :class:`imperiale_train.model.Policy` as an :class:`imperiale_agents.base.Agent`."""

    def __init__(self, policy, *, greedy: bool = True, device: str | torch.device = "cpu", name: str = "neural"):
        self.policy, self.greedy, self.name = policy, greedy, name
        self.device = torch.device(device)

    def reset(self) -> None:
        pass

    @torch.no_grad()
    def _logits(self, obs: np.ndarray, mask: np.ndarray) -> tuple[torch.Tensor, np.ndarray]:
        """The masked logits of a batch (in evaluation mode, the module's mode restored after), and
        the mask as a ``(B, 43)`` bool array."""
        obs = np.asarray(obs, dtype=np.float32).reshape(-1, OBS_SIZE)
        mask = np.asarray(mask, dtype=bool).reshape(len(obs), -1)
        was_training = self.policy.training
        self.policy.eval()
        logits = self.policy(torch.from_numpy(obs).to(self.device), torch.from_numpy(mask).to(self.device))
        self.policy.train(was_training)
        return logits.float(), mask

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        from imperiale_train.model import sample_actions

        if not len(np.asarray(obs).reshape(-1, OBS_SIZE)):
            return np.zeros(0, dtype=np.int64)
        logits, _ = self._logits(obs, mask)
        if not self.greedy and rng is None:
            rng = np.random.default_rng()
        return sample_actions(logits.cpu().numpy(), rng, greedy=self.greedy).astype(np.int64)

    def log_probs(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """``(B, 43)`` log-probabilities of the policy's distribution over the legal actions
        (``-inf`` for the others), greedy or not: how likely it finds each play, which is what an
        opponent model needs (:mod:`imperiale_agents.inference`)."""
        logits, mask = self._logits(obs, mask)
        return np.where(mask, torch.log_softmax(logits, dim=-1).cpu().numpy(), -np.inf)


class NeuralAgent(PolicyAgent):
    """The policy of ``path``, a training checkpoint or an exported policy file (:mod:`imperiale_train.export`);
    raises ``imperiale_train.checkpoint.CheckpointError`` on a bad file.

    ``rules``: the rules it will play (optional); ``self.train_rules`` holds the rules record it
    was trained under, ``self.provenance`` how it was trained (seed, iteration, ...).
    """

    def __init__(self, path, greedy: bool = True, device: str = "cpu", rules=None):
        from imperiale_train.export import load_policy

        loaded = load_policy(path, map_location=device)
        self.config = loaded.config
        self.train_rules = loaded.rules
        self.provenance = loaded.provenance
        self.iteration = int(loaded.provenance["iteration"])
        self.play_rules = rules
        super().__init__(loaded.actor.to(device), greedy=greedy, device=device, name=f"neural:{path}")
