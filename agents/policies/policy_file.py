"""The files a trained policy is read from: exported policies (``.npz``) and training checkpoints.

An **exported policy** (what ``imperiale export`` writes and the form of the shipped champions)
is a numpy ``.npz`` archive: one array per layer (``layer{i}.weight`` ``(out, in)`` and
``layer{i}.bias``, float32) and ``metadata``, the UTF-8 bytes of a JSON object:

===============  =================================================================
format, version  ``"imperiale-policy"``, :data:`VERSION`
obs_version      the observation version it was trained for (:data:`OBS_VERSION`)
obs_size         the observation's width
feature_version  the features its first layer reads (:data:`FEATURE_VERSION`)
num_actions      43
activation       ``relu`` or ``tanh``
config           the training run's configuration (a JSON object; its recipe)
rules            the rules record it was trained under (``Rules.to_dict``)
provenance       ``seed``, ``iteration``, ``global_step``, ``train_seconds``, ``history``, ``source``
===============  =================================================================

It is read with ``np.load(allow_pickle=False)``: plain arrays and text, no code runs, and no
torch is needed to play it (:mod:`imperiale_agents.policies.policy_net`).  Everything is checked before
an array is allocated: the declared shapes (from the ``.npy`` headers) against
:data:`MAX_PARAMETERS` and each other, then the values (finite), then the metadata's types.  A
key this version does not know is warned about, not refused, so that a file of a newer release
still plays here.

A **training checkpoint** (``RUN_DIR/checkpoint.pt``, written by :mod:`imperiale_train.checkpoint`)
is a ``torch.save`` dict of tensors and plain values read with ``weights_only=True``; its
policy plays as ``neural:PATH`` when torch is installed.  Its format header and checks live here,
below both the agents and the training code, so that playing a policy never imports training.

A file trained for another observation version (the 485-float observation of earlier releases
is version 0) is refused with a message that says so and how to train one for this version:
its first layer reads inputs that no longer exist.  Files whose networks read feature version 1
(the one-hot expansion of the bytes: exported policies of version 3, checkpoints of version 3)
are refused with the reason and how to get one of version 2: their first layer is 1,085 wide and
means other inputs.
"""

from __future__ import annotations

import io
import json
import math
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from imperiale_agents.policies.policy_net import ACTIVATIONS, PolicyNet
from imperiale_env.core.actions import NUM_ACTIONS
from imperiale_env.core.observation import OBS_SIZE, OBS_VERSION
from imperiale_env.kernels.features import FEATURE_SIZE, FEATURE_VERSION

FORMAT = "imperiale-policy"
VERSION = 4
#: The policy-file versions before :data:`VERSION`, all of observation version 0.
OLD_VERSIONS = (1, 2)
#: Version 3: observation version 1 and feature version 1 (the champions of 2026-12-04/05), refused.
FEATURES_V1_VERSION = 3
#: The largest network a policy file may declare (weights and biases together): 64 Mi values,
#: 256 MiB of float32, far above any policy of this game (the champion has about 200 k).
MAX_PARAMETERS = 64 * 1024 * 1024
#: The most layers a policy file may declare (the training config allows 16 hidden ones).
MAX_LAYERS = 17
#: The largest metadata a policy file may carry.
MAX_METADATA_BYTES = 4 * 1024 * 1024
#: Metadata keys and the JSON types they must have.
METADATA_TYPES: dict[str, type | tuple[type, ...]] = {
    "format": str, "version": int, "obs_version": int, "obs_size": int, "num_actions": int, "activation": str,
    "config": dict, "rules": dict, "provenance": dict, "feature_version": int,
}

CHECKPOINT_FORMAT = "imperiale-ppo"
CHECKPOINT_VERSION = 4
#: Checkpoint versions of observation version 0, refused.
CHECKPOINT_OLD = (1, 2)
#: The checkpoint version of feature version 1 (observation version 1), refused with its own reason.
CHECKPOINT_FEATURES_V1 = 3
CHECKPOINT_REQUIRED = ("config", "iteration", "model")


class CheckpointError(RuntimeError):
    """A policy file or checkpoint that cannot be read or does not fit this code."""


