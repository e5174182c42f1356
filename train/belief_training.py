"""Training the belief model: where each unseen card lies, learned from deals against the true deal.

Why: ``pimc`` draws the opponent's hand uniformly among the hands that agree with what is proven
(:mod:`imperiale_agents.search.pimc`), but how a player played says more than what his plays prove.  A
small network that reads the observation with its order of play and predicts every unseen card's
place gives the search better worlds (:mod:`imperiale_agents.search.belief_model`, spec ``pimc:N:belief``).

**Data** (:func:`play_deals`).  Deals are played on the batched engine by a cheap policy (the shipped
champion by default: it learnt its play from ``pimc``'s, so the deals look like the ones the search
meets).  At every decision the observation of the seat to play is kept with the true place of every
card relative to that seat (seat + 1, seat + 2, or the talon) and the places the observation allows
(:func:`imperiale_agents.search.belief_model.possible`).  The last ``held_out`` deals are never trained on.

**Loss** (:func:`log_loss`).  For every card with a choice of place (two or more allowed), the
cross-entropy of the true place under the network's softmax over the allowed places only; the mean
over those cards, in nats.

**Calibration** (:func:`calibration`).  The held-out log loss of the network is set against the
uniform sampler's: the marginal of each card's place under worlds drawn by ``pimc``'s exact sampler
(every known fact respected, hand sizes and declared points included), estimated from many worlds a
decision; a reliability plot bins the predicted probabilities of both against how often the card
was there.

``python -m imperiale_train.belief_training --help`` trains, measures and writes the file in one command.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
import torch
from torch import nn

from imperiale_agents.driver import Turn, drive
from imperiale_agents.observation_view import decode
from imperiale_agents.search.belief_model import PLACES, belief_archive_bytes, possible, read_belief
from imperiale_agents.search.pimc import sampler_marginal
from imperiale_env.batch import BatchGame
from imperiale_env.core.cards import NUM_CARDS
from imperiale_env.core.observation import FEATURES
from imperiale_env.core.rules import Rules, resolve_rules
from imperiale_train.rollout import hidden_hands

#: Bounds of the command's numbers, checked before any work.
MAX_DEALS = 200_000
MAX_HIDDEN = 1024
MAX_EPOCHS = 100


@dataclass
class Decisions:
    """Decisions kept from played deals (one row each)."""

    obs: np.ndarray  # (N, OBS_SIZE) uint8: the observation of the seat to play
    place: np.ndarray  # (N, 36) int8: every card's true place relative to that seat (0, 1, 2 = PLACES)
    allowed: np.ndarray  # (N, 36, 3) bool: the places the observation allows (possible())
    log_prior: np.ndarray  # (N, 36, 3) float32: log of the sampler's marginal at the allowed places, 0 elsewhere
    deal: np.ndarray  # (N,) int64: the deal it comes from

    def __len__(self) -> int:
        return len(self.deal)

    def take(self, rows: np.ndarray) -> Decisions:
        return Decisions(*(getattr(self, f.name)[rows] for f in fields(self)))


def true_places(hidden: np.ndarray) -> np.ndarray:
    """``(N, 36)`` int8 places from the other hands ``(N, 72)`` (relative seats 1 and 2, as
    :func:`imperiale_train.rollout.hidden_hands` gives them): a card in neither is in the talon."""
    place = np.full((len(hidden), NUM_CARDS), 2, dtype=np.int8)
    place[hidden[:, :NUM_CARDS] > 0] = 0
    place[hidden[:, NUM_CARDS:] > 0] = 1
    return place


def play_deals(rules: Rules, deals: int, agent, seed: int, bar=None) -> Decisions:
    """Play ``deals`` single deals side by side, ``agent`` at every seat, and keep every decision
    that has at least one card of uncertain place.  ``RuntimeError`` if a true place is one the
    observation rules out (:func:`~imperiale_agents.search.belief_model.possible` would then be wrong)."""
    bg = BatchGame(rules, deals, single_deal=True)
    bg.reset(seed)
    rng = np.random.default_rng(seed)
    parts: list[tuple] = []

    def choose(turn: Turn) -> np.ndarray:
        live = np.flatnonzero(turn.live)
        obs = turn.obs[live]
        allowed = possible(decode(obs))
        place = true_places(hidden_hands(bg, bg.current_player)[live])
        uncertain = allowed.sum(axis=-1) > 1
        truth_ok = np.take_along_axis(allowed, place[..., None].astype(np.int64), axis=-1)[..., 0]
        if (uncertain & ~truth_ok).any():
            raise RuntimeError("a card lies in a place the observation rules out: possible() is wrong")
        keep = np.flatnonzero(uncertain.any(axis=1))
        marginal = sampler_marginal(decode(obs[keep]))
        with np.errstate(divide="ignore"):
            log_prior = np.where(allowed[keep], np.log(marginal), 0.0).astype(np.float32)
        if np.isnan(log_prior).any():
            raise RuntimeError("the sampler's marginal is not a probability: sampler_marginal is wrong")
        parts.append((obs[keep], place[keep], allowed[keep], log_prior, live[keep]))
        actions = np.zeros(deals, dtype=np.int64)
        actions[live] = agent.act(obs, turn.mask[live], rng)
        return actions

    def settle(turn: Turn, rewards: np.ndarray, terminated: np.ndarray) -> None:
        if bar is not None and terminated.any():
            bar.update(int(terminated.sum()))

    drive(bg, choose, settle=settle)
    return Decisions(*(np.concatenate(x) for x in zip(*parts, strict=True)))


class Expand(nn.Module):
    """``(B, OBS_SIZE)`` observation bytes -> ``(B, FEATURES.size)`` float32 one-hot features on the
    module's device (:data:`~imperiale_env.core.observation.FEATURES`: the belief model reads the
    whole order of play, which the policy's features summarise).  Its tables are not saved with the
    weights (they come from the layout)."""

    def __init__(self):
        super().__init__()
        for name in ("category_columns", "category_base", "category_low", "scalar_columns", "scalar_features",
                     "scalar_scale"):
            self.register_buffer(name, torch.as_tensor(getattr(FEATURES, name)), persistent=False)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        out = torch.zeros((obs.shape[0], FEATURES.size), dtype=torch.float32, device=obs.device)
        out[:, self.scalar_features] = obs[:, self.scalar_columns].float() * self.scalar_scale
        index = self.category_base + obs[:, self.category_columns].long() - self.category_low
        return out.scatter_(1, index, 1.0)


class BeliefModel(nn.Module):
    """The observation bytes and the log of the hand-size prior -> ``(B, 36, 3)`` logits of each card's
    place: :class:`Expand`, an MLP of ReLU layers ``hidden`` wide (the layers :func:`export_bytes`
    writes for numpy), plus the log prior.  The last layer starts at zero: the untrained model is the
    sampler's marginal (:func:`imperiale_agents.search.pimc.sampler_marginal`), and it learns what the play adds."""

    def __init__(self, hidden: tuple[int, ...]):
        super().__init__()
        self.expand = Expand()
        sizes = [FEATURES.size, *hidden, NUM_CARDS * len(PLACES)]
        layers: list[nn.Module] = []
        for i in range(len(sizes) - 1):
            layers.append(nn.Linear(sizes[i], sizes[i + 1]))
            if i < len(sizes) - 2:
                layers.append(nn.ReLU())
        self.mlp = nn.Sequential(*layers)
        nn.init.zeros_(self.mlp[-1].weight)
        nn.init.zeros_(self.mlp[-1].bias)

    def forward(self, obs: torch.Tensor, log_prior: torch.Tensor) -> torch.Tensor:
        return self.mlp(self.expand(obs)).view(-1, NUM_CARDS, len(PLACES)) + log_prior

    def linear_layers(self) -> list[nn.Linear]:
        return [m for m in self.mlp if isinstance(m, nn.Linear)]


