"""The training loop: rollouts, PPO updates, the opponent pool, evaluations, logs and checkpoints.

Deterministic for a seed: everything random is drawn from one numpy generator (game seeds,
seat assignment, action sampling, minibatch order) and the torch seed only initialises the
weights.  A checkpoint, written at the end of an iteration, holds every piece of state that
the next iteration reads (model, optimizer, generator states, opponent pool, the pickled game
batch with its seat assignment, the evaluation history), so ``resume=True`` continues a
killed run from its last checkpoint exactly as the uninterrupted run would have.

Outputs in ``run_dir``: ``checkpoint.pt`` (the latest, written atomically), ``metrics.jsonl``
(one line per iteration, evaluations included), ``tb/`` (TensorBoard, if importable),
``learning_curve.png`` (at the end, if matplotlib is importable) and ``config.yaml``.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from imperiale_env.cluster import ClusterError

from .checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from .config import RUNTIME_KEYS, ConfigError, TrainConfig, config_from_dict
from .evaluate import evaluate
from .model import ActorCritic
from .ppo import ppo_update
from .rollout import OpponentPool, SelfPlayRollout

CHECKPOINT_NAME = "checkpoint.pt"


def resolve_device(name: str) -> torch.device:
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device=cuda was asked for but CUDA is not available (allowed: cpu, cuda, auto)")
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(name)


def _check_resume_config(cfg: TrainConfig, saved: TrainConfig) -> None:
    a, b = cfg.to_dict(), saved.to_dict()
    diff = [k for k in a if a[k] != b[k] and k not in RUNTIME_KEYS]
    if diff:
        detail = ", ".join(f"{k}={a[k]!r} (checkpoint: {b[k]!r})" for k in diff)
        raise ConfigError(f"cannot resume with a different configuration: {detail}; "
                          f"only {', '.join(RUNTIME_KEYS)} may change on --resume")


def _open_writer(run_dir: Path, enabled: bool, purge_step: int | None):
    if not enabled:
        return None
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        return None
    return SummaryWriter(str(run_dir / "tb"), purge_step=purge_step)


def _trim_metrics(path: Path, iteration: int) -> None:
    """Drop the lines a killed run wrote after its last checkpoint."""
    if not path.exists():
        return
    keep = [line for line in path.read_text().splitlines() if line.strip()
            and json.loads(line).get("iteration", 0) <= iteration]
    path.write_text("".join(line + "\n" for line in keep))


def _eval_summary(result: dict[str, dict[str, float]]) -> dict[str, float]:
    out = {}
    for opp, r in result.items():
        key = opp.replace(":", "_")
        out[f"eval/win_rate_{key}"] = r["win_rate"]
        out[f"eval/ci_low_{key}"] = r["ci_low"]
        out[f"eval/ci_high_{key}"] = r["ci_high"]
        out[f"eval/deal_win_rate_{key}"] = r["deal_win_rate"]
        out[f"eval/margin_{key}"] = r["margin"]
    return out


def train(cfg: TrainConfig, resume: bool = False, *, stop_after: int | None = None) -> dict[str, Any]:
    """Run (or resume) training to ``cfg.iterations``; ``stop_after``: leave after that many
    iterations of this call without a final checkpoint (a simulated kill, for tests).
    Returns ``{"checkpoint": path, "iteration": k, "eval": last evaluation, "history": [...]}``."""
    cfg.validate()
    torch.set_num_threads(cfg.threads)
    device = resolve_device(cfg.device)
    rules = cfg.make_rules()
    run_dir = Path(cfg.run_dir)
    ckpt_path = run_dir / CHECKPOINT_NAME
    data = None
    if resume:
        data = load_checkpoint(ckpt_path, map_location=device)
        try:
            saved = config_from_dict(data["config"])
        except ConfigError as exc:
            raise CheckpointError(f"{ckpt_path}: its config does not fit this code: {exc}") from None
        _check_resume_config(cfg, saved)
    elif ckpt_path.exists():
        raise ConfigError(f"{ckpt_path} exists: pass --resume to continue that run, or choose another run_dir=")
    run_dir.mkdir(parents=True, exist_ok=True)

    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    model = ActorCritic(cfg.hidden, cfg.activation, cfg.critic).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr, eps=1e-5)
    pool = OpponentPool(cfg.pool_size, cfg.hidden, cfg.activation, device)
    if cfg.rollout_workers:
        from .ray_rollout import RayRollout

        rollout = RayRollout(cfg, rules, device)
    else:
        rollout = SelfPlayRollout(cfg, rules, device, rng)
    iteration, global_step, history = 0, 0, []
    if data is not None:
        try:
            model.load_state_dict(data["model"])
            optimizer.load_state_dict(data["optimizer"])
            rng.bit_generator.state = data["np_rng"]
            torch.set_rng_state(data["torch_rng"])
            pool.load_state_dict(data["pool"])
            rollout.load_state(data["rollout"])
        except (KeyError, RuntimeError, ValueError, TypeError) as exc:
            raise CheckpointError(f"{ckpt_path} does not fit this configuration: {type(exc).__name__}: {exc}") from None
        iteration, global_step = int(data["iteration"]), int(data["global_step"])
        history = list(data.get("history", []))
    else:
        import yaml

        (run_dir / "config.yaml").write_text(yaml.safe_dump(cfg.to_dict(), sort_keys=False))

    metrics_path = run_dir / "metrics.jsonl"
    if resume:
        _trim_metrics(metrics_path, iteration)
    elif metrics_path.exists():
        metrics_path.unlink()
    writer = _open_writer(run_dir, cfg.tensorboard, global_step + 1 if resume else None)

    def checkpoint() -> Path:
        return save_checkpoint(ckpt_path, {
            "config": cfg.to_dict(), "rules": rules.to_dict(), "seed": cfg.seed, "iteration": iteration,
            "global_step": global_step, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
            "np_rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state(), "pool": pool.state_dict(),
            "rollout": rollout.state(), "history": history,
        })

    bar = None
    if cfg.progress:
        from tqdm import tqdm

        bar = tqdm(total=cfg.iterations, initial=iteration, unit="it", desc="train", dynamic_ncols=True)
    last_eval = history[-1] if history else {}
    done_here = 0
    start = time.perf_counter()
    try:
        while iteration < cfg.iterations:
            if stop_after is not None and done_here >= stop_after:
                break
            if cfg.anneal_lr:
                optimizer.param_groups[0]["lr"] = cfg.lr * (1.0 - iteration / cfg.iterations)
            t0 = time.perf_counter()
            batch, stats = rollout.collect(model, pool, rng)
            t1 = time.perf_counter()
            stats.update(ppo_update(model, optimizer, batch, cfg, rng))
            t2 = time.perf_counter()
            iteration += 1
            done_here += 1
            global_step += cfg.batch_size
            if iteration % cfg.pool_every == 0:
                pool.add(model.actor, iteration)
                rollout.refresh_pool(pool)
            stats["perf/steps_per_s"] = cfg.batch_size / (t2 - t0)
            stats["perf/collect_steps_per_s"] = cfg.batch_size / (t1 - t0)
            stats["perf/update_s"] = t2 - t1
            stats["train/lr"] = optimizer.param_groups[0]["lr"]
            stats["train/pool_size"] = float(len(pool))
            final = iteration == cfg.iterations
            if (cfg.eval_every and iteration % cfg.eval_every == 0) or final:
                from agents.neural import PolicyAgent

                te = time.perf_counter()
                result = evaluate(PolicyAgent(model.actor, greedy=True, device=device), rules, cfg.eval_opponents,
                                  groups=cfg.eval_groups, seed=cfg.eval_seed, single_deal=cfg.eval_single_deal)
                last_eval = {"iteration": iteration, "global_step": global_step, **_eval_summary(result)}
                history.append(last_eval)
                stats.update(_eval_summary(result))
                stats["perf/eval_s"] = time.perf_counter() - te
            record = {"iteration": iteration, "global_step": global_step, **stats}
            with metrics_path.open("a") as f:
                f.write(json.dumps({k: (None if isinstance(v, float) and math.isnan(v) else v)
                                    for k, v in record.items()}) + "\n")
            if writer is not None:
                for k, v in stats.items():
                    if not (isinstance(v, float) and math.isnan(v)):
                        writer.add_scalar(k, v, global_step)
            if bar is not None:
                post = {"sps": f"{stats['perf/steps_per_s']:.0f}", "ent": f"{stats['loss/entropy']:.2f}"}
                for opp in cfg.eval_opponents:
                    key = f"eval/win_rate_{opp.replace(':', '_')}"
                    if key in last_eval:
                        post[f"vs_{opp[:5]}"] = f"{100 * last_eval[key]:.0f}%"
                bar.set_postfix(post, refresh=False)
                bar.update(1)
            if (cfg.checkpoint_every and iteration % cfg.checkpoint_every == 0) or final:
                checkpoint()
    except ClusterError:
        if done_here and not (cfg.checkpoint_every and iteration % cfg.checkpoint_every == 0):
            checkpoint()  # the rollout workers were lost between iterations: keep the last one, resumable
        raise
    finally:
        if cfg.rollout_workers:
            rollout.close()
        if bar is not None:
            bar.close()
        if writer is not None:
            writer.close()
    if cfg.plot and iteration == cfg.iterations and done_here:
        try:
            from .plot import plot_learning_curve

            plot_learning_curve(run_dir)
        except ImportError:
            pass
    return {"checkpoint": str(ckpt_path), "iteration": iteration, "global_step": global_step,
            "eval": last_eval, "history": history, "seconds": time.perf_counter() - start}
