"""Stable-Baselines3's MaskablePPO (sb3-contrib) on ``Imperiale-v1`` against the heuristic seat:
the recipe of docs/libraries.md, and the comparison that page reports, the float features
(``obs_type="features"``) beside the bytes, with the same time and seed::

    python benchmarks/sb3_maskable_ppo.py --obs-type features --minutes 10 --seed 0
    python benchmarks/sb3_maskable_ppo.py --obs-type bytes --minutes 10 --seed 0

Each run trains (for ``--minutes``, or ``--timesteps`` learner decisions) on single deals
(``episode="deal"``, the learner's seat drawn at each reset) with the library's default
``MlpPolicy``, then plays its greedy policy against ``random`` and
``heuristic`` on duplicate pairs of single deals (paired 95 % intervals) and prints the rates.
The trained model is an agent of the suite (:class:`MaskablePPOAgent`), so the tournament plays it
like any other; the model is saved to ``--out`` (a new file) when given.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch
from library_recipes import RULES, parse_checked, recipe_parser, report
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_util import make_vec_env

import imperiale_env  # noqa: F401  (registers Imperiale-v1)
from imperiale_agents.policies.heuristic import HeuristicAgent
from imperiale_env.kernels.features import policy_features


def make_env(obs_type: str, n_envs: int, seed: int, wrapper_class: Any = None):
    """``n_envs`` copies of ``Imperiale-v1``: one seat (drawn at each reset) against the heuristic,
    one deal an episode, observations of ``obs_type``."""
    kwargs = dict(rules=RULES, opponent=HeuristicAgent(RULES), episode="deal", seat="random", obs_type=obs_type)
    return make_vec_env("Imperiale-v1", n_envs=n_envs, seed=seed, env_kwargs=kwargs, wrapper_class=wrapper_class)


class _StopAfter(BaseCallback):
    """Ends the training once ``seconds`` have passed (at the next step)."""

    def __init__(self, seconds: float):
        super().__init__()
        self.deadline = time.perf_counter() + seconds

    def _on_step(self) -> bool:
        return time.perf_counter() < self.deadline


def train(obs_type: str, timesteps: int, seed: int, n_envs: int = 8, n_steps: int = 256,
          wrapper_class: Any = None, minutes: float | None = None) -> MaskablePPO:
    """MaskablePPO with the library's defaults but for the rollout size, trained ``timesteps`` steps
    (or until ``minutes`` have passed, whichever comes first)."""
    env = make_env(obs_type, n_envs, seed, wrapper_class)
    model = MaskablePPO("MlpPolicy", env, n_steps=n_steps, batch_size=min(256, n_envs * n_steps), seed=seed,
                        verbose=0)
    stop = _StopAfter(60 * minutes) if minutes else None
    return model.learn(total_timesteps=timesteps, callback=stop)


class MaskablePPOAgent:
    """A trained MaskablePPO model as an agent of the suite: ``act(obs, mask, rng)`` on the
    observation bytes of a batch of games, greedy, the model reading ``obs_type`` as it was trained."""

    def __init__(self, model: MaskablePPO, obs_type: str, name: str = "maskable-ppo"):
        self.model, self.obs_type, self.name = model, obs_type, name

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        x = policy_features(obs) if self.obs_type == "features" else obs
        actions, _ = self.model.predict(x, action_masks=mask, deterministic=True)
        return np.asarray(actions, dtype=np.int64).reshape(len(mask))


def main() -> None:
    parser = recipe_parser(__doc__)
    parser.add_argument("--obs-type", choices=("features", "bytes"), default="features")
    parser.add_argument("--timesteps", type=int, default=10**9, help="learner decisions to train on at most")
    parser.add_argument("--out", help="save the model to this new .zip file (an existing one is refused)")
    args = parse_checked(parser, {"--timesteps": 1})
    out = None
    if args.out:  # checked before ten minutes of training: an existing file is never replaced
        from imperiale_env.core.input_checks import InputError, output_file

        try:
            out = output_file(args.out if args.out.endswith(".zip") else args.out + ".zip", "--out file",
                              may_exist=False)
        except InputError as exc:
            parser.error(str(exc))
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    model = train(args.obs_type, args.timesteps, args.seed, minutes=args.minutes)
    seconds, steps = time.perf_counter() - start, model.num_timesteps
    print(f"MaskablePPO on {args.obs_type}: {steps:,} steps in {seconds:.0f} s ({steps / seconds:.0f} steps/s, "
          f"{args.threads} torch threads), seed {args.seed}")
    if out is not None:
        model.save(out)
    report(MaskablePPOAgent(model, args.obs_type), args)


if __name__ == "__main__":
    main()
