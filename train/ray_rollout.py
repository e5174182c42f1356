"""Self-play rollouts collected by Ray actors (``rollout_workers=N``), learner in this process.

:class:`RayRollout` stands in for :class:`~imperiale_train.rollout.SelfPlayRollout` in the training loop
(same ``collect``, ``refresh_pool``, ``state``, ``load_state``): each of the ``N`` actors
(:class:`RolloutWorker`) holds a :class:`~imperiale_train.rollout.SelfPlayRollout` of ``num_envs / N``
game slots (its batched engine, seat assignment and buffers), a CPU copy of the actor-critic
and of the opponent pool, and computes the GAE of its own games, so its part of the batch is
exactly what a single process with those slots would have produced.

**Determinism.**  Worker ``i``'s games start from ``default_rng([seed, i])`` and the rollout of
iteration ``t`` draws its seat assignments and action samples from
``default_rng([seed, i, t])``; the batches are concatenated in worker order.  A run with a given
``rollout_workers`` is therefore the same on every rerun, on any number of machines.  (It is
not the run of ``rollout_workers=0``, whose one generator also shuffles the minibatches.)

**State lives with the learner.**  Each actor returns, with its batch, the state of its games
(:meth:`SelfPlayRollout.state`); the learner keeps the latest one per worker, writes them in the
checkpoint (``rollout``: ``{"iteration", "workers"}``) and hands it back to an actor that does
not hold it (a restarted or new actor, a resumed run).  So a rollout is a pure function of
(weights, pool, state, seed, worker, iteration): an actor that dies mid-rollout is restarted by
Ray (``max_restarts``), the call is run again (``max_task_retries``) from the same inputs, and
the learner takes exactly one result per worker and iteration.  The learner changes nothing
before every worker's result is in, so a lost cluster leaves the last iteration's state whole
(the training loop checkpoints it: the run resumes).

**What travels** (per iteration): the weights once (``ray.put`` of the actor-critic's state
dict as numpy arrays; one copy per machine), the opponent pool only when it changed; back from
each worker its transitions (413 bytes per decision: the observation 346, the mask 43,
the action 8, four float32 statistics; plus 288 with the perfect critic) and its games' state
(about 0.6 KB per game slot: 586 bytes with two players, 676 with three).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from imperiale_agents.parallel.ray_cluster import ClusterError, check_cpus, connect, failure, import_ray
from imperiale_env.core.rules import Rules
from imperiale_train.config import TrainConfig, config_from_dict, replace
from imperiale_train.model import ActorCritic
from imperiale_train.rollout import OpponentPool, RolloutBatch, SelfPlayRollout, to_batch

#: Restarts of a dead actor, and reruns of its interrupted rollout, before the run gives up.
MAX_RESTARTS = 3


class RolloutWorker:
    """One actor: ``num_envs / N`` game slots and CPU copies of the networks and the pool."""

    def __init__(self, config: dict[str, Any], index: int):
        cfg = config_from_dict(config)
        self.seed, self.index = cfg.seed, index
        self.cfg = replace(cfg, num_envs=cfg.num_envs // cfg.rollout_workers, rollout_workers=0, device="cpu",
                           threads=1)
        torch.set_num_threads(1)
        self.rules = self.cfg.make_rules()
        self.device = torch.device("cpu")
        self.model = ActorCritic(self.cfg.hidden, self.cfg.activation, self.cfg.critic)
        self.pool = OpponentPool(self.cfg.pool_size, self.cfg.hidden, self.cfg.activation, self.device)
        self.pool_version = -1
        self._fresh()

    def _fresh(self) -> None:
        rng = np.random.default_rng([self.seed, self.index])
        self.rollout = SelfPlayRollout(self.cfg, self.rules, self.device, rng)
        self.at = 0  # the iteration whose rollout the held games are ready for; -1: unknown

    def collect(self, weights: dict[str, np.ndarray], pool_box: list, pool_version: int, state_box: list | None,
                iteration: int) -> dict[str, Any]:
        """The rollout of ``iteration``; ``pool_box``/``state_box`` hold object refs, fetched only
        when this actor lacks that pool version or those games (after a restart, on resume)."""
        ray = import_ray()
        self.model.load_state_dict({k: torch.tensor(v) for k, v in weights.items()})
        if pool_version != self.pool_version:
            self.pool.load_state_dict(ray.get(pool_box[0]))
            self.pool_version = pool_version
        if self.at != iteration:
            if state_box is None:
                self._fresh()
            else:
                self.rollout.load_state(ray.get(state_box[0]))
        self.rollout.refresh_pool(self.pool)
        self.at = -1
        arrays, stats = self.rollout.collect_arrays(self.model, self.pool, np.random.default_rng([self.seed, self.index,
                                                                                           iteration]))
        self.at = iteration + 1
        return {"batch": arrays, "stats": stats, "state": self.rollout.state(), "decisions": self.cfg.batch_size}


def merge_stats(parts: list[dict[str, float]]) -> dict[str, float]:
    """The rollout statistics of the whole batch from the workers' (weighted by what they count)."""
    episodes = np.array([p["rollout/episodes"] for p in parts])
    pool_games = np.array([p["rollout/pool_games"] for p in parts])

    def weighted(key: str, weight: np.ndarray) -> float:
        keep = weight > 0
        if not keep.any():
            return float("nan")
        return float(np.dot([p[key] for p, k in zip(parts, keep, strict=True) if k], weight[keep]) / weight.sum())

    return {
        "rollout/episodes": float(episodes.sum()),
        "rollout/train_fraction": float(np.mean([p["rollout/train_fraction"] for p in parts])),
        "rollout/learner_return_vs_pool": weighted("rollout/learner_return_vs_pool", pool_games),
        "rollout/pool_games": float(pool_games.sum()),
        "rollout/abs_return": weighted("rollout/abs_return", episodes - pool_games),
    }


