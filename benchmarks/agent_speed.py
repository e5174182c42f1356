"""Decision time per move of each agent, on positions from random play (academie by default).

    python benchmarks/agent_speed.py [--rules PRESET] [--positions N] [--agents random,heuristic,pimc:8]

For each agent: milliseconds per decision when asked about one game at a time (batch 1),
when asked about a batch of 256 games at once (amortised), and for pimc the time of the card
decisions it actually searches, by number of tricks left.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from imperiale_agents.base import make_agent
from imperiale_agents.observation_view import decode
from imperiale_cli.devtools.differential import random_legal
from imperiale_env.batch import BatchGame


def positions(rules: str, n: int, seed: int = 0):
    """``n`` positions spread over whole random games (every phase, every trick)."""
    bg = BatchGame(rules, 64)
    bg.reset(seed)
    rng = np.random.default_rng(seed)
    obs, masks = [], []
    while not bg.done.all():
        act = np.flatnonzero(~bg.done)
        m = bg.legal_action_mask()
        obs.append(bg.observe()[act])
        masks.append(m[act])
        bg.step(random_legal(rng, m))
    obs, masks = np.concatenate(obs), np.concatenate(masks)
    keep = rng.permutation(len(obs))[:n]
    return obs[keep], masks[keep]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rules", default="academie")
    ap.add_argument("--positions", type=int, default=512)
    ap.add_argument("--agents", default="random,heuristic,pimc:8:9,pimc:8,pimc:32")
    args = ap.parse_args()
    obs, mask = positions(args.rules, args.positions)
    v = decode(obs)
    left = 12 - v.tricks_played
    searched = (v.phase == 2) & (mask[:, :36].sum(axis=1) > 1)
    print(f"{len(obs)} positions ({searched.sum()} card decisions with a choice), rules {args.rules}")
    for spec in args.agents.split(","):
        agent = make_agent(spec, args.rules)
        rng = np.random.default_rng(0)
        if spec.startswith("pimc"):
            rows = np.flatnonzero(searched)[:64]
            times = []
            for r in rows:
                t0 = time.perf_counter()
                agent.act(obs[r : r + 1], mask[r : r + 1], rng)
                times.append(time.perf_counter() - t0)
            times = np.array(times)
            by = {k: 1000 * times[left[rows] == k].mean() for k in sorted(set(left[rows].tolist()), reverse=True)}
            print(f"{spec:>12}: {1000 * times.mean():8.2f} ms per searched card decision (mean of {len(rows)}); "
                  "by tricks left: " + ", ".join(f"{k}: {x:.1f}" for k, x in by.items()))
            continue
        t0 = time.perf_counter()
        for r in range(len(obs)):
            agent.act(obs[r : r + 1], mask[r : r + 1], rng)
        one = (time.perf_counter() - t0) / len(obs)
        t0 = time.perf_counter()
        for s in range(0, len(obs), 256):
            agent.act(obs[s : s + 256], mask[s : s + 256], rng)
        batched = (time.perf_counter() - t0) / len(obs)
        print(f"{spec:>12}: {1000 * one:8.3f} ms per decision at batch 1, "
              f"{1000 * batched:8.4f} ms amortised at batch 256")


if __name__ == "__main__":
    main()
