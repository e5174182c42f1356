"""TorchRL's PPO on ``Imperiale-v1`` against the heuristic seat: the recipe of docs/libraries.md, with
the float features (``obs_type="features"``) or the bytes, the same time and seed::

    python benchmarks/torchrl_ppo.py --obs-type features --minutes 10 --seed 0

TorchRL's own pieces, each as its documentation shows it: ``GymWrapper`` over the Gymnasium env (the
legal mask read from ``info`` with ``default_info_dict_reader``), a ``ProbabilisticActor`` with a
``MaskedCategorical`` over an ``MLP``, a ``ValueOperator``, the ``Collector``, ``GAE`` and
``ClipPPOLoss``.  The trained actor is an agent of the suite (:class:`TorchRLAgent`), played in the
tournament on duplicate pairs of single deals against ``random`` and ``heuristic``.

The AEC env goes through TorchRL's ``PettingZooWrapper`` as it is (``use_mask=True``): its specs pass
TorchRL's check and a rollout takes only legal actions (:func:`aec_env`, tested).
"""

from __future__ import annotations

import time
from typing import Any

import gymnasium
import numpy as np
import torch
from library_recipes import RULES, parse_checked, recipe_parser, train_and_report
from tensordict.nn import TensorDictModule, TensorDictSequential
from torchrl.collectors import Collector
from torchrl.data import Binary
from torchrl.envs import DTypeCastTransform, EnvBase, GymWrapper, PettingZooWrapper, TransformedEnv
from torchrl.envs.gym_like import default_info_dict_reader
from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor, ValueOperator
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE

import imperiale_env  # noqa: F401  (registers Imperiale-v1)
from imperiale_agents.policies.heuristic import HeuristicAgent
from imperiale_env.core.actions import NUM_ACTIONS
from imperiale_env.kernels.features import policy_features


def make_env(obs_type: str, seed: int, wrapper_class: Any = None, num_envs: int = 1) -> EnvBase:
    """``Imperiale-v1`` (one seat drawn at each reset against the heuristic, one deal an episode) as
    a TorchRL env; the legal mask comes from ``info`` (int8, as Gymnasium's masks are), and the
    bytes, if asked for, are cast to floats (an MLP cannot read uint8).  ``num_envs`` above 1:
    Gymnasium's vector env of that many games in processes of their own; ``wrapper_class`` wraps the
    one env only."""
    if num_envs > 1:
        if wrapper_class is not None:
            raise ValueError("wrapper_class wraps one env; with num_envs > 1 the games run in other processes")
        # resets left to TorchRL (AutoresetMode.DISABLED, which it prefers): with Gymnasium's default
        # the step after an episode's end returns its final observation, whose mask is empty
        vector = gymnasium.make_vec("Imperiale-v1", num_envs=num_envs, vectorization_mode="async",
                                    vector_kwargs={"autoreset_mode": gymnasium.vector.AutoresetMode.DISABLED},
                                    rules=RULES, opponent="heuristic", episode="deal", seat="random",
                                    obs_type=obs_type)
        wrapped = GymWrapper(vector, categorical_action_encoding=True)
        mask = Binary(n=NUM_ACTIONS, shape=(num_envs, NUM_ACTIONS), dtype=torch.int8)
        wrapped.set_info_dict_reader(default_info_dict_reader(["action_mask"], spec={"action_mask": mask}))
    else:
        env = gymnasium.make("Imperiale-v1", rules=RULES, opponent=HeuristicAgent(RULES), episode="deal",
                             seat="random", obs_type=obs_type)
        if wrapper_class is not None:
            env = wrapper_class(env)
        wrapped = GymWrapper(env, categorical_action_encoding=True)
        wrapped.set_info_dict_reader(default_info_dict_reader(
            ["action_mask"], spec={"action_mask": Binary(n=NUM_ACTIONS, dtype=torch.int8)}))
    wrapped.set_seed(seed)
    if obs_type == "bytes":  # the bytes are uint8: TorchRL's cast makes them the floats an MLP reads
        return TransformedEnv(wrapped, DTypeCastTransform(torch.uint8, torch.float32, in_keys=["observation"]))
    return wrapped


class _Legal(torch.nn.Module):
    """The int8 mask as the boolean one ``MaskedCategorical`` reads."""

    def forward(self, mask: torch.Tensor) -> torch.Tensor:
        return mask.bool()


