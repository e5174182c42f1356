"""The training loop: rollouts, PPO updates, the opponent pool, evaluations, logs and checkpoints.

Deterministic for a seed: everything random is drawn from one numpy generator (game seeds,
seat assignment, action sampling, minibatch order) and the torch seed only initialises the
weights.  A checkpoint, written at the end of an iteration, holds every piece of state that
the next iteration reads (model, optimizer, generator states, opponent pool, the game batch
as plain arrays with its seat assignment, the evaluation history), so ``resume=True``
continues a killed run from its last checkpoint exactly as the uninterrupted run would have.
Ctrl-C, SIGTERM, SIGHUP and a loss that is not finite checkpoint the last complete iteration before stopping.

With ``imitation_rounds``, the PPO iterations are preceded by rounds of imitation of ``pimc``
(:mod:`imperiale_train.imitate`) on the same network and optimizer: each round labels new deals, trains on
every label so far and is checkpointed (with the labels in ``labels.pt``); PPO then starts from
the imitated weights with a fresh optimizer (``imitated.pt`` keeps the checkpoint of the last
round, to compare with).  The phase and its round are in the checkpoint, so a run resumes
exactly in either phase.

Outputs in ``run_dir``: ``checkpoint.pt`` (the latest, written atomically), ``metrics.jsonl``
(one line per iteration, evaluations included), ``tb/`` (TensorBoard, if importable),
``learning_curve.png`` (at the end, if matplotlib is importable) and ``config.yaml``; with
imitation, ``labels.pt`` and ``imitated.pt`` too.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import shlex
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

from imperiale_agents.parallel.process_pool import signals_as_interrupt
from imperiale_agents.parallel.ray_cluster import ClusterError
from imperiale_env.core.atomic import WriteError, append_whole, write_atomic
from imperiale_env.core.input_checks import InputError, output_dir
from imperiale_env.core.rules import Rules
from imperiale_train.checkpoint import (
    CheckpointError,
    check_weights,
    load_checkpoint,
    load_labels,
    save_checkpoint,
    save_labels,
)
from imperiale_train.config import (
    ConfigError,
    TrainConfig,
    check_memory,
    config_from_dict,
    default_config_path,
    load_yaml,
    make_config,
    parse_overrides,
    resume_config,
)
from imperiale_train.evaluate import evaluate
from imperiale_train.imitate import Labels, SearchPool, imitation_update, label_deals, worker_count
from imperiale_train.model import ActorCritic
from imperiale_train.ppo import ppo_update
from imperiale_train.rollout import OpponentPool, SelfPlayRollout, as_arrays, as_tensors
from imperiale_train.run_lock import RunLock

CHECKPOINT_NAME = "checkpoint.pt"
LABELS_NAME = "labels.pt"
METRICS_NAME = "metrics.jsonl"
#: A copy of the checkpoint at the end of the imitation: the imitated policy alone, for comparisons.
IMITATED_NAME = "imitated.pt"


def resolve_device(name: str) -> torch.device:
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device=cuda was asked for but CUDA is not available (allowed: cpu, cuda, auto)")
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(name)


class TrainingError(RuntimeError):
    """Training cannot go on (a loss or weight that is not finite); the message names the
    checkpoint that holds the last good iteration."""


class TrainingInterrupted(KeyboardInterrupt):
    """Ctrl-C during training, raised once the last complete iteration is checkpointed.
    ``checkpoint`` is ``None`` when no iteration was complete (nothing to resume)."""

    def __init__(self, run_dir: Path, iteration: int | None, checkpoint: Path | None):
        super().__init__(f"training interrupted; last checkpointed iteration: {iteration}")
        self.run_dir, self.iteration, self.checkpoint = run_dir, iteration, checkpoint


def check_run_dir(run_dir: str) -> Path:
    """``run_dir`` as a folder that can be written (made if needed), or :class:`ConfigError`."""
    try:
        return output_dir(run_dir, "run_dir")
    except InputError as exc:
        raise ConfigError(str(exc)) from None


def config_for_resume(config_path: str | Path | None, overrides: list[str] | tuple[str, ...]) -> TrainConfig:
    """The configuration ``imperiale train --resume`` continues: the one in the checkpoint of
    ``run_dir`` (given in ``overrides``, else the default), with the runtime keys the user gave
    (:func:`~imperiale_train.config.resume_config`); ``config_path`` may only repeat the checkpoint's values."""
    given: dict[str, Any] = dict(load_yaml(config_path)) if config_path is not None else {}
    given.update(parse_overrides(overrides))
    if "run_dir" in given:
        run_dir = given["run_dir"]
    else:
        default = default_config_path()
        run_dir = make_config(default).run_dir if default is not None else TrainConfig().run_dir
    ckpt_path = check_run_dir(run_dir) / CHECKPOINT_NAME
    if not ckpt_path.exists():
        raise CheckpointError(f"nothing to resume: no checkpoint at {ckpt_path} (start a run with "
                              f"`imperiale train run_dir={run_dir}`, or give the run_dir= of an existing run)")
    data = load_checkpoint(ckpt_path)
    return resume_config(_saved_config(data, ckpt_path), given, str(run_dir))


