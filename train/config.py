"""The training configuration: one dataclass, loaded from YAML and ``key=value`` overrides.

Every field can be set in a YAML mapping (``configs/ppo_selfplay.yaml``) and overridden on the
command line (``imperiale train lr=1e-4 critic=perfect``).  Values are converted to the
field's type (``true``/``false``, ints, floats, comma-separated tuples); an unknown key, a
value of the wrong type or a value outside the allowed range raises :class:`ConfigError`
naming the key and what is allowed.
"""

from __future__ import annotations

import dataclasses
import math
import os
import typing
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from imperiale_agents.policies.policy_file import MAX_PARAMETERS


class ConfigError(ValueError):
    """A training configuration that cannot be used; the message says what is allowed."""


CRITICS = ("plain", "perfect")
DEVICES = ("cpu", "cuda", "auto")
ACTIVATIONS = ("relu", "tanh")
#: What labels a card in the imitation: pimc's mean values over its sampled worlds, or the
#: double-dummy values of the true deal (one exact solve; what pimc would compute knowing the hands).
IMITATION_LABELS = ("pimc", "dd")


def _key(default: Any, meaning: str, low: float | None = None, high: float | None = None, *,
         open_low: bool = False) -> Any:
    """A config field: its default, the one-line meaning ``train --help`` shows, and for numbers
    the allowed range ``[low, high]`` (``(low, high]`` with ``open_low``)."""
    return dataclasses.field(default=default, metadata={"meaning": meaning, "range": (low, high, open_low)})


SEED_MAX = 2**63 - 1