def log_loss(logits: torch.Tensor, place: torch.Tensor, allowed: torch.Tensor) -> tuple[torch.Tensor, int]:
    """(sum of the cross-entropies, number of cards) over the cards with two or more allowed
    places: the true place's log-probability under a softmax over the allowed places only."""
    masked = logits.masked_fill(~allowed, float("-inf"))
    logp = torch.log_softmax(masked, dim=-1)
    uncertain = allowed.sum(dim=-1) > 1
    picked = logp.gather(-1, place.long().unsqueeze(-1)).squeeze(-1)
    return -(picked[uncertain]).sum(), int(uncertain.sum())


def _batches(n: int, size: int, rng: np.random.Generator | None):
    order = rng.permutation(n) if rng is not None else np.arange(n)
    for start in range(0, n, size):
        yield order[start : start + size]


def _tensors(d: Decisions, rows: np.ndarray) -> tuple[torch.Tensor, ...]:
    return tuple(torch.from_numpy(a[rows]) for a in (d.obs, d.log_prior, d.place, d.allowed))


def evaluate(model: BeliefModel, d: Decisions, batch: int = 4096) -> float:
    """The mean log loss (nats a card with a choice of place) of ``model`` on ``d``."""
    total, count = 0.0, 0
    model.eval()
    with torch.no_grad():
        for rows in _batches(len(d), batch, None):
            obs, log_prior, place, allowed = _tensors(d, rows)
            s, c = log_loss(model(obs, log_prior), place, allowed)
            total, count = total + float(s), count + c
    return total / max(count, 1)


