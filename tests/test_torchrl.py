"""The TorchRL recipe (docs/libraries.md, ``benchmarks/torchrl_ppo.py``): TorchRL's PPO trains on
``Imperiale-v1`` with the float features and with the bytes, takes only legal actions, and its actor
plays in the suite's tournament; the vector env and the AEC env pass TorchRL's spec check."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import Counted, load_recipe

recipe = load_recipe("torchrl_ppo")


@pytest.mark.parametrize("obs_type", ["features", "bytes"])
def test_torchrl_ppo_trains_legally_and_plays_in_the_tournament(obs_type):
    import torch

    from imperiale_env.core.rules import make_rules
    from imperiale_train.evaluate import evaluate

    torch.set_num_threads(1)
    Counted.clear()
    actor, frames = recipe.train(obs_type, frames=1024, seed=0, frames_per_batch=512, wrapper_class=Counted)
    assert frames == 1024 and Counted.steps >= 1024 and Counted.episodes > 0 and Counted.illegal == 0
    rates = evaluate(recipe.TorchRLAgent(actor, obs_type), make_rules("academie"), ("random",), groups=2, seed=1,
                     single_deal=True)  # the tournament refuses an illegal action
    assert rates["random"]["games"] == 4


def test_the_aec_env_under_torchrl_takes_only_legal_actions():
    from torchrl.envs.utils import check_env_specs

    env = recipe.aec_env("features")
    check_env_specs(env)
    rollout = env.rollout(200)  # TorchRL's random actions, drawn within each seat's mask
    acted = 0
    for group in ("player_0", "player_1"):
        acting = rollout[group, "mask"].squeeze(-1)
        actions = rollout[group, "action"].squeeze(-1)[acting]
        masks = rollout[group, "action_mask"].squeeze(-2)[acting]
        assert masks[np.arange(len(actions)), actions].all()
        acted += int(acting.sum())
    assert acted == len(rollout)  # one seat acts at each step


def run_main_script(folder: Path, body: str) -> str:
    """Run ``body`` (the code of a ``__main__`` block, 4 spaces in) as a script file in a new
    interpreter and return what it printed; the vector env starts processes that import the main
    script, so it is a file, not ``-c``, and its top level only imports."""
    import subprocess

    benchmarks = str(Path(__file__).resolve().parent.parent / "benchmarks")
    script = folder / "torchrl_vector.py"
    script.write_text(f"import sys\nsys.path.insert(0, {benchmarks!r})\nimport imperiale_env\n"
                      f"if __name__ == '__main__':\n{body}")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_a_vector_env_passes_torchrls_spec_check(tmp_path):
    """``GymEnv("Imperiale-v1", num_envs=3)``: TorchRL's check that every step stays in the declared
    specs (the zero-filled final observation of an ended game included)."""
    out = run_main_script(tmp_path, "    from torchrl.envs import GymEnv\n"
                                    "    from torchrl.envs.utils import check_env_specs\n"
                                    "    for obs_type in ('bytes', 'features'):\n"
                                    "        env = GymEnv('Imperiale-v1', num_envs=3, obs_type=obs_type)\n"
                                    "        check_env_specs(env)\n"
                                    "        env.close()\n"
                                    "    print('specs checked')\n")
    assert "specs checked" in out


def test_torchrl_ppo_trains_on_a_gymnasium_vector_env(tmp_path):
    """The recipe with ``num_envs=2``: Gymnasium's async vector env (resets left to TorchRL), every
    action within its mask (the training loop checks each batch), a few updates."""
    out = run_main_script(tmp_path, "    import torch\n    import torchrl_ppo\n    torch.set_num_threads(1)\n"
                                    "    actor, frames = torchrl_ppo.train('features', frames=1024, seed=0, "
                                    "frames_per_batch=512, num_envs=2)\n"
                                    "    print('trained', frames)\n")
    assert "trained 1024" in out
