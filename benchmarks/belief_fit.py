"""The shipped belief model with and without the fit to the cards each place holds, on fresh deals:

    python benchmarks/belief_fit.py --deals 2000 --seed 987654 --plot docs/belief_fit_reliability.png

Deals are played by the shipped champion at every seat (as the model's training deals were, but
from another seed); at every decision with a card of uncertain place, the held-out log loss (nats
a card, the cards with a choice of place) of each card's softmax alone and of the same fitted to
the number of cards each place holds (:func:`imperiale_agents.search.belief_model.fit_to_counts`), with a 95 %
interval of their difference bootstrapped over the deals (1,000 resamples), and optionally both
reliability curves in one plot.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from imperiale_agents.observation_view import decode
from imperiale_agents.registry import make_agent
from imperiale_agents.search.belief_model import shipped_belief
from imperiale_env.core.rules import make_rules
from imperiale_train.belief_training import decision_log_loss, mean_log_loss, play_deals, reliability, reliability_plot


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rules", default="academie", help="a preset with a shipped belief (academie)")
    parser.add_argument("--deals", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=987654)
    parser.add_argument("--plot", help="write the two reliability curves to this PNG")
    args = parser.parse_args(argv)
    if not 10 <= args.deals <= 10**6:
        parser.error(f"--deals must be from 10 to 10**6, got {args.deals}")
    rules = make_rules(args.rules)
    net = shipped_belief(args.rules)
    start = time.perf_counter()
    d = play_deals(rules, args.deals, make_agent("champion", rules), seed=args.seed)
    v = decode(d.obs)
    per_card, fitted = net.probabilities(d.obs, v, fitted=False), net.probabilities(d.obs, v)
    loss_card, cards = decision_log_loss(per_card, d)
    loss_fit, _ = decision_log_loss(fitted, d)
    deals = np.unique(d.deal)
    by_deal = np.stack([np.bincount(np.searchsorted(deals, d.deal), weights=w, minlength=len(deals))
                        for w in (loss_fit - loss_card, cards)])
    rng = np.random.default_rng(0)
    picks = rng.integers(0, len(deals), (1000, len(deals)))
    diffs = by_deal[0][picks].sum(axis=1) / by_deal[1][picks].sum(axis=1)
    low, high = np.percentile(diffs, [2.5, 97.5])
    a, b = mean_log_loss(per_card, d), mean_log_loss(fitted, d)
    print(f"{args.rules}: {len(d):,} decisions of {args.deals:,} deals (seed {args.seed}), "
          f"{time.perf_counter() - start:.0f} s")
    print(f"  log loss, each card's softmax: {a:.4f} nats a card")
    print(f"  log loss, fitted to the counts: {b:.4f} nats a card")
    print(f"  fitted - softmax: {b - a:+.5f} [{low:+.5f}, {high:+.5f}] (95 %, bootstrap over deals)")
    if args.plot:
        title = (f"{args.rules}: {len(d):,} decisions of {args.deals:,} fresh deals (seed {args.seed})\n"
                 f"log loss: fitted {b:.4f}, each card's softmax {a:.4f} nats a card")
        reliability_plot(Path(args.plot), {"belief fitted to the counts": reliability(fitted, d),
                                           "belief, each card's softmax": reliability(per_card, d)}, title)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