def train_model(train: Decisions, held_out: Decisions, *, hidden: tuple[int, ...], epochs: int, batch: int,
                lr: float, seed: int, bar=None) -> tuple[BeliefModel, list[dict[str, float]]]:
    """AdamW on the log loss, ``epochs`` passes in shuffled minibatches; the held-out loss before
    training (epoch 0: the hand-size prior) and after each pass.  The weights of the pass with the
    lowest held-out loss are the ones returned (the network overfits the deals it saw after a few
    passes).  ``bar``: advanced by one per minibatch."""
    import copy

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = BeliefModel(hidden)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(1, epochs * -(-len(train) // batch)))
    history = [{"epoch": 0, "train": float("nan"), "held_out": evaluate(model, held_out)}]
    best = (history[0]["held_out"], copy.deepcopy(model.state_dict()))
    for epoch in range(epochs):
        model.train()
        total, count = 0.0, 0
        for rows in _batches(len(train), batch, rng):
            obs, log_prior, place, allowed = _tensors(train, rows)
            s, c = log_loss(model(obs, log_prior), place, allowed)
            opt.zero_grad()
            (s / max(c, 1)).backward()
            opt.step()
            sched.step()
            total, count = total + float(s.detach()), count + c
            if bar is not None:
                bar.update(1)
        history.append({"epoch": epoch + 1, "train": total / max(count, 1), "held_out": evaluate(model, held_out)})
        if history[-1]["held_out"] < best[0]:
            best = (history[-1]["held_out"], copy.deepcopy(model.state_dict()))
        if bar is not None:
            bar.set_postfix(held_out=f"{history[-1]['held_out']:.4f}")
    model.load_state_dict(best[1])
    return model, history


def export_bytes(model: BeliefModel, rules: Rules, provenance: dict) -> bytes:
    """The belief file of ``model`` (:func:`imperiale_agents.search.belief_model.belief_archive_bytes`)."""
    layers = [(m.weight.detach().cpu().numpy(), m.bias.detach().cpu().numpy()) for m in model.linear_layers()]
    return belief_archive_bytes(layers, "relu", rules.to_dict(), provenance)


# --- calibration -------------------------------------------------------------------------------


def uniform_marginals(rules: Rules, d: Decisions, worlds: int, seed: int, bar=None) -> np.ndarray:
    """``(N, 36, 3)``: each card's place frequency over ``worlds`` worlds drawn for each decision by
    ``pimc``'s exact sampler (uniform over the consistent worlds), with half a count added to every
    allowed place so that a place no drawn world used keeps a small probability."""
    from imperiale_agents.search.belief_model import world_places
    from imperiale_agents.search.pimc import _sample

    rng = np.random.default_rng(seed)
    out = np.zeros(d.allowed.shape, dtype=np.float64)
    v = decode(d.obs)
    for i in range(len(d)):
        row = decode(d.obs[i : i + 1])
        w = _sample(row, rules, worlds, rng)
        places = world_places(w, int(v.players[i]))
        counts = np.stack([(places == k).sum(axis=0) for k in range(len(PLACES))], axis=-1).astype(np.float64)
        counts = np.where(d.allowed[i], counts + 0.5, 0.0)
        total = counts.sum(axis=-1, keepdims=True)
        out[i] = np.divide(counts, total, out=np.zeros_like(counts), where=total > 0)
        if bar is not None:
            bar.update(1)
    return out


def decision_log_loss(probs: np.ndarray, d: Decisions) -> tuple[np.ndarray, np.ndarray]:
    """Each decision's summed log loss (nats) of the probabilities ``probs`` ``(N, 36, 3)`` over its
    cards with a choice of place, and how many such cards it has (``(N,)`` each: a bootstrap over
    deals sums them by deal)."""
    uncertain = d.allowed.sum(axis=-1) > 1
    p = np.take_along_axis(probs, d.place[..., None].astype(np.int64), axis=-1)[..., 0]
    return np.where(uncertain, -np.log(np.where(uncertain, p, 1.0)), 0.0).sum(axis=1), uncertain.sum(axis=1)


def mean_log_loss(probs: np.ndarray, d: Decisions) -> float:
    """Mean log loss (nats) of the probabilities ``probs`` ``(N, 36, 3)`` over the cards of ``d``
    with a choice of place."""
    loss, cards = decision_log_loss(probs, d)
    return float(loss.sum() / cards.sum())


def reliability(probs: np.ndarray, d: Decisions, bins: int = 10) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean predicted probability, observed frequency, count) in ``bins`` equal bins of the
    predicted probability of every allowed place of every card with a choice of place."""
    uncertain = (d.allowed.sum(axis=-1) > 1)[..., None] & d.allowed
    p = probs[uncertain]
    hit = (d.place[..., None] == np.arange(len(PLACES)))[uncertain]
    which = np.minimum((p * bins).astype(np.int64), bins - 1)
    count = np.bincount(which, minlength=bins)
    mean_p = np.bincount(which, weights=p, minlength=bins) / np.maximum(count, 1)
    freq = np.bincount(which, weights=hit, minlength=bins) / np.maximum(count, 1)
    return mean_p, freq, count


def reliability_plot(path: Path, curves: dict[str, tuple], title: str) -> None:
    """The reliability diagram of each ``name -> reliability(...)`` curve, written atomically to ``path``."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from imperiale_env.core.atomic import write_atomic

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6, 7), height_ratios=(3, 1), sharex=True)
    top.plot([0, 1], [0, 1], color="grey", linestyle=":", label="perfect calibration")
    for name, (mean_p, freq, count) in curves.items():
        seen = count > 0
        top.plot(mean_p[seen], freq[seen], marker="o", label=name)
        bottom.plot(mean_p[seen], count[seen], marker=".", label=name)
    top.set_ylabel("how often the card was there")
    top.set_title(title, fontsize=10)
    top.legend(loc="upper left", fontsize=8)
    top.grid(alpha=0.3)
    bottom.set_yscale("log")
    bottom.set_xlabel("predicted probability of a place")
    bottom.set_ylabel("predictions")
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    write_atomic(path, buffer.getvalue())


