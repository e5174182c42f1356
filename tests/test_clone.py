"""Copies of a game in progress: ``Game.clone()``, ``copy.deepcopy`` and pickling give a game equal
in every field, which then plays every future step exactly as the original."""

from __future__ import annotations

import copy
import pickle
import random

import pytest

from imperiale_env import PRESET_NAMES, Game

COPIES = {"clone": Game.clone, "deepcopy": copy.deepcopy, "pickle": lambda g: pickle.loads(pickle.dumps(g))}


def _fields(game: Game) -> dict:
    """Every field of the game but the running generator and the deal source (functions)."""
    return {k: v for k, v in vars(game).items() if k not in ("_script", "_deals", "_given_deals")}


@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("how", COPIES)
def test_a_copy_is_equal_now_and_at_every_future_step(preset, how):
    rng = random.Random(hash((preset, how)) % 1000)
    for seed in range(6):
        game = Game(preset, seed)
        for _ in range(rng.randrange(0, 60)):
            if game.decision is None:
                break
            game.step(rng.choice(game.legal_actions()))
        twin = COPIES[how](game)
        assert twin is not game and twin.state is not game.state
        assert _fields(twin) == _fields(game)
        while game.decision is not None:
            action = rng.choice(game.legal_actions())
            game.step(action)
            twin.step(action)
            assert _fields(twin) == _fields(game)
        assert twin.decision is None and twin.winner == game.winner and twin.events == game.events


def test_the_copy_is_independent():
    game = Game("academie", 3)
    twin = game.clone()
    twin.step(twin.legal_actions()[0])
    assert game.actions_so_far() == [] and len(twin.actions_so_far()) == 1
