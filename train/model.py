"""The policy and value networks: one trunk over the features, a policy head and a value head.

The networks read the features of :mod:`imperiale_env.kernels.features` (version 2: the trick in
progress, the unseen cards, what each seat may hold...), float32 rows computed once per decision
from the observation's bytes, never by the network itself: the rollout makes them for its forward
pass, and the update makes them once per sample, shared by the actor, the critic and every epoch.

The trunk (``hidden`` ReLU layers) is shared by the policy head (43 logits, one per action: the
phase is in the features, so declarations and cards share one output) and the value head, so a
decision costs one pass of the trunk.  With ``critic="perfect"`` the value head also reads the
other players' hands (two 36-card blocks, PerfectDou style) through a layer of its own; the
policy never sees them.  docs/training.md has the comparisons that chose this shape.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from imperiale_agents.policies.policy_net import MASK_VALUE, sample_actions  # noqa: F401  (the rollout samples with it)
from imperiale_env.core.actions import NUM_ACTIONS
from imperiale_env.core.cards import NUM_CARDS
from imperiale_env.kernels.features import FEATURE_SIZE

#: Extra value-head input with ``critic="perfect"``: the hands of relative seats 1 and 2.
HIDDEN_HANDS_SIZE = 2 * NUM_CARDS


def _linear(n_in: int, n_out: int, std: float) -> nn.Linear:
    lin = nn.Linear(n_in, n_out)
    nn.init.orthogonal_(lin.weight, std)
    nn.init.zeros_(lin.bias)
    return lin


def _activation(name: str) -> nn.Module:
    return {"relu": nn.ReLU, "tanh": nn.Tanh}[name]()


class Policy(nn.Module):
    """Features -> 43 logits, masked.  ``net`` is the trunk's layers then the head (the layers an
    exported policy holds, :mod:`imperiale_train.export`)."""

    def __init__(self, hidden: tuple[int, ...] = (256, 256), activation: str = "relu"):
        super().__init__()
        layers: list[nn.Module] = []
        width = FEATURE_SIZE
        for h in hidden:
            layers += [_linear(width, h, np.sqrt(2)), _activation(activation)]
            width = h
        layers.append(_linear(width, NUM_ACTIONS, 0.01))
        self.net = nn.Sequential(*layers)

    def trunk(self, x: torch.Tensor) -> torch.Tensor:
        """The last hidden layer's output of features ``x``: what both heads read."""
        return self.net[:-1](x)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return masked_logits(self.net(x), mask)


class ActorCritic(nn.Module):
    """The policy (:class:`Policy`, its trunk shared) and a value head on the trunk's output."""

    def __init__(self, hidden: tuple[int, ...] = (256, 256), activation: str = "relu", critic: str = "plain"):
        super().__init__()
        self.hidden, self.activation, self.critic_kind = tuple(hidden), activation, critic
        self.actor = Policy(hidden, activation)
        width = self.hidden[-1]
        if critic == "perfect":
            self.critic = nn.Sequential(_linear(width + HIDDEN_HANDS_SIZE, width, np.sqrt(2)), _activation(activation),
                                        _linear(width, 1, 1.0))
        else:
            self.critic = _linear(width, 1, 1.0)

    def logits(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.actor(x, mask)

    def _value(self, z: torch.Tensor, hidden: torch.Tensor | None) -> torch.Tensor:
        if self.critic_kind == "perfect":
            z = torch.cat([z, hidden], dim=1)
        return self.critic(z).squeeze(-1)

    def value(self, x: torch.Tensor, hidden: torch.Tensor | None = None) -> torch.Tensor:
        """The value of features ``x`` (and with ``critic="perfect"`` the other hands ``hidden``)."""
        return self._value(self.actor.trunk(x), hidden)

    def logits_and_value(self, x: torch.Tensor, mask: torch.Tensor,
                         hidden: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        """The masked logits and the value of features ``x``, from one pass of the trunk (the rollout's)."""
        z = self.actor.trunk(x)
        return masked_logits(self.actor.net[-1](z), mask), self._value(z, hidden)

    def evaluate(self, x: torch.Tensor, mask: torch.Tensor, hidden: torch.Tensor | None, actions: torch.Tensor):
        """(log-prob of ``actions``, entropy, value) for the PPO loss, from one pass of the trunk."""
        z = self.actor.trunk(x)
        logp_all = torch.log_softmax(masked_logits(self.actor.net[-1](z), mask), dim=-1)
        logp = logp_all.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
        entropy = -(logp_all.exp() * logp_all).sum(-1)  # illegal: p = 0 and a finite logit, so 0 * x = 0
        return logp, entropy, self._value(z, hidden)


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return logits.masked_fill(~mask, MASK_VALUE)