def calibration(model_file: Path, rules: Rules, d: Decisions, worlds: int, seed: int, bar=None) -> dict:
    """The held-out log losses of the numpy belief of ``model_file`` (fitted to the cards each place
    holds, and each card's softmax alone, before the fit), and of the uniform sampler on the
    decisions ``d``, and the three reliability curves."""
    net = read_belief(model_file)
    v = decode(d.obs)
    probs, per_card = net.probabilities(d.obs, v), net.probabilities(d.obs, v, fitted=False)
    uniform = uniform_marginals(rules, d, worlds, seed, bar)
    return {"belief": mean_log_loss(probs, d), "per_card": mean_log_loss(per_card, d),
            "uniform": mean_log_loss(uniform, d),
            "curves": {"belief": reliability(probs, d),
                       "belief, each card's softmax unfitted": reliability(per_card, d),
                       "uniform sampler": reliability(uniform, d)}}


# --- the command -------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m imperiale_train.belief_training", description=(
        "Train the belief model on deals played by a cheap policy, measure its held-out log loss against "
        "pimc's uniform sampler, write the belief file and a reliability plot."))
    p.add_argument("--rules", default="academie", help="rules preset (default academie)")
    p.add_argument("--policy", default="champion", help="agent spec playing the deals (default champion)")
    p.add_argument("--deals", type=int, default=20_000, help="training deals (default 20000)")
    p.add_argument("--held-out", type=int, default=1_000, help="held-out deals (default 1000)")
    p.add_argument("--hidden", default="192,192", help="hidden layer widths, comma separated (default 192,192)")
    p.add_argument("--epochs", type=int, default=4, help="passes over the training decisions (default 4)")
    p.add_argument("--batch", type=int, default=512, help="minibatch size (default 512)")
    p.add_argument("--lr", type=float, default=2e-3, help="Adam learning rate (default 0.002)")
    p.add_argument("--seed", type=int, default=0, help="seed of the deals and the training (default 0)")
    p.add_argument("--calibration-decisions", type=int, default=2_000,
                   help="held-out card decisions compared with the uniform sampler (default 2000; 0: none)")
    p.add_argument("--worlds", type=int, default=2_000,
                   help="worlds drawn a decision for the uniform sampler's marginals (default 2000)")
    p.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    p.add_argument("--workers", type=int, default=1,
                   help="processes a searching --policy (pimc) spreads its decisions over (default 1; the same "
                        "deals whatever the count)")
    p.add_argument("--out", default="belief.npz", help="the belief file written (default belief.npz)")
    p.add_argument("--plot", default=None, help="reliability plot (.png) to write (default: none)")
    p.add_argument("--overwrite", action="store_true", help="replace --out and --plot if they exist")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    return p


