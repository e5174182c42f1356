"""``imperiale bench --train``: the whole trainer's steady-state decisions per second, split by part,
beside the engine alone.

The trainer runs for real (``imperiale train`` with the README's config, or the one given, in a
temporary folder, no evaluation until the end): its metrics give each iteration's wall time,
bookkeeping (the Ctrl-C snapshot, the metrics line) included, and its parts: making features,
the networks' forward passes during the rollout, the rest of the rollout (the engine, GAE,
linking the seats' decisions), the PPO update.  The first iterations (compilation, warm-up) are
left out.  Then the engine alone plays random legal games at the trainer's batch size, with the
observations encoded, on one thread as in the rollout; its rate gives the engine's estimated
share of the trainer's time.  The machine's load average is printed before and after: on a
shared machine every figure is lower, ratios measured in one run are what compare.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from imperiale_env.batch import BatchGame
from imperiale_env.core.observation import OBS_DTYPE, OBS_SIZE
from imperiale_env.kernels.random_policy import random_legal_actions

#: Iterations left out at the start of the run (compilation, allocator warm-up).
WARMUP = 2


def engine_rate(rules, n: int, seconds: float, seed: int = 0) -> float:
    """Decisions per second of random legal play on ``BatchGame(rules, n)`` with the acting seat's
    observation encoded at every step (what the rollout asks of the engine)."""
    bg = BatchGame(rules, n, auto_next_game=True, single_deal=True)
    bg.reset(seed)
    obs = np.empty((n, OBS_SIZE), dtype=OBS_DTYPE)
    actions = np.empty(n, dtype=np.int64)
    steps, start = 0, time.perf_counter()
    while steps < 3 or time.perf_counter() - start < seconds:
        bg.observe(out=obs)
        bg.legal_action_mask()  # the rollout asks for the mask as well as the bits the draw reads
        bg.step(random_legal_actions(bg.action_bits(), seed, steps, out=actions))
        steps += 1
    return steps * n / (time.perf_counter() - start)


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def run_train_bench(iterations: int, overrides: list[str], config: str | None = None) -> Iterator[str]:
    """Lines of the report: the trainer's rate and its split, then the engine alone.  ``config``: a
    YAML file (default: the README's, ``configs/ppo_selfplay.yaml``), ``overrides`` ``key=value``."""
    from imperiale_train.config import default_config_path, make_config
    from imperiale_train.run import train

    yield f"load average before: {_load()} (1, 5, 15 minutes)"
    with tempfile.TemporaryDirectory(prefix="imperiale-bench-train-") as folder:
        fixed = [f"run_dir={Path(folder) / 'run'}", f"iterations={iterations + WARMUP}", "eval_every=0",
                 "eval_groups=2", "eval_opponents=random", "progress=false", "tensorboard=false", "plot=false",
                 "checkpoint_every=0"]
        cfg = make_config(config or default_config_path(), [*overrides, *fixed])
        yield (f"trainer: rules={cfg.rules} num_envs={cfg.num_envs} num_steps={cfg.num_steps} "
               f"hidden={','.join(map(str, cfg.hidden))} critic={cfg.critic} update_epochs={cfg.update_epochs} "
               f"num_minibatches={cfg.num_minibatches} device={cfg.device} threads={cfg.threads}; "
               f"{iterations} iterations measured after {WARMUP}")
        train(cfg)
        lines = [json.loads(x) for x in (Path(cfg.run_dir) / "metrics.jsonl").read_text().splitlines()]
    steady = [x for x in lines if x["iteration"] > WARMUP]
    wall = sum(x["perf/iteration_s"] for x in steady)
    decisions = cfg.batch_size * len(steady)
    parts = {
        "features (made once a decision, and once again for the update)": sum(x["perf/features_s"] for x in steady),
        "rollout networks (forward passes, sampling)": sum(x["perf/forward_s"] for x in steady),
        "rollout, the rest (engine, GAE, seat links, batch)": sum(
            1.0 / x["perf/collect_steps_per_s"] * cfg.batch_size - x["perf/features_s"] - x["perf/forward_s"]
            for x in steady),
        "update (forward, backward, Adam)": sum(x["perf/update_s"] for x in steady),
    }
    parts["bookkeeping (snapshot for Ctrl-C, metrics)"] = wall - sum(parts.values())
    yield f"trainer, steady state: {decisions / wall:,.0f} decisions/s ({decisions:,} decisions in {wall:.1f} s)"
    for name, seconds in parts.items():
        yield f"  {name:<62} {100 * seconds / wall:5.1f} %"
    rate = engine_rate(cfg.make_rules(), cfg.num_envs, 2.0, cfg.seed)
    engine_s = decisions / rate
    yield (f"engine alone (random play with observations, batch {cfg.num_envs}, one thread): {rate:,.0f} "
           f"decisions/s; the trainer's decisions would take it {engine_s:.2f} s, {100 * engine_s / wall:.1f} % of "
           "the trainer's time")
    yield f"load average after: {_load()}"
