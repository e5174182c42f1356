"""Differential run: the batched engine against the reference engine on many random games.

    python benchmarks/differential.py --games 1000000            # every preset, a million each
    python benchmarks/differential.py --games 20000 --rules foster --chunk 500

Games are played in chunks (one batch each, a fresh seed per chunk); the first
disagreement stops the run with the game seed, the step and what differs.  The reference
engine sets the pace (a few hundred games a second per core).
"""

from __future__ import annotations

import argparse
import sys
import time

from tqdm import tqdm

from imperiale_env.differential import Disagreement, compare
from imperiale_env.rules import PRESET_NAMES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1_000_000, help="games per preset")
    parser.add_argument("--rules", default="all", help=f"a preset ({', '.join(PRESET_NAMES)}) or 'all'")
    parser.add_argument("--chunk", type=int, default=1000, help="games per batch")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    presets = PRESET_NAMES if args.rules == "all" else (args.rules,)
    for preset in presets:
        start, decisions, done = time.perf_counter(), 0, 0
        with tqdm(total=args.games, desc=preset, unit="game") as bar:
            chunk_seed = args.seed
            while done < args.games:
                n = min(args.chunk, args.games - done)
                try:
                    decisions += compare(preset, n, seed=chunk_seed)
                except Disagreement as exc:
                    print(f"DISAGREEMENT ({preset}, chunk seed {chunk_seed}): {exc}", file=sys.stderr)
                    return 1
                done += n
                chunk_seed += 1
                bar.update(n)
        elapsed = time.perf_counter() - start
        print(f"{preset}: {done} games, {decisions} decisions agree ({elapsed:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
