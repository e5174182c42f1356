"""Tianshou's PPO on ``Imperiale-v1`` against the heuristic seat: the recipe of docs/libraries.md, with
the float features (``obs_type="features"``) or the bytes, the same time and seed::

    python benchmarks/tianshou_ppo.py --obs-type features --minutes 10 --seed 0

Tianshou's own pieces, as its documentation shows them: eight envs in a ``DummyVectorEnv``, its
default MLP (``Net``) under a ``DiscreteActor`` and a ``DiscreteCritic``, a ``DiscreteActorPolicy``,
the ``PPO`` algorithm, a ``Collector`` with a ``VectorReplayBuffer`` and the on-policy trainer run
epoch by epoch until the time is spent.

One thing a card game asks of Tianshou: the legal mask must travel *with* the observation.
Tianshou stores beside each transition the ``info`` of the step that produced the *next*
observation, so a mask read from ``info`` at update time would be the next decision's.
:class:`MaskInObservation` puts the mask into a ``Dict`` observation (the form of PettingZoo's
classic games), which Tianshou hands to the networks as a ``Batch``; the actor sets the
logits of the illegal actions to the lowest float, so no illegal action is ever drawn and the
PPO ratio is taken over the legal ones.  The trained actor is an agent of the suite
(:class:`TianshouAgent`), played in the tournament on duplicate pairs of single deals against
``random`` and ``heuristic``.
"""

from __future__ import annotations

import time
from typing import Any

import gymnasium
import numpy as np
import torch
from gymnasium import spaces
from library_recipes import RULES, parse_checked, recipe_parser, train_and_report
from tianshou.algorithm import PPO
from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.trainer import OnPolicyTrainerParams
from tianshou.utils.net.common import Net
from tianshou.utils.net.discrete import DiscreteActor, DiscreteCritic

import imperiale_env  # noqa: F401  (registers Imperiale-v1)
from imperiale_agents.policies.heuristic import HeuristicAgent
from imperiale_env.core.actions import NUM_ACTIONS
from imperiale_env.kernels.features import policy_features


class MaskInObservation(gymnasium.ObservationWrapper):
    """``Imperiale-v1`` with a ``Dict`` observation: ``observation`` (the env's own, bytes or
    features) and ``action_mask`` ((43,) int8, the legal actions of that observation)."""

    def __init__(self, env: gymnasium.Env):
        super().__init__(env)
        self.observation_space = spaces.Dict({
            "observation": env.observation_space,
            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8)})

    def observation(self, observation: np.ndarray) -> dict[str, np.ndarray]:
        return {"observation": observation, "action_mask": self.env.unwrapped.action_masks().astype(np.int8)}


def make_env(obs_type: str, wrapper_class: Any = None) -> gymnasium.Env:
    """One ``Imperiale-v1`` (one seat drawn at each reset against the heuristic, one deal an episode)
    with the mask in its observation."""
    env = gymnasium.make("Imperiale-v1", rules=RULES, opponent=HeuristicAgent(RULES), episode="deal", seat="random",
                         obs_type=obs_type)
    if wrapper_class is not None:
        env = wrapper_class(env)
    return MaskInObservation(env)


class MaskedActor(DiscreteActor):
    """Tianshou's discrete actor over ``obs.observation``, its illegal actions' logits at the lowest
    float (Tianshou's ``Net`` casts the bytes to float32 itself)."""

    def forward(self, obs: Any, state: Any = None, info: Any = None) -> tuple[torch.Tensor, Any]:
        logits, hidden = super().forward(obs.observation, state, info)
        legal = torch.as_tensor(obs.action_mask, dtype=torch.bool, device=logits.device)
        return logits.masked_fill(~legal, torch.finfo(logits.dtype).min), hidden


class ObservationCritic(DiscreteCritic):
    """Tianshou's critic over ``obs.observation`` (the mask is the actor's business)."""

    def forward(self, obs: Any, state: Any = None, info: Any = None) -> torch.Tensor:
        return super().forward(obs.observation, state, info)


def make_algorithm(obs_size: int, action_space: spaces.Discrete, lr: float = 3e-4,
                   cells: tuple[int, ...] = (256, 256)) -> PPO:
    """Tianshou's PPO with a masked categorical actor and a critic, each its default MLP."""
    actor = MaskedActor(preprocess_net=Net(state_shape=obs_size, hidden_sizes=cells), action_shape=NUM_ACTIONS,
                        softmax_output=False)
    critic = ObservationCritic(preprocess_net=Net(state_shape=obs_size, hidden_sizes=cells))
    policy = DiscreteActorPolicy(actor=actor, action_space=action_space, deterministic_eval=True)
    return PPO(policy=policy, critic=critic, optim=AdamOptimizerFactory(lr=lr), eps_clip=0.2, ent_coef=0.01,
               max_grad_norm=0.5, gae_lambda=0.95, gamma=1.0)


def train(obs_type: str, steps: int, seed: int, envs: int = 8, steps_per_collect: int = 2048, repeats: int = 4,
          minibatch: int = 256, wrapper_class: Any = None, minutes: float | None = None) -> tuple[PPO, int]:
    """PPO for ``steps`` learner decisions (or until ``minutes`` have passed, checked after each
    collect-and-update); the algorithm (its ``policy.actor`` is the trained actor) and the steps taken."""
    torch.manual_seed(seed)
    train_envs = DummyVectorEnv([lambda: make_env(obs_type, wrapper_class) for _ in range(envs)])
    train_envs.seed([seed * envs + k for k in range(envs)])
    probe = make_env(obs_type)
    algorithm = make_algorithm(probe.observation_space["observation"].shape[0], probe.action_space)
    probe.close()
    collector = Collector(algorithm, train_envs, VectorReplayBuffer(steps_per_collect, envs))
    trainer = algorithm.create_trainer(OnPolicyTrainerParams(
        training_collector=collector, test_collector=None, max_epochs=10**9, epoch_num_steps=steps_per_collect,
        collection_step_num_env_steps=steps_per_collect, update_step_num_repetitions=repeats, batch_size=minibatch,
        test_step_num_episodes=0, show_progress=False, verbose=False))
    trainer.reset()
    deadline = None if minutes is None else time.perf_counter() + 60 * minutes
    done = 0
    while done < steps and (deadline is None or time.perf_counter() < deadline):
        done = trainer.execute_epoch().info_stat.train_step
    train_envs.close()
    return algorithm, done


class TianshouAgent:
    """A trained Tianshou actor as an agent of the suite: ``act(obs, mask, rng)`` on the observation
    bytes of a batch of games, greedy over the legal actions."""

    def __init__(self, actor: MaskedActor, obs_type: str, name: str = "tianshou-ppo"):
        self.actor, self.obs_type, self.name = actor, obs_type, name

    @torch.no_grad()
    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        from tianshou.data import Batch

        x = policy_features(obs) if self.obs_type == "features" else obs
        logits, _ = self.actor(Batch(observation=x, action_mask=mask))
        return logits.argmax(-1).numpy().astype(np.int64)


def main() -> None:
    parser = recipe_parser(__doc__)
    parser.add_argument("--obs-type", choices=("features", "bytes"), default="features")
    parser.add_argument("--steps", type=int, default=10**9, help="learner decisions to train on at most")
    args = parse_checked(parser, {"--steps": 2048})
    train_and_report("Tianshou PPO", args, lambda: train(args.obs_type, args.steps, args.seed, minutes=args.minutes),
                     lambda algorithm: TianshouAgent(algorithm.policy.actor, args.obs_type))

if __name__ == "__main__":
    main()
