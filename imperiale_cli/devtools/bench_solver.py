"""``imperiale bench --solver``: the compiled solver and full-depth ``pimc:16``, beside the
pure-Python solver in the same run.

Positions come from random play (the engine's true hands): for 12, 8 and 4 tricks left, at the
start of a trick, the exact value of every legal card (what ``pimc`` asks of each sampled deal)
as positions per second: the compiled solver through its batch entry point (many positions a
call, as ``pimc`` calls it), the pure-Python oracle one position a call; then whole ``pimc:16``
decisions (sampling, 16 solves, the choice) at the same depths; then the mean time a card
decision over whole deals played by ``pimc:16`` in every seat.  The pure-Python side runs the
same positions, fewer of them.  The first-use compile time is measured in a child process with
an empty numba cache (cold), then again with that cache filled (warm).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from imperiale_cli.devtools.differential import random_legal
from imperiale_env.batch import BatchGame
from imperiale_env.core.cards import NUM_CARDS
from imperiale_env.core.rules import Rules, resolve_rules

DEPTHS = (12, 8, 4)
#: Most positions a compiled solver call in the throughput measurement.
BATCH = 256
PIMC_SAMPLES = 16
_FIRST_USE = """
import time
t = time.perf_counter()
from imperiale_agents.search.compiled_solver import CompiledSolver
from imperiale_env.core.rules import make_rules
CompiledSolver(make_rules({preset!r}), 0).move_values({hands!r}, 0, (), {tricks!r}, {played})
serial = time.perf_counter() - t
t = time.perf_counter()
import numpy as np
CompiledSolver(make_rules({preset!r}), 0).values(np.array([{hands!r}] * 2, dtype=np.uint64), 0, (), {tricks!r},
                                                 {played}, threads=2)
