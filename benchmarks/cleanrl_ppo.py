"""PPO in one file, in the manner of CleanRL's ``ppo.py``, over the self-play vector env
``ImperialeSelfPlay-v1``: the recipe of docs/libraries.md for a researcher who wants the whole
algorithm in one read and no library but torch::

    python benchmarks/cleanrl_ppo.py --minutes 10 --seed 0

One network plays every seat.  The env steps one decision in each game, by the seat to act there;
the seats alternate as the rules say, so a seat's next state is its own next decision, not the
next step.  What differs from CleanRL's single-agent loop is therefore only the advantage: it runs
backwards along each seat's own chain of decisions in each game, the reward of a seat at a
game's end (``info["rewards_all"]``, +1 / -1 a deal here) closes its last decision, and a chain
cut by the rollout's end is bootstrapped from the value of the acting seat's view, or left out of
the loss for a seat that was not acting then.  The rest is CleanRL's: GAE, advantage
normalisation, the clipped objective and value loss, entropy bonus, minibatch epochs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import torch
from library_recipes import RULES, parse_checked, recipe_parser, report
from torch import nn
from torch.distributions import Categorical

import imperiale_env  # noqa: F401  (registers ImperialeSelfPlay-v1)
from imperiale_env.core.actions import NUM_ACTIONS
from imperiale_env.kernels.features import FEATURE_SIZE, policy_features


@dataclass
class Args:
    seed: int = 0
    num_envs: int = 64
    num_steps: int = 64  # decisions a game per rollout: a deal is 26 of them (with two players)
    iterations: int = 100
    minutes: float | None = None  # stop after this much time, whichever comes first
    lr: float = 3e-4
    gamma: float = 1.0
    gae_lambda: float = 0.95
    update_epochs: int = 4
    num_minibatches: int = 8
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5


def layer(i: int, o: int, std: float = np.sqrt(2)) -> nn.Linear:
    """A linear layer with CleanRL's orthogonal initialisation."""
    linear = nn.Linear(i, o)
    nn.init.orthogonal_(linear.weight, std)
    nn.init.constant_(linear.bias, 0.0)
    return linear


