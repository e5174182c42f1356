"""Small helpers shared by the AEC, Gymnasium and vector environments: the checks of what a
user passes them (options, actions, seeds), each naming what was wrong and what is allowed,
and the end rewards of a reference game (the OpenSpiel game's)."""

from __future__ import annotations

import reprlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from imperiale_env.core import actions as act
from imperiale_env.core import rewards
from imperiale_env.core.input_checks import SEED_LIMIT
from imperiale_env.core.observation import OBS_DTYPE, OBS_SIZE, bounds
from imperiale_env.core.rules import Rules
from imperiale_env.kernels.features import FEATURE_VERSION, policy_features
from imperiale_env.reference.game import Game

EPISODES = ("game", "deal")
START_KEYS = ("imperiales", "points", "dealer")
RENDER_MODES = ("ansi", "human", "rgb_array")
RESET_OPTIONS = ("start",)
#: What an env's observation is: the bytes of observation version 1 (the default), or the float32
#: features of the trainer's networks (:mod:`imperiale_env.kernels.features`), for a library whose
#: default network reads the observation as floats and would take a category code for a magnitude.
OBS_TYPES = ("bytes", "features")
PASSED_THROUGH = ("reset_mask",)  # Gymnasium's vector envs hand their own options to each env


def observation_box(rules: Rules):
    """The space of one observation under ``rules``: ``uint8`` of :data:`OBS_SIZE`, each entry
    within its block's exact range (:func:`~imperiale_env.core.observation.bounds`)."""
    from gymnasium import spaces

    low, high = bounds(rules)
    return spaces.Box(low, high, (OBS_SIZE,), dtype=OBS_DTYPE)


def check_obs_type(obs_type: Any) -> str:
    if not isinstance(obs_type, str) or obs_type not in OBS_TYPES:
        raise ValueError(f"obs_type must be 'bytes' (observation version 1, uint8) or 'features' (float32, "
                         f"feature version {FEATURE_VERSION}), got {reprlib.repr(obs_type)}")
    return obs_type


def observation_space_of(rules: Rules, obs_type: str):
    """The space of one observation of type ``obs_type`` under ``rules``."""
    from imperiale_env.envs.features import feature_space

    return feature_space() if obs_type == "features" else observation_box(rules)


def encode(obs: np.ndarray, obs_type: str) -> np.ndarray:
    """Observation bytes ``(OBS_SIZE,)`` or ``(B, OBS_SIZE)`` as ``obs_type`` (the features are a new array)."""
    return policy_features(obs) if obs_type == "features" else obs


def check_episode(episode: Any) -> str:
    if not isinstance(episode, str) or episode not in EPISODES:
        raise ValueError(f"episode must be 'game' or 'deal', got {reprlib.repr(episode)}")
    return episode


def check_render_mode(render_mode: Any) -> str | None:
    if render_mode is not None and (not isinstance(render_mode, str) or render_mode not in RENDER_MODES):
        raise ValueError(f"render_mode must be None, 'ansi', 'human' or 'rgb_array', got {reprlib.repr(render_mode)}")
    return render_mode


def reset_start(rules: Rules, start: dict[str, Any] | None, episode: str, options: Any) -> dict[str, Any] | None:
    """The start score of one episode: ``options["start"]`` if given, else ``start``.

    Other keys cannot be refused: PettingZoo's API test resets with an unknown option and
    Gymnasium's vector envs pass their ``reset_mask`` on, so an unknown key is ignored with a
    warning naming it (``reset_mask`` quietly), and a typo does not go unnoticed."""
    if options is None:
        return start
    if not isinstance(options, Mapping):
        raise ValueError(f"reset options must be a dict (the option: 'start'), got {reprlib.repr(options)}")
    unknown = [k for k in options if k not in RESET_OPTIONS + PASSED_THROUGH]
    if unknown:
        warnings.warn(f"reset option(s) {reprlib.repr(unknown)} ignored: the only option of this environment "
                      "is 'start'", stacklevel=3)
    return check_start(rules, options["start"], episode) if "start" in options else start


def is_integer(value: Any) -> bool:
    """A Python int or a numpy integer (scalar or 0-d array); not a bool."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, np.integer)):
        return True
    return isinstance(value, np.ndarray) and value.shape == () and np.issubdtype(value.dtype, np.integer)


AGENT_SPECS_GROUP = "imperiale.agent_specs"
"""The entry-point group of the builders of agents from spec strings (``pyproject.toml`` names
``imperiale_agents.registry:make_agent`` there).  The envs sit below the agents package and never
import it; they find it as a plugin, the way Python packages find each other's extensions."""


