"""Search-guided imitation: deals played by ``pimc``, its card values as targets, behaviour cloning.

Why: PPO from scratch learns the play of the cards slowly, from one reward at the end of a deal;
``pimc`` (:mod:`imperiale_agents.search.pimc`) plays well from the observation alone but searches ~10 ms a card.
Imitation distils its search into the policy network that PPO then fine-tunes (the same
:class:`~imperiale_train.model.ActorCritic`, the same optimizer), so PPO starts from a player near
``pimc``'s strength instead of from a random one.

**Labels** (:func:`label_deals`).  Deals are played on the batched engine; at every card to play
with more than one legal card, ``pimc`` searches (:func:`imperiale_agents.search.pimc.search_row`: sampled deals
of the hidden cards, each solved exactly, full depth), plays its card, and the mean value of every
legal card over the sampled deals (points for the acting seat) is kept.  Declarations are the
heuristic's (as in ``pimc``), kept as its choice.  Every labelled decision also keeps the reward
the acting seat got at the end of its game: the value network's target.  ``imitation_player`` puts
another agent at the cards (pimc still searches each position it reaches, for the labels: the
student's own positions labelled by its teacher, as DAgger does), and ``imitation_labels=dd``
values each card by one exact solve of the true deal instead.  The seed of each
search is drawn from the run's generator before the work is spread over processes, so the labels
are the same whatever ``imitation_workers``.

**Loss** (:func:`imitation_update`): cross-entropy between the masked policy and the target, a
softmax of the card values at temperature ``imitation_temperature`` (cards of equal value, such as
equivalent cards, get equal weight) or, at 0 and for the declarations, the expert's choice alone;
plus ``vf_coef`` times the squared error of the value.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import torch
from torch import nn

from imperiale_agents.driver import Turn, drive
from imperiale_agents.parallel.process_pool import LazyPool
from imperiale_env.batch import BatchGame
from imperiale_env.core.actions import NUM_ACTIONS
from imperiale_env.core.cards import NUM_CARDS
from imperiale_env.core.observation import OBS_DTYPE, OBS_SIZE
from imperiale_env.core.rules import Rules
from imperiale_env.kernels.features import policy_features
from imperiale_train.config import TrainConfig
from imperiale_train.model import HIDDEN_HANDS_SIZE, ActorCritic
from imperiale_train.rollout import hidden_hands, unpack_hands

#: Phase of a card to play in the observation (:class:`imperiale_agents.observation_view.View`).
PLAY_PHASE = 2


@dataclass
class Labels:
    """Labelled decisions (numpy arrays, one row each): what the policy and the value imitate."""

    obs: np.ndarray  # (N, OBS_SIZE) uint8
    mask: np.ndarray  # (N, 43) bool
    hidden: np.ndarray  # (N, 72) float32 with the perfect critic (the other hands), else (N, 0)
    values: np.ndarray  # (N, 36) float32: pimc's mean value of each legal card; NaN elsewhere and for declarations
    action: np.ndarray  # (N,) int64: the expert's choice
    ret: np.ndarray  # (N,) float32: the acting seat's reward at the end of its game (reward_scale applied)

    def __len__(self) -> int:
        return len(self.action)

    @classmethod
    def empty(cls, perfect: bool) -> Labels:
        return cls(np.zeros((0, OBS_SIZE), OBS_DTYPE), np.zeros((0, NUM_ACTIONS), bool),
                   np.zeros((0, HIDDEN_HANDS_SIZE if perfect else 0), np.float32),
                   np.zeros((0, NUM_CARDS), np.float32), np.zeros(0, np.int64), np.zeros(0, np.float32))

    def concat(self, other: Labels) -> Labels:
        return Labels(*(np.concatenate([getattr(self, f.name), getattr(other, f.name)]) for f in fields(self)))

    def head(self, n: int) -> Labels:
        return Labels(*(getattr(self, f.name)[:n] for f in fields(self)))

    def to_dict(self) -> dict[str, torch.Tensor]:
        return {f.name: torch.from_numpy(np.ascontiguousarray(getattr(self, f.name))) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: dict) -> Labels:
        """The inverse of :meth:`to_dict`; ``ValueError`` if a field is missing or misshapen."""
        names = [f.name for f in fields(cls)]
        if not isinstance(data, dict) or set(data) != set(names) or not all(
                isinstance(v, torch.Tensor) for v in data.values()):
            raise ValueError(f"labels must be tensors named {', '.join(names)}")
        arrays = {k: data[k].cpu().numpy() for k in names}
        n = len(arrays["action"])
        hidden = arrays["hidden"].shape[1:] if arrays["hidden"].ndim == 2 else None
        expected = {"obs": ((n, OBS_SIZE), np.dtype(OBS_DTYPE)), "mask": ((n, NUM_ACTIONS), np.bool_),
                    "hidden": ((n, hidden[0] if hidden in ((0,), (HIDDEN_HANDS_SIZE,)) else -1), np.float32),
                    "values": ((n, NUM_CARDS), np.float32), "action": ((n,), np.int64), "ret": ((n,), np.float32)}
        for name, (shape, dtype) in expected.items():
            if arrays[name].shape != shape or arrays[name].dtype != dtype:
                raise ValueError(f"labels field {name!r} is {arrays[name].dtype} {arrays[name].shape}, "
                                 f"expected {np.dtype(dtype)} {shape}")
        return cls(**arrays)


def worker_count(requested: int) -> int:
    """``imitation_workers``: 0 means every core this process may use."""
    from imperiale_agents.parallel.process_pool import cpu_count

    return requested or cpu_count()


class SearchPool:
    """The processes that run ``pimc``'s searches (none with one worker: they run here)."""

    def __init__(self, workers: int):
        self.workers = workers
        # The agents' pool: spawn-safe, and a killed worker is an error, never a hang.
        self._searches = LazyPool(workers, "the imitation's pimc searches")

    def map(self, jobs: list) -> list:
        from imperiale_agents.search.pimc import search_row

        return self._searches.map(search_row, jobs, chunksize=max(1, len(jobs) // (4 * self.workers)))

    def close(self) -> None:
        self._searches.close()

    def __enter__(self) -> SearchPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def label_deals(rules: Rules, games: int, rng: np.random.Generator, pool: SearchPool, *, samples: int,
                single_deal: bool = True, perfect: bool = False, reward_scale: float = 1.0, infer=None,
                belief=None, bar=None, double_dummy: bool = False, player=None) -> Labels:
    """Play ``games`` games (deals with ``single_deal``) side by side, ``pimc:samples`` at the cards
    and the heuristic at the declarations, and label every decision that had a choice (the module
    docstring says how).  ``infer``: an opponent model; then the searches are ``pimc:samples:infer``'s,
    on worlds weighed by the model's likelihood of the opponent's plays
    (:mod:`imperiale_agents.search.play_likelihood`).  ``belief``: a belief model; then they are
    ``pimc:samples:belief``'s, on worlds resampled by it
    (:meth:`~imperiale_agents.search.belief_model.BeliefNet.worlds`).
    ``double_dummy``: the card values kept are those of the true deal, solved exactly, instead of
    pimc's means (pimc still plays, so the deals are the same as without it).
    ``player``: an agent that plays the cards instead of pimc, whose values still label them: with
    pimc's labels, the deals a student reaches by its own play labelled by its teacher (DAgger).
    ``bar``: a progress bar advanced by one per game that ends."""
    bg = BatchGame(rules, games, single_deal=single_deal)
    bg.reset(int(rng.integers(2**63)))
    labeller = _Labeller(bg, rng, pool, samples, perfect, infer, bar, double_dummy, player, belief)
    drive(bg, labeller.choose, record=labeller.record, settle=labeller.settle)
    if not labeller.parts:
        return Labels.empty(perfect)
    obs, mask, hidden, values, action, game, seat = (np.concatenate(x) for x in zip(*labeller.parts, strict=True))
    ret = (labeller.rewards_of[game, seat] * reward_scale).astype(np.float32)
    return Labels(obs, mask, hidden, values, action.astype(np.int64), ret)


class _Labeller:
    """The expert at the table of :func:`label_deals`: the heuristic declares, ``pimc`` searches the
    cards with a choice; every decision with a choice is kept with the search's card values, and
    each game's rewards when it ends."""

    def __init__(self, bg: BatchGame, rng: np.random.Generator, pool: SearchPool, samples: int, perfect: bool,
                 infer, bar, double_dummy: bool = False, player=None, belief=None):
        from imperiale_agents.policies.heuristic import HeuristicAgent

        self.bg, self.rng, self.pool, self.samples, self.perfect, self.infer, self.bar = (
            bg, rng, pool, samples, perfect, infer, bar)
        self.double_dummy, self.player, self.belief = double_dummy, player, belief
        self.heuristic = HeuristicAgent(bg.rules)
        self.rewards_of = np.zeros((bg.n, bg.players), dtype=np.float32)
        self.parts: list[tuple] = []  # per step: obs, mask, hidden, values, action, game, seat
        self.values = np.zeros((0, NUM_CARDS), dtype=np.float32)  # the step's card values, live games

    def choose(self, turn: Turn) -> np.ndarray:
        """The heuristic's answers, and the card of ``pimc`` (or of the player) where there is a card
        to choose, its values kept (pimc's means, or the true deal's)."""
        from imperiale_agents.observation_view import decode
        from imperiale_agents.search.pimc import search_job

        rules, rng = self.bg.rules, self.rng
        live = np.flatnonzero(turn.live)
        obs, mask = turn.obs[live], turn.mask[live]
        action = self.heuristic.act(obs, mask)
        self.values = np.full((len(live), NUM_CARDS), np.nan, dtype=np.float32)
        v = decode(obs)
        cards = np.flatnonzero((v.phase == PLAY_PHASE) & (mask[:, :NUM_CARDS].sum(axis=1) > 1))
        jobs = []
        if self.player is None or not self.double_dummy:  # pimc searches: to play, or for the labels
            seeds = rng.integers(0, 2**63, size=len(cards))
            jobs = [search_job(obs[r : r + 1], mask[r], rules, self.samples, int(s), worlds=self.worlds(obs, r, int(s)))
                    for r, s in zip(cards, seeds, strict=True)]
        if self.double_dummy:  # one job a card more: the true deal, solved exactly (draws nothing from rng)
            jobs += [search_job(obs[r : r + 1], mask[r], rules, 1, 0, worlds=true_world(self.bg, live[r],
                                                                                     int(turn.seat[live[r]])))
                     for r in cards]
        results = self.pool.map(jobs)
        if self.player is None:  # pimc's searches come first: its cards
            action[cards] = [card for card, _ in results[: len(cards)]]
        else:
            action[cards] = self.player.act(obs[cards], mask[cards], rng)
        kept = results[len(results) - len(cards):]  # the true deal's values, or pimc's means
        for r, (_, values) in zip(cards, kept, strict=True):
            self.values[r] = values
        full = np.zeros(self.bg.n, dtype=np.int64)
        full[live] = action
        return full

    def worlds(self, obs: np.ndarray, r: int, seed: int) -> np.ndarray | None:
        """The worlds the search of row ``r`` solves when they are weighed (``infer``, ``belief``); ``None``:
        the search draws its own, uniform among the consistent ones."""
        from imperiale_agents.observation_view import decode
        from imperiale_agents.search.pimc import weighted_worlds

        if self.infer is not None:
            return weighted_worlds(self.bg.rules, obs[r], decode(obs[r : r + 1]), seed, self.samples, self.infer)
        if self.belief is not None:
            return self.belief.worlds(self.bg.rules, obs[r], decode(obs[r : r + 1]), seed, self.samples)
        return None

    def record(self, turn: Turn, actions: np.ndarray) -> None:
        """Keep the live decisions that had a choice (the other hands too, for the perfect critic)."""
        live = np.flatnonzero(turn.live)
        mask = turn.mask[live]
        keep = np.flatnonzero(mask.sum(axis=1) > 1)
        if not len(keep):
            return
        rows = live[keep]
        hidden = (hidden_hands(self.bg, turn.seat)[rows] if self.perfect
                  else np.zeros((len(keep), 0), np.float32))
        self.parts.append((turn.obs[rows], mask[keep], hidden, self.values[keep], actions[rows], rows,
                           turn.seat[rows]))

    def settle(self, turn: Turn, rewards: np.ndarray, terminated: np.ndarray) -> None:
        ended = np.flatnonzero(terminated)
        self.rewards_of[ended] = rewards[ended]
        if self.bar is not None and len(ended):
            self.bar.update(len(ended))


def true_world(bg: BatchGame, game: int, seat: int) -> np.ndarray:
    """The deal of game ``game`` as it stands, by seat relative to ``seat``: ``(1, 3, 36)`` bool,
    the form of pimc's sampled worlds (the third row empty with two players)."""
    hands = np.zeros((1, 3), dtype=np.uint64)
    hands[0, : bg.players] = bg.hands[game, (seat + np.arange(bg.players)) % bg.players]
    return unpack_hands(hands).reshape(1, 3, NUM_CARDS) > 0


def targets(labels: Labels, temperature: float) -> np.ndarray:
    """``(N, 43)`` float32 target distributions: softmax(value / T) over the legal cards of the
    searched decisions (``T > 0``), one-hot on the expert's choice otherwise."""
    out = np.zeros((len(labels), NUM_ACTIONS), dtype=np.float32)
    searched = ~np.isnan(labels.values).all(axis=1)
    hard = np.flatnonzero(~searched) if temperature > 0 else np.arange(len(labels))
    out[hard, labels.action[hard]] = 1.0
    if temperature > 0 and searched.any():
        v = labels.values[searched].astype(np.float64) / temperature
        z = np.exp(v - np.nanmax(v, axis=1, keepdims=True))
        z = np.where(np.isnan(z), 0.0, z)
        out[np.flatnonzero(searched), :NUM_CARDS] = z / z.sum(axis=1, keepdims=True)
    return out


def imitation_update(model: ActorCritic, optimizer: torch.optim.Optimizer, labels: Labels, cfg: TrainConfig,
                     rng: np.random.Generator, device: torch.device) -> dict[str, float]:
    """``imitation_epochs`` passes over ``labels`` in shuffled minibatches of ``imitation_batch``
    (the order drawn from ``rng``).  Returns the mean losses of the last pass, the agreement of
    the policy's argmax with the expert's choice after it, and the count of labels."""
    n = len(labels)
    perfect = labels.hidden.shape[1] > 0
    target = targets(labels, cfg.imitation_temperature)

    def rows(idx: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """The features (made here, a minibatch at a time: the labels keep the bytes), masks and hands."""
        put = lambda a: torch.from_numpy(a).to(device)  # noqa: E731
        hidden = put(labels.hidden[idx]) if perfect else None
        return put(policy_features(labels.obs[idx])), put(labels.mask[idx]), hidden

    sums = {"loss/imitation_policy": 0.0, "loss/imitation_value": 0.0, "loss/grad_norm": 0.0}
    count = 0
    for epoch in range(cfg.imitation_epochs):
        perm = rng.permutation(n)
        last = epoch == cfg.imitation_epochs - 1
        for start in range(0, n, cfg.imitation_batch):
            idx = perm[start : start + cfg.imitation_batch]
            x, mask, hidden = rows(idx)
            policy_loss, value_loss = imitation_losses(model, x, mask, hidden, torch.from_numpy(target[idx]).to(device),
                                                       torch.from_numpy(labels.ret[idx]).to(device))
            loss = policy_loss + cfg.vf_coef * value_loss
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            grad_norm = nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
            optimizer.step()
            if last:
                for k, v in (("loss/imitation_policy", policy_loss), ("loss/imitation_value", value_loss),
                             ("loss/grad_norm", grad_norm)):
                    sums[k] += float(v.detach())
                count += 1
    out = {k: v / max(count, 1) for k, v in sums.items()}
    with torch.no_grad():
        agree = sum(int((model.logits(*rows(np.arange(i, min(i + 4096, n)))[:2]).argmax(-1)
                         == torch.from_numpy(labels.action[i : i + 4096]).to(device)).sum()) for i in range(0, n, 4096))
    out["imitation/agreement"] = agree / max(n, 1)
    out["imitation/labels"] = float(n)
    return out


def imitation_losses(model: ActorCritic, x: torch.Tensor, mask: torch.Tensor, hidden: torch.Tensor | None,
                     target: torch.Tensor, ret: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(cross-entropy of the masked policy to ``target``, half the squared error of the value to ``ret``).
    An illegal action has a finite masked logit and a zero target, so it adds exactly 0."""
    logits, value = model.logits_and_value(x, mask, hidden)
    policy_loss = -(target * torch.log_softmax(logits, dim=-1)).sum(-1).mean()
    value_loss = 0.5 * ((value - ret) ** 2).mean()
    return policy_loss, value_loss
