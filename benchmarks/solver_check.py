"""The exact solver against the reference engine on many positions (``imperiale_cli.devtools.solver_check``):

    python benchmarks/solver_check.py --seeds 50 --tricks-left 6     # every rule variant, 50 deals each
    python benchmarks/solver_check.py --seeds 5 --tricks-left 9 --rules foster

For each rule variant (each field at each value of every preset, or one preset's) and seed, a deal
is played at random to ``--tricks-left`` tricks from its end; the solver's value of that position
must be what the reference engine scores when the solver's line is played.  The first disagreement
stops the run with the rules, the seed and the seat.  Deeper positions cost more (the Python solver:
about 3 s for 6 tricks left over every variant and two seeds, 26 s for 8, on one core).
"""

from __future__ import annotations

import argparse
import sys
import time

from tqdm import tqdm

from imperiale_cli.devtools.rule_variants import rule_variants
from imperiale_cli.devtools.solver_check import SolverDisagreement, check_position
from imperiale_env.core.rules import PRESET_NAMES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20, help="deals per rule variant (default 20)")
    parser.add_argument("--tricks-left", type=int, default=6, help="tricks from the deal's end, 1 to 12 (default 6)")
    parser.add_argument("--rules", default="all", help=f"a preset ({', '.join(PRESET_NAMES)}) or 'all'")
    args = parser.parse_args(argv)
    if not 1 <= args.seeds <= 10**7:
        parser.error(f"--seeds must be from 1 to 10**7, got {args.seeds}")
    if not 1 <= args.tricks_left <= 12:
        parser.error(f"--tricks-left must be from 1 to 12, got {args.tricks_left}")
    if args.rules != "all" and args.rules not in PRESET_NAMES:
        parser.error(f"--rules must be one of {', '.join(PRESET_NAMES)} or all, got {args.rules!r}")
    variants = list(rule_variants(PRESET_NAMES if args.rules == "all" else (args.rules,)))
    start, checked = time.perf_counter(), 0
    try:
        with tqdm(total=len(variants) * args.seeds, unit="deal", desc="solver vs engine") as bar:
            for _, rules in variants:
                for seed in range(args.seeds):
                    checked += check_position(rules, seed, args.tricks_left) is not None
                    bar.update(1)
    except SolverDisagreement as exc:
        print(f"DISAGREEMENT: {exc}", file=sys.stderr)
        return 1
    print(f"{checked} positions of {len(variants)} rule variants agree ({args.tricks_left} tricks left, "
          f"{time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