@dataclass
class TrainConfig:
    """Self-play PPO.  One *iteration* collects ``num_envs * num_steps`` decisions, then updates."""

    # Game.
    rules: str = _key("academie", "rules preset (academie, academie3, foster, imperijal)")
    target_imperiales: int = _key(0, "impériales to win a game; 0: the preset's target", 0, 100)
    single_deal: bool = _key(True, "train on single deals (reward: zero-sum score change in impériales)")
    # Run.
    seed: int = _key(0, "seed of the run (weights, games, sampling)", 0, SEED_MAX)
    run_dir: str = _key("runs/ppo_selfplay", "folder of the checkpoint, metrics, TensorBoard logs and plot")
    iterations: int = _key(500, "PPO iterations (one rollout and one update each)", 1, 10**7)
    device: str = _key("cpu", "cpu, cuda (fails if unavailable), auto (cuda when available)")
    threads: int = _key(2, "torch CPU threads", 1, 1024)
    progress: bool = _key(True, "show a progress bar")
    tensorboard: bool = _key(True, "write TensorBoard logs to run_dir/tb")
    plot: bool = _key(True, "write run_dir/learning_curve.png at the end (needs matplotlib)")
    checkpoint_every: int = _key(10, "iterations between checkpoints; 0: only at the end", 0, 10**7)
    # Rollouts.
    num_envs: int = _key(512, "games played side by side (BatchGame slots)", 1, 2**30)
    num_steps: int = _key(32, "decisions per slot per iteration", 1, 10**6)
    rollout_workers: int = _key(0, "Ray actors collecting the rollouts, num_envs / N slots each; 0: in this process",
                                0, 1024)
    ray_address: str = _key("", "with rollout_workers: a Ray cluster (auto, HOST:PORT, ray://...); '': local")
    # Imitation of search (before PPO): self-play deals whose card decisions are labelled by pimc.
    imitation_rounds: int = _key(0, "imitation rounds before PPO, each: play imitation_games deals, label them, "
                                 "imitation_epochs passes over all labels so far; 0: PPO only", 0, 10**5)
    imitation_games: int = _key(64, "deals played side by side per round (pimc plays the cards, the heuristic "
                                "declares)", 1, 10**6)
    imitation_samples: int = _key(16, "sampled deals per card label (the search of pimc:N, full depth)", 1, 10_000)
    imitation_epochs: int = _key(4, "passes over the labels after each round", 1, 10**4)
    imitation_batch: int = _key(256, "labelled decisions per minibatch", 1, 2**24)
    imitation_lr: float = _key(1e-3, "Adam learning rate of the imitation", 0.0, 1.0, open_low=True)
    imitation_temperature: float = _key(1.0, "target softmax(card value / T) over pimc's mean card values (points); "
                                        "0: pimc's card alone", 0.0, 1000.0)
    imitation_labels: str = _key("pimc", "card values the policy imitates: pimc (the mean over pimc's sampled "
                                 "worlds) or dd (the double-dummy values of the true deal; pimc still plays)")
    imitation_player: str = _key("pimc", "who plays the cards of the labelled deals: pimc (pimc:imitation_samples) "
                                 "or an agent spec such as champion (with imitation_labels=dd: one exact solve a card; "
                                 "with pimc: pimc's values label the player's positions, as DAgger does)")
    imitation_infer: bool = _key(False, "label with pimc:N:infer: worlds weighed by how likely the shipped champion "
                                 "finds the opponent's plays (two-player presets with a champion)")
    imitation_belief: bool = _key(False, "label with pimc:N:belief: worlds resampled by the preset's shipped belief "
                                  "model (presets with one)")
    imitation_workers: int = _key(0, "processes solving the labels; 0: every core this process may use (same labels "
                                  "whatever the count)", 0, 1024)
    # Opponents: fixed agents, then the pool of past snapshots.
    train_opponents: tuple[str, ...] = _key((), "fixed agents (specs as eval_opponents) that play the other "
                                            "seat(s) of a share p_opponents of the games; none by default")
    p_opponents: float = _key(0.0, "probability that a new game is against one of train_opponents (each equally "
                              "likely); the fixed agent's seats are never trained", 0.0, 1.0)
    opponent_seats: int = _key(0, "how many of the other seats a fixed agent holds in its games, from the one after "
                               "the learner's; 0: all of them (with three players, 1 leaves the third seat to the "
                               "current policy: two learning seats against one fixed agent)", 0, 2)
    opponent_workers: int = _key(1, "processes each searching train_opponent (pimc) spreads its decisions over",
                                 1, 256)
    p_pool: float = _key(0.2, "probability that a game's opponent seat(s) are a past snapshot (of the games not "
                         "against train_opponents)", 0.0, 1.0)
    pool_size: int = _key(8, "past snapshots kept in the opponent pool", 1, 1000)
    pool_every: int = _key(10, "iterations between snapshots of the policy", 1, 10**7)
    train_all_seats: bool = _key(True, "learn from every seat the current policy plays, not only the learner's")
    # Model.
    init_from: str = _key("", "a training checkpoint (policy and value) or an exported policy such as the "
                          "champion (policy only) whose weights start the run, to fine-tune; '': fresh weights")
    hidden: tuple[int, ...] = _key((256, 256), "hidden layer widths, comma-separated (1 to 16 layers)", 1, 2**24)
    activation: str = _key("relu", "relu or tanh")
    critic: str = _key("plain", "plain: the value sees the observation; perfect: plus every other hand")
    mirrored_deals: bool = _key(False, "play every deal twice, the learner's seat moved, and reward each seat its "
                                "return minus the same seat's in the other play (single_deal only)")
    # PPO.
    lr: float = _key(1e-3, "Adam learning rate", 0.0, 1.0, open_low=True)
    anneal_lr: bool = _key(True, "decay the learning rate linearly to 0 over the iterations")
    gamma: float = _key(1.0, "discount factor", 0.0, 1.0)
    gae_lambda: float = _key(0.95, "GAE lambda", 0.0, 1.0)
    update_epochs: int = _key(1, "passes over each rollout", 1, 1000)
    num_minibatches: int = _key(16, "minibatches per pass (at most num_envs * num_steps)", 1, 10**6)
    clip_coef: float = _key(0.2, "PPO ratio clip", 0.0, 10.0, open_low=True)
    clip_vloss: bool = _key(False, "clip the value loss too")
    ent_coef: float = _key(0.01, "entropy bonus coefficient", 0.0, 10.0)
    vf_coef: float = _key(0.5, "value loss coefficient", 0.0, 100.0)
    max_grad_norm: float = _key(0.5, "gradient norm clip", 0.0, 1e6, open_low=True)
    norm_adv: bool = _key(True, "normalise the advantages per minibatch")
    reward_scale: float = _key(1.0, "multiplier of the rewards", 0.0, 1e6, open_low=True)
    target_kl: float = _key(0.0, "stop an update's epochs past this approximate KL; 0: off", 0.0, 10.0)
    # Evaluation (duplicate deals against fixed agents, greedy policy).
    eval_every: int = _key(25, "iterations between evaluations (and one after every imitation round); "
                                   "0: only at the end", 0, 10**7)
    eval_groups: int = _key(100, "duplicate seed groups per opponent (2 or 3 games each; 2 or more: the "
                            "paired interval is the spread between groups)", 2, 10**6)
    eval_single_deal: bool = _key(False, "evaluate on single deals instead of whole games")
    eval_seed: int = _key(12345, "seed of the evaluation deals", 0, SEED_MAX)
    eval_opponents: tuple[str, ...] = _key(
        ("random", "heuristic"),
        "agents to evaluate against: any agent spec but human (imperiale_agents.registry), e.g. heuristic, "
        "pimc:16, champion, neural:PATH, module:Class")

    def validate(self) -> TrainConfig:
        """Check every value (ranges, finite floats, names); :class:`ConfigError` names the key and
        what is allowed.  Pure: nothing is read from disk (paths are checked by the training run)."""
        def need(cond: bool, key: str, allowed: str) -> None:
            if not cond:
                raise ConfigError(f"bad value {key}={getattr(self, key)!r} (allowed: {allowed})")

        from imperiale_env.core.input_checks import InputError, seed
        from imperiale_env.core.rules import PRESET_NAMES

        for key in ("seed", "eval_seed"):
            try:
                seed(getattr(self, key), key)
            except InputError as exc:
                raise ConfigError(f"bad value {key}={getattr(self, key)!r}: {exc}") from None
        for f in fields(self):
            low, high, open_low = f.metadata["range"]
            value = getattr(self, f.name)
            if low is None:
                continue
            values = value if isinstance(value, tuple) else (value,)
            ok = all((isinstance(v, int) or math.isfinite(v)) and (low < v if open_low else low <= v) and v <= high
                     for v in values)
            need(ok, f.name, _describe_range(f))
        need(self.rules in PRESET_NAMES, "rules", ", ".join(PRESET_NAMES))
        need(self.device in DEVICES, "device", ", ".join(DEVICES))
        need(self.critic in CRITICS, "critic", ", ".join(CRITICS))
        need(self.activation in ACTIVATIONS, "activation", ", ".join(ACTIVATIONS))
        need(self.imitation_labels in IMITATION_LABELS, "imitation_labels", ", ".join(IMITATION_LABELS))
        need(self.imitation_player == "pimc" or _agent_spec(self.imitation_player), "imitation_player",
             "pimc, or an agent spec, any kind but human: " + _opponent_forms())
        need(bool(self.run_dir.strip()), "run_dir", "a folder path (not empty)")
        need(1 <= len(self.hidden) <= 16, "hidden", "1 to 16 comma-separated layer widths")
        need(policy_parameters(self.hidden) <= MAX_PARAMETERS, "hidden",
             f"layer widths whose policy holds at most {MAX_PARAMETERS:,} weights (an exported policy's limit; "
             f"these make {policy_parameters(self.hidden):,})")
        need(self.rollout_workers == 0 or self.num_envs % self.rollout_workers == 0, "rollout_workers",
             f"0, or a divisor of num_envs={self.num_envs} (each worker plays num_envs / rollout_workers games)")
        need(self.single_deal or not self.mirrored_deals, "mirrored_deals",
             "false with single_deal=false (a deal's twin is a single deal; whole games are not mirrored)")
        need(self.num_envs * self.num_steps >= self.num_minibatches, "num_minibatches",
             "at most num_envs * num_steps")
        specs = "comma-separated agent specs, any kind but human: " + _opponent_forms()
        need(len(self.eval_opponents) >= 1 and all(map(_agent_spec, self.eval_opponents)), "eval_opponents", specs)
        need(all(map(_agent_spec, self.train_opponents)), "train_opponents", specs)
        need(self.p_opponents == 0 or self.train_opponents, "p_opponents",
             "0 without train_opponents (give train_opponents=SPEC,... to play against fixed agents)")
        players = self.make_rules().players
        need(self.opponent_seats < players, "opponent_seats",
             f"0 to {players - 1} with {self.rules} ({players} players)")
        need(self.opponent_seats == 0 or self.train_opponents, "opponent_seats",
             "0 without train_opponents (it says how many seats a fixed agent holds)")
        need(not self.train_opponents or self.rollout_workers == 0, "train_opponents",
             "none with rollout_workers (the fixed agents play in this process only)")
        if self.imitation_infer and self.imitation_rounds:
            from imperiale_agents.champions import champion_presets

            need(self.rules in champion_presets() and self.make_rules().players == 2, "imitation_infer",
                 f"false for {self.rules}: it needs two players and a shipped champion "
                 f"(presets with one: {', '.join(champion_presets()) or 'none'})")
        if self.imitation_belief and self.imitation_rounds:
            from imperiale_agents.search.belief_model import shipped_belief_path

            need(shipped_belief_path(self.make_rules().preset).is_file(), "imitation_belief",
                 f"false for {self.rules}: no belief model is shipped for it")
            need(not self.imitation_infer, "imitation_belief", "false with imitation_infer=true (one way to weigh "
                 "the worlds)")
        if self.target_imperiales:
            from imperiale_env.core.rules import RulesError

            try:
                self.make_rules()
            except RulesError as exc:
                raise ConfigError(str(exc)) from None
        return self

    def make_rules(self):
        from imperiale_env.core.rules import make_rules

        extra = {"target_imperiales": self.target_imperiales} if self.target_imperiales else {}
        return make_rules(self.rules, **extra)

    @property
    def batch_size(self) -> int:
        return self.num_envs * self.num_steps

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