class RayRollout:
    """The learner's side: the actors, the latest state of each one's games, the iteration count."""

    def __init__(self, config: TrainConfig, rules: Rules, device: torch.device):
        self.cfg, self.rules, self.device = config, rules, device
        self.n = config.rollout_workers
        self.ray = import_ray()
        self.session = connect(config.ray_address or None, num_cpus=config.rollout_workers)
        try:
            check_cpus(1, self.n, f"rollout_workers={self.n}")
        except ClusterError:
            self.session.close()
            raise
        actor = self.ray.remote(num_cpus=1, max_restarts=MAX_RESTARTS, max_task_retries=MAX_RESTARTS)(RolloutWorker)
        self.workers = [actor.remote(config.to_dict(), i) for i in range(self.n)]
        self.states: list[Any] = [None] * self.n
        self.iteration = 0
        self._pool_ref, self._pool_version = None, -1

    def collect(self, model: ActorCritic, pool: OpponentPool, rng: np.random.Generator) -> tuple[RolloutBatch, dict]:
        """Every worker's rollout of this iteration, concatenated in worker order (``rng`` is unused:
        the workers' generators are seeded from the seed, the worker and the iteration)."""
        ray = self.ray
        try:
            weights = ray.put({k: v.detach().cpu().numpy() for k, v in model.state_dict().items()})
            if pool.next_id != self._pool_version:
                self._pool_ref, self._pool_version = ray.put(pool.state_dict()), pool.next_id
            refs = [w.collect.remote(weights, [self._pool_ref], self._pool_version,
                                     None if s is None else [ray.put(s)], self.iteration)
                    for w, s in zip(self.workers, self.states, strict=True)]
            results = ray.get(refs)
        except ray.exceptions.RayError as exc:
            raise failure(exc, self.session.address) from None
        self.states = [r["state"] for r in results]
        self.iteration += 1
        parts = {k: np.concatenate([r["batch"][k] for r in results]) for k in results[0]["batch"]}
        return to_batch(parts, self.device), merge_stats([r["stats"] for r in results])

    def refresh_pool(self, pool: OpponentPool) -> None:
        """Nothing here: each worker drops evicted opponents when it receives the new pool."""

    def state(self) -> dict[str, Any]:
        return {"iteration": self.iteration, "workers": list(self.states)}

    def load_state(self, state: Any) -> None:
        if not isinstance(state, dict) or len(state.get("workers", ())) != self.n:
            raise ValueError(f"the checkpoint's rollout state is not that of {self.n} rollout workers")
        self.iteration, self.states = int(state["iteration"]), list(state["workers"])

    def close(self) -> None:
        """End the actors (and the local Ray instance, if this run started it)."""
        for w in self.workers:
            try:
                self.ray.kill(w)
            except Exception:  # an actor of a lost cluster cannot be killed; nothing to free then
                pass
        self.workers = []
        self.session.close()
