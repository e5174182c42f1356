"""Policy and value networks over the observation, with masked logits.

One policy network serves declarations and card play (the phase is in the observation).
The value network is separate so that, with ``critic="perfect"``, it can see every hand
(the observation plus the other players' hands as 36-bit blocks, PerfectDou style) while the
policy sees only its own observation.

Both take the observation's bytes as they come from the engine (``uint8``) and make their
input features on their own device with :class:`Expand` (one-hot categories, scaled counts:
the plan :data:`~imperiale_env.core.observation.FEATURES`, which the numpy forward pass of the
shipped policies follows too), so a rollout moves a quarter of the bytes a float observation
would.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from imperiale_agents.policy_net import MASK_VALUE, sample_actions  # noqa: F401  (the rollout samples with it)
from imperiale_env.core.actions import NUM_ACTIONS
from imperiale_env.core.cards import NUM_CARDS
from imperiale_env.core.observation import FEATURES, OBS_SIZE

#: Extra critic input with ``critic="perfect"``: the hands of relative seats 1 and 2.
HIDDEN_HANDS_SIZE = 2 * NUM_CARDS


def critic_input_size(critic: str) -> int:
    """The critic's first layer width: the observation's features, plus the other hands with
    ``critic="perfect"``."""
    return FEATURES.size + (HIDDEN_HANDS_SIZE if critic == "perfect" else 0)


def critic_input(obs: torch.Tensor, hidden: torch.Tensor | None) -> torch.Tensor:
    """What :meth:`ActorCritic.value` reads: the observation bytes alone, or with the perfect
    critic's hidden hands after them (as float32)."""
    return obs if hidden is None else torch.cat([obs.float(), hidden.float()], dim=1)


class Expand(nn.Module):
    """``(B, OBS_SIZE)`` observation bytes -> ``(B, FEATURES.size)`` float32 features on the
    module's device.  Its tables are not saved with the weights (they come from the layout)."""

    def __init__(self):
        super().__init__()
        for name in ("category_columns", "category_base", "category_low", "scalar_columns", "scalar_features",
                     "scalar_scale"):
            self.register_buffer(name, torch.as_tensor(getattr(FEATURES, name)), persistent=False)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        out = torch.zeros((obs.shape[0], FEATURES.size), dtype=torch.float32, device=obs.device)
        out[:, self.scalar_features] = obs[:, self.scalar_columns].float() * self.scalar_scale
        index = self.category_base + obs[:, self.category_columns].long() - self.category_low
        return out.scatter_(1, index, 1.0)


def _mlp(sizes: list[int], activation: str, out_std: float) -> nn.Sequential:
    act = {"relu": nn.ReLU, "tanh": nn.Tanh}[activation]
    layers: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        lin = nn.Linear(sizes[i], sizes[i + 1])
        last = i == len(sizes) - 2
        nn.init.orthogonal_(lin.weight, out_std if last else np.sqrt(2))
        nn.init.zeros_(lin.bias)
        layers.append(lin)
        if not last:
            layers.append(act())
    return nn.Sequential(*layers)


class Policy(nn.Module):
    """Observation -> 43 logits (unmasked); :func:`masked_logits` applies the legal mask."""

    def __init__(self, hidden: tuple[int, ...] = (256, 256), activation: str = "relu"):
        super().__init__()
        self.expand = Expand()
        self.net = _mlp([FEATURES.size, *hidden, NUM_ACTIONS], activation, 0.01)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return masked_logits(self.net(self.expand(obs)), mask)


class ActorCritic(nn.Module):
    def __init__(self, hidden: tuple[int, ...] = (256, 256), activation: str = "relu", critic: str = "plain"):
        super().__init__()
        self.hidden, self.activation, self.critic_kind = tuple(hidden), activation, critic
        self.actor = Policy(hidden, activation)
        self.expand = Expand()
        self.critic = _mlp([critic_input_size(critic), *hidden, 1], activation, 1.0)

    def logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.actor(obs, mask)

    def value(self, critic_obs: torch.Tensor) -> torch.Tensor:
        """The value of ``critic_obs``: the observation bytes, followed with ``critic="perfect"``
        by the other hands (the whole row then float32)."""
        x = self.expand(critic_obs[:, :OBS_SIZE])
        if critic_obs.shape[1] > OBS_SIZE:
            x = torch.cat([x, critic_obs[:, OBS_SIZE:].float()], dim=1)
        return self.critic(x).squeeze(-1)

    def evaluate(self, obs, mask, critic_obs, actions):
        """(log-prob of ``actions``, entropy, value) for the PPO loss."""
        logits = self.logits(obs, mask)
        logp_all = torch.log_softmax(logits, dim=-1)
        logp = logp_all.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
        probs = logp_all.exp()
        entropy = -(probs * logp_all).sum(-1)  # illegal: p = 0 and a finite logit, so 0 * x = 0
        return logp, entropy, self.value(critic_obs)


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return logits.masked_fill(~mask, MASK_VALUE)