def _saved_config(data: dict[str, Any], ckpt_path: Path) -> TrainConfig:
    if not isinstance(data["config"], dict):
        raise CheckpointError(f"{ckpt_path}: its config is not a mapping")
    try:
        return config_from_dict(data["config"])
    except ConfigError as exc:
        raise CheckpointError(f"{ckpt_path}: its config does not fit this code: {exc}") from None


def _check_opponents(cfg: TrainConfig, rules) -> None:
    """Build every evaluation and training opponent and the imitation's player now, so that a bad
    spec fails before the first iteration (and before the run's folder is made)."""
    from imperiale_agents.base import AgentError, make_agent

    player = (cfg.imitation_player,) if cfg.imitation_rounds and cfg.imitation_player != "pimc" else ()
    for key, specs in (("eval_opponents", cfg.eval_opponents), ("train_opponents", cfg.train_opponents),
                       ("imitation_player", player)):
        for spec in specs:
            try:
                make_agent(spec, rules)
            except AgentError as exc:
                raise ConfigError(f"{key}: {exc}") from None


def _start_from(cfg: TrainConfig, model: ActorCritic) -> None:
    """Load the weights of ``cfg.init_from`` into ``model``: a fine-tuning run starts where another
    ended (its optimizer, games and pool are not taken: this is a new run).  An exported policy
    (such as the shipped champion) gives the policy only; the value network starts fresh."""
    from imperiale_agents.policies.policy_file import is_policy_archive

    if is_policy_archive(cfg.init_from):
        _start_from_policy(cfg, model)
        return
    from imperiale_train.checkpoint import build_model

    try:
        source, saved = build_model(load_checkpoint(cfg.init_from), cfg.init_from)
    except CheckpointError as exc:
        raise ConfigError(f"init_from: {exc} (give a training checkpoint, such as RUN_DIR/checkpoint.pt, or an "
                          "exported policy .npz)") from None
    _same_network(cfg, (tuple(saved.hidden), saved.activation, saved.critic))
    model.load_state_dict(source.state_dict())


