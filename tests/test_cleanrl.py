"""The CleanRL-style recipe (docs/libraries.md, ``benchmarks/cleanrl_ppo.py``): PPO in one file over the
self-play vector env, its advantages along each seat's own decisions, a few updates that take only legal
actions (the vector env refuses an illegal one), and the trained network in the tournament."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import load_recipe

recipe = load_recipe("cleanrl_ppo")


def test_the_advantage_follows_each_seats_own_decisions():
    """Seats 0, 1, 0, 1 in one game that ends after the fourth decision, seat 1 winning (+1, seat 0 -1):
    with gamma = lambda = 1 each decision's advantage is its seat's final reward less its value."""
    values = np.array([[0.1], [0.2], [0.3], [0.4]], np.float32)
    seats = np.array([[0], [1], [0], [1]])
    rewards = np.zeros((4, 1, 2), np.float32)
    rewards[3, 0] = [-1, 1]
    dones = np.array([[False], [False], [False], [True]])
    adv, valid = recipe.advantages(values, seats, rewards, dones, np.array([0.5], np.float32), np.array([0]), 2,
                                   1.0, 1.0)
    assert adv.ravel() == pytest.approx([-1.1, 0.8, -1.3, 0.6]) and valid.all()
    # a game cut by the rollout's end: the acting seat (0) is bootstrapped from its value, the other
    # seat's decision has no known future and is left out
    adv, valid = recipe.advantages(values[:2], seats[:2], rewards[:2], dones[:2], np.array([0.5], np.float32),
                                   np.array([0]), 2, 1.0, 1.0)
    assert adv[0, 0] == pytest.approx(0.5 - 0.1) and valid.ravel().tolist() == [True, False]


def test_cleanrl_ppo_trains_legally_and_plays_in_the_tournament():
    import torch

    from imperiale_env.core.rules import make_rules
    from imperiale_train.evaluate import evaluate

    torch.set_num_threads(1)
    torch.manual_seed(0)  # the network train() starts from, with seed 0
    before = [p.detach().clone() for p in recipe.Agent().parameters()]
    agent, learned = recipe.train(recipe.Args(iterations=3, num_envs=8, num_steps=32))
    assert 3 * 8 * 31 <= learned <= 3 * 8 * 32  # at most one cut decision an env and rollout left out
    assert any(not torch.equal(a, b) for a, b in zip(before, agent.parameters(), strict=True))  # it learned
    rates = evaluate(recipe.CleanRLAgent(agent), make_rules("academie"), ("random",), groups=2, seed=1,
                     single_deal=True)  # the tournament refuses an illegal action
    assert rates["random"]["games"] == 4


def test_no_minibatch_holds_a_single_decision():
    """A minibatch of one decision has no spread to normalise its advantage by (NaN weights): the
    split the fresh-venv run of the docs' recipe met (505 valid decisions in 8 parts)."""
    import torch

    for size in (2, 3, 9, 17, 505, 1024):
        parts = recipe.minibatches(size, 8)
        assert all(len(p) >= 2 for p in parts) and len(parts) <= 8
        assert sorted(torch.cat(parts).tolist()) == list(range(size))
