"""Exported policies: what a finished run ships, the policy network and how it was made.

A training checkpoint (:mod:`imperiale_train.checkpoint`) holds everything the next iteration reads:
the optimiser's moments, the generators, the opponent pool, the game batch, the critic.  To
play, only the policy is needed, so :func:`export_policy` writes a file ten or more times
smaller, the form of the champions shipped in ``agents/champions/``
(``imperiale export RUN_DIR/checkpoint.pt OUT.pt``).  Its keys:

===============  =================================================================
format, version  ``"imperiale-policy"``, :data:`VERSION`
obs_size         observation width the network was built for (485)
num_actions      43
config           the run's :class:`~imperiale_train.config.TrainConfig` as a dict: the network's
                 shape (``hidden``, ``activation``) and the whole recipe
rules            the rules record it was trained under (:meth:`Rules.to_dict`)
actor            the policy network's state dict (:class:`~imperiale_train.model.Policy`)
provenance       ``seed``, ``iteration``, ``global_step``, ``train_seconds`` (the run's
                 iterations and evaluations, from its ``metrics.jsonl``; ``None`` when
                 that file does not cover every iteration), ``history`` (its
                 evaluations), ``source`` (the checkpoint's file name)
===============  =================================================================

Like a checkpoint it holds only tensors and plain values, so it is read with
``torch.load(weights_only=True)`` and reading it runs no code.  :func:`load_policy` reads
both kinds of file, which is how ``neural:PATH`` and ``champion`` load their network.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from imperiale_env.core.actions import NUM_ACTIONS
from imperiale_env.core.inputs import input_file, output_file
from imperiale_env.core.observation import OBS_SIZE
from imperiale_train.checkpoint import CheckpointError, build_model, check_checkpoint, check_contents, read_file

FORMAT = "imperiale-policy"
VERSION = 1
REQUIRED = ("config", "rules", "actor", "provenance")


@dataclass
class LoadedPolicy:
    """A policy network read from a checkpoint or an exported policy file."""

    actor: torch.nn.Module
    config: Any  # TrainConfig
    rules: dict[str, Any] | None  # the rules record it was trained under
    provenance: dict[str, Any]


def load_policy(path: str | Path, map_location: str | torch.device = "cpu") -> LoadedPolicy:
    """The policy of ``path``: an exported policy file or a training checkpoint (its actor);
    :class:`~imperiale_train.checkpoint.CheckpointError` naming what is wrong with any other file."""
    data = read_file(path, map_location)
    if isinstance(data, dict) and data.get("format") == FORMAT:
        return _policy_from_export(data, Path(path))
    data = check_checkpoint(data, path)
    model, cfg = build_model(data)
    return LoadedPolicy(model.actor, cfg, data.get("rules"), _provenance(data, Path(path), train_seconds=None))


def _policy_from_export(data: dict[str, Any], path: Path) -> LoadedPolicy:
    from imperiale_train.config import ConfigError, config_from_dict
    from imperiale_train.model import Policy

    if data.get("version") != VERSION:
        raise CheckpointError(f"{path} is an exported policy of version {data.get('version')!r}; this code reads "
                              f"{VERSION}")
    check_contents(data, path, REQUIRED)
    try:
        cfg = config_from_dict(data["config"])
    except ConfigError as exc:
        raise CheckpointError(f"{path}: the policy's config does not fit this code: {exc}") from None
    actor = Policy(cfg.hidden, cfg.activation)
    try:
        actor.load_state_dict(data["actor"])
    except (RuntimeError, KeyError, TypeError, AttributeError) as exc:
        raise CheckpointError(f"{path}: the policy's weights do not fit its config: {exc}") from None
    return LoadedPolicy(actor, cfg, data["rules"], dict(data["provenance"]))


def _provenance(data: dict[str, Any], path: Path, train_seconds: float | None) -> dict[str, Any]:
    return {"seed": data.get("seed"), "iteration": int(data["iteration"]), "global_step": data.get("global_step"),
            "train_seconds": train_seconds, "history": list(data.get("history", [])), "source": path.name}


def train_seconds(run_dir: Path, iterations: int, batch_size: int) -> float | None:
    """The time the run in ``run_dir`` spent on its imitation rounds (labels, updates and
    evaluations) and its first ``iterations`` iterations (rollouts, updates and evaluations),
    summed from its ``metrics.jsonl``; ``None`` when the file is missing or does not hold each
    of those rounds and iterations exactly once (a resumed run keeps one line per iteration, so
    this is the total over all its sessions).  Lines of later iterations are left out: a policy
    exported from ``imitated.pt`` took the imitation's time only."""
    path = run_dir / "metrics.jsonl"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    seconds: dict[int, float] = {}
    rounds: dict[int, float] = {}
    try:
        for line in lines:
            if not line.strip():
                continue
            rec = json.loads(line)
            if "imitation_round" in rec:
                r = rec["imitation_round"]
                if r in rounds or rec.get("perf/label_s") is None:
                    return None
                rounds[r] = rec["perf/label_s"] + rec.get("perf/imitation_update_s", 0.0) + (rec.get("perf/eval_s")
                                                                                             or 0.0)
                continue
            it = rec["iteration"]
            if it > iterations:
                continue
            if it in seconds or not rec.get("perf/steps_per_s"):
                return None
            seconds[it] = batch_size / rec["perf/steps_per_s"] + (rec.get("perf/eval_s") or 0.0)
    except (ValueError, KeyError, TypeError):
        return None
    if set(seconds) != set(range(1, iterations + 1)) or set(rounds) != set(range(1, len(rounds) + 1)):
        return None
    return round(sum(seconds.values()) + sum(rounds.values()), 1)


