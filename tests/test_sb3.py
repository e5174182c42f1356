"""The Stable-Baselines3 recipe (docs/libraries.md, ``benchmarks/sb3_maskable_ppo.py``): sb3-contrib's
MaskablePPO trains on ``Imperiale-v1`` with the float features and with the bytes, takes only
legal actions, and its model plays in the suite's tournament as an agent."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import Counted, load_recipe

ROOT = Path(__file__).resolve().parent.parent
recipe = load_recipe("sb3_maskable_ppo")


@pytest.mark.parametrize("obs_type", ["features", "bytes"])
def test_maskable_ppo_trains_legally_and_plays_in_the_tournament(obs_type):
    import torch

    from imperiale_env.core.rules import make_rules
    from imperiale_train.evaluate import evaluate

    torch.set_num_threads(1)
    Counted.clear()
    model = recipe.train(obs_type, timesteps=256, seed=0, n_envs=2, n_steps=64, wrapper_class=Counted)
    assert Counted.steps >= 256 and Counted.episodes > 0 and Counted.illegal == 0
    space = model.observation_space
    assert space.dtype == (np.float32 if obs_type == "features" else np.uint8)
    rates = evaluate(recipe.MaskablePPOAgent(model, obs_type), make_rules("academie"), ("random",), groups=2,
                     seed=1, single_deal=True)  # the tournament refuses an illegal action
    assert rates["random"]["games"] == 4


def test_the_recipe_refuses_an_existing_model_file_before_training(tmp_path):
    import subprocess

    taken = tmp_path / "model.zip"
    taken.write_bytes(b"mine")
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "sb3_maskable_ppo.py"), "--out",
                           str(tmp_path / "model"), "--minutes", "10"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "exists already; it is not overwritten" in done.stderr, done.stderr
    assert taken.read_bytes() == b"mine"
