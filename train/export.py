"""Exported policies: what a finished run ships, the policy network and how it was made.

A training checkpoint (:mod:`imperiale_train.checkpoint`) holds everything the next iteration reads:
the optimiser's moments, the generators, the opponent pool, the game batch, the critic.  To
play, only the policy is needed, so :func:`export_policy` writes a file ten or more times
smaller, the form of the champions shipped in ``agents/champions/``
(``imperiale export RUN_DIR/checkpoint.pt OUT.npz``): a numpy archive of the policy's layers and
JSON metadata (the layout is :mod:`imperiale_agents.policies.policy_file`'s), which plays without torch.

Files of releases before observation version 1 (checkpoints, and the torch-format exported
policies of the first releases) are refused with the reason: their networks read the old
observation (:func:`imperiale_agents.policies.policy_file.other_observation`).
"""

from __future__ import annotations

import json
from pathlib import Path

from imperiale_agents.policies.policy_file import (
    CheckpointError,
    check_checkpoint,
    is_policy_archive,
    net_from_state,
    policy_archive_bytes,
    provenance,
    read_policy_archive,
    read_torch_file,
)
from imperiale_env.core.input_checks import input_file, output_file
from imperiale_train.checkpoint import build_model


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
    """Write the policy of training checkpoint ``checkpoint`` to the new file ``out``, an exported
    policy (``.npz``).

    Everything is checked before anything is written: ``out`` must not exist (nothing is
    overwritten) and its folder must be writable; ``checkpoint`` must be a training checkpoint
    whose weights fit its config.  The file is written whole or not at all.
    """
    out = output_file(out, "exported policy file", may_exist=False)
    src = input_file(checkpoint, "checkpoint")
    if is_policy_archive(src):
        raise CheckpointError(f"{src} is already an exported policy; export takes a training checkpoint "
                              "(RUN_DIR/checkpoint.pt)")
    data = check_checkpoint(read_torch_file(src), src)
    model, cfg = build_model(data, src)  # the config's sizes and every weight's shape and finiteness checked
    if "rules" not in data:
        raise CheckpointError(f"{src} lacks the rules record it was trained under")
    net = net_from_state(model.state_dict(), data["config"], "actor.net.", src)
    seconds = train_seconds(src.resolve().parent, int(data["iteration"]), cfg.batch_size)
    made = provenance(data, src, seconds)
    payload = policy_archive_bytes(net, _plain(data["config"]), _plain(data["rules"]), _plain(made))
    try:  # read back as every reader will, before anything is on disk: a file it refuses is never written
        read_policy_archive(out, payload)
    except CheckpointError as exc:
        raise CheckpointError(f"the policy of {src} cannot be exported: the file would not load ({exc})") from None
    _write_new(out, payload)
    return out


def _plain(value):
    """``value`` as plain JSON (tuples as lists); a value JSON cannot hold is an error, not dropped."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"the policy's metadata cannot be written as JSON: {exc}") from None


def _write_new(path: Path, payload: bytes) -> None:
    """Create ``path`` with ``payload`` atomically; an existing file is never replaced, and a full
    disk leaves no half-written file (:func:`~imperiale_env.core.atomic.write_atomic`)."""
    from imperiale_env.core.atomic import write_atomic
    from imperiale_env.core.input_checks import InputError

    try:
        write_atomic(path, payload, overwrite=False, what="exported policy file")
    except FileExistsError:
        raise InputError(f"the exported policy file {str(path)!r} exists already; it is not overwritten: "
                         "choose another name or move the file away") from None