def _opponent_forms() -> str:
    from imperiale_agents.registry import KINDS

    return ", ".join(k.form for k in KINDS.values() if k.opponent) + ", module:Class, file.py:Class"


def _agent_spec(spec: str) -> bool:
    """Is ``spec`` of a kind an opponent may be (its details are checked when the agent is built)?"""
    from imperiale_agents.registry import opponent_spec

    return opponent_spec(spec)


def _describe_range(f: dataclasses.Field) -> str:
    low, high, open_low = f.metadata["range"]
    what = {"int": "an int", "float": "a finite float"}.get(str(f.type), "comma-separated ints")

    def fmt(v: float) -> str:
        return "2**63-1" if v == SEED_MAX else f"{v:g}" if isinstance(v, float) else str(v)

    return f"{what} in {'(' if open_low else '['}{fmt(low)}, {fmt(high)}]"


def config_help() -> str:
    """Every key with its default, meaning and allowed range: the ``imperiale train --help`` text,
    generated from :class:`TrainConfig` so that it cannot drift from the code."""
    lines = ["configuration keys (KEY=VALUE overrides, or a YAML mapping with --config):"]
    for f in fields(TrainConfig):
        default = ",".join(map(str, f.default)) if isinstance(f.default, tuple) else str(f.default).lower() \
            if isinstance(f.default, bool) else str(f.default)
        extra = f" ({_describe_range(f)})" if f.metadata["range"][0] is not None else ""
        lines.append(f"  {f.name}={default}\n      {f.metadata['meaning']}{extra}")
    lines.append(f"--resume takes the configuration from run_dir's checkpoint; only {', '.join(RUNTIME_KEYS)} "
                 "may be given again (iterations larger than the iterations done, to extend the run).")
    return "\n".join(lines)


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


