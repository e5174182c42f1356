"""``imperiale bench``: random legal play, measured in one run on every engine.

Each figure is decisions per second of uniformly random legal play (the policy's cost
included: the compiled counter-based draw of :mod:`~imperiale_env.kernels.random_policy` for the
batched engine): the scalar reference engine, the PettingZoo AEC loop, and the batched
engine at each batch size, with and without encoding the acting player's observation at
every decision.  Ratios are to the reference engine measured in the same run, so they
compare like with like on whatever machine runs them.  One core unless ``threads`` asks
for more (then each batch is also measured on one thread, for the ratio).

The first line is the batched engine's first use in a fresh process: compiling its kernels
into an empty numba cache, then loading them from the cache it filled.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from imperiale_env.batch import BatchGame
from imperiale_env.core.observation import OBS_DTYPE, OBS_SIZE
from imperiale_env.core.rules import Rules, resolve_rules
from imperiale_env.kernels.random_policy import random_legal_actions
from imperiale_env.kernels.threads import check_threads
from imperiale_env.reference.game import Game

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


def batch_rate(rules: Rules, batch: int, seconds: float, observe: bool, seed: int = 0,
               threads: int = 1) -> tuple[float, float]:
    """(decisions/s, games/s) of the batched engine with ``batch`` games, restarting games, on
    ``threads`` threads; a few untimed steps first (loading the compiled code is not its speed)."""
    game = BatchGame(rules, batch, auto_next_game=True, threads=threads)
    game.reset(seed)
    buffer = np.empty((batch, OBS_SIZE), dtype=OBS_DTYPE)
    actions = np.empty(batch, dtype=np.int64)
    step = 0

    def advance(count: int) -> int:
        nonlocal step
        games = 0
        for _ in range(count):
            if observe:
                game.observe(out=buffer)
            _, terminated = game.step(random_legal_actions(game.action_bits(), seed, step, actions, threads))
            games += int(terminated.sum())
            step += 1
        return games

    advance(2)
    steps = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        games += advance(16)
        steps += 16
    elapsed = time.perf_counter() - start
    return steps * batch / elapsed, games / elapsed


_FIRST_USE = """
import time
start = time.perf_counter()
import numpy as np
from imperiale_env.batch import BatchGame
from imperiale_env.kernels.random_policy import random_legal_actions
game = BatchGame({preset!r}, 64, threads={threads})
game.reset(0)
for step in range(4):
    game.observe()
    game.step(random_legal_actions(game.action_bits(), 0, step, threads={threads}))
print(time.perf_counter() - start)
"""


def first_use_seconds(rules: Rules, threads: int = 1) -> tuple[float, float]:
    """(cold, warm) seconds of a fresh process's import and first steps with observations on
    ``threads`` threads: with an empty numba cache (compiling every kernel), then with the cache
    it filled."""
    code = _FIRST_USE.format(preset=rules.preset, threads=threads)
    root = Path(__file__).resolve().parents[1]
    out = []
    with tempfile.TemporaryDirectory(prefix="imperiale-numba-cache-") as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        for _ in range(2):
            done = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True,
                                  timeout=900, check=True)
            out.append(float(done.stdout.split()[-1]))
    return out[0], out[1]


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
    threads: int = 1,
    compile_time: bool = True,
) -> Iterator[str]:
    """Measure every engine for ``seconds`` each; an iterator of one line per measurement.
    ``compile_time``: first measure the batched engine's first use in fresh processes.

    The settings are checked here, when it is called, not when the first line is asked for:
    a bad rules preset, time, batch size or thread count fails at once (a ``RulesError`` or
    ``ValueError`` naming the allowed range), before any measurement and wherever the caller
    iterates.
    """
    rules = resolve_rules(rules)
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not MIN_SECONDS <= seconds <= MAX_SECONDS:
        raise ValueError(f"seconds must be a number from {MIN_SECONDS:g} to {MAX_SECONDS:g}, got {seconds!r}")
    sizes = list(batch_sizes)
    if not sizes or any(isinstance(b, bool) or not isinstance(b, int) or not 1 <= b <= MAX_BATCH_SIZE for b in sizes):
        raise ValueError(f"batch sizes must be integers from 1 to {MAX_BATCH_SIZE}, got {sizes}")
    return _measure(rules, sizes, float(seconds), check_threads(threads), compile_time)


def _measure(rules: Rules, batch_sizes: list[int], seconds: float, threads: int, compile_time: bool
             ) -> Iterator[str]:
    if compile_time:
        cold, warm = first_use_seconds(rules, threads)
        plural = "s" if threads > 1 else ""
        yield (f"batched engine, first use in a new process (import, first steps with observations, {threads} "
               f"thread{plural}): {cold:.1f} s compiling (empty cache), {warm:.2f} s from the cache")
    ref, ref_games = reference_rate(rules, seconds)
    yield f"rules {rules.preset}, {seconds:g} s a measurement, random legal play"
    yield f"reference engine: {_si(ref)} decisions/s, {_si(ref_games)} games/s"
    try:
        from imperiale_env.envs.aec import aec_decisions_per_second
    except ImportError:
        yield "AEC loop: not available (imperiale_env.envs.aec is missing)"
    else:
        aec = aec_decisions_per_second(rules, seconds)
        yield f"AEC loop (env(), BatchGame(1)): {_si(aec)} decisions/s, {aec / ref:.2f}x reference"
    for batch in batch_sizes:
        plain, games = batch_rate(rules, batch, seconds, observe=False, threads=threads)
        with_obs, _ = batch_rate(rules, batch, seconds, observe=True, threads=threads)
        obs_cost = (1 / with_obs - 1 / plain) / (1 / plain)
        line = (
            f"batch {batch}: {_si(plain)} decisions/s, {_si(games)} games/s, {plain / ref:.1f}x reference; "
            f"with observations {_si(with_obs)} decisions/s, {with_obs / ref:.1f}x "
            f"(encoding costs {obs_cost:.2f}x the step)"
        )
        if threads > 1:
            one, _ = batch_rate(rules, batch, seconds, observe=False, threads=1)
            one_obs, _ = batch_rate(rules, batch, seconds, observe=True, threads=1)
            line += f"; {threads} threads are {plain / one:.2f}x / {with_obs / one_obs:.2f}x one thread"
        yield line