print(serial, time.perf_counter() - t)
"""


def random_play_positions(rules: Rules, games: int, seed: int) -> dict[int, list[tuple]]:
    """Play decisions of random games by tricks left (the current one included), each
    ``(trump, hands, leader, trick, tricks, played, seat to play, obs row, legal mask row)``."""
    bg = BatchGame(rules, games)
    bg.reset(seed)
    rng = np.random.default_rng(seed)
    out: dict[int, list[tuple]] = {}
    while not bg.done.all():
        mask = bg.legal_action_mask()
        playing = np.flatnonzero(~bg.done & mask[:, :NUM_CARDS].any(axis=1))
        obs = bg.observe() if len(playing) else None
        for i in playing:
            n = int(bg.trick_len[i])
            pos = (int(bg.trump[i]), tuple(int(h) for h in bg.hands[i]), int(bg.leader[i]),
                   tuple(int(c) for c in bg.trick_cards[i, :n]), tuple(int(t) for t in bg.tricks[i]),
                   int(bg.tricks_played[i]), int(bg.current_player[i]), obs[i], mask[i])
            out.setdefault(12 - pos[5], []).append(pos)
        bg.step(random_legal(rng, mask))
    return out


def _python_times(rules: Rules, positions: list[tuple], seconds: float) -> list[float]:
    """Seconds for the pure-Python solver to value every legal card of each position in turn, one
    position a call (the oracle), for about ``seconds`` (one position at least)."""
    from imperiale_agents.search.solver import Solver

    times: list[float] = []
    for trump, hands, leader, trick, tricks, played, me, *_ in positions:
        t = time.perf_counter()
        Solver(rules, trump, me=me).move_values(hands, leader, trick, tricks, played)
        times.append(time.perf_counter() - t)
        if sum(times) > seconds:
            break
    return times


def _compiled_seconds(rules: Rules, positions: list[tuple]) -> float:
    """Seconds for the compiled solver to value every legal card of ``positions`` through its
    batch entry point (:func:`imperiale_agents.search.compiled_solver.solve_positions`, one call for them all:
    what ``pimc`` and the analysis use), packing the positions included."""
    from imperiale_agents.search.compiled_solver import Positions, solve_positions

    t = time.perf_counter()
    solve_positions(rules, Positions.of(row[:7] for row in positions))
    return time.perf_counter() - t


def _compiled_rate(rules: Rules, positions: list[tuple], seconds: float) -> tuple[float, int]:
    """(positions per second, positions solved): batches of up to :data:`BATCH` of ``positions``,
    round and round, for about ``seconds`` (one batch at least)."""
    solved, spent = 0, 0.0
    while solved == 0 or spent < seconds:
        batch = positions[solved % len(positions) :][:BATCH]
        spent += _compiled_seconds(rules, batch)
        solved += len(batch)
    return solved / spent, solved


def _decision_times(rules: Rules, positions: list[tuple], seconds: float, solver: str) -> list[float]:
    """Seconds of each full-depth ``pimc:16`` decision at ``positions`` in turn, for about ``seconds``."""
    from imperiale_agents.search.pimc import PIMCAgent

    agent = PIMCAgent(rules, samples=PIMC_SAMPLES, solver=solver)
    times: list[float] = []
    for k, (*_, obs, mask) in enumerate(positions):
        t = time.perf_counter()
        agent.act(obs[None], mask[None], np.random.default_rng(k))
        times.append(time.perf_counter() - t)
        if sum(times) > seconds:
            break
    return times


def _compare(fast: list[float], slow: list[float]) -> str:
    """The speed-up on the decisions both sides measured (the Python side measures fewer)."""
    n = min(len(fast), len(slow))
    return f"{sum(slow[:n]) / sum(fast[:n]):.0f}x on the same {n}"


def deal_decision_ms(rules: Rules, seconds: float, seed: int = 0) -> tuple[float, float, float, int, int]:
    """Whole deals with ``pimc:16`` in every seat, for about ``seconds`` (one deal at least):
    (mean ms a card decision, mean ms a searched one (more than one legal card), mean ms of
    this thread's CPU time a card decision (what a busy machine's other jobs do not add), card
    decisions, deals)."""
    from imperiale_agents.search.pimc import PIMCAgent

    agent = PIMCAgent(rules, samples=PIMC_SAMPLES)
    rng = np.random.default_rng(seed)
    every, searched, cpu = [], [], []
    deals = 0
    start = time.perf_counter()
    while deals == 0 or time.perf_counter() - start < seconds:
        bg = BatchGame(rules, 1, single_deal=True)
        bg.reset(seed + deals)
        while not bg.done.all():
            obs, mask = bg.observe(), bg.legal_action_mask()
            t, c = time.perf_counter(), time.thread_time()
            action = agent.act(obs, mask, rng)
            elapsed, used = time.perf_counter() - t, time.thread_time() - c
            legal_cards = int(mask[0, :NUM_CARDS].sum())
            if legal_cards:
                every.append(elapsed)
                cpu.append(used)
                if legal_cards > 1:
                    searched.append(elapsed)
            bg.step(action)
        deals += 1
    return 1000 * float(np.mean(every)), 1000 * float(np.mean(searched)), 1000 * float(np.mean(cpu)), len(every), deals


def first_use_seconds(rules: Rules) -> tuple[float, float, float, float]:
    """(cold serial, cold threaded, warm serial, warm threaded) seconds of the first solve in a
    fresh process: an empty numba cache (compiling), then the cache it filled."""
    P = rules.players
    hands = tuple((1 << s) | (1 << (9 + s)) for s in range(P))
    played = 10
    tricks = (10, 0) if P == 2 else (4, 3, 3)
    code = _FIRST_USE.format(preset=rules.preset, hands=hands, tricks=tricks, played=played)
    root = Path(__file__).resolve().parents[1]
    out = []
    with tempfile.TemporaryDirectory(prefix="imperiale-numba-cache-") as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "NUMBA_NUM_THREADS": "2"}
        for _ in range(2):
            done = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True,
                                  timeout=900, check=True)
            out += [float(x) for x in done.stdout.split()]
    return out[0], out[1], out[2], out[3]


def run_solver_bench(seconds: float = 2.0, rules: Rules | str | None = None, seed: int = 0,
                     compile_time: bool = True) -> Iterator[str]:
    """Measure the solvers for about ``seconds`` each (the Python solver at least one position)
    and yield one line per measurement."""
    rules = resolve_rules(rules)
    if seconds <= 0:
        raise ValueError(f"seconds must be positive, got {seconds}")
    yield (f"rules {rules.preset}, exact values of every legal card (positions from random play at a trick's "
           f"start), full-depth pimc:{PIMC_SAMPLES}; about {seconds:g} s a measurement")
    if compile_time:
        cold, cold_threads, warm, warm_threads = first_use_seconds(rules)
        yield (f"first use in a new process (import + first solve): {cold:.1f} s compiling (empty cache), "
               f"{warm:.2f} s from the cache; the threaded path adds {cold_threads:.1f} s / {warm_threads:.2f} s")
    positions = random_play_positions(rules, 16, seed)
    # Warm the compiled code up (loading from the cache is not the solver's speed).
    _compiled_seconds(rules, positions[2][:1])
    _decision_times(rules, positions[2][:1], seconds, "compiled")
    for left in DEPTHS:
        at_start = [p for p in positions[left] if not p[3]]
        rate, solved = _compiled_rate(rules, at_start, seconds)
        slow = _python_times(rules, at_start, seconds)
        same, _ = _compiled_rate(rules, at_start[: len(slow)], seconds)  # the Python side's positions, as often
        yield (f"{left} tricks left: compiled {rate:,.1f} positions/s ({solved}, solve_positions, up to {BATCH} a "
               f"call), python {len(slow) / sum(slow):,.2f} positions/s ({len(slow)}, one a call): "
               f"{same * sum(slow) / len(slow):.0f}x on the same {len(slow)}")
    for left in DEPTHS:
        searched = [p for p in positions[left] if p[8][:NUM_CARDS].sum() > 1]
        fast = _decision_times(rules, searched, seconds, "compiled")
        slow = _decision_times(rules, searched, seconds, "python")
        yield (f"pimc:{PIMC_SAMPLES} decision at {left} tricks left: compiled {1000 * np.mean(fast):.1f} ms "
               f"({len(fast)}), python {1000 * np.mean(slow):.0f} ms ({len(slow)}): {_compare(fast, slow)}")
    every, searched, cpu, n, deals = deal_decision_ms(rules, seconds, seed)
    yield (f"pimc:{PIMC_SAMPLES} over whole deals (every seat): {every:.1f} ms a card decision "
           f"({n} decisions, {deals} deals; {cpu:.1f} ms of CPU time); {searched:.1f} ms a decision with a choice")