def _refuse_aliases(yaml: Any, text: str, path: Path) -> None:
    """A config is a flat mapping: YAML anchors and aliases are refused before anything is built,
    so that a few hundred bytes cannot expand to billions of values."""
    for token in yaml.scan(text):
        if isinstance(token, (yaml.AnchorToken, yaml.AliasToken)):
            raise ConfigError(f"config {path} uses a YAML anchor or alias (line {token.start_mark.line + 1}); "
                              "a config is a flat mapping of key: value, write each value out")


def load_yaml(path: str | Path) -> dict[str, Any]:
    import yaml

    from imperiale_env.core.input_checks import InputError, input_file

    try:
        path = input_file(path, "config file")
        text = path.read_bytes().decode("utf-8")
    except InputError as exc:
        raise ConfigError(str(exc)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config {path} is not UTF-8 text (byte {exc.start}): give a YAML file") from None
    if "\x00" in text:
        raise ConfigError(f"config {path} is a binary file (it holds NUL bytes): give a YAML file")
    try:
        _refuse_aliases(yaml, text, path)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"config {path} is not valid YAML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"config {path} nests too deeply: a config is a flat mapping of key: value") from None
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
        values.update(load_yaml(config_file(path)))
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
    """The shipped ``ppo_selfplay`` configuration (:mod:`imperiale_configs`), the default of ``imperiale train``."""
    from imperiale_configs import shipped_config

    return shipped_config("ppo_selfplay")


def config_file(name: str | Path) -> Path:
    """``name`` as a config file: a path that exists, else the name of a shipped configuration
    (``champion``); neither is a :class:`ConfigError` naming the shipped ones."""
    from imperiale_configs import shipped_config, shipped_configs

    path = Path(name)
    if path.exists() or path.parent != Path("."):
        return path
    shipped = shipped_config(str(name))
    if shipped is None:
        raise ConfigError(f"no config file {str(name)!r} and no shipped config of that name (shipped: "
                          f"{', '.join(shipped_configs())}); give a YAML file or one of those names")
    return shipped


#: Keys that may be given again on ``--resume`` without changing the run being continued:
#: ``iterations`` (only larger than the iterations done: it extends the run; with ``anneal_lr``
#: the learning rate of the iterations still to come follows the new length), how the run is
#: shown and saved (progress, tensorboard, plot, checkpoint_every, eval_every), and where it
#: computes (threads, device, imitation_workers).  ``run_dir`` is where the checkpoint is (a copied or moved run
#: resumes).  Anything else would make a different run and is refused.
RUNTIME_KEYS = ("iterations", "progress", "tensorboard", "plot", "threads", "device", "checkpoint_every",
                "eval_every", "ray_address", "imitation_workers")


def resume_config(saved: TrainConfig, given: dict[str, Any], run_dir: str) -> TrainConfig:
    """The configuration of a resumed run: the checkpoint's (``saved``), in ``run_dir``, with the
    runtime keys of ``given`` (the values a user set explicitly, converted).  A given key outside
    :data:`RUNTIME_KEYS` that differs from the checkpoint raises :class:`ConfigError` naming it."""
    changed = {k: v for k, v in given.items() if k not in RUNTIME_KEYS and k != "run_dir"
               and _plain(v) != _plain(getattr(saved, k))}
    if changed:
        detail = ", ".join(f"{k}={_plain(v)!r} (checkpoint: {_plain(getattr(saved, k))!r})" for k, v in changed.items())
        raise ConfigError(f"--resume continues the run saved in the checkpoint; these would change it: {detail}. "
                          f"Only {', '.join(RUNTIME_KEYS)} may be given on --resume (start a new run_dir= for "
                          "a different configuration)")
    return replace(saved, run_dir=run_dir, **{k: v for k, v in given.items() if k in RUNTIME_KEYS})


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def mlp_parameters(sizes: tuple[int, ...] | list[int]) -> int:
    """Weights and biases of a multilayer perceptron of layer widths ``sizes`` (input first)."""
    return sum(a * b + b for a, b in zip(sizes, sizes[1:], strict=False))


def policy_parameters(hidden: tuple[int, ...]) -> int:
    """Weights and biases of the policy network of layer widths ``hidden`` (features in, actions out)."""
    from imperiale_env.core.actions import NUM_ACTIONS
    from imperiale_env.kernels.features import FEATURE_SIZE

    return mlp_parameters((FEATURE_SIZE, *hidden, NUM_ACTIONS))


def memory_estimate(cfg: TrainConfig) -> dict[str, int]:
    """Bytes the run will hold at its peak, by part: the rollout buffers and their training copy
    (the observation's 346 bytes and mask 43 bools per decision, the float32 features of the update,
    and with the perfect critic the hidden hands), the networks (weights, gradients, two Adam moments,
    the per-iteration snapshot kept for Ctrl-C, the opponent pool), the games and the imitation
    labels.  An estimate, meant to refuse sizes that cannot fit before anything is allocated."""
    from imperiale_env.core.actions import NUM_ACTIONS
    from imperiale_env.core.observation import OBS_SIZE
    from imperiale_env.kernels.features import FEATURE_SIZE
    from imperiale_train.model import HIDDEN_HANDS_SIZE

    decisions = cfg.num_envs * cfg.num_steps
    per_decision = 2 * (OBS_SIZE + NUM_ACTIONS) + 4 * FEATURE_SIZE + 96  # buffer + training copy; ~12 scalars each
    if cfg.critic == "perfect":
        per_decision += 2 * HIDDEN_HANDS_SIZE * 4

    actor = policy_parameters(cfg.hidden)
    width = cfg.hidden[-1]
    critic = mlp_parameters([width + HIDDEN_HANDS_SIZE, width, 1]) if cfg.critic == "perfect" else width + 1
    minibatch = -(-decisions // cfg.num_minibatches)
    # Imitation labels: at most 12 cards per player and a few declarations a deal; each label is an
    # observation, a mask, the card values and the other hands (perfect critic), held three times at
    # the end of a round (the labels so far, the grown copy, the targets of the update).
    players = cfg.make_rules().players
    per_label = OBS_SIZE + NUM_ACTIONS * 5 + 36 * 4 + 16 + (HIDDEN_HANDS_SIZE * 4 if cfg.critic == "perfect" else 0)
    labels = cfg.imitation_rounds * cfg.imitation_games * (12 * players + 4) * per_label * 3
    return {
        "labels": labels,
        "rollout": decisions * per_decision,
        "networks": 4 * (7 * (actor + critic) + cfg.pool_size * actor),
        "activations": 4 * minibatch * (4 * sum(cfg.hidden) + 2 * FEATURE_SIZE),
        "games": cfg.num_envs * 4096,
    }


def available_memory() -> int:
    """Bytes of memory available now (``MemAvailable``; the physical memory where that is unknown)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def check_memory(cfg: TrainConfig, available: int | None = None) -> None:
    """:class:`ConfigError` if :func:`memory_estimate` exceeds the available memory, saying both."""
    parts = memory_estimate(cfg)
    total = sum(parts.values())
    available = available_memory() if available is None else available
    if total > available:
        gib = lambda b: f"{b / 2**30:.1f} GiB"  # noqa: E731
        detail = ", ".join(f"{k} {gib(v)}" for k, v in parts.items())
        raise ConfigError(
            f"this configuration needs about {gib(total)} of memory ({detail}) for num_envs={cfg.num_envs}, "
            f"num_steps={cfg.num_steps}, hidden={','.join(map(str, cfg.hidden))}; {gib(available)} is available: "
            "lower num_envs, num_steps or hidden"
        )


def replace(config: TrainConfig, **changes: Any) -> TrainConfig:
    return dataclasses.replace(config, **changes).validate()