def _check(args: argparse.Namespace) -> tuple[Rules, tuple[int, ...], object]:
    """The arguments checked before any work: one line naming what is wrong and what is allowed."""
    from imperiale_agents.registry import AgentError, make_agent

    rules = resolve_rules(args.rules)
    bounds = {"--deals": (args.deals, 1, MAX_DEALS), "--held-out": (args.held_out, 1, MAX_DEALS),
              "--epochs": (args.epochs, 1, MAX_EPOCHS), "--batch": (args.batch, 1, 65_536),
              "--calibration-decisions": (args.calibration_decisions, 0, 100_000),
              "--worlds": (args.worlds, 10, 100_000), "--threads": (args.threads, 1, 256),
              "--workers": (args.workers, 1, 256),
              "--seed": (args.seed, 0, 2**63 - 1)}
    for name, (value, low, high) in bounds.items():
        if not low <= value <= high:
            raise ValueError(f"{name} must be from {low} to {high:,}, got {value}")
    if not (0 < args.lr < 1):
        raise ValueError(f"--lr must be between 0 and 1, got {args.lr}")
    try:
        hidden = tuple(int(x) for x in args.hidden.split(","))
    except ValueError:
        raise ValueError(f"--hidden takes widths separated by commas, e.g. 256,256, got {args.hidden!r}") from None
    if not hidden or not all(1 <= h <= MAX_HIDDEN for h in hidden):
        raise ValueError(f"--hidden widths must be from 1 to {MAX_HIDDEN}, got {args.hidden!r}")
    for flag, path, suffix in (("--out", args.out, ".npz"), ("--plot", args.plot, ".png")):
        if path is None:
            continue
        if Path(path).suffix != suffix:
            raise ValueError(f"{flag} must name a {suffix} file, got {path!r}")
        if not Path(path).resolve().parent.is_dir():
            raise ValueError(f"{flag}: the folder of {path!r} does not exist")
        if Path(path).exists() and not args.overwrite:
            raise ValueError(f"{flag}: {path!r} exists; pass --overwrite to replace it, or name another file")
    try:
        agent = make_agent(args.policy, rules, workers=args.workers)
    except AgentError as exc:
        raise ValueError(f"--policy: {exc}") from None
    return rules, hidden, agent