def other_observation(path: str | Path, version: Any) -> CheckpointError:
    """The refusal of a file trained for observation ``version``, not this engine's."""
    return CheckpointError(
        f"{path} was trained for observation version {version!r}; this release observes version {OBS_VERSION} "
        f"({OBS_SIZE} bytes, docs/observation.md), which that network cannot read. Train a policy for it with "
        f"imperiale train --config configs/champion.yaml (then imperiale export RUN_DIR/checkpoint.pt FILE.npz)")


def other_features(path: str | Path, version: Any) -> CheckpointError:
    """The refusal of a file whose network reads feature ``version``, not this release's."""
    what = " (the one-hot bytes)" if version == 1 else ""
    return CheckpointError(
        f"{path} was written by another release, whose networks read feature version {version!r}{what}; "
        f"this release's networks read feature version {FEATURE_VERSION} (docs/training.md), so this one "
        f"can neither play nor continue here. Play it with the release that wrote it, or train one for this "
        f"release: imperiale train (self-play), or imperiale train --config configs/champion.yaml then imperiale "
        f"export RUN_DIR/checkpoint.pt FILE.npz")


@dataclass(frozen=True)
class PolicyFile:
    """A policy read from a file: the network, the run's config (a plain dict), the rules record
    it was trained under, and how it was made."""

    net: PolicyNet
    config: dict[str, Any]
    rules: dict[str, Any] | None
    provenance: dict[str, Any]


def is_policy_archive(path: str | Path) -> bool:
    """Whether ``path`` is an exported policy (a zip of ``.npy`` members with ``metadata``), not a
    torch file (also a zip, but of pickles)."""
    try:
        with zipfile.ZipFile(path) as archive:
            return "metadata.npy" in archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


def read_policy(path: str | Path) -> PolicyFile:
    """The policy of ``path``, an exported policy or a training checkpoint (which needs torch);
    :class:`CheckpointError` naming what is wrong with any other file."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no policy file or checkpoint at {path}")
    if is_policy_archive(path):
        return read_policy_archive(path)
    return policy_from_checkpoint(path)


# --- exported policies -------------------------------------------------------------------------------


def read_policy_archive(path: Path, payload: bytes | None = None) -> PolicyFile:
    """The exported policy in ``path`` (or in ``payload``, the bytes about to be written there: an
    export checks its file as a reader will before writing it)."""
    try:
        with zipfile.ZipFile(path if payload is None else io.BytesIO(payload)) as archive:
            shapes = _declared_shapes(archive, path)
            meta = _metadata(archive, shapes, path)
            layers = _layers(archive, shapes, meta, path)
    except (OSError, zipfile.BadZipFile, ValueError, EOFError) as exc:
        raise CheckpointError(f"{path} is a damaged policy file ({type(exc).__name__}: {exc})") from None
    net = PolicyNet(layers, meta["activation"])
    return PolicyFile(net, meta["config"], meta["rules"], meta["provenance"])


def _declared_shapes(archive: zipfile.ZipFile, path: Path) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """Each member's shape and dtype from its ``.npy`` header, read before any array is."""
    shapes = {}
    for name in archive.namelist():
        if not name.endswith(".npy"):
            raise CheckpointError(f"{path}: unexpected member {name!r} in a policy file (only .npy arrays)")
        with archive.open(name) as member:
            version = np.lib.format.read_magic(member)
            reader = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, _, dtype = reader(member)
        if dtype.hasobject:
            raise CheckpointError(f"{path}: {name} holds Python objects; a policy file holds numbers only")
        shapes[name[: -len(".npy")]] = (tuple(shape), dtype)
    if "metadata" not in shapes:
        raise CheckpointError(f"{path} has no metadata; it is not an exported policy")
    return shapes


def _metadata(archive: zipfile.ZipFile, shapes: dict, path: Path) -> dict[str, Any]:
    shape, dtype = shapes["metadata"]
    if dtype != np.uint8 or len(shape) != 1 or shape[0] > MAX_METADATA_BYTES:
        raise CheckpointError(f"{path}: the metadata must be at most {MAX_METADATA_BYTES} bytes of JSON text")
    raw = _array(archive, "metadata").tobytes()
    try:
        meta = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise CheckpointError(f"{path}: the metadata is not JSON text ({exc})") from None
    if not isinstance(meta, dict):
        raise CheckpointError(f"{path}: the metadata must be a JSON object, got {type(meta).__name__}")
    return _checked_metadata(meta, path)


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number this file may hold")