def agent_from_spec(spec: str, rules: Rules) -> Any:
    """The agent that the spec string ``spec`` names (``"heuristic"``, ``"pimc:16"``,
    ``"champion"``, ...) for ``rules``, built by the installed agents package; a bad spec raises
    its error (it lists the allowed forms).  ``TypeError`` if no package builds agents from specs."""
    from importlib.metadata import entry_points

    builders = entry_points(group=AGENT_SPECS_GROUP)
    if not builders:
        raise TypeError(f"opponent {spec!r} is an agent spec, and no installed package builds agents from specs "
                        f"(entry-point group {AGENT_SPECS_GROUP!r}; imperiale's own, imperiale_agents, declares it: "
                        "reinstall with pip install -e .); pass an agent object instead")
    make = sorted(builders, key=lambda e: e.name)[0].load()
    return make(spec, rules)


def check_action(action: Any, legal_mask: Callable[[], np.ndarray], who: str) -> int:
    """``action`` as an action id ``0..42`` for ``who`` (the agent to act), or an error naming
    the action, the allowed ids and the legal actions now (``legal_mask()``, called only for the
    error: a step needs no mask).  Accepted: a Python int or a numpy integer; refused with
    ``TypeError``: bool, float (even 38.0), str, None and anything else; refused with
    ``ValueError``: an integer outside ``0..42``.  Whether it is legal is not checked here (each
    environment has its own answer to an illegal action)."""
    if type(action) is int and 0 <= action < act.NUM_ACTIONS:  # the common case, checked first (every step)
        return action

    def allowed() -> str:  # written only for an error: listing the legal actions costs more than a step
        legal = ", ".join(f"{a} {act.describe(a)}" for a in np.flatnonzero(legal_mask()))
        return f"an action id, an integer 0..{act.NUM_ACTIONS - 1} (legal now: {legal})"

    if action is None:
        raise TypeError(f"{who}: the action None is not {allowed()}; None is only for an agent whose game has ended")
    if not is_integer(action):
        raise TypeError(f"{who}: the action {reprlib.repr(action)} ({type(action).__name__}) is not {allowed()}")
    if not 0 <= int(action) < act.NUM_ACTIONS:
        value = int(action)
        shown = str(value) if value.bit_length() <= 64 else f"of {value.bit_length()} bits"
        raise ValueError(f"{who}: the action {shown} is out of range: give {allowed()}")
    return int(action)


def check_start(rules: Rules, start: Mapping[str, Any] | None, episode: str) -> dict[str, Any] | None:
    """Validate a start score ``dict(imperiales=[..], points=[..], dealer=k)`` (each key optional:
    no impériales, no points, the seeded first dealer); returns a normalised copy."""
    if start is None:
        return None
    if episode != "deal":
        raise ValueError("a start score is for episode='deal' (a game always starts from 0 to 0)")
    if not isinstance(start, Mapping):
        raise ValueError(f"start must be a dict with keys {', '.join(START_KEYS)}, got {start!r}")
    unknown = set(start) - set(START_KEYS)
    if unknown:
        raise ValueError(f"unknown start keys {sorted(unknown)} (allowed: {', '.join(START_KEYS)})")
    P = rules.players
    out: dict[str, Any] = {}
    for key, high in (("imperiales", rules.target_imperiales - 1), ("points", 23)):
        values = start.get(key, [0] * P)
        if isinstance(values, np.ndarray):
            values = values.tolist()
        if (not isinstance(values, (list, tuple)) or len(values) != P
                or not all(is_integer(v) and 0 <= v <= high for v in values)):
            raise ValueError(f"start[{key!r}] must be a list of {P} integers in 0..{high}, got {reprlib.repr(values)}")
        out[key] = [int(v) for v in values]
    dealer = start.get("dealer")
    if dealer is not None:
        if not is_integer(dealer) or not 0 <= int(dealer) < P:
            raise ValueError(f"start['dealer'] must be a seat 0..{P - 1} or None, got {reprlib.repr(dealer)}")
        dealer = int(dealer)
    out["dealer"] = dealer
    return out


def draw_game_seeds(rng: np.random.Generator, n: int | None = None) -> Any:
    """Engine game seeds drawn from an environment's generator, in ``[0, 2**63)``: one 64-bit
    draw each with its top bit cleared, so that every seed a user sees (``info["game_seed"]``,
    ``game_seed``) fits the signed 64-bit integers of numpy, torch and Gymnasium's info dicts
    and is a valid ``--seed`` of the command line.  ``n=None``: one Python int; else ``(n,)``
    uint64."""
    seeds = rng.integers(0, 2**64, size=n, dtype=np.uint64) & np.uint64(SEED_LIMIT - 1)
    return int(seeds) if n is None else seeds


def end_rewards(game: Game) -> np.ndarray:
    """The zero-sum rewards of a finished ``game``, ``(P,)`` float32: +1 to the winner and
    ``-1/(P-1)`` to each other player; a deal that ends without a winner (``episode="deal"``)
    gives each player the change of his value over it in impériales (points count 1/24)
    minus the mean change of the others: :func:`imperiale_env.core.rewards.end_rewards`, as the
    batched engine gives them."""
    winner = np.array([-1 if game.winner is None else game.winner])
    start = rewards.standing(game.start_imperiales, game.start_points)[None]
    return rewards.end_rewards(winner, start, rewards.standing(game.imperiales, game.points)[None])[0]


