"""L'Impériale: rules, a scalar reference engine, a batched numpy engine and RL environments."""

from .aec import env, raw_env
from .game import Deal, Game, IllegalActionError, deal_cards
from .registration import register_envs
from .rules import PRESET_NAMES, Rules, RulesError, make_rules

register_envs()

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