def _checked_metadata(meta: dict[str, Any], path: Path) -> dict[str, Any]:
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not an exported policy (its format is {meta.get('format')!r}, "
                              f"not {FORMAT!r})")
    if meta.get("version") in OLD_VERSIONS:
        raise other_observation(path, 0)
    if meta.get("version") == FEATURES_V1_VERSION:
        raise other_features(path, meta.get("feature_version", 1))
    for key, kind in METADATA_TYPES.items():
        if key not in meta:
            raise CheckpointError(f"{path}: the metadata lacks {key!r}")
        value = meta[key]
        if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
            raise CheckpointError(f"{path}: the metadata's {key!r} must be a JSON {_json_name(kind)}, "
                                  f"got {type(value).__name__} {value!r:.60}")
    if meta["version"] != VERSION:
        raise CheckpointError(f"{path} is an exported policy of version {meta['version']}; this code reads "
                              f"version {VERSION}")
    if meta["feature_version"] != FEATURE_VERSION:
        raise other_features(path, meta["feature_version"])
    if meta["obs_version"] != OBS_VERSION:
        raise other_observation(path, meta["obs_version"])
    if meta["obs_size"] != OBS_SIZE or meta["num_actions"] != NUM_ACTIONS:
        raise CheckpointError(f"{path} was trained for observations of {meta['obs_size']} and "
                              f"{meta['num_actions']} actions; this engine has {OBS_SIZE} and {NUM_ACTIONS}")
    if meta["activation"] not in ACTIVATIONS:
        raise CheckpointError(f"{path}: activation {meta['activation']!r} is not one of {', '.join(ACTIVATIONS)}")
    _check_provenance(meta["provenance"], path)
    unknown = sorted(set(meta) - set(METADATA_TYPES))
    if unknown:
        warnings.warn(f"{path}: metadata keys this version does not know are ignored: {', '.join(unknown)}",
                      stacklevel=4)
    return meta


#: What ``provenance`` may hold and the JSON types of each (``None``: not known, as an export writes
#: when the run's metrics are missing); other keys are kept as they are.
PROVENANCE_TYPES: dict[str, tuple[type, ...]] = {
    "seed": (int, type(None)), "iteration": (int,), "global_step": (int, type(None)),
    "train_seconds": (int, float, type(None)), "history": (list,), "source": (str,),
}


def _check_provenance(made: dict[str, Any], path: Path) -> None:
    """How the policy was made is shown to people and read as numbers: each known key of its type."""
    for key, kinds in PROVENANCE_TYPES.items():
        value = made.get(key)
        if key in made and (not isinstance(value, kinds) or isinstance(value, bool)):
            names = " or ".join("null" if k is type(None) else _json_name(k) for k in kinds)
            raise CheckpointError(f"{path}: the metadata's provenance {key!r} must be a JSON {names}, got "
                                  f"{type(value).__name__} {value!r:.60}")
    if isinstance(made.get("iteration"), int) and made["iteration"] < 0:
        raise CheckpointError(f"{path}: the metadata's provenance 'iteration' is {made['iteration']}, not a count")


def _json_name(kind: type | tuple[type, ...]) -> str:
    return {str: "string", int: "integer", dict: "object", float: "number", list: "array"}.get(kind, str(kind))


def _layers(archive: zipfile.ZipFile, shapes: dict, meta: dict, path: Path) -> tuple:
    count = sum(1 for name in shapes if name.startswith("layer") and name.endswith(".weight"))
    expected = {"metadata"} | {f"layer{i}.{part}" for i in range(count) for part in ("weight", "bias")}
    if not 1 <= count <= MAX_LAYERS or set(shapes) != expected:
        raise CheckpointError(f"{path}: a policy file holds layer0..layerN (N < {MAX_LAYERS}) weights and biases "
                              f"and metadata; it holds {', '.join(sorted(shapes))}")
    width, total = FEATURE_SIZE, 0
    for i in range(count):
        w_shape, w_type = shapes[f"layer{i}.weight"]
        b_shape, b_type = shapes[f"layer{i}.bias"]
        out = w_shape[0] if len(w_shape) == 2 else -1
        if len(w_shape) != 2 or w_shape[1] != width or b_shape != (out,):
            raise CheckpointError(f"{path}: layer {i} has weight {w_shape} and bias {b_shape}; it must take "
                                  f"{width} inputs (weight (out, {width}), bias (out,))")
        if w_type.kind != "f" or b_type.kind != "f":
            raise CheckpointError(f"{path}: layer {i} must hold floating-point numbers")
        total += math.prod(w_shape) + out
        width = out
    if width != meta["num_actions"]:
        raise CheckpointError(f"{path}: the last layer gives {width} values, not one per action "
                              f"({meta['num_actions']})")
    if total > MAX_PARAMETERS:
        raise CheckpointError(f"{path} declares a network of {total:,} parameters; the limit is {MAX_PARAMETERS:,}")
    layers = []
    for i in range(count):
        weight = _array(archive, f"layer{i}.weight").astype(np.float32)
        bias = _array(archive, f"layer{i}.bias").astype(np.float32)
        if not (np.isfinite(weight).all() and np.isfinite(bias).all()):
            raise CheckpointError(f"{path}: layer {i} holds NaN or infinite weights; the policy cannot play")
        weight.flags.writeable = bias.flags.writeable = False
        layers.append((weight, bias))
    return tuple(layers)


