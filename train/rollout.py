"""Self-play rollouts on the batched engine, stored per seat for GAE.

Every slot of the :class:`~imperiale_env.batch.BatchGame` plays one game (one deal with
``single_deal``); the slot's *learner seat* is played by the current policy, and its other
seat(s), game by game: with probability ``p_opponents`` by one of the fixed agents
``train_opponents`` (a heuristic or a search to learn against: the fixed agent's seats are never
trained; ``opponent_seats`` of them, counted from the seat after the learner's, or all; with three
players and ``opponent_seats=1`` the third seat is the current policy's, so two learning seats meet
one fixed agent, the two-seat lineup of ``imperiale eval``), else with probability ``p_pool`` by
one past snapshot from the :class:`OpponentPool`, else by the current policy too.  Each step records one transition per
slot (the acting player's), in preallocated ``(num_steps, num_envs, ...)`` buffers.

**Per-seat sequences.**  A seat's transitions in a slot form their own sequence: each
transition is linked to the same seat's next decision (``next_index``), so GAE runs over
the seat's own decisions, not over the interleaved turns of the table.  When a game ends,
the step's rewards (one per seat) are credited to each seat's *last* transition of that
game, which is marked terminal.  A seat whose sequence is still open at the end of the
rollout is bootstrapped with the value of its own observation of the final state.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import torch
from torch import nn

from imperiale_agents.base import make_agent
from imperiale_agents.driver import Turn, act_by, checked_actions, drive
from imperiale_env.batch import BatchGame
from imperiale_env.core.cards import NUM_CARDS
from imperiale_env.core.observation import OBS_DTYPE, OBS_SIZE
from imperiale_env.core.rules import Rules
from imperiale_env.kernels.features import policy_features
from imperiale_train.config import TrainConfig
from imperiale_train.mirror import MirroredDeals
from imperiale_train.model import HIDDEN_HANDS_SIZE, ActorCritic, Policy, masked_logits, sample_actions

NUM_ACTIONS = 43
#: ``SelfPlayRollout.opponent`` codes besides pool entry ids (>= 0): the current policy, and
#: fixed agent ``k`` of ``train_opponents`` as ``FIXED - k``.
CURRENT = -1
FIXED = -2


def unpack_hands(hands: np.ndarray) -> np.ndarray:
    """``(..., k)`` uint64 bitmasks -> ``(..., k * 36)`` float32 card indicators."""
    h = np.ascontiguousarray(hands, dtype=np.uint64)
    bits = np.unpackbits(h.view(np.uint8).reshape(*h.shape, 8), axis=-1, bitorder="little", count=NUM_CARDS)
    return bits.reshape(*h.shape[:-1], h.shape[-1] * NUM_CARDS).astype(np.float32)


def hidden_hands(bg: BatchGame, seats: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The hands of relative seats 1 and 2 (zeros with two players) of ``seats``: ``(N, 72)``."""
    n, P = bg.n, bg.players
    others = np.zeros((n, 2), dtype=np.uint64)
    for k in range(1, P):
        others[:, k - 1] = bg.hands[np.arange(n), (seats + k) % P]
    bits = unpack_hands(others)
    if out is None:
        return bits
    out[:] = bits
    return out


