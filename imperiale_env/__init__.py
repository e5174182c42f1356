"""L'Impériale: rules, a scalar reference engine, a batched numpy engine and RL environments."""

from .game import Deal, Game, IllegalActionError, deal_cards
from .rules import PRESET_NAMES, Rules, RulesError, make_rules

__all__ = ["PRESET_NAMES", "Deal", "Game", "IllegalActionError", "Rules", "RulesError", "deal_cards", "make_rules"]