def _array(archive: zipfile.ZipFile, name: str) -> np.ndarray:
    with archive.open(f"{name}.npy") as member:
        return np.lib.format.read_array(member, allow_pickle=False)


def policy_archive_bytes(net: PolicyNet, config: dict, rules: dict, provenance: dict) -> bytes:
    """The bytes of an exported policy of ``net`` (the caller writes them atomically)."""
    meta = {"format": FORMAT, "version": VERSION, "obs_version": OBS_VERSION, "obs_size": OBS_SIZE,
            "num_actions": NUM_ACTIONS, "feature_version": FEATURE_VERSION,
            "activation": net.activation, "config": config, "rules": rules, "provenance": provenance}
    arrays = {"metadata": np.frombuffer(json.dumps(meta, sort_keys=True).encode("utf-8"), dtype=np.uint8)}
    for i, (weight, bias) in enumerate(net.layers):
        arrays[f"layer{i}.weight"] = np.ascontiguousarray(weight, dtype=np.float32)
        arrays[f"layer{i}.bias"] = np.ascontiguousarray(bias, dtype=np.float32)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


# --- training checkpoints -----------------------------------------------------------------------------


def read_torch_file(path: str | Path, map_location: Any = "cpu") -> Any:
    """What ``torch.load(weights_only=True)`` reads from ``path`` (no code runs); :class:`CheckpointError`
    if the file is missing, cannot be read that way, or torch is not installed."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {path}")
    try:
        import torch
    except ModuleNotFoundError:
        raise CheckpointError(f"{path} is a torch file (a training checkpoint); reading it needs torch: "
                              "pip install 'imperiale[train]', or play an exported policy (.npz)") from None
    _check_archive(path)
    try:
        return torch.load(path, map_location=map_location, weights_only=True)
    except Exception as exc:  # torch raises many kinds (pickle, zip, runtime) on a damaged file
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""  # not torch's advice that follows
        raise CheckpointError(f"{path} is corrupt or not a training checkpoint ({type(exc).__name__}: "
                              f"{first})") from None


def _check_archive(path: Path) -> None:
    """A torch file is a zip archive whose every part carries a CRC-32: check them all before
    anything is read, so that a flipped bit in the weights is refused rather than played."""
    try:
        with zipfile.ZipFile(path) as archive:
            damaged = archive.testzip()
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        with open(path, "rb") as f:
            start = f.read(16)
        kind = "text" if start and all(32 <= b < 127 or b in b"\r\n\t" for b in start) else "not a zip archive"
        raise CheckpointError(f"{path} is corrupt or not a training checkpoint: a checkpoint is a torch archive "
                              f"(zip), this file is {kind} ({type(exc).__name__}: {exc}; it starts with "
                              f"{start[:12]!r})") from None
    if damaged is not None:
        raise CheckpointError(f"{path} is corrupt: its part {damaged!r} fails its CRC-32 check (a flipped bit or a "
                              "damaged copy); it is not read: use an intact copy")


def check_checkpoint(data: Any, path: str | Path) -> dict[str, Any]:
    """``data`` (read from ``path``) if it is a checkpoint this code reads, else :class:`CheckpointError`."""
    path = Path(path)
    if isinstance(data, dict) and data.get("format") == FORMAT:
        raise other_observation(path, 0)  # the torch-format exported policies of the first releases
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{path} is not an {CHECKPOINT_FORMAT} checkpoint (no '{CHECKPOINT_FORMAT}' "
                              "format header)")
    if data.get("version") in CHECKPOINT_OLD:
        raise other_observation(path, 0)
    if data.get("version") == CHECKPOINT_FEATURES_V1:
        raise other_features(path, 1)
    if data.get("version") != CHECKPOINT_VERSION:
        raise CheckpointError(f"{path} has checkpoint version {data.get('version')!r}; this code reads "
                              f"{CHECKPOINT_VERSION}")
    check_contents(data, path, CHECKPOINT_REQUIRED)
    return data


def check_contents(data: dict[str, Any], path: str | Path, required: tuple[str, ...]) -> None:
    """A file's networks take this engine's observations and give its actions, and it holds
    every key of ``required``."""
    if data.get("obs_version") != OBS_VERSION:
        raise other_observation(path, data.get("obs_version", 0))
    if data.get("obs_size") != OBS_SIZE or data.get("num_actions") != NUM_ACTIONS:
        raise CheckpointError(
            f"{path} was trained for observations of {data.get('obs_size')} and {data.get('num_actions')} actions; "
            f"this engine has {OBS_SIZE} and {NUM_ACTIONS}"
        )
    if data.get("feature_version") != FEATURE_VERSION:
        raise other_features(path, data.get("feature_version"))
    missing = [k for k in required if k not in data]
    if missing:
        raise CheckpointError(f"{path} lacks {', '.join(missing)}")


def policy_from_checkpoint(path: Path) -> PolicyFile:
    """The policy (the actor) of training checkpoint ``path``, as numpy layers."""
    data = check_checkpoint(read_torch_file(path), path)
    return PolicyFile(net_from_state(data["model"], data["config"], "actor.net.", path), dict(data["config"]),
                      data.get("rules"), provenance(data, path, train_seconds=None))


def net_from_state(state: dict[str, Any], config: dict[str, Any], prefix: str, path: Path) -> PolicyNet:
    """The numpy network of the torch state dict ``state`` (keys ``{prefix}{index}.weight|bias``)."""
    indices = sorted({int(k[len(prefix):].split(".")[0]) for k in state if k.startswith(prefix)})
    if not indices:
        raise CheckpointError(f"{path} holds no policy weights ({prefix}*)")
    try:
        layers = tuple((state[f"{prefix}{i}.weight"].detach().cpu().numpy().astype(np.float32),
                        state[f"{prefix}{i}.bias"].detach().cpu().numpy().astype(np.float32)) for i in indices)
    except (KeyError, AttributeError) as exc:
        raise CheckpointError(f"{path}: the policy's weights are incomplete ({exc})") from None
    activation = config.get("activation", "relu") if isinstance(config, dict) else "relu"
    if activation not in ACTIVATIONS:
        raise CheckpointError(f"{path}: activation {activation!r} is not one of {', '.join(ACTIVATIONS)}")
    width = FEATURE_SIZE
    for i, (weight, bias) in enumerate(layers):  # what an exported policy's reader checks, on every path
        if weight.ndim != 2 or weight.shape[1] != width or bias.shape != weight.shape[:1]:
            raise CheckpointError(f"{path}: layer {i} of the policy has weight {weight.shape} and bias {bias.shape}; "
                                  f"it must take {width} inputs (weight (out, {width}), bias (out,))")
        if not (np.isfinite(weight).all() and np.isfinite(bias).all()):
            raise CheckpointError(f"{path}: layer {i} of the policy holds NaN or infinite weights; it cannot play "
                                  "(the run diverged: resume from an earlier checkpoint with a lower lr)")
        width = weight.shape[0]
    if width != NUM_ACTIONS:
        raise CheckpointError(f"{path}: the policy's last layer gives {width} values, not one per action "
                              f"({NUM_ACTIONS})")
    return PolicyNet(layers, activation)


def provenance(data: dict[str, Any], path: Path, train_seconds: float | None) -> dict[str, Any]:
    """How the policy of checkpoint ``data`` was made: seed, iteration, steps, time, evaluations, file."""
    return {"seed": data.get("seed"), "iteration": int(data["iteration"]), "global_step": data.get("global_step"),
            "train_seconds": train_seconds, "history": list(data.get("history", [])), "source": Path(path).name}
