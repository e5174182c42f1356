"""The command line the library recipes share (``sb3_maskable_ppo.py``, ``torchrl_ppo.py``,
``cleanrl_ppo.py``): the same time budget, seed and evaluation for each, so that their results in
docs/libraries.md compare.  A recipe adds its own options, then trains, then :func:`report` plays
the trained agent in the suite's tournament on duplicate pairs of single deals against ``random``
and ``heuristic`` and prints the rates with their paired intervals."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

RULES = "academie"


def recipe_parser(doc: str) -> argparse.ArgumentParser:
    """The options every recipe takes: ``--minutes``, ``--seed``, ``--threads``, ``--deals``, ``--eval-seed``."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="training time at most (default 10)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument("--deals", type=int, default=300, help="duplicate pairs of single deals per opponent")
    parser.add_argument("--eval-seed", type=int, default=11)
    return parser


def parse_checked(parser: argparse.ArgumentParser, minimums: dict[str, float] | None = None) -> argparse.Namespace:
    """The arguments, each checked before any training starts (``minimums``: a recipe's own options'
    lower bounds, by their option names); a bad one ends with the parser's usage and exit status 2."""
    args = parser.parse_args()
    bounds = {"--minutes": 1e-3, "--threads": 1, "--deals": 2, **(minimums or {})}
    for name, low in bounds.items():
        value = getattr(args, name.lstrip("-").replace("-", "_"))
        if not value >= low:  # NaN too
            parser.error(f"{name} must be at least {low}, got {value}")
    for name, value in (("--seed", args.seed), ("--eval-seed", args.eval_seed)):
        if not 0 <= value < 2**32:
            parser.error(f"{name} must be from 0 to 2**32 - 1, got {value}")
    return args


def report(agent: Any, args: argparse.Namespace) -> None:
    """``agent`` against ``random`` and ``heuristic`` on ``args.deals`` duplicate pairs of single deals."""
    from imperiale_env.core.rules import make_rules
    from imperiale_train.evaluate import evaluate

    rates = evaluate(agent, make_rules(RULES), ("random", "heuristic"), groups=args.deals, seed=args.eval_seed,
                     single_deal=True)
    for opponent, r in rates.items():
        print(f"  against {opponent}: {100 * r['win_rate']:.1f}% of single deals won [{100 * r['ci_low']:.1f}, "
              f"{100 * r['ci_high']:.1f}] ({args.deals} duplicate pairs, seed {args.eval_seed}), margin "
              f"{r['margin']:+.3f} impériale a deal")


def train_and_report(label: str, args: argparse.Namespace, train: Callable[[], tuple[Any, int]],
                     agent_of: Callable[[Any], Any]) -> None:
    """``train()`` (the trained thing and the decisions it learned from) on ``args.threads`` torch
    threads, timed and told, then ``agent_of(trained)`` in :func:`report`."""
    import torch

    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    trained, decisions = train()
    seconds = time.perf_counter() - start
    print(f"{label} on {args.obs_type}: {decisions:,} decisions in {seconds:.0f} s ({decisions / seconds:.0f} a "
          f"second, {args.threads} torch threads), seed {args.seed}")
    report(agent_of(trained), args)

