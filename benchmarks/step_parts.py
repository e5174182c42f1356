"""Where a batched step's time goes, on one thread and on several: the part threads cannot share.

``python benchmarks/step_parts.py [--batch 16384] [--threads 2] [--steps 300]`` plays random legal
games and prints nanoseconds a decision of: the legal actions (``action_bits``), the random
policy, the compiled stages of ``step`` (the decisions and every automatic stage after them),
the restarts of the games that ended (``auto_next_game``: new deals, run on one thread), the
rest of ``step`` (its checks and Python), and the observation; on one thread, then on
``--threads``.  Why: the speed-up of threads is bounded by the parts that stay serial
(Amdahl), and this says how large they are on the machine at hand (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from imperiale_env.batch import BatchGame
from imperiale_env.core.observation import OBS_DTYPE, OBS_SIZE
from imperiale_env.kernels.random_policy import random_legal_actions

PARTS = ("legal actions", "policy", "stages", "restarts", "rest of step", "observe")
WARM_UP = 20


def _timed(fn: Callable, clock: dict[str, float], part: str) -> Callable:
    """``fn``, adding the seconds of each call to ``clock[part]``."""
    def call(*args):
        start = time.perf_counter()
        out = fn(*args)
        clock[part] += time.perf_counter() - start
        return out
    return call


def measure(batch: int, threads: int, steps: int) -> dict[str, float]:
    """Nanoseconds a decision of each of :data:`PARTS`, over ``steps`` steps after a few untimed."""
    game = BatchGame("academie", batch, auto_next_game=True, threads=threads)
    game.reset(0)
    actions = np.empty(batch, dtype=np.int64)
    buffer = np.empty((batch, OBS_SIZE), dtype=OBS_DTYPE)
    clock = dict.fromkeys(PARTS, 0.0)
    game._machine.step = _timed(game._machine.step, clock, "stages")  # the engine's own calls, timed
    game._machine.start = _timed(game._machine.start, clock, "restarts")
    for n in range(WARM_UP + steps):
        if n == WARM_UP:
            clock.update(dict.fromkeys(PARTS, 0.0))
        t0 = time.perf_counter()
        bits = game.action_bits()
        t1 = time.perf_counter()
        chosen = random_legal_actions(bits, 0, n, actions, threads)
        t2 = time.perf_counter()
        game.step(chosen)
        t3 = time.perf_counter()
        game.observe(out=buffer)
        t4 = time.perf_counter()
        clock["legal actions"] += t1 - t0
        clock["policy"] += t2 - t1
        clock["rest of step"] += t3 - t2
        clock["observe"] += t4 - t3
    clock["rest of step"] -= clock["stages"] + clock["restarts"]
    return {part: 1e9 * seconds / (steps * batch) for part, seconds in clock.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=16384, help="games side by side (default 16384)")
    parser.add_argument("--threads", type=int, default=2, help="threads to compare with one (default 2)")
    parser.add_argument("--steps", type=int, default=300, help="timed steps (default 300)")
    args = parser.parse_args(argv)
    rows = {t: measure(args.batch, t, args.steps) for t in (1, args.threads)}
    print(f"batch {args.batch}, ns a decision: " + ", ".join(PARTS))
    for t, parts in rows.items():
        total = sum(parts.values()) - parts["observe"]
        print(f"{t} thread(s): " + ", ".join(f"{parts[p]:.1f}" for p in PARTS) + f"; step total {total:.1f}")
    one = rows[1]
    serial = one["restarts"] + one["rest of step"]
    total = sum(one.values()) - one["observe"]
    bound = total / (serial + (total - serial) / args.threads)
    print(f"serial share of a one-thread step (restarts and the rest of step): {serial / total:.1%}; "
          f"Amdahl's bound for {args.threads} threads: {bound:.2f}x without observations")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
