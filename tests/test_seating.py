"""The one loop that seats the players (``imperiale_env.envs.seating.play_until``): the same bots
play the same game on the reference engine (through its observed) and on the batched engine's game of
one, it stops at a waiting seat, and every front end built on it (the Gymnasium env, the terminal
game, the web table) refuses a bot's illegal answer the same way before the game moves."""

from __future__ import annotations

import numpy as np
import pytest

from imperiale_env.core.rules import PRESET_NAMES, make_rules
from imperiale_env.envs.seating import IllegalBotMove, agent_choice, play_until
from imperiale_env.envs.single_game import SingleGame
from imperiale_env.reference.observed_game import ObservedGame


def seeded_bots(seed: int):
    """A random bot drawing from its own generator: the same answers wherever it plays."""
    rng = np.random.default_rng(seed)
    return lambda seat, obs, mask: int(rng.choice(np.flatnonzero(mask)))


def whole_game(game, seed: int, waiting=()) -> list[int]:
    moves: list[int] = []

    def move(action: int) -> None:
        moves.append(action)
        game.step(action)

    play_until(game, waiting, seeded_bots(seed), move=move)
    return moves


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_the_same_bots_play_the_same_game_on_both_engines(preset):
    rules = make_rules(preset)
    for seed in range(3):
        observed = ObservedGame.new(rules, seed)
        single = SingleGame(rules, "game")
        single.reset(seed, None)
        reference_moves = whole_game(observed, seed)
        assert reference_moves == whole_game(single, seed) and len(reference_moves) > 100
        assert observed.current_player is None and single.current_player is None
        assert observed.game.winner == single.winner


def test_it_stops_where_a_waiting_seat_must_decide():
    rules = make_rules("academie3")
    observed = ObservedGame.new(rules, 4)
    rng = np.random.default_rng(0)
    stops = 0
    while observed.current_player is not None:
        play_until(observed, (2,), seeded_bots(stops))
        if observed.current_player is None:
            break
        assert observed.current_player == 2
        stops += 1
        observed.step(int(rng.choice(np.flatnonzero(observed.legal_mask()))))
    assert stops > 20


def test_a_bad_answer_is_refused_naming_the_bot_and_seat_before_the_game_moves():
    observed = ObservedGame.new(make_rules("academie"), 1)
    first = observed.current_player
    illegal = int(np.flatnonzero(~observed.legal_mask())[0])
    refused = rf"^the bot \(seat {first}\) chose the illegal action {illegal} .*; legal: "
    with pytest.raises(IllegalBotMove, match=refused):
        play_until(observed, (), lambda seat, obs, mask: illegal)
    with pytest.raises(TypeError, match=rf"the bot \(seat {first}\): the action 3.0 \(float\) is not an action id"):
        play_until(observed, (), lambda seat, obs, mask: 3.0)
    with pytest.raises(ValueError, match="out of range"):
        play_until(observed, (), lambda seat, obs, mask: 43)
    with pytest.raises(ValueError, match=r"act\(\) must return one action per row, shape \(1,\), got shape \(2,\)"):
        play_until(observed, (), agent_choice(lambda obs, mask: np.zeros(2, dtype=np.int64)))
    assert observed.game.actions_so_far() == [] and observed.current_player == first


class IllegalAgent:
    """An agent that always answers an illegal action (its batch's first illegal id)."""

    name = "illegal"

    def act(self, obs, mask, rng=None):
        return np.argmin(mask, axis=1)


def test_every_front_end_refuses_an_illegal_bot_the_same_way(monkeypatch):
    import gymnasium

    import imperiale_env  # noqa: F401  (registers Imperiale-v1)
    import imperiale_web.table as web_table
    from imperiale_cli.play import play_game

    env = gymnasium.make("Imperiale-v1", opponent=IllegalAgent(), seat=1)
    with pytest.raises(IllegalBotMove, match=r"the opponent \(seat 0\) chose the illegal action"):
        env.reset(seed=0)
    # seed 0 deals with seat 0 as dealer: the bot at seat 1 is elder and acts first
    with pytest.raises(IllegalBotMove, match=r"the bot \(seat 1\) chose the illegal action"):
        play_game(make_rules("academie"), seed=0, seat=0, agent=IllegalAgent(), input_fn=lambda prompt: "quit",
                  print_fn=lambda *a: None, offer_save=False)
    monkeypatch.setattr(web_table, "make_agent", lambda spec, rules: IllegalAgent())
    with pytest.raises(IllegalBotMove, match=r"the bot \(seat 1\) chose the illegal action"):
        web_table.Table("academie", "heuristic", seed=0, seat=0)
