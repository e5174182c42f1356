"""The training configurations shipped with the package (installed as ``imperiale_configs``), so
that ``imperiale train --config champion`` works from a wheel as from a clone.

Each ``NAME.yaml`` here is a flat mapping of :class:`imperiale_train.config.TrainConfig` keys:
``ppo_selfplay`` (the default of ``imperiale train``), ``selfplay_long`` (pure self-play for
about an hour, docs/training.md), ``champion`` (the recipe of the shipped champion,
docs/champion.md) and ``ppo_gpu`` (self-play sized for a GPU).
"""

from __future__ import annotations

from pathlib import Path

CONFIGS_DIR = Path(__file__).resolve().parent


def shipped_configs() -> tuple[str, ...]:
    """The names of the shipped configurations, sorted."""
    return tuple(sorted(p.stem for p in CONFIGS_DIR.glob("*.yaml")))


def shipped_config(name: str) -> Path | None:
    """The file of the shipped configuration ``name`` (``champion``, ``champion.yaml``), else ``None``."""
    stem = name[: -len(".yaml")] if name.endswith(".yaml") else name
    path = CONFIGS_DIR / f"{stem}.yaml"
    return path if stem in shipped_configs() else None
