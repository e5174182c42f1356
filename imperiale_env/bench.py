"""``imperiale bench``: random legal play, measured in one run on every engine.

Each figure is decisions per second of uniformly random legal play (the policy's cost
included): the scalar reference engine, the PettingZoo AEC loop, and the batched engine at
each batch size, with and without encoding the acting player's observation at every
decision.  Ratios are to the reference engine measured in the same run, so they compare
like with like on whatever machine runs them.  One core: numpy here does not thread.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator

import numpy as np

from .batch import BatchGame
from .bitcards import random_set_bit
from .game import Game
from .observation import OBS_SIZE
from .rules import Rules, resolve_rules

DEFAULT_BATCH_SIZES = (1, 64, 1024, 4096)


def reference_rate(rules: Rules, seconds: float, seed: int = 0) -> tuple[float, float]:
    """(decisions/s, games/s) of the reference engine playing whole random games."""
    rng = random.Random(seed)
    decisions = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        game = Game(rules, seed=seed + games)
        while not game.is_over:
            game.step(rng.choice(game.legal_actions()))
            decisions += 1
        games += 1
    elapsed = time.perf_counter() - start
    return decisions / elapsed, games / elapsed


def batch_rate(rules: Rules, batch: int, seconds: float, observe: bool, seed: int = 0) -> tuple[float, float]:
    """(decisions/s, games/s) of the batched engine with ``batch`` games, restarting games."""
    game = BatchGame(rules, batch, auto_next_game=True)
    game.reset(seed)
    rng = np.random.default_rng(seed)
    buffer = np.empty((batch, OBS_SIZE), dtype=np.float32)
    steps = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(16):
            if observe:
                game.observe(out=buffer)
            _, terminated = game.step(random_set_bit(game.action_bits(), rng.random(batch)))
            games += int(terminated.sum())
        steps += 16
    elapsed = time.perf_counter() - start
    return steps * batch / elapsed, games / elapsed


def _si(x: float) -> str:
    for unit, size in (("M", 1e6), ("k", 1e3)):
        if x >= size:
            return f"{x / size:.2f}{unit}"
    return f"{x:.0f}"


MIN_SECONDS = 0.01
MAX_SECONDS = 600.0
MAX_BATCH_SIZE = 65536


def run_bench(
    batch_sizes: tuple[int, ...] | list[int] = DEFAULT_BATCH_SIZES,
    seconds: float = 2.0,
    rules: Rules | str | None = None,
) -> Iterator[str]:
    """Measure every engine for ``seconds`` each; an iterator of one line per measurement.

    The settings are checked here, when it is called, not when the first line is asked for:
    a bad rules preset, time or batch size fails at once (a ``RulesError`` or ``ValueError``
    naming the allowed range), before any measurement and wherever the caller iterates.
    """
    rules = resolve_rules(rules)
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not MIN_SECONDS <= seconds <= MAX_SECONDS:
        raise ValueError(f"seconds must be a number from {MIN_SECONDS:g} to {MAX_SECONDS:g}, got {seconds!r}")
    sizes = list(batch_sizes)
    if not sizes or any(isinstance(b, bool) or not isinstance(b, int) or not 1 <= b <= MAX_BATCH_SIZE for b in sizes):
        raise ValueError(f"batch sizes must be integers from 1 to {MAX_BATCH_SIZE}, got {sizes}")
    return _measure(rules, sizes, float(seconds))


def _measure(rules: Rules, batch_sizes: list[int], seconds: float) -> Iterator[str]:
    ref, ref_games = reference_rate(rules, seconds)
    yield f"rules {rules.preset}, {seconds:g} s a measurement, random legal play"
    yield f"reference engine: {_si(ref)} decisions/s, {_si(ref_games)} games/s"
    try:
        from .aec import aec_decisions_per_second
    except ImportError:
        yield "AEC loop: not available (imperiale_env.aec is missing)"
    else:
        aec = aec_decisions_per_second(rules, seconds)
        yield f"AEC loop (env(), reference engine): {_si(aec)} decisions/s, {aec / ref:.2f}x reference"
    for batch in batch_sizes:
        plain, games = batch_rate(rules, batch, seconds, observe=False)
        with_obs, _ = batch_rate(rules, batch, seconds, observe=True)
        obs_cost = (1 / with_obs - 1 / plain) / (1 / plain)
        yield (
            f"batch {batch}: {_si(plain)} decisions/s, {_si(games)} games/s, {plain / ref:.1f}x reference; "
            f"with observations {_si(with_obs)} decisions/s, {with_obs / ref:.1f}x "
            f"(encoding costs {obs_cost:.2f}x the step)"
        )