def export_policy(checkpoint: str | Path, out: str | Path) -> Path:
    """Write the policy of training checkpoint ``checkpoint`` to the new file ``out``.

    Everything is checked before anything is written: ``out`` must not exist (nothing is
    overwritten) and its folder must be writable; ``checkpoint`` must be a training checkpoint
    whose weights fit its config.  The file is written whole or not at all.
    """
    out = output_file(out, "exported policy file", may_exist=False)
    src = input_file(checkpoint, "checkpoint")
    data = read_file(src)
    if isinstance(data, dict) and data.get("format") == FORMAT:
        raise CheckpointError(f"{src} is already an exported policy; export takes a training checkpoint "
                              "(RUN_DIR/checkpoint.pt)")
    data = check_checkpoint(data, src)
    model, cfg = build_model(data)
    if "rules" not in data:
        raise CheckpointError(f"{src} lacks the rules record it was trained under")
    seconds = train_seconds(src.resolve().parent, int(data["iteration"]), cfg.batch_size)
    policy = {
        "format": FORMAT, "version": VERSION, "obs_size": OBS_SIZE, "num_actions": NUM_ACTIONS,
        "config": data["config"], "rules": data["rules"],
        # clone: a saved view would carry the whole storage it views
        "actor": {k: v.detach().clone().cpu() for k, v in model.actor.state_dict().items()},
        "provenance": _provenance(data, src, seconds),
    }
    buffer = io.BytesIO()
    torch.save(policy, buffer)
    _write_new(out, buffer.getvalue())
    return out


def _write_new(path: Path, payload: bytes) -> None:
    """Create ``path`` with ``payload``; an existing file is never replaced (``open(..., "x")``),
    and a file left half-written by a failure is removed."""
    from imperiale_env.core.inputs import InputError

    try:
        f = open(path, "xb")
    except FileExistsError:
        raise InputError(f"the exported policy file {str(path)!r} exists already; it is not overwritten: "
                         "choose another name or move the file away") from None
    try:
        with f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        path.unlink(missing_ok=True)
        raise
