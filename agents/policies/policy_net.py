"""The policy network's forward pass in numpy: how a trained policy plays without torch.

Training builds the network with torch (:mod:`imperiale_train.model`); to play, the same
computation is a few matrix products, so the shipped champion and every exported policy play in
the core install.  The layers are kept in float32, as torch computes them, so that the greedy
action is the torch one (tests/test_policy_net.py compares them decision by decision).  The
first layer reads the features of the observation's bytes
(:func:`~imperiale_env.kernels.features.policy_features`, feature version 2: what training makes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from imperiale_env.core.observation import OBS_SIZE
from imperiale_env.kernels.features import policy_features

#: Logit given to illegal actions: exp(MASK_VALUE - max) is exactly 0 in float32, so a masked
#: softmax, argmax or Gumbel-max sample never selects an illegal action.
MASK_VALUE = -1e9

#: The hidden-layer activations a policy file may name.
ACTIVATIONS = ("relu", "tanh")


@dataclass(frozen=True)
class PolicyNet:
    """A multilayer perceptron: ``layers[i] = (weight (out, in), bias (out,))``, the activation
    between layers and none after the last (the logits), over the observation's features."""

    layers: tuple[tuple[np.ndarray, np.ndarray], ...]
    activation: str

    @property
    def input_size(self) -> int:
        """The first layer's width (:data:`~imperiale_env.kernels.features.FEATURE_SIZE`)."""
        return self.layers[0][0].shape[1]

    @property
    def hidden(self) -> tuple[int, ...]:
        return tuple(w.shape[0] for w, _ in self.layers[:-1])

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """``(B, actions)`` float32 logits of the observations ``obs`` ``(B, OBS_SIZE)``, illegal actions
        at :data:`MASK_VALUE`."""
        x = forward(self.layers, self.activation, policy_features(np.asarray(obs).reshape(-1, OBS_SIZE)))
        return np.where(np.asarray(mask, dtype=bool), x, np.float32(MASK_VALUE)).astype(np.float32, copy=False)


def forward(layers: tuple[tuple[np.ndarray, np.ndarray], ...], activation: str, x: np.ndarray) -> np.ndarray:
    """The outputs of the layers ``(weight (out, in), bias (out,))`` on the float32 inputs ``x``
    ``(B, in)``, ``activation`` between layers: the forward pass of the policies and of the belief
    model alike."""
    last = len(layers) - 1
    for i, (weight, bias) in enumerate(layers):
        x = x @ weight.T + bias
        if i < last:
            x = np.maximum(x, 0.0) if activation == "relu" else np.tanh(x)
    return x


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise log-probabilities, computed stably (the max subtracted first)."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def sample_actions(logits: np.ndarray, rng: np.random.Generator | None, greedy: bool = False) -> np.ndarray:
    """Masked sampling (Gumbel-max with numpy noise, so it is deterministic for the rng state
    whatever the torch device) or argmax; ``logits`` already masked."""
    if greedy:
        return logits.argmax(axis=1)
    u = rng.random(logits.shape, dtype=np.float32)
    gumbel = -np.log(-np.log(np.clip(u, 1e-20, 1.0 - 1e-7)))
    return (logits + gumbel).argmax(axis=1)