def as_tensors(obj):
    """``obj`` with every numpy array (nested in dicts and lists) as a CPU tensor: how a rollout
    state goes into a checkpoint, which ``torch.load(weights_only=True)`` reads without pickle."""
    if isinstance(obj, dict):
        return {k: as_tensors(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [as_tensors(v) for v in obj]
    # A copy: arrays received from Ray may view one shared buffer, which torch.save refuses.
    return torch.from_numpy(obj.copy()) if isinstance(obj, np.ndarray) else obj


def as_arrays(obj):
    """Inverse of :func:`as_tensors` (tensors loaded onto any device come back as numpy arrays);
    read-only arrays (as Ray hands them over) are copied, since the games write into them."""
    if isinstance(obj, dict):
        return {k: as_arrays(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [as_arrays(v) for v in obj]
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu().numpy()
    return obj.copy() if isinstance(obj, np.ndarray) and not obj.flags.writeable else obj


class OpponentPool:
    """The last ``size`` policy snapshots (actor weights), each with a stable id.

    The rollout asks for a few rows under each of up to ``size`` snapshots at every step; one
    forward call per snapshot on a handful of rows costs its overhead eight times a step (a fifth
    of a default run once the pool is full), so :meth:`logits` runs them all at once: the
    snapshots' layers stacked, the rows grouped by snapshot and padded, one batched matrix
    product a layer."""

    def __init__(self, size: int, hidden: tuple[int, ...], activation: str, device: torch.device):
        self.size, self.hidden, self.activation, self.device = size, tuple(hidden), activation, device
        self.entries: list[tuple[int, int, dict[str, torch.Tensor]]] = []  # (id, iteration, actor state)
        self.next_id = 0
        self._stack: list[tuple[torch.Tensor, torch.Tensor]] | None = None

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def ids(self) -> np.ndarray:
        return np.array([e[0] for e in self.entries], dtype=np.int64)

    def add(self, actor: Policy, iteration: int) -> None:
        state = {k: v.detach().cpu().clone() for k, v in actor.state_dict().items()}
        self.entries.append((self.next_id, iteration, state))
        self.next_id += 1
        while len(self.entries) > self.size:
            self.entries.pop(0)
        self._stack = None

    def _stacked(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Each linear layer of :class:`Policy` as ``(K, in, out)`` weights and ``(K, 1, out)``
        biases over the K snapshots, in the order of :attr:`entries`."""
        if self._stack is None:
            layers = [i for i, m in enumerate(Policy(self.hidden, self.activation).net) if isinstance(m, nn.Linear)]
            stack = [(torch.stack([e[2][f"net.{i}.weight"].t() for e in self.entries]).to(self.device),
                      torch.stack([e[2][f"net.{i}.bias"][None] for e in self.entries]).to(self.device))
                     for i in layers]
            self._stack = stack
        return self._stack

    @torch.no_grad()
    def logits(self, entry_ids: np.ndarray, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The masked logits of feature rows ``x``, row ``i`` under snapshot ``entry_ids[i]``."""
        stack, ids = self._stacked(), self.ids
        k = np.searchsorted(ids, entry_ids)  # ids grow as snapshots are added, so they are sorted
        if not np.array_equal(ids[np.minimum(k, len(ids) - 1)], entry_ids):
            raise KeyError(f"snapshot ids {sorted(set(entry_ids.tolist()) - set(ids.tolist()))} are not in the pool "
                           f"(it holds {ids.tolist()})")
        order = np.argsort(k, kind="stable")
        counts = np.bincount(k, minlength=len(ids))
        pos = np.arange(len(k)) - np.repeat(np.cumsum(counts) - counts, counts)  # place within its group
        ks, ps = torch.from_numpy(k[order]).to(self.device), torch.from_numpy(pos).to(self.device)
        h = x.new_zeros((len(ids), int(counts.max()), x.shape[1]))
        h[ks, ps] = x[torch.from_numpy(order).to(self.device)]
        act = {"relu": torch.relu, "tanh": torch.tanh}[self.activation]
        for j, (w, b) in enumerate(stack):
            h = torch.baddbmm(b, h, w)
            if j < len(stack) - 1:
                h = act(h)
        out = torch.empty((len(k), h.shape[2]), dtype=h.dtype, device=h.device)
        out[torch.from_numpy(order).to(self.device)] = h[ks, ps]
        return masked_logits(out, mask)

    def state_dict(self) -> dict:
        return {"next_id": self.next_id,
                "entries": [{"id": i, "iteration": it, "actor": st} for i, it, st in self.entries]}

    def load_state_dict(self, state: dict) -> None:
        self.next_id = int(state["next_id"])
        self.entries = [(int(e["id"]), int(e["iteration"]), e["actor"]) for e in state["entries"]]
        self._stack = None


@dataclass
class RolloutBatch:
    """The trainable transitions of one rollout, flattened (torch tensors on the device): the
    features of each decision, made once here and read by every epoch of the update, and with
    ``critic="perfect"`` the other hands (``hidden``, else ``None``)."""

    features: torch.Tensor
    mask: torch.Tensor
    hidden: torch.Tensor | None
    actions: torch.Tensor
    logprobs: torch.Tensor
    values: torch.Tensor
    advantages: torch.Tensor
    returns: torch.Tensor

    def __len__(self) -> int:
        return len(self.actions)


#: The arrays of a rollout (:meth:`SelfPlayRollout.collect_arrays`), as Ray workers send them:
#: the observation's bytes travel, a quarter of the features' size.
BATCH_KEYS = ("obs", "mask", "actions", "logprobs", "values", "advantages", "returns")


def to_batch(arrays: dict[str, np.ndarray], device: torch.device) -> RolloutBatch:
    """The :class:`RolloutBatch` of a rollout's arrays (``hidden`` among them with the perfect
    critic): the features computed once, every tensor moved to ``device``."""
    put = lambda a: torch.from_numpy(a).to(device)  # noqa: E731
    hidden = put(arrays["hidden"]) if "hidden" in arrays else None
    return RolloutBatch(features=put(policy_features(arrays["obs"])), hidden=hidden,
                        **{k: put(arrays[k]) for k in BATCH_KEYS if k != "obs"})


@dataclass
class _Collection:
    """What one :meth:`SelfPlayRollout.collect` carries from step to step: the policies, the
    generator, the pool ids at its start, each seat's last open transition (flat index, -1 none)
    and the learner's returns of the games that ended, by opponent kind."""

    model: ActorCritic
    pool: OpponentPool
    rng: np.random.Generator
    pool_ids: np.ndarray
    last: np.ndarray  # (n, P)
    vs_current: list[np.ndarray] = field(default_factory=list)
    vs_pool: list[np.ndarray] = field(default_factory=list)
    vs_fixed: list[np.ndarray] = field(default_factory=list)


class SelfPlayRollout:
    """The batch of games, the seat assignment of every slot and the rollout buffers."""

    def __init__(self, config: TrainConfig, rules: Rules, device: torch.device, rng: np.random.Generator):
        self.cfg, self.rules, self.device = config, rules, device
        self.n, self.T, self.P = config.num_envs, config.num_steps, rules.players
        self.perfect = config.critic == "perfect"
        # With mirrored deals the rollout picks each next deal itself (:mod:`.mirror`).
        self.mirror = MirroredDeals(self.n, self.P) if config.mirrored_deals else None
        self.bg = BatchGame(rules, self.n, auto_next_game=self.mirror is None, single_deal=config.single_deal)
        if self.mirror is None:
            self.bg.reset(int(rng.integers(2**63)))
        self.learner_seat = np.zeros(self.n, dtype=np.int64)
        # Who plays the other seat(s): a pool entry id (>= 0), the current policy (CURRENT), or
        # fixed agent k of train_opponents (FIXED - k).
        self.opponent = np.full(self.n, CURRENT, dtype=np.int64)
        self.fixed = [make_agent(spec, rules, workers=config.opponent_workers) for spec in config.train_opponents]
        seeds = self._assign(np.arange(self.n), rng, np.zeros(0, dtype=np.int64))
        if self.mirror is not None:
            self.bg.reset(seeds)
        T, n = self.T, self.n
        self.obs = np.zeros((T, n, OBS_SIZE), dtype=OBS_DTYPE)
        self.masks = np.zeros((T, n, NUM_ACTIONS), dtype=bool)
        self.hidden = np.zeros((T, n, HIDDEN_HANDS_SIZE), dtype=np.float32) if self.perfect else None
        self.actions = np.zeros((T, n), dtype=np.int64)
        self.seats = np.zeros((T, n), dtype=np.int64)
        self.logprobs = np.zeros((T, n), dtype=np.float32)
        self.values = np.zeros((T, n), dtype=np.float32)
        self.rewards = np.zeros(T * n, dtype=np.float32)
        self.dones = np.zeros(T * n, dtype=bool)
        self.next_index = np.full(T * n, -1, dtype=np.int64)
        self.bootstrap = np.zeros(T * n, dtype=np.float32)
        self.train = np.zeros((T, n), dtype=bool)
        self.play_key = np.zeros((T, n), dtype=np.int64) if self.mirror is not None else None
        #: Seconds of the current collection spent making features and in the networks.
        self.seconds = {"features": 0.0, "forward": 0.0}

    # ------------------------------------------------------------------ seat assignment

    def _assign(self, idx: np.ndarray, rng: np.random.Generator, pool_ids: np.ndarray) -> np.ndarray | None:
        """New games in slots ``idx``: a learner seat, and the opponent (a fixed agent, a pool
        entry or the current policy).  Without fixed agents no draw is made for them, so such
        runs are the games they were before fixed agents existed.  With mirrored deals, the seeds
        of the games to start there (a second play repeats its first's seat and opponent, moved)."""
        if self.mirror is not None:
            return self.mirror.start(idx, rng, self.learner_seat, self.opponent,
                                     lambda rows: self._draw_seats(rows, rng, pool_ids))
        self._draw_seats(idx, rng, pool_ids)
        return None

    def _draw_seats(self, idx: np.ndarray, rng: np.random.Generator, pool_ids: np.ndarray) -> None:
        """Draw the learner seat and the opponent of the new games in slots ``idx``."""
        if not len(idx):
            return
        self.learner_seat[idx] = rng.integers(self.P, size=len(idx))
        use_pool = rng.random(len(idx)) < self.cfg.p_pool
        pick = rng.integers(max(len(pool_ids), 1), size=len(idx))
        self.opponent[idx] = np.where(use_pool & (len(pool_ids) > 0), pool_ids[pick] if len(pool_ids) else CURRENT,
                                      CURRENT)
        if self.fixed:
            use_fixed = rng.random(len(idx)) < self.cfg.p_opponents
            which = rng.integers(len(self.fixed), size=len(idx))
            self.opponent[idx] = np.where(use_fixed, FIXED - which, self.opponent[idx])

    def refresh_pool(self, pool: OpponentPool) -> None:
        """Slots whose pool opponent was evicted play the current policy until their game ends."""
        gone = (self.opponent >= 0) & ~np.isin(self.opponent, pool.ids)
        self.opponent[gone] = CURRENT
        if self.mirror is not None:
            self.mirror.refresh_pool(pool.ids, CURRENT)

    def close(self) -> None:
        """Stop the processes of the fixed agents that have any (pimc with opponent_workers)."""
        for agent in self.fixed:
            close = getattr(agent, "close", None)
            if callable(close):
                close()

    def state(self) -> dict:
        """The game batch (:meth:`BatchGame.to_dict`) and the seat assignment as numpy arrays and
        numbers (a checkpoint stores them through :func:`as_tensors`; Ray workers send them as they are)."""
        state = {"bg": self.bg.to_dict(), "learner_seat": self.learner_seat.copy(), "opponent": self.opponent.copy()}
        if self.mirror is not None:
            state["mirror"] = self.mirror.state()
        return state

    def load_state(self, state: dict) -> None:
        """Restore :meth:`state`; ``ValueError`` if it is malformed or does not fit the configuration."""
        keys = {"bg", "learner_seat", "opponent"} | ({"mirror"} if self.mirror is not None else set())
        if not isinstance(state, dict) or set(state) != keys:
            raise ValueError(f"the rollout state must hold {', '.join(sorted(keys))} "
                             f"(mirrored_deals={self.mirror is not None}), it holds "
                             f"{', '.join(sorted(state)) if isinstance(state, dict) else type(state).__name__}")
        state = as_arrays(state)
        if self.mirror is not None:
            self.mirror.load_state(state["mirror"])
        bg = BatchGame.from_dict(state["bg"])
        if bg.n != self.n or bg.players != self.P or bg.rules != self.rules or bg.single_deal != self.cfg.single_deal:
            raise ValueError("the checkpoint's game batch does not match the configuration "
                             "(num_envs, rules, single_deal)")
        for name in ("learner_seat", "opponent"):
            seats = state[name]
            if not isinstance(seats, np.ndarray) or seats.dtype != np.int64 or seats.shape != (self.n,):
                raise ValueError(f"the rollout's {name} must be {self.n} int64 values")
        self.bg, self.learner_seat, self.opponent = bg, state["learner_seat"], state["opponent"]

    # ------------------------------------------------------------------ collection

    def _tensors(self, obs: np.ndarray, hidden: np.ndarray | None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The features of ``obs`` and the hidden hands, on the device."""
        x = torch.from_numpy(policy_features(obs)).to(self.device)
        return x, None if hidden is None else torch.from_numpy(hidden).to(self.device)

    def collect(self, model: ActorCritic, pool: OpponentPool, rng: np.random.Generator) -> tuple[RolloutBatch, dict]:
        """One rollout of ``num_steps`` decisions a slot, as a batch on the device, and its statistics
        (``perf/features_s`` and ``perf/forward_s``: the seconds spent making features and in the networks)."""
        arrays, stats = self.collect_arrays(model, pool, rng)
        start = time.perf_counter()
        batch = to_batch(arrays, self.device)
        stats["perf/features_s"] += time.perf_counter() - start
        return batch, stats

    @torch.no_grad()
    def collect_arrays(self, model: ActorCritic, pool: OpponentPool,
                       rng: np.random.Generator) -> tuple[dict[str, np.ndarray], dict]:
        """One rollout as numpy arrays (:data:`BATCH_KEYS`, and ``hidden`` with the perfect critic)."""
        cfg, bg, n, T, P = self.cfg, self.bg, self.n, self.T, self.P
        self.rewards[:] = 0
        self.dones[:] = False
        self.next_index[:] = -1
        self.bootstrap[:] = 0
        if self.mirror is not None:
            self.mirror.begin_rollout()
        run = _Collection(model, pool, rng, pool.ids, np.full((n, P), -1, dtype=np.int64))
        self.seconds = {"features": 0.0, "forward": 0.0}
        drive(bg, partial(self._choose, run), record=partial(self._link, run), settle=partial(self._settle, run),
              steps=T, obs_out=self.obs)
        last = run.last
        # Bootstrap the open sequences with each seat's value of the final state.
        buf = np.empty((n, OBS_SIZE), dtype=OBS_DTYPE)
        for p in range(P):
            open_ = last[:, p] >= 0
            if not open_.any():
                continue
            seats = np.full(n, p, dtype=np.int64)
            o = bg.observe(out=buf, players=seats)
            h = hidden_hands(bg, seats) if self.perfect else None
            v = model.value(*self._tensors(o, h)).cpu().numpy()
            self.bootstrap[last[open_, p]] = v[open_]
        adv = self._gae(cfg.gamma, cfg.gae_lambda)
        values = self.values.reshape(-1)
        returns = adv + values
        train = self.train.reshape(-1)
        dropped = 0.0
        if self.mirror is not None:
            # Plays that ended before their twin, which has not ended yet: nothing to train on here.
            unmatched = np.isin(self.play_key.reshape(-1), self.mirror.unmatched()) & train
            dropped = float(unmatched.sum() / max(train.sum(), 1))
            train = train & ~unmatched
        sel = np.flatnonzero(train)
        arrays = {"obs": self.obs.reshape(T * n, OBS_SIZE)[sel], "mask": self.masks.reshape(T * n, NUM_ACTIONS)[sel],
                  "actions": self.actions.reshape(-1)[sel], "logprobs": self.logprobs.reshape(-1)[sel],
                  "values": values[sel], "advantages": adv[sel], "returns": returns[sel]}
        if self.perfect:
            arrays["hidden"] = self.hidden.reshape(T * n, -1)[sel]
        rets = np.concatenate(run.vs_current) if run.vs_current else np.zeros(0)
        pool_rets = np.concatenate(run.vs_pool) if run.vs_pool else np.zeros(0)
        fixed_rets = np.concatenate(run.vs_fixed) if run.vs_fixed else np.zeros(0)
        stats = {
            "rollout/episodes": float(len(rets) + len(pool_rets) + len(fixed_rets)),
            "rollout/train_fraction": float(len(sel) / (T * n)),
            "rollout/learner_return_vs_pool": float(pool_rets.mean()) if len(pool_rets) else float("nan"),
            "rollout/pool_games": float(len(pool_rets)),
            "rollout/learner_return_vs_opponents": float(fixed_rets.mean()) if len(fixed_rets) else float("nan"),
            "rollout/opponent_games": float(len(fixed_rets)),
            "rollout/abs_return": float(np.abs(rets).mean()) if len(rets) else float("nan"),
            **({"rollout/mirror_dropped": dropped} if self.mirror is not None else {}),
            "perf/features_s": self.seconds["features"], "perf/forward_s": self.seconds["forward"],
        }
        return arrays, stats

    def _choose(self, run: _Collection, turn: Turn) -> np.ndarray:
        """Step ``turn.index``: the values of the acting seats, and the actions of the current policy,
        a pool snapshot or a fixed agent by who holds the seat, with the log-probability of each under
        the logits of the policy that chose it (a fixed agent's transitions are never trained)."""
        t, obs, mask, cur, dev = turn.index, turn.obs, turn.mask, turn.seat, self.device
        hidden = hidden_hands(self.bg, cur, self.hidden[t]) if self.perfect else None
        start = time.perf_counter()
        x, hidden_t = self._tensors(obs, hidden)
        mask_t = torch.from_numpy(mask).to(dev)
        made = time.perf_counter()
        logits, values = run.model.logits_and_value(x, mask_t, hidden_t)
        self.values[t] = values.cpu().numpy()
        other = cur != self.learner_seat
        by_pool = other & (self.opponent >= 0)
        by_fixed = other & (self.opponent <= FIXED)
        if self.cfg.opponent_seats:
            # The fixed agent holds the opponent_seats seats after the learner's; the rest are the current policy's.
            by_fixed &= (cur - self.learner_seat) % self.P <= self.cfg.opponent_seats
        if by_pool.any():
            rows_t = torch.from_numpy(np.flatnonzero(by_pool)).to(dev)
            logits[rows_t] = run.pool.logits(self.opponent[by_pool], x[rows_t], mask_t[rows_t])
        self.seconds["features"] += made - start
        self.seconds["forward"] += time.perf_counter() - made
        a = sample_actions(logits.cpu().numpy(), run.rng)
        act_by(np.where(by_fixed, FIXED - self.opponent, -1),
               lambda k, rows: checked_actions(self.fixed[k].act(obs[rows], mask[rows], run.rng), mask[rows],
                                               f"agent {self.fixed[k].name!r}", rows), a)
        logp = torch.log_softmax(logits, dim=-1).gather(1, torch.from_numpy(a).to(dev)[:, None])[:, 0]
        self.logprobs[t] = logp.cpu().numpy()
        self.train[t] = ~(by_pool | by_fixed) if self.cfg.train_all_seats else ~other
        return a

    def _link(self, run: _Collection, turn: Turn, actions: np.ndarray) -> None:
        """Keep the decision and link it into its seat's own sequence."""
        t, n, cur = turn.index, self.n, turn.seat
        self.masks[t] = turn.mask
        self.seats[t] = cur
        self.actions[t] = actions
        if self.mirror is not None:
            self.play_key[t] = self.mirror.play_keys()
        ar = np.arange(n)
        j = t * n + ar
        prev = run.last[ar, cur]
        linked = prev >= 0
        self.next_index[prev[linked]] = j[linked]
        run.last[ar, cur] = j

    def _settle(self, run: _Collection, turn: Turn, rewards: np.ndarray, terminated: np.ndarray) -> None:
        """Credit the ended games' rewards to each seat's last transition, count the learner's
        returns by opponent kind, and seat the slots' next games."""
        ended = np.flatnonzero(terminated)
        if not len(ended):
            return
        r = rewards[ended] * self.cfg.reward_scale
        lj = run.last[ended]  # (E, P)
        if self.mirror is not None:
            r = self.mirror.settle(ended, r, lj, self.rewards)
        has = lj >= 0
        self.rewards[lj[has]] += r[has]
        self.dones[lj[has]] = True
        run.last[ended] = -1
        learner_r = rewards[ended, self.learner_seat[ended]]
        vs_pool = self.opponent[ended] >= 0
        vs_fixed = self.opponent[ended] <= FIXED
        run.vs_current.append(learner_r[~vs_pool & ~vs_fixed])
        run.vs_pool.append(learner_r[vs_pool])
        run.vs_fixed.append(learner_r[vs_fixed])
        seeds = self._assign(ended, run.rng, run.pool_ids)
        if self.mirror is not None:
            self.bg.restart(ended, seeds)

    def _gae(self, gamma: float, lam: float) -> np.ndarray:
        """Generalised advantage estimates over each seat's own sequence (flat ``T * n``)."""
        n = self.n
        values = np.append(self.values.reshape(-1), 0.0).astype(np.float32)
        adv = np.zeros(self.T * n + 1, dtype=np.float32)  # the extra slot is "no next transition"
        for t in range(self.T - 1, -1, -1):
            j = slice(t * n, (t + 1) * n)
            nxt = self.next_index[j]
            has_next = nxt >= 0
            nxt = np.where(has_next, nxt, self.T * n)
            next_value = np.where(has_next, values[nxt], self.bootstrap[j])
            cont = (~self.dones[j]).astype(np.float32)
            delta = self.rewards[j] + gamma * next_value * cont - values[j]
            adv[j] = delta + gamma * lam * cont * adv[nxt]
        return adv[:-1]