def _start_from_policy(cfg: TrainConfig, model: ActorCritic) -> None:
    from imperiale_agents.policies.policy_file import read_policy

    try:
        net = read_policy(cfg.init_from).net
    except CheckpointError as exc:
        raise ConfigError(f"init_from: {exc}") from None
    _same_network(cfg, (net.hidden, net.activation, cfg.critic))
    layers = [m for m in model.actor.net if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        for linear, (weight, bias) in zip(layers, net.layers, strict=True):
            linear.weight.copy_(torch.from_numpy(weight.copy()))
            linear.bias.copy_(torch.from_numpy(bias.copy()))


def _same_network(cfg: TrainConfig, theirs: tuple) -> None:
    ours = (tuple(cfg.hidden), cfg.activation, cfg.critic)
    if tuple(theirs) != ours:
        raise ConfigError(f"init_from={cfg.init_from}: its network is hidden={','.join(map(str, theirs[0]))} "
                          f"activation={theirs[1]} critic={theirs[2]}, this run's hidden={','.join(map(str, ours[0]))} "
                          f"activation={ours[1]} critic={ours[2]}: give the same")


def _not_finite(stats: dict[str, float], model: torch.nn.Module) -> list[str]:
    """The losses that are NaN or infinite, and ``weights`` if any weight is."""
    bad = [f"{k}={v}" for k, v in stats.items() if k.startswith("loss/") and k != "loss/explained_variance"
           and not math.isfinite(v)]
    if not all(bool(torch.isfinite(p).all()) for p in model.parameters()):
        bad.append("weights")
    return bad


def _clone(obj: Any) -> Any:
    """A copy of nested dicts and lists whose tensors are cloned (state dicts share live tensors)."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().clone()
    if isinstance(obj, dict):
        return {k: _clone(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_clone(v) for v in obj]
    return obj


def _open_writer(run_dir: Path, enabled: bool, purge_step: int | None):
    if not enabled:
        return None
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        return None
    return SummaryWriter(str(run_dir / "tb"), purge_step=purge_step)


def _trim_metrics(path: Path, iteration: int, imitation_round: int = 0) -> None:
    """Drop the lines a killed run wrote after its last checkpoint; a last line cut short by the
    kill is one of them (a line is written before its iteration's checkpoint)."""
    if not path.exists():
        return
    lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    keep = []
    for number, line in enumerate(lines, 1):
        try:
            kept = _keep_metric(json.loads(line), iteration, imitation_round)
        except (ValueError, TypeError, KeyError):
            if number == len(lines):
                break
            raise ConfigError(f"{path} line {number} is damaged (not a metrics record); "
                              "repair or remove that line to resume") from None
        if kept:
            keep.append(line)
    write_atomic(path, "".join(line + "\n" for line in keep), what="metrics file")


def _keep_metric(line: dict, iteration: int, imitation_round: int) -> bool:
    """Is ``line`` of ``metrics.jsonl`` part of the run saved at (``imitation_round``, ``iteration``)?"""
    done = line["iteration"]
    if not isinstance(done, int):
        raise TypeError
    if "imitation_round" in line:
        return done == 0 and isinstance(line["imitation_round"], int) and line["imitation_round"] <= imitation_round
    return done <= iteration


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

    Everything a run needs is checked before the first iteration: the values, ``run_dir`` (and
    that no live process trains in it: :class:`~imperiale_train.run_lock.RunLock`), the memory
    the sizes need, every evaluation opponent, the checkpoint to resume.  A loss or weight that
    is not finite stops with :class:`TrainingError`; Ctrl-C, SIGTERM and SIGHUP raise
    :class:`TrainingInterrupted`; all after checkpointing the last complete iteration.
    Returns ``{"checkpoint", "iteration", "global_step", "iterations_run" (by this call), "eval",
    "history", "seconds" (of this call), "outputs" (name: path)}``."""
    cfg.validate()
    run_dir = check_run_dir(cfg.run_dir)
    check_memory(cfg)
    rules = cfg.make_rules()
    _check_opponents(cfg, rules)
    if resume and not (run_dir / CHECKPOINT_NAME).exists():
        _check_start(cfg, run_dir, resume)  # nothing to resume: said before any folder is made
    if cfg.init_from and not resume:  # a missing or misfitting init_from, said before any folder is made
        _start_from(cfg, ActorCritic(cfg.hidden, cfg.activation, cfg.critic))
    run_dir.mkdir(parents=True, exist_ok=True)
    with RunLock(run_dir), signals_as_interrupt():
        data = _check_start(cfg, run_dir, resume)
        run = _Run(cfg, rules, run_dir, data, resume)
        return run.go(stop_after)


def _check_start(cfg: TrainConfig, run_dir: Path, resume: bool) -> dict[str, Any] | None:
    """The checkpoint to resume (``None`` for a new run), or why this run cannot start here."""
    ckpt_path, metrics_path = run_dir / CHECKPOINT_NAME, run_dir / METRICS_NAME
    if resume:
        if not ckpt_path.exists():
            raise CheckpointError(f"nothing to resume: no checkpoint at {ckpt_path}")
        data = load_checkpoint(ckpt_path)
        resume_config(_saved_config(data, ckpt_path), dataclasses.asdict(cfg), cfg.run_dir)
        done = data["iteration"]
        if not isinstance(done, int) or done < 0:
            raise CheckpointError(f"{ckpt_path}: iteration {done!r} is not a count of iterations")
        if done >= cfg.iterations:
            what = "has finished" if done == cfg.iterations else "went further"
            raise ConfigError(f"nothing to resume: the run in {run_dir} {what} ({done} of iterations={cfg.iterations} "
                              f"done); give iterations=N with N > {done} to train it further")
        return data
    if ckpt_path.exists():
        raise ConfigError(f"{ckpt_path} exists: pass --resume to continue that run, or choose another run_dir= "
                          "(nothing is overwritten)")
    if metrics_path.exists() and metrics_path.stat().st_size:
        raise ConfigError(f"{metrics_path} holds the metrics of an earlier run that has no checkpoint; it is not "
                          "overwritten: choose another run_dir= or move that file away")
    if (run_dir / LABELS_NAME).exists():
        raise ConfigError(f"{run_dir / LABELS_NAME} holds the imitation labels of an earlier run that has no "
                          "checkpoint; it is not overwritten: choose another run_dir= or move that file away")
    return None


class _Run:
    """One call of :func:`train`: the model, optimizer, generator, pool and rollout it drives, and
    what is on disk (``saved_at``: the iteration the checkpoint holds; ``good``: the state after
    the last complete iteration or round, saved on a stop)."""

    def __init__(self, cfg: TrainConfig, rules: Rules, run_dir: Path, data: dict[str, Any] | None, resume: bool):
        self.cfg, self.rules, self.run_dir, self.resume = cfg, rules, run_dir, resume
        self.ckpt_path, self.metrics_path = run_dir / CHECKPOINT_NAME, run_dir / METRICS_NAME
        self.device = resolve_device(cfg.device)
        torch.set_num_threads(cfg.threads)
        torch.manual_seed(cfg.seed)
        self.rng = np.random.default_rng(cfg.seed)
        self.model = ActorCritic(cfg.hidden, cfg.activation, cfg.critic).to(self.device)
        if cfg.init_from and data is None:
            _start_from(cfg, self.model)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=cfg.lr, eps=1e-5)
        self.pool = OpponentPool(cfg.pool_size, cfg.hidden, cfg.activation, self.device)
        self.rollout = _make_rollout(cfg, self.rules, self.device, self.rng)
        self.iteration, self.global_step, self.history = 0, 0, []
        self.imitation_round, self.labels = 0, Labels.empty(cfg.critic == "perfect")
        if data is not None:
            self._restore(data)
        else:
            import yaml

            write_atomic(run_dir / "config.yaml", yaml.safe_dump(cfg.to_dict(), sort_keys=False), what="config")
        self._open_metrics()
        self.saved_at = self.iteration if resume else None
        self.good: dict[str, Any] | None = None
        self.last_eval = self.history[-1] if self.history else {}
        self.done_here = self.rounds_here = 0  # imitation rounds and iterations run by this call
        self.bar = None
        self.ended_at: float | None = None  # when the last PPO iteration ended (its checkpoint written)

    def _restore(self, data: dict[str, Any]) -> None:
        try:
            check_weights(self.model, data["model"], self.cfg)
        except CheckpointError as exc:
            raise CheckpointError(f"{self.ckpt_path}: {exc}") from None
        try:
            self.model.load_state_dict(data["model"])
            self.optimizer.load_state_dict(data["optimizer"])
            self.rng.bit_generator.state = data["np_rng"]
            torch.set_rng_state(data["torch_rng"])
            self.pool.load_state_dict(data["pool"])
            self.rollout.load_state(as_arrays(data["rollout"]))
            self.iteration, self.global_step = data["iteration"], int(data["global_step"])
            self.history = list(data.get("history", []))
            self.imitation_round = int(data.get("imitation_round", 0))
            if self.imitation_round < self.cfg.imitation_rounds and data.get("imitation_labels", 0):
                rows = int(data["imitation_labels"])
                self.labels = Labels.from_dict(load_labels(self.run_dir / LABELS_NAME, rows))
        except (AttributeError, IndexError, KeyError, RuntimeError, ValueError, TypeError) as exc:
            raise CheckpointError(f"{self.ckpt_path} does not fit this configuration: "
                                  f"{type(exc).__name__}: {exc}") from None

    def _open_metrics(self) -> None:
        if self.resume:
            _trim_metrics(self.metrics_path, self.iteration, self.imitation_round)
        elif self.metrics_path.exists():
            self.metrics_path.unlink()
        self.writer = _open_writer(self.run_dir, self.cfg.tensorboard, self.global_step + 1 if self.resume else None)

    def state(self) -> dict[str, Any]:
        """Everything the next iteration reads, copied (the live tensors keep changing)."""
        return {
            "config": self.cfg.to_dict(), "rules": self.rules.to_dict(), "seed": self.cfg.seed,
            "iteration": self.iteration, "global_step": self.global_step, "model": _clone(self.model.state_dict()),
            "optimizer": _clone(self.optimizer.state_dict()), "np_rng": self.rng.bit_generator.state,
            "torch_rng": torch.get_rng_state(), "pool": self.pool.state_dict(),
            "rollout": as_tensors(self.rollout.state()), "history": list(self.history),
            "imitation_round": self.imitation_round, "imitation_labels": len(self.labels),
        }

    def save(self, snapshot: dict[str, Any]) -> None:
        save_checkpoint(self.ckpt_path, snapshot)
        self.saved_at = snapshot["iteration"]

    def save_good(self) -> None:
        if self.good is not None and self.good["iteration"] != self.saved_at:
            self.save(self.good)

    def write_metrics(self, record: dict[str, Any], step: int) -> None:
        line = json.dumps({k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in record.items()})
        append_whole(self.metrics_path, (line + "\n").encode(), "metrics file")  # a full disk leaves no half line
        if self.writer is not None:
            for k, v in record.items():
                if k not in ("iteration", "global_step", "imitation_round") \
                        and not (isinstance(v, float) and math.isnan(v)):
                    self.writer.add_scalar(k, v, step)

    def stop_if_not_finite(self, stats: dict[str, float], step: str, unit: str, advice: str) -> None:
        """Stop with :class:`TrainingError` when a loss or a weight is not finite, after saving the
        last good state (NaN weights must not reach the checkpoint)."""
        bad = _not_finite(stats, self.model)
        if not bad:
            return
        self.save_good()
        at = f", iteration {self.saved_at}," if unit == "iteration" else ""  # read after save_good, which moves it
        kept = (f"the last good checkpoint{at} is {self.ckpt_path}" if self.saved_at is not None
                else f"no {unit} was checkpointed")
        raise TrainingError(f"{step}: not finite: {', '.join(bad)}; training stopped and {kept}. "
                            f"Start a new run with {advice}")

    def run_evaluation(self, stats: dict[str, float]) -> None:
        from imperiale_agents.policies.neural import PolicyAgent

        te = time.perf_counter()
        cfg = self.cfg
        result = evaluate(PolicyAgent(self.model.actor, greedy=True, device=self.device), self.rules,
                          cfg.eval_opponents, groups=cfg.eval_groups, seed=cfg.eval_seed,
                          single_deal=cfg.eval_single_deal)
        self.last_eval = {"iteration": self.iteration, "global_step": self.global_step, **_eval_summary(result)}
        if self.iteration == 0:
            self.last_eval["imitation_round"] = self.imitation_round
        self.history.append(self.last_eval)
        stats.update(_eval_summary(result))
        stats["perf/eval_s"] = time.perf_counter() - te

    def go(self, stop_after: int | None) -> dict[str, Any]:
        """Imitation rounds, then PPO iterations; a stop checkpoints the last complete one."""
        start = time.perf_counter()
        try:
            self.imitate(stop_after)
            self.optimise(stop_after)
        except KeyboardInterrupt:
            self.save_good()
            raise TrainingInterrupted(self.run_dir, self.saved_at,
                                      self.ckpt_path if self.saved_at is not None else None) from None
        except ClusterError as exc:
            self.save_good()  # the rollout workers were lost between iterations: keep the last one, resumable
            raise ClusterError(f"{exc}; {self.resume_line()}") from None
        except OSError as exc:  # the disk filled or turned read-only under the metrics, TensorBoard or a checkpoint
            with contextlib.suppress(OSError):
                self.save_good()  # where the checkpoint still fits; else the last one on disk stays
            reason = str(exc) if isinstance(exc, WriteError) else \
                f"cannot write in {self.run_dir}: {exc.strerror or exc} ({exc.filename or 'TensorBoard log'})"
            raise WriteError(f"{reason}; training stopped; {self.resume_line()} once the disk has room") from None
        finally:
            self.close()
        return self.result(time.perf_counter() - start)

    def resume_line(self) -> str:
        if self.saved_at is None:
            return "no iteration was checkpointed (start the run again)"
        return (f"iteration {self.saved_at} is saved in {self.ckpt_path}; resume with: "
                f"imperiale train --resume run_dir={shlex.quote(str(self.run_dir))}")

    def imitate(self, stop_after: int | None) -> None:
        cfg = self.cfg
        if self.imitation_round >= cfg.imitation_rounds:
            return
        from imperiale_agents.base import make_agent
        from imperiale_agents.search.belief_model import shipped_belief

        infer = make_agent("champion", self.rules) if cfg.imitation_infer else None
        belief = shipped_belief(self.rules.preset) if cfg.imitation_belief else None
        player = None if cfg.imitation_player == "pimc" else make_agent(cfg.imitation_player, self.rules)
        with _closing(SearchPool(worker_count(cfg.imitation_workers))) as search_pool:
            while self.imitation_round < cfg.imitation_rounds:
                if stop_after is not None and self.done_here >= stop_after:
                    break
                self.imitation_step(search_pool, infer, belief, player)
        if cfg.imitation_rounds and self.iteration == 0 and self.imitation_round == cfg.imitation_rounds:
            # PPO starts from the imitated weights with fresh moments: the imitation's are of another loss.
            self.optimizer = torch.optim.Adam(self.model.parameters(), lr=cfg.lr, eps=1e-5)

    def imitation_step(self, search_pool: SearchPool, infer, belief, player) -> None:
        cfg = self.cfg
        self.optimizer.param_groups[0]["lr"] = cfg.imitation_lr
        t0 = time.perf_counter()
        new = self.label_round(search_pool, infer, belief, player)
        t1 = time.perf_counter()
        grown = self.labels.concat(new)
        save_labels(self.run_dir / LABELS_NAME, grown.to_dict())
        stats = imitation_update(self.model, self.optimizer, grown, cfg, self.rng, self.device)
        t2 = time.perf_counter()
        self.stop_if_not_finite(stats, f"imitation round {self.imitation_round + 1}", "round",
                                "a smaller imitation_lr=")
        self.labels = grown
        self.imitation_round += 1
        self.done_here += 1
        self.rounds_here += 1
        stats.update({"perf/label_s": t1 - t0, "perf/imitation_update_s": t2 - t1,
                      "imitation/new_labels": float(len(new))})
        if cfg.eval_every:  # every round: a round is minutes of search, an evaluation far less
            self.run_evaluation(stats)
        self.write_metrics({"iteration": 0, "imitation_round": self.imitation_round, "global_step": 0, **stats},
                           self.imitation_round)
        self.good = self.state()
        self.save(self.good)  # every round: a round is minutes of search
        if self.imitation_round == cfg.imitation_rounds:  # the imitated policy, kept to compare with the end
            save_checkpoint(self.run_dir / IMITATED_NAME, self.good)

    def label_round(self, search_pool: SearchPool, infer, belief, player) -> Labels:
        cfg = self.cfg
        round_bar = None
        if cfg.progress:
            from tqdm import tqdm

            round_bar = tqdm(total=cfg.imitation_games, unit="deal", dynamic_ncols=True,
                             desc=f"imitation {self.imitation_round + 1}/{cfg.imitation_rounds}: "
                                  f"{cfg.imitation_labels} labels")
        try:
            return label_deals(self.rules, cfg.imitation_games, self.rng, search_pool,
                               samples=cfg.imitation_samples, single_deal=cfg.single_deal,
                               perfect=cfg.critic == "perfect", reward_scale=cfg.reward_scale, infer=infer,
                               belief=belief, bar=round_bar, double_dummy=cfg.imitation_labels == "dd", player=player)
        finally:
            if round_bar is not None:
                round_bar.close()

    def optimise(self, stop_after: int | None) -> None:
        cfg = self.cfg
        if cfg.progress and self.iteration < cfg.iterations and (stop_after is None or self.done_here < stop_after):
            from tqdm import tqdm

            left, threads = cfg.iterations - self.iteration, torch.get_num_threads()
            print(f"training {cfg.rules} self-play PPO in {self.run_dir}: iterations {self.iteration + 1} to "
                  f"{cfg.iterations} of {cfg.batch_size:,} decisions each ({left * cfg.batch_size / 1e6:.1f}M "
                  f"decisions), device {self.device}, {threads} thread{'s' * (threads > 1)}, seed {cfg.seed}; "
                  f"evaluation against {', '.join(cfg.eval_opponents)} "
                  + (f"every {cfg.eval_every} iterations" if cfg.eval_every else "at the end"),
                  file=sys.stderr, flush=True)
            # counted in decisions (the unit of the plan above), with tqdm's rate: decisions a second
            self.bar = tqdm(total=cfg.iterations * cfg.batch_size, initial=self.iteration * cfg.batch_size,
                            unit=" decisions", unit_scale=True, desc="train", dynamic_ncols=True)
        while self.iteration < cfg.iterations:
            if stop_after is not None and self.done_here >= stop_after:
                break
            self.ppo_step()

    def ppo_step(self) -> None:
        """One PPO iteration, in CleanRL's order: collect, advantages, update, log (docs/training.md)."""
        cfg = self.cfg
        if cfg.anneal_lr:
            self.optimizer.param_groups[0]["lr"] = cfg.lr * (1.0 - self.iteration / cfg.iterations)
        t0 = time.perf_counter()
        since = self.ended_at if self.ended_at is not None else t0  # the last iteration's bookkeeping counts here
        # 1-2. Collect num_envs x num_steps decisions, each seat's own sequence; GAE over it (rollout.py).
        batch, stats = self.rollout.collect(self.model, self.pool, self.rng)
        t1 = time.perf_counter()
        # 3. Update: the clipped objective over shuffled minibatches of the batch's features (ppo.py).
        stats.update(ppo_update(self.model, self.optimizer, batch, cfg, self.rng))
        t2 = time.perf_counter()
        # 4. Log, snapshot the opponent pool, evaluate, checkpoint.
        self.stop_if_not_finite(stats, f"iteration {self.iteration + 1}", "iteration",
                                "a smaller lr= or max_grad_norm=")
        self.iteration += 1
        self.done_here += 1
        self.global_step += cfg.batch_size
        if self.iteration % cfg.pool_every == 0:
            self.pool.add(self.model.actor, self.iteration)
            self.rollout.refresh_pool(self.pool)
        stats.update({"perf/steps_per_s": cfg.batch_size / (t2 - t0), "perf/collect_steps_per_s":
                      cfg.batch_size / (t1 - t0), "perf/update_s": t2 - t1,
                      "train/lr": self.optimizer.param_groups[0]["lr"], "train/pool_size": float(len(self.pool))})
        final = self.iteration == cfg.iterations
        stats["perf/iteration_s"] = time.perf_counter() - since
        if final:
            self.save(self.state())  # the trained policy is on disk before the final evaluation starts
        if (cfg.eval_every and self.iteration % cfg.eval_every == 0) or final:
            self.run_evaluation(stats)
        self.write_metrics({"iteration": self.iteration, "global_step": self.global_step, **stats}, self.global_step)
        self.show_progress(stats)
        self.good = self.state()
        if (cfg.checkpoint_every and self.iteration % cfg.checkpoint_every == 0) or final:
            self.save(self.good)
        self.ended_at = time.perf_counter()

    def show_progress(self, stats: dict[str, float]) -> None:
        if self.bar is None:
            return
        post = {"iteration": f"{self.iteration}/{self.cfg.iterations}", "ent": f"{stats['loss/entropy']:.2f}"}
        for opp in self.cfg.eval_opponents:
            key = f"eval/win_rate_{opp.replace(':', '_')}"
            if key in self.last_eval:
                post[f"vs_{opp[:5]}"] = f"{100 * self.last_eval[key]:.0f}%"
        self.bar.set_postfix(post, refresh=False)
        self.bar.update(self.cfg.batch_size)

    def close(self) -> None:
        self.rollout.close()
        if self.bar is not None:
            self.bar.close()
        if self.writer is not None:
            with contextlib.suppress(OSError):  # its last events on a full disk: the run's error says more
                self.writer.close()

    def result(self, seconds: float) -> dict[str, Any]:
        outputs = {"checkpoint": self.ckpt_path, "metrics": self.metrics_path}
        if self.writer is not None:
            outputs["tensorboard"] = self.run_dir / "tb"
        if self.cfg.plot and self.iteration == self.cfg.iterations and self.done_here:
            try:
                from imperiale_train.plot import plot_learning_curve

                outputs["plot"] = plot_learning_curve(self.run_dir)
            except ImportError:
                pass
        return {"checkpoint": str(self.ckpt_path), "iteration": self.iteration, "global_step": self.global_step,
                "iterations_run": self.done_here - self.rounds_here, "imitation_rounds_run": self.rounds_here,
                "eval": self.last_eval, "history": self.history, "seconds": seconds, "outputs": outputs}


def _make_rollout(cfg: TrainConfig, rules: Rules, device: torch.device, rng: np.random.Generator):
    if cfg.rollout_workers:
        from imperiale_train.ray_rollout import RayRollout

        return RayRollout(cfg, rules, device)
    return SelfPlayRollout(cfg, rules, device, rng)


@contextlib.contextmanager
def _closing(search_pool: SearchPool) -> Iterator[SearchPool]:
    try:
        yield search_pool
    finally:
        search_pool.close()
