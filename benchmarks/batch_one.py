"""A batch of one game against the reference engine, measured alternately: the cost of a call.

``python benchmarks/batch_one.py [--rounds 5] [--decisions 5000] [--preset academie]`` plays
random legal games, ``--decisions`` decisions a loop, each loop once a round in turn, and prints
microseconds of CPU time a decision (the best round) and the ratio of the reference engine's
time to each loop's (the median of the rounds, each ratio within one round):

- ``reference``: :class:`~imperiale_env.reference.game.Game`, a random legal action a decision
  (``imperiale bench``'s reference loop);
- ``reference + observation``: the same, with the acting player's observation each decision
  (:func:`~imperiale_env.reference.observe.observe`, what the AEC env calls today);
- ``batch 1``: ``BatchGame(1)``, its legal actions, the compiled random policy and ``step``
  (``imperiale bench``'s batch loop);
- ``batch 1 + observation``: the same, with the acting player's observation each decision;
- ``as an env would``: the observation, the legal mask and ``step``, what a single-game
  environment on the batched engine would call.

Why: issue 22 moves the single-game environments onto the batched engine once a batch of one is
as fast as the reference engine.  On a shared, loaded machine only ratios measured side by side
mean anything, hence the alternation and CPU time (docs/benchmarks.md, "A batch of one").
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

import numpy as np

from imperiale_env.batch import BatchGame
from imperiale_env.core.observation import OBS_DTYPE, OBS_SIZE
from imperiale_env.core.rules import resolve_rules
from imperiale_env.kernels.random_policy import random_legal_actions
from imperiale_env.reference.game import Game
from imperiale_env.reference.observe import observe as observe_seat

LOOPS = ("reference", "reference + observation", "batch 1", "batch 1 + observation", "as an env would")


def _reference(preset: str, observe: bool) -> Callable[[int], None]:
    rules, rng = resolve_rules(preset), random.Random(0)
    state = {"game": Game(rules, seed=0), "games": 0}

    def play(decisions: int) -> None:
        for _ in range(decisions):
            game = state["game"]
            if game.is_over:
                state["games"] += 1
                game = state["game"] = Game(rules, seed=state["games"])
            if observe:
                observe_seat(game, game.current_player)
            game.step(rng.choice(game.legal_actions()))
    return play


def _batch(preset: str, observe: bool, mask: bool) -> Callable[[int], None]:
    game = BatchGame(preset, 1, auto_next_game=True)
    game.reset(0)
    buffer = np.empty((1, OBS_SIZE), dtype=OBS_DTYPE)
    actions = np.empty(1, dtype=np.int64)
    count = [0]

    def play(decisions: int) -> None:
        step = count[0]
        for step in range(count[0], count[0] + decisions):
            if observe:
                game.observe(out=buffer)
            if mask:
                game.legal_action_mask()
            game.step(random_legal_actions(game.action_bits(), 0, step, actions))
        count[0] = step + 1
    return play


def measure(rounds: int, decisions: int, preset: str = "academie") -> dict[str, tuple[float, float]]:
    """``{loop: (best microseconds a decision, median ratio of the reference's time to it)}``."""
    loops = {"reference": _reference(preset, False), "reference + observation": _reference(preset, True),
             "batch 1": _batch(preset, False, False),
             "batch 1 + observation": _batch(preset, True, False), "as an env would": _batch(preset, True, True)}
    for play in loops.values():
        play(200)  # loading the compiled code is not the speed
    times: dict[str, list[float]] = {name: [] for name in LOOPS}
    for _ in range(rounds):
        for name in LOOPS:
            start = time.process_time()
            loops[name](decisions)
            times[name].append((time.process_time() - start) / decisions * 1e6)
    return {name: (min(times[name]),
                   statistics.median(r / t for r, t in zip(times["reference"], times[name], strict=True)))
            for name in LOOPS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds, each loop once a round (default 5)")
    parser.add_argument("--decisions", type=int, default=5000, help="decisions a loop a round (default 5000)")
    parser.add_argument("--preset", default="academie", help="rules preset (default academie)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.decisions < 1:
        parser.error(f"--rounds and --decisions must be at least 1, got {args.rounds} and {args.decisions}")
    resolve_rules(args.preset)
    for name, (us, ratio) in measure(args.rounds, args.decisions, args.preset).items():
        print(f"{name:24s} {us:6.2f} us a decision (best of {args.rounds}), {ratio:.2f}x the reference engine's speed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
