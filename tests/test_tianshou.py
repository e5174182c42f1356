"""The Tianshou recipe (docs/libraries.md, ``benchmarks/tianshou_ppo.py``): Tianshou's PPO trains on
``Imperiale-v1`` with the float features and with the bytes, takes only legal actions, reads the
mask of the observation it acts on, and its actor plays in the suite's tournament as an agent."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from helpers import Counted, load_recipe

recipe = load_recipe("tianshou_ppo")


@pytest.mark.parametrize("obs_type", ["features", "bytes"])
def test_tianshou_ppo_trains_legally_and_plays_in_the_tournament(obs_type):
    import torch

    from imperiale_env.core.rules import make_rules
    from imperiale_train.evaluate import evaluate

    torch.set_num_threads(1)
    Counted.clear()
    algorithm, steps = recipe.train(obs_type, steps=1024, seed=0, envs=2, steps_per_collect=512, minibatch=128,
                                    wrapper_class=Counted)
    assert steps >= 1024 and Counted.steps >= 1024 and Counted.episodes > 0 and Counted.illegal == 0
    rates = evaluate(recipe.TianshouAgent(algorithm.policy.actor, obs_type), make_rules("academie"), ("random",),
                     groups=2, seed=1, single_deal=True)  # the tournament refuses an illegal action
    assert rates["random"]["games"] == 4


def test_the_mask_travels_with_its_observation():
    """Every observation of the wrapped env holds the mask of that very decision, in its space."""
    env = recipe.make_env("features")
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(60):
        assert env.observation_space.contains(obs)
        legal = env.unwrapped.action_masks()
        assert np.array_equal(obs["action_mask"].astype(bool), legal)
        obs, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(legal))))
        if terminated or truncated:
            obs, _ = env.reset()
    env.close()


def test_the_actor_never_gives_an_illegal_action_weight():
    """The masked logits: an untrained actor's distribution puts no probability on an illegal action."""
    import torch
    from tianshou.data import Batch

    algorithm = recipe.make_algorithm(836, gymnasium.spaces.Discrete(43))
    rng = np.random.default_rng(0)
    mask = rng.random((64, 43)) < 0.2
    mask[np.arange(64), rng.integers(0, 43, 64)] = True
    logits, _ = algorithm.policy.actor(Batch(observation=rng.random((64, 836), dtype=np.float32), action_mask=mask))
    probabilities = torch.softmax(logits, -1).detach().numpy()
    assert probabilities[~mask].max() == 0.0 and np.allclose(probabilities.sum(-1), 1.0)
