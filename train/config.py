"""The training configuration: one dataclass, loaded from YAML and ``key=value`` overrides.

Every field can be set in a YAML mapping (``configs/ppo_selfplay.yaml``) and overridden on the
command line (``imperiale train lr=1e-4 critic=perfect``).  Values are converted to the
field's type (``true``/``false``, ints, floats, comma-separated tuples); an unknown key, a
value of the wrong type or a value outside the allowed range raises :class:`ConfigError`
naming the key and what is allowed.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any


class ConfigError(ValueError):
    """A training configuration that cannot be used; the message says what is allowed."""


CRITICS = ("plain", "perfect")
DEVICES = ("cpu", "cuda", "auto")
ACTIVATIONS = ("relu", "tanh")


@dataclass
class TrainConfig:
    """Self-play PPO.  One *iteration* collects ``num_envs * num_steps`` decisions, then updates."""

    # Game.
    rules: str = "academie"  # rules preset (academie, academie3, foster, imperijal)
    target_imperiales: int = 0  # 0: the preset's target
    single_deal: bool = True  # train on single deals (reward: zero-sum score change in impériales)
    # Run.
    seed: int = 0
    run_dir: str = "runs/ppo_selfplay"
    iterations: int = 100
    device: str = "cpu"  # cpu, cuda (fails if unavailable), auto (cuda when available)
    threads: int = 2  # torch.set_num_threads
    progress: bool = True
    tensorboard: bool = True
    plot: bool = True  # learning_curve.png in run_dir at the end (needs matplotlib)
    checkpoint_every: int = 10  # iterations; 0: only at the end
    # Rollouts.
    num_envs: int = 512  # BatchGame slots
    num_steps: int = 32  # decisions per slot per iteration
    rollout_workers: int = 0  # Ray actors collecting the rollouts, num_envs / N slots each; 0: in this process
    ray_address: str = ""  # with rollout_workers: a Ray cluster (auto, HOST:PORT, ray://...); "": a local instance
    # Opponent pool.
    p_pool: float = 0.2  # probability that a game's opponent seat(s) are a past snapshot
    pool_size: int = 8  # keep the last K snapshots
    pool_every: int = 10  # snapshot the policy every M iterations
    train_all_seats: bool = True  # learn from every seat the current policy plays, not only the learner's
    # Model.
    hidden: tuple[int, ...] = (256, 256)
    activation: str = "relu"
    critic: str = "plain"  # plain: value sees the observation; perfect: plus every other hand
    # PPO.
    lr: float = 1e-3
    anneal_lr: bool = True
    gamma: float = 1.0
    gae_lambda: float = 0.95
    update_epochs: int = 2
    num_minibatches: int = 4
    clip_coef: float = 0.2
    clip_vloss: bool = False
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    norm_adv: bool = True
    reward_scale: float = 1.0
    target_kl: float = 0.0  # 0: off; else stop the epochs of an update past this approximate KL
    # Evaluation (duplicate deals against random and heuristic, greedy policy).
    eval_every: int = 25  # iterations; 0: only at the end
    eval_groups: int = 100  # duplicate seed groups per opponent (2 or 3 games each)
    eval_single_deal: bool = False  # evaluate on single deals instead of whole games
    eval_seed: int = 12345
    eval_opponents: tuple[str, ...] = ("random", "heuristic")

    def validate(self) -> TrainConfig:
        def need(cond: bool, key: str, allowed: str) -> None:
            if not cond:
                raise ConfigError(f"bad value {key}={getattr(self, key)!r} (allowed: {allowed})")

        from imperiale_env.rules import PRESET_NAMES

        need(self.rules in PRESET_NAMES, "rules", ", ".join(PRESET_NAMES))
        need(self.target_imperiales >= 0, "target_imperiales", "0 (preset) or a positive int")
        need(self.device in DEVICES, "device", ", ".join(DEVICES))
        need(self.critic in CRITICS, "critic", ", ".join(CRITICS))
        need(self.activation in ACTIVATIONS, "activation", ", ".join(ACTIVATIONS))
        for key in ("iterations", "threads", "num_envs", "num_steps", "update_epochs", "num_minibatches",
                    "pool_size", "pool_every", "eval_groups"):
            need(getattr(self, key) >= 1, key, "an int >= 1")
        for key in ("checkpoint_every", "eval_every"):
            need(getattr(self, key) >= 0, key, "an int >= 0 (0: only at the end)")
        need(self.rollout_workers >= 0, "rollout_workers", "an int >= 0 (0: collect in this process)")
        need(0.0 <= self.p_pool <= 1.0, "p_pool", "a probability in [0, 1]")
        need(0.0 <= self.gamma <= 1.0, "gamma", "a float in [0, 1]")
        need(0.0 <= self.gae_lambda <= 1.0, "gae_lambda", "a float in [0, 1]")
        need(self.lr > 0, "lr", "a float > 0")
        need(self.clip_coef > 0, "clip_coef", "a float > 0")
        need(self.max_grad_norm > 0, "max_grad_norm", "a float > 0")
        need(self.reward_scale > 0, "reward_scale", "a float > 0")
        for key in ("ent_coef", "vf_coef", "target_kl"):
            need(getattr(self, key) >= 0, key, "a float >= 0")
        need(len(self.hidden) >= 1 and all(h >= 1 for h in self.hidden), "hidden", "comma-separated ints >= 1")
        need(self.rollout_workers == 0 or self.num_envs % self.rollout_workers == 0, "rollout_workers",
             f"0, or a divisor of num_envs={self.num_envs} (each worker plays num_envs / rollout_workers games)")
        need(self.num_envs * self.num_steps >= self.num_minibatches, "num_minibatches",
             "at most num_envs * num_steps")
        allowed_opp = ("random", "heuristic")
        need(all(o in allowed_opp or o.startswith(("pimc", "neural:")) for o in self.eval_opponents),
             "eval_opponents", "comma-separated agent specs: random, heuristic, pimc[:N], neural:PATH")
        if self.target_imperiales:
            from imperiale_env.rules import RulesError

            try:
                self.make_rules()
            except RulesError as exc:
                raise ConfigError(str(exc)) from None
        return self

    def make_rules(self):
        from imperiale_env.rules import make_rules

        extra = {"target_imperiales": self.target_imperiales} if self.target_imperiales else {}
        return make_rules(self.rules, **extra)

    @property
    def batch_size(self) -> int:
        return self.num_envs * self.num_steps

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


def allowed_keys() -> list[str]:
    return [f.name for f in fields(TrainConfig)]


_TYPES = typing.get_type_hints(TrainConfig)


def _convert(key: str, value: Any) -> Any:
    """``value`` (a YAML scalar or a command-line string) as the type of field ``key``."""
    kind = _TYPES[key]
    text = value.strip() if isinstance(value, str) else None

    def bad(expected: str) -> ConfigError:
        return ConfigError(f"bad value {key}={value!r}: expected {expected}")

    if kind is bool:
        if isinstance(value, bool):
            return value
        if text is not None and text.lower() in ("true", "yes", "on", "1"):
            return True
        if text is not None and text.lower() in ("false", "no", "off", "0"):
            return False
        raise bad("a boolean (true/false)")
    if kind is int:
        if isinstance(value, bool):
            raise bad("an int")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        try:
            return int(text) if text is not None else int("x")
        except ValueError:
            try:
                f = float(text)  # 1e6
            except (TypeError, ValueError):
                raise bad("an int") from None
            if f.is_integer():
                return int(f)
            raise bad("an int") from None
    if kind is float:
        if isinstance(value, bool):
            raise bad("a float")
        if isinstance(value, (int, float)):
            return float(value)
        try:
            return float(text)
        except (TypeError, ValueError):
            raise bad("a float") from None
    if kind is str:
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return str(value)
        raise bad("a string")
    if typing.get_origin(kind) is tuple:
        inner = typing.get_args(kind)[0]
        items = value if isinstance(value, (list, tuple)) else (
            [] if text == "" else [t for t in text.split(",")] if text is not None else [value])
        try:
            return tuple(inner(x.strip() if isinstance(x, str) else x) for x in items)
        except (TypeError, ValueError):
            raise bad(f"comma-separated {inner.__name__}s") from None
    raise bad(str(kind))  # pragma: no cover


def _apply(values: dict[str, Any], source: str) -> dict[str, Any]:
    known = set(allowed_keys())
    unknown = sorted(set(values) - known)
    if unknown:
        raise ConfigError(
            f"unknown config key(s) {', '.join(map(repr, unknown))} in {source} (allowed: {', '.join(allowed_keys())})"
        )
    return {k: _convert(k, v) for k, v in values.items()}


def parse_overrides(items: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """``["lr=1e-4", "critic=perfect"]`` -> converted values (errors name the bad item)."""
    out: dict[str, Any] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ConfigError(f"override {item!r} is not KEY=VALUE (allowed keys: {', '.join(allowed_keys())})")
        out[key.strip()] = value
    return _apply(out, "the overrides")


def load_yaml(path: str | Path) -> dict[str, Any]:
    import yaml

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"config {path} is not valid YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config {path} must be a mapping of key: value, got {type(data).__name__}")
    return _apply(data, str(path))


def make_config(path: str | Path | None = None, overrides: list[str] | tuple[str, ...] | dict[str, Any] = (),
                **kwargs: Any) -> TrainConfig:
    """Defaults, then the YAML file ``path``, then ``overrides`` (``key=value`` strings or a dict), then kwargs."""
    values: dict[str, Any] = {}
    if path is not None:
        values.update(load_yaml(path))
    if isinstance(overrides, dict):
        values.update(_apply(overrides, "the overrides"))
    else:
        values.update(parse_overrides(list(overrides)))
    values.update(_apply(kwargs, "the arguments"))
    return TrainConfig(**values).validate()


def config_from_dict(data: dict[str, Any]) -> TrainConfig:
    """A config stored in a checkpoint (keys unknown to this version are an error)."""
    return TrainConfig(**_apply(dict(data), "the checkpoint's config")).validate()


def default_config_path() -> Path | None:
    """``configs/ppo_selfplay.yaml`` next to the package (a source checkout), if it exists."""
    path = Path(__file__).resolve().parent.parent / "configs" / "ppo_selfplay.yaml"
    return path if path.is_file() else None


#: Fields that may differ between a run and its ``--resume`` (``iterations`` extends or shortens the
#: run; with ``anneal_lr`` that changes the learning rate of the iterations still to come).
RUNTIME_KEYS = ("iterations", "progress", "tensorboard", "plot", "threads", "device", "checkpoint_every",
                "ray_address")


def replace(config: TrainConfig, **changes: Any) -> TrainConfig:
    return dataclasses.replace(config, **changes).validate()
