"""What one observation costs beside one step, and beside merely writing its bytes.

``python benchmarks/observation_cost.py [--batch 4096]`` prints nanoseconds per game of: a step
with the random legal policy, ``observe(out=buf)``, and ``buf.fill(0)`` of the same uint8
buffer (best of five runs of 200 calls each).  Why: the with-observations speed of the batched
engine is bounded by the memory the observation is written to, and this puts a number on that
bound on the machine at hand (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from imperiale_env.batch import BatchGame
from imperiale_env.core.observation import OBS_DTYPE, OBS_SIZE
from imperiale_env.kernels.random_policy import random_legal_actions


def ns_per_game(call: Callable[[], object], batch: int, calls: int = 200, runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e9 / batch


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=4096, help="games side by side (default 4096)")
    batch = parser.parse_args(argv).batch
    game = BatchGame("academie", batch, auto_next_game=True)
    game.reset(0)
    buffer = np.empty((batch, OBS_SIZE), dtype=OBS_DTYPE)
    actions = np.empty(batch, dtype=np.int64)
    step = 0

    def play() -> None:
        nonlocal step
        game.step(random_legal_actions(game.action_bits(), 0, step, actions))
        step += 1

    for _ in range(10):  # compiled code loaded, games under way
        play()
        game.observe(out=buffer)
    print(f"batch {batch}, ns a game: step and random policy {ns_per_game(play, batch):.0f}, "
          f"observe(out=) {ns_per_game(lambda: game.observe(out=buffer), batch):.0f}, "
          f"fill(0) of the same {OBS_SIZE} bytes {ns_per_game(lambda: buffer.fill(0), batch):.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