class Agent(nn.Module):
    def __init__(self, hidden: int = 256):
        super().__init__()
        self.critic = nn.Sequential(layer(FEATURE_SIZE, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh(),
                                    layer(hidden, 1, std=1.0))
        self.actor = nn.Sequential(layer(FEATURE_SIZE, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh(),
                                   layer(hidden, NUM_ACTIONS, std=0.01))

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x).squeeze(-1)

    def get_action_and_value(self, x: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None):
        logits = self.actor(x).masked_fill(~mask, -1e9)  # only legal actions are ever drawn
        dist = Categorical(logits=logits)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.get_value(x)


def minibatches(size: int, parts: int) -> tuple[torch.Tensor, ...]:
    """The rows ``0..size-1`` shuffled into ``parts`` minibatches of (nearly) equal size, each of two
    rows at least: a minibatch's advantages are normalised, and the spread of one row is undefined
    (a NaN that reaches the weights; a split by a fixed size can leave a remainder of one row)."""
    return torch.randperm(size).tensor_split(max(1, min(parts, size // 2)))


def advantages(values, seats, rewards_all, dones, last_value, last_seat, players, gamma, lam):
    """GAE along each seat's own decisions in each game (see the module docstring).  ``values``,
    ``seats``, ``dones``: ``(T, N)``; ``rewards_all``: ``(T, N, P)``, the rewards the step gave every
    seat; returns the advantages and which decisions to learn from, ``(T, N)`` each."""
    T, N = values.shape
    cols = np.arange(N)
    adv, valid = np.zeros((T, N), np.float32), np.ones((T, N), bool)
    next_value, next_adv = np.zeros((N, players), np.float32), np.zeros((N, players), np.float32)
    live = np.zeros((N, players), bool)  # a later decision of this seat in the same game follows
    known = np.zeros((N, players), bool)  # its value is known (acting at the rollout's end, or a later one)
    pending = np.zeros((N, players), np.float32)  # rewards since this seat's decision
    next_value[cols, last_seat], live[cols, last_seat], known[cols, last_seat] = last_value, True, True
    for t in reversed(range(T)):
        ended = dones[t]  # the game ended with this step: every seat's chain ends here
        pending[ended], live[ended], known[ended] = 0.0, False, True
        next_value[ended], next_adv[ended] = 0.0, 0.0
        pending += rewards_all[t]
        s = seats[t]
        delta = pending[cols, s] + gamma * next_value[cols, s] * live[cols, s] - values[t]
        adv[t] = delta + gamma * lam * live[cols, s] * next_adv[cols, s]
        valid[t] = known[cols, s]
        next_value[cols, s], next_adv[cols, s] = values[t], adv[t]
        live[cols, s], known[cols, s], pending[cols, s] = True, True, 0.0
    return adv, valid


def train(args: Args, progress: bool = False) -> tuple[Agent, int]:
    """The PPO loop; the trained agent and the decisions it learned from."""
    torch.manual_seed(args.seed)
    envs = gym.make_vec("ImperialeSelfPlay-v1", num_envs=args.num_envs, rules=RULES, episode="deal",
                        obs_type="features")
    players = envs.unwrapped.players
    agent = Agent()
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)
    T, N = args.num_steps, args.num_envs
    obs_buf = torch.zeros((T, N, FEATURE_SIZE))
    mask_buf = torch.zeros((T, N, NUM_ACTIONS), dtype=torch.bool)
    actions, logprobs = torch.zeros((T, N), dtype=torch.long), torch.zeros((T, N))
    values, seats = np.zeros((T, N), np.float32), np.zeros((T, N), np.int64)
    rewards_all, dones = np.zeros((T, N, players), np.float32), np.zeros((T, N), bool)
    obs, info = envs.reset(seed=args.seed)
    deadline = None if args.minutes is None else time.perf_counter() + 60 * args.minutes
    learned = 0
    for iteration in range(args.iterations):
        for t in range(T):
            obs_buf[t], mask_buf[t] = torch.as_tensor(obs), torch.as_tensor(info["action_mask"], dtype=torch.bool)
            seats[t] = info["acting_seat"]
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(obs_buf[t], mask_buf[t])
            actions[t], logprobs[t], values[t] = action, logprob, value.numpy()
            obs, _, terminated, _, info = envs.step(action.numpy())
            rewards_all[t], dones[t] = info["rewards_all"], terminated
        with torch.no_grad():
            last_value = agent.get_value(torch.as_tensor(obs)).numpy()
        adv, valid = advantages(values, seats, rewards_all, dones, last_value, info["acting_seat"], players,
                                args.gamma, args.gae_lambda)
        keep = torch.as_tensor(valid.reshape(-1))
        b_obs, b_mask = obs_buf.reshape(-1, FEATURE_SIZE)[keep], mask_buf.reshape(-1, NUM_ACTIONS)[keep]
        b_actions, b_logprobs = actions.reshape(-1)[keep], logprobs.reshape(-1)[keep]
        b_adv = torch.as_tensor(adv.reshape(-1))[keep]
        b_returns = b_adv + torch.as_tensor(values.reshape(-1))[keep]
        size = len(b_adv)
        for _ in range(args.update_epochs):
            for rows in minibatches(size, args.num_minibatches):
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[rows], b_mask[rows],
                                                                              b_actions[rows])
                ratio = (newlogprob - b_logprobs[rows]).exp()
                mb_adv = b_adv[rows]
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg_loss = torch.max(-mb_adv * ratio,
                                    -mb_adv * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v_loss = 0.5 * ((newvalue - b_returns[rows]) ** 2).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + v_loss * args.vf_coef
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
        learned += size
        if progress:
            print(f"iteration {iteration + 1}: {learned:,} decisions learned from, value loss {v_loss.item():.3f}",
                  flush=True)
        if deadline is not None and time.perf_counter() > deadline:
            break
    envs.close()
    return agent, learned


class CleanRLAgent:
    """The trained network as an agent of the suite: greedy over the legal actions of each game."""

    def __init__(self, agent: Agent, name: str = "cleanrl-ppo"):
        self.agent, self.name = agent, name

    @torch.no_grad()
    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        logits = self.agent.actor(torch.as_tensor(policy_features(obs)))
        return logits.masked_fill(~torch.as_tensor(mask, dtype=torch.bool), -torch.inf).argmax(-1).numpy()


def main() -> None:
    parser = recipe_parser(__doc__)
    parser.add_argument("--iterations", type=int, default=10**6, help="PPO iterations at most")
    args = parse_checked(parser, {"--iterations": 1})
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    agent, learned = train(Args(seed=args.seed, iterations=args.iterations, minutes=args.minutes))
    seconds = time.perf_counter() - start
    print(f"CleanRL-style PPO: {learned:,} decisions in {seconds:.0f} s ({learned / seconds:.0f} a second, "
          f"{args.threads} torch threads), seed {args.seed}")
    report(CleanRLAgent(agent), args)


if __name__ == "__main__":
    main()