def make_actor_critic(obs_size: int, action_spec: Any, cells: tuple[int, ...] = (256, 256)):
    """A masked categorical actor and a value network, each an MLP over the observation."""
    logits = TensorDictSequential(
        TensorDictModule(_Legal(), in_keys=["action_mask"], out_keys=["legal"]),
        TensorDictModule(MLP(in_features=obs_size, out_features=NUM_ACTIONS, num_cells=list(cells)),
                         in_keys=["observation"], out_keys=["logits"]))
    actor = ProbabilisticActor(logits, in_keys={"logits": "logits", "mask": "legal"}, out_keys=["action"],
                               distribution_class=MaskedCategorical, return_log_prob=True, spec=action_spec)
    critic = ValueOperator(MLP(in_features=obs_size, out_features=1, num_cells=list(cells)), in_keys=["observation"])
    return actor, critic


def train(obs_type: str, frames: int, seed: int, frames_per_batch: int = 1024, epochs: int = 4,
          minibatch: int = 256, lr: float = 3e-4, wrapper_class: Any = None, minutes: float | None = None,
          num_envs: int = 1):
    """PPO for ``frames`` learner decisions (or until ``minutes`` have passed), on ``num_envs`` games
    at a time; the trained actor and the decisions learned from.  A batch holding an action outside
    its mask stops the run."""
    torch.manual_seed(seed)
    env = make_env(obs_type, seed, wrapper_class, num_envs)
    actor, critic = make_actor_critic(env.observation_spec["observation"].shape[-1], env.action_spec)
    env.close()
    collector = Collector(lambda: make_env(obs_type, seed, wrapper_class, num_envs), actor,
                          frames_per_batch=frames_per_batch, total_frames=frames, auto_register_policy_transforms=False)
    advantage = GAE(gamma=1.0, lmbda=0.95, value_network=critic, average_gae=True)
    loss = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=0.01)
    optimiser = torch.optim.Adam(loss.parameters(), lr)
    deadline = None if minutes is None else time.perf_counter() + 60 * minutes
    done = 0
    for batch in collector:
        if not batch["action_mask"].gather(-1, batch["action"].unsqueeze(-1)).all():
            raise RuntimeError("the actor took an illegal action: the mask did not reach MaskedCategorical")
        with torch.no_grad():
            advantage(batch)
        flat = batch.reshape(-1)
        for _ in range(epochs):
            for rows in torch.randperm(len(flat)).split(minibatch):
                parts = loss(flat[rows])
                total = parts["loss_objective"] + parts["loss_critic"] + parts["loss_entropy"]
                optimiser.zero_grad()
                total.backward()
                torch.nn.utils.clip_grad_norm_(loss.parameters(), 0.5)
                optimiser.step()
        collector.update_policy_weights_()
        done += len(flat)
        if deadline is not None and time.perf_counter() > deadline:
            break
    collector.shutdown()
    return actor, done


class TorchRLAgent:
    """A trained TorchRL actor as an agent of the suite: ``act(obs, mask, rng)`` on the observation
    bytes of a batch of games, greedy over the legal actions."""

    def __init__(self, actor: ProbabilisticActor, obs_type: str, name: str = "torchrl-ppo"):
        self.logits = actor.module[0]  # the TensorDictSequential that writes "logits"
        self.obs_type, self.name = obs_type, name

    @torch.no_grad()
    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        x = policy_features(obs) if self.obs_type == "features" else obs.astype(np.float32)
        from tensordict import TensorDict

        td = TensorDict({"observation": torch.as_tensor(x), "action_mask": torch.as_tensor(mask, dtype=torch.int8)},
                        batch_size=[len(mask)])
        logits = self.logits(td)["logits"].masked_fill(~torch.as_tensor(mask, dtype=torch.bool), -torch.inf)
        return logits.argmax(-1).numpy().astype(np.int64)


def aec_env(obs_type: str = "features") -> PettingZooWrapper:
    """The AEC env under TorchRL's PettingZoo wrapper: each seat a group with its own mask."""
    from imperiale_env import imperiale_v1

    return PettingZooWrapper(imperiale_v1.env(rules=RULES, obs_type=obs_type), use_mask=True, categorical_actions=True)


def main() -> None:
    parser = recipe_parser(__doc__)
    parser.add_argument("--obs-type", choices=("features", "bytes"), default="features")
    parser.add_argument("--frames", type=int, default=10**9, help="learner decisions to train on at most")
    parser.add_argument("--num-envs", type=int, default=1, help="games at a time, each vector env's in a process "
                        "of its own above 1 (default 1)")
    args = parse_checked(parser, {"--frames": 1024, "--num-envs": 1})
    train_and_report("TorchRL PPO", args, lambda: train(args.obs_type, args.frames, args.seed, minutes=args.minutes,
                                                      num_envs=args.num_envs),
                     lambda actor: TorchRLAgent(actor, args.obs_type))

if __name__ == "__main__":  # the vector env's processes import this file: nothing runs on import
    main()
