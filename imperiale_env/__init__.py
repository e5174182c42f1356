"""L'Impériale: rules, a scalar reference engine, a batched numpy engine and RL environments.

The environments (``env``, ``raw_env``) load on first use, so that importing a leaf module
(``imperiale_env.core.cards``, ``imperiale_env.core.rules`` ...) stays light: no PettingZoo, no
Gymnasium.  The Gymnasium and PettingZoo registrations happen when those libraries are
imported (see :mod:`.envs.registration`).
"""

from typing import Any

from imperiale_env.core.rules import PRESET_NAMES, Rules, RulesError, make_rules
from imperiale_env.envs.registration import register_when_imported
from imperiale_env.reference.game import Deal, Game, IllegalActionError, deal_cards

register_when_imported()

_LAZY = {"env": "envs.aec", "raw_env": "envs.aec"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "PRESET_NAMES",
    "Deal",
    "Game",
    "IllegalActionError",
    "Rules",
    "RulesError",
    "deal_cards",
    "env",
    "make_rules",
    "raw_env",
]
