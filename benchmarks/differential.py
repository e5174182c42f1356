"""Differential run: the batched engine against the reference engine on many random games.

    python benchmarks/differential.py --games 1000000            # every preset, a million each
    python benchmarks/differential.py --games 20000 --rules foster --chunk 500
    python benchmarks/differential.py --variants --games 4000     # every rule variant, 4000 each
    python benchmarks/differential.py --games 1000 --no-observations

Observations of every seat are compared at every decision unless ``--no-observations``
(that comparison is about two thirds of the time).  With ``--variants`` every rule variant
of :func:`imperiale_cli.devtools.rule_variants.rule_variants` of the chosen presets is run, ``--games``
games each.

Games are played in chunks (one batch each, a fresh seed per chunk); the first
disagreement stops the run with the game seed, the step and what differs.  The reference
engine sets the pace (a few hundred games a second per core).
"""

from __future__ import annotations

import argparse
import sys
import time

from tqdm import tqdm

from imperiale_cli.devtools.differential import Disagreement, compare
from imperiale_cli.devtools.rule_variants import rule_variants
from imperiale_env.core.rules import PRESET_NAMES, make_rules


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1_000_000, help="games per preset")
    parser.add_argument("--rules", default="all", help=f"a preset ({', '.join(PRESET_NAMES)}) or 'all'")
    parser.add_argument("--chunk", type=int, default=1000, help="games per batch")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variants", action="store_true", help="every rule variant of the presets, not the presets")
    parser.add_argument("--no-observations", dest="observations", action="store_false",
                        help="skip the comparison of observations")
    args = parser.parse_args(argv)
    if args.rules != "all" and args.rules not in PRESET_NAMES:
        parser.error(f"--rules {args.rules!r} is not a preset (allowed: {', '.join(PRESET_NAMES)}, all)")
    if args.games < 1 or args.chunk < 1:
        parser.error("--games and --chunk must be at least 1")
    presets = PRESET_NAMES if args.rules == "all" else (args.rules,)
    runs = list(rule_variants(presets)) if args.variants else [(p, make_rules(p)) for p in presets]
    for preset, rules in runs:
        start, decisions, done = time.perf_counter(), 0, 0
        with tqdm(total=args.games, desc=preset, unit="game", disable=args.variants) as bar:
            chunk_seed = args.seed
            while done < args.games:
                n = min(args.chunk, args.games - done)
                try:
                    decisions += compare(rules, n, seed=chunk_seed, observations=args.observations)
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