def _bar(enabled: bool, total: int, unit: str, desc: str):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, desc=desc, dynamic_ncols=True, file=sys.stderr)


def run(args: argparse.Namespace) -> dict:
    """Train, measure and write what ``args`` asks (see :func:`_parser`); the figures."""
    from imperiale_env.core.atomic import write_atomic

    rules, hidden, agent = _check(args)
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    total = args.deals + args.held_out
    bar = _bar(not args.no_progress, total, "deal", "deals")
    try:
        data = play_deals(rules, total, agent, args.seed, bar)
    finally:
        close = getattr(agent, "close", None)  # a search's worker processes
        if callable(close):
            close()
    if bar is not None:
        bar.close()
    train_rows = data.deal < args.deals
    train, held = data.take(np.flatnonzero(train_rows)), data.take(np.flatnonzero(~train_rows))
    steps = args.epochs * -(-len(train) // args.batch)
    bar = _bar(not args.no_progress, steps, "batch", "train")
    model, history = train_model(train, held, hidden=hidden, epochs=args.epochs, batch=args.batch, lr=args.lr,
                                 seed=args.seed, bar=bar)
    if bar is not None:
        bar.close()
    seconds = time.perf_counter() - start
    best = min(history, key=lambda h: h["held_out"])
    provenance = {"policy": args.policy, "deals": args.deals, "held_out_deals": args.held_out, "hidden": list(hidden),
                  "epochs": args.epochs, "batch": args.batch, "lr": args.lr, "seed": args.seed,
                  "train_decisions": len(train), "held_out_decisions": len(held),
                  "held_out_log_loss": best["held_out"], "best_epoch": best["epoch"],
                  "prior_held_out_log_loss": history[0]["held_out"], "seconds": round(seconds, 1)}
    figures = {"history": history, **{k: provenance[k] for k in ("train_decisions", "held_out_decisions")}}
    if args.calibration_decisions:
        # Card decisions only (what the search asks about), drawn at random from the held-out deals.
        play = np.flatnonzero(decode(held.obs).phase == 2)
        pick = np.random.default_rng(args.seed).choice(len(play), min(len(play), args.calibration_decisions),
                                                       replace=False)
        sub = held.take(np.sort(play[pick]))
        write_atomic(args.out, export_bytes(model, rules, provenance))
        bar = _bar(not args.no_progress, len(sub), "decision", "uniform sampler")
        cal = calibration(Path(args.out), rules, sub, args.worlds, args.seed, bar)
        if bar is not None:
            bar.close()
        provenance["calibration"] = {"decisions": len(sub), "worlds": args.worlds,
                                     "belief_log_loss": cal["belief"], "per_card_log_loss": cal["per_card"],
                                     "uniform_log_loss": cal["uniform"]}
        figures["calibration"] = provenance["calibration"]
        if args.plot:
            title = (f"{rules.preset}: {len(sub):,} held-out card decisions\nlog loss: belief {cal['belief']:.4f} "
                     f"(unfitted {cal['per_card']:.4f}), uniform sampler {cal['uniform']:.4f} nats a card")
            reliability_plot(Path(args.plot), cal["curves"], title)
    write_atomic(args.out, export_bytes(model, rules, provenance))
    figures["seconds"] = round(time.perf_counter() - start, 1)
    return figures


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        figures = run(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(figures, indent=1))
    print(f"wrote {args.out}" + (f" and {args.plot}" if args.plot and "calibration" in figures else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
