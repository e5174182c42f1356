"""Checkpoints: atomic writes, and loads that fail clearly on a corrupt or foreign file.

A checkpoint is one ``torch.save`` dict of tensors and plain Python values (dicts, lists,
strings, numbers), with no pickled object anywhere, so it loads with ``weights_only=True``
and loading it runs no code: a file crafted to run code on unpickling is refused as corrupt.
Its keys:

===============  =================================================================
format, version  ``"imperiale-ppo"``, :data:`VERSION`
obs_version      the observation version the networks read (1)
obs_size         the observation's width (346 bytes)
num_actions      43
feature_version  the features the networks read (2: :mod:`imperiale_env.kernels.features`)
config           the :class:`~imperiale_train.config.TrainConfig` as a dict
rules            the rules record (:meth:`Rules.to_dict`)
seed             the run's seed
iteration        PPO updates done; ``global_step``: decisions collected
model            ActorCritic state dict (``actor.*``: trunk and policy head, ``critic.*``: the value head)
optimizer        Adam state dict
np_rng           the numpy generator's ``bit_generator.state``
torch_rng        ``torch.get_rng_state()``
pool             the opponent pool (ids, iterations, actor weights)
rollout          the game batch (:meth:`BatchGame.to_dict`, arrays as tensors) and seat assignment
history          evaluation results so far (list of dicts)
imitation_round  imitation rounds done (absent in checkpoints of runs before imitation: 0)
imitation_labels labels those rounds made: the first rows of ``labels.pt`` next to it
===============  =================================================================

Its format header and the checks of a file read back live in :mod:`imperiale_agents.policies.policy_file`,
which the agents read too (``neural:RUN_DIR/checkpoint.pt``) without importing training code.

The labels of the imitation rounds (:class:`~imperiale_train.imitate.Labels`, tensors only) are kept in
their own file, ``labels.pt``, written before the checkpoint of each round: the checkpoints of
the PPO iterations that follow do not copy them.  A run killed between the two writes resumes
from the first ``imitation_labels`` rows.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import torch

from imperiale_agents.policies.policy_file import (
    CHECKPOINT_FORMAT,
    CHECKPOINT_REQUIRED,
    CHECKPOINT_VERSION,
    CheckpointError,
    check_checkpoint,
    read_torch_file,
)
from imperiale_env.core.actions import NUM_ACTIONS
from imperiale_env.core.atomic import write_atomic
from imperiale_env.core.observation import OBS_SIZE, OBS_VERSION
from imperiale_env.kernels.features import FEATURE_VERSION

FORMAT = CHECKPOINT_FORMAT
VERSION = CHECKPOINT_VERSION
REQUIRED = CHECKPOINT_REQUIRED


def save_checkpoint(path: str | Path, state: dict[str, Any]) -> Path:
    """Write ``state`` (plus the format header) to ``path`` atomically: a temporary file in the
    same directory, flushed and fsynced, then ``os.replace`` (a reader never sees half a file)."""
    return _atomic_save(path, {"format": FORMAT, "version": VERSION, "obs_version": OBS_VERSION, "obs_size": OBS_SIZE,
                               "num_actions": NUM_ACTIONS, "feature_version": FEATURE_VERSION, **state})


def _atomic_save(path: str | Path, data: dict[str, Any]) -> Path:
    """Serialise in memory first: torch turns a failed write into a ``RuntimeError`` of its own,
    while :func:`write_atomic` names the path and the OS's reason (``WriteError``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    torch.save(data, buffer)
    return write_atomic(path, buffer.getbuffer(), what="checkpoint")


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """The checkpoint dict; :class:`CheckpointError` if missing, corrupt or incompatible."""
    return check_checkpoint(read_torch_file(path, map_location), path)


def build_model(data: dict[str, Any], path: str | Path | None = None):
    """The :class:`~imperiale_train.model.ActorCritic` of a loaded checkpoint, weights restored;
    :class:`CheckpointError` (naming ``path`` if given) when its config or weights cannot make one."""
    try:
        return _build_model(data)
    except CheckpointError as exc:
        if path is None:
            raise
        raise CheckpointError(f"{path}: {exc}") from None


def _build_model(data: dict[str, Any]):
    from imperiale_train.config import ConfigError, config_from_dict
    from imperiale_train.model import ActorCritic

    try:
        cfg = config_from_dict(data["config"])  # sizes bounded before a network is built
    except ConfigError as exc:
        raise CheckpointError(f"the checkpoint's config does not fit this code: {exc}") from None
    model = ActorCritic(cfg.hidden, cfg.activation, cfg.critic)
    check_weights(model, data["model"], cfg)
    model.load_state_dict(data["model"])
    return model, cfg


def check_weights(model: torch.nn.Module, weights: Any, cfg: Any) -> None:
    """:class:`CheckpointError` unless ``weights`` are ``model``'s state: the same names, each of its
    shape, every value finite (a diverged run's NaN would play and train on silently)."""
    expected = model.state_dict()
    sizes = f"hidden={','.join(map(str, cfg.hidden))}, critic={cfg.critic}"
    names = set(weights) if isinstance(weights, dict) else set()
    if names != set(expected):
        raise CheckpointError(f"the checkpoint's weights do not fit its config ({sizes}): missing "
                              f"{sorted(set(expected) - names)[:4]}, unexpected {sorted(names - set(expected))[:4]}")
    for name, tensor in expected.items():
        got = weights[name]
        if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(tensor.shape):
            shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
            raise CheckpointError(f"the checkpoint's weight {name} has shape {shape}; its config ({sizes}) makes "
                                  f"{tuple(tensor.shape)}")
        if not bool(torch.isfinite(got).all()):
            raise CheckpointError(f"the checkpoint's weight {name} holds NaN or infinite values (the run diverged): "
                                  "start again from an earlier copy of it if you kept one, or anew with a lower lr")


LABELS_FORMAT = "imperiale-labels"


def save_labels(path: str | Path, labels: dict[str, torch.Tensor]) -> Path:
    """Write the imitation labels (a dict of tensors) atomically, with their format header."""
    return _atomic_save(path, {"format": LABELS_FORMAT, "obs_version": OBS_VERSION, "obs_size": OBS_SIZE,
                               "labels": labels})


def load_labels(path: str | Path, rows: int) -> dict[str, torch.Tensor]:
    """The first ``rows`` labels of ``path``; :class:`CheckpointError` if missing, corrupt or too short."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"the checkpoint counts {rows} imitation labels but {path} is missing: the run "
                              "cannot resume its imitation (start a new run_dir=)")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # as in load_checkpoint: many kinds of damage
        raise CheckpointError(f"{path} is corrupt or not imitation labels ({type(exc).__name__}: {exc})") from None
    if not isinstance(data, dict) or data.get("format") != LABELS_FORMAT or data.get("obs_version") != OBS_VERSION \
            or not isinstance(data.get("labels"), dict):
        raise CheckpointError(f"{path} is not an {LABELS_FORMAT} file for observation version {OBS_VERSION}")
    labels = data["labels"]
    have = labels.get("action")
    if not isinstance(have, torch.Tensor) or len(have) < rows:
        raise CheckpointError(f"{path} holds fewer than the {rows} labels the checkpoint counts")
    return {k: v[:rows] if isinstance(v, torch.Tensor) else v for k, v in labels.items()}
