"""``render_mode="rgb_array"`` in the Gymnasium and PettingZoo environments."""

from __future__ import annotations

import random

import gymnasium
import numpy as np
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import render_test

import imperiale_env  # noqa: F401  (registers Imperiale-v1)
from imperiale_env.core.cards import card_code, sort_for_display
from imperiale_env.core.rules import make_rules
from imperiale_env.envs.aec import env as aec_env
from imperiale_env.envs.gym_env import ImperialeEnv
from imperiale_env.envs.render_image import (
    BACK,
    BLACK,
    FACE,
    HAND_Y,
    HEIGHT,
    LEGAL,
    RED,
    TURNED_BOX,
    WIDTH,
    hand_card_box,
    other_card_box,
    table_image,
    trick_card_box,
)
from imperiale_env.reference.game import Deal, Game, deal_cards


def _check(frame: np.ndarray) -> None:
    assert isinstance(frame, np.ndarray) and frame.dtype == np.uint8 and frame.shape == (HEIGHT, WIDTH, 3)
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 2  # something is written on the baize


def test_gym_frames_change_with_the_state():
    env = ImperialeEnv(render_mode="rgb_array", seat=0)
    env.reset(seed=3)
    first = env.render()
    _check(first)
    mask = env.action_masks()
    env.step(int(np.flatnonzero(mask)[0]))
    second = env.render()
    _check(second)
    assert not np.array_equal(first, second)
    env2 = ImperialeEnv(render_mode="rgb_array", seat=0)
    env2.reset(seed=3)
    assert np.array_equal(env2.render(), first)  # same state, same image


def test_gym_check_env_passes_with_rgb_array(recwarn):
    check_env(gymnasium.make("Imperiale-v1", render_mode="rgb_array").unwrapped, skip_render_check=False)
    assert not [w for w in recwarn if "render" in str(w.message)]  # the render modes were checked


def test_aec_frames_and_render_test():
    e = aec_env(render_mode="rgb_array")
    e.reset(seed=1)
    frames = []
    for _ in range(4):
        frames.append(e.render())
        agent = e.agent_selection
        mask = e.observe(agent)["action_mask"]
        e.step(int(np.flatnonzero(mask)[0]))
    for f in frames:
        _check(f)
    assert any(not np.array_equal(frames[0], f) for f in frames[1:])
    render_test(lambda render_mode=None: aec_env(render_mode=render_mode))


# ---------------------------------------------------------------------- the cards, read by pixel colour


def _near(region: np.ndarray, colour: tuple[int, int, int], tolerance: int = 40) -> int:
    """How many pixels of ``region`` are within ``tolerance`` of ``colour`` on every channel."""
    return int((np.abs(region.astype(int) - np.array(colour)).max(axis=-1) <= tolerance).sum())


def _region(frame: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    left, top, right, bottom = box
    return frame[top:bottom, left:right]


def colour_of(card: int) -> tuple[int, int, int]:
    """Hearts and diamonds red, spades and clubs black (written here, not read from the module tested)."""
    return RED if card_code(card)[-1] in "HD" else BLACK


def _played(preset: str, seed: int, steps: int) -> Game:
    game, rng = Game(preset, seed), random.Random(seed)
    for _ in range(steps):
        game.step(rng.choice(game.legal_actions()))
    return game


def test_each_card_of_the_hand_is_drawn_face_up_in_its_suits_colour():
    game = Game("academie", 7)
    frame = table_image(game, 0, ["you", "bot"])
    hand = sort_for_display(list(game.state.hands[0]))
    assert len(hand) == 12
    for i, card in enumerate(hand):
        face = _region(frame, hand_card_box(i))
        mine, other = (RED, BLACK) if card_code(card)[-1] in "HD" else (BLACK, RED)  # as the web page
        assert _near(face, FACE, 10) > face.shape[0] * face.shape[1] // 2, card_code(card)  # a cream face
        assert _near(face, mine) > 80, card_code(card)  # its rank and signs in its suit's colour
        assert _near(face, other) == 0, card_code(card)
    beyond = _region(frame, (hand_card_box(11)[2] + 8, HAND_Y, WIDTH // 2 + 300, HAND_Y + 80))
    assert _near(beyond, FACE, 10) == 0  # twelve cards, not more


def test_the_other_hand_is_drawn_face_down_and_does_not_show_in_the_picture():
    """At the start of a deal nothing of the other hand is known: only backs, and a deal whose other
    hand differs (a card swapped with the talon, the same decision pending) gives the same picture."""
    rules = make_rules("academie")
    deal = deal_cards(rules, 5, 0, 1)
    game = Game(rules, dealer=1, deals=lambda i, _d: deal if i == 0 else None)
    frame = table_image(game, 0, ["you", "bot"])
    row = _region(frame, (other_card_box(0, 0, 1)[0], other_card_box(0, 0, 1)[1], other_card_box(0, 11, 1)[2],
                          other_card_box(0, 11, 1)[3]))
    assert _near(row, FACE, 10) == 0 and _near(row, BACK, 20) > 500
    assert _near(_region(frame, TURNED_BOX), FACE, 10) > 2000  # the turned card is public: face up
    same_view = 0
    for theirs in sorted(deal.hands[1]):
        for hidden in deal.talon:
            hands = (deal.hands[0], deal.hands[1] - {theirs} | {hidden})
            other = Deal(deal.dealer, hands, deal.turned, tuple(sorted(set(deal.talon) - {hidden} | {theirs})))
            swapped = Game(rules, dealer=1, deals=lambda i, _d, o=other: o if i == 0 else None)
            if (swapped.decision.player, swapped.decision.kind) == (game.decision.player, game.decision.kind):
                assert np.array_equal(table_image(swapped, 0, ["you", "bot"]), frame)
                same_view += 1
    assert same_view > 10


def test_known_cards_of_another_hand_are_face_up_the_rest_face_down():
    game = _played("academie", 21, 16)  # the point was won by the other seat: its cards are known
    s = game.state
    known = sort_for_display(list(s.revealed[1] & s.hands[1]))
    assert known and len(known) < len(s.hands[1])
    frame = table_image(game, 0, ["you", "bot"])
    for i in range(len(s.hands[1])):
        left, top, right, bottom = other_card_box(0, i, 1)
        visible = _region(frame, (left + 2, top + 4, other_card_box(0, i + 1, 1)[0] - 1, bottom - 4))
        if i < len(known):
            assert _near(visible, FACE, 10) > 0 and _near(visible, colour_of(known[i])) > 0
        else:
            assert _near(visible, FACE, 10) == 0 and _near(visible, BACK, 30) > 0


def test_the_trick_on_the_table_and_the_legal_cards():
    game = Game("academie", 9)
    rng = random.Random(9)
    while game.decision.kind != "play":
        game.step(rng.choice(game.legal_actions()))
    leader = game.decision.player
    led = game.decision.legal[0]
    game.step(led)
    follower = game.decision.player
    frame = table_image(game, follower, ["player_0", "player_1"])
    card = _region(frame, trick_card_box(0))
    assert _near(card, FACE, 10) > 2000 and _near(card, colour_of(led)) > 80
    assert _near(_region(frame, trick_card_box(1)), FACE, 10) == 0  # the second card is not played yet
    legal = set(game.decision.legal)
    hand = sort_for_display(list(game.state.hands[follower]))
    for i, c in enumerate(hand):  # a legal card stands raised, with a yellow outline above it
        left, top, right, _ = hand_card_box(i)
        above = _region(frame, (left + 10, top - 8, right - 10, top - 5))
        assert (_near(above, LEGAL, 40) > 0) == (c in legal), card_code(c)
    assert leader != follower
    onlooker = table_image(game, None, ["player_0", "player_1"])
    assert _near(_region(onlooker, hand_card_box(0)), FACE, 10) == 0  # an onlooker sees no hand


def test_three_players_and_every_state_of_a_game_draw():
    game, rng = Game("academie3", 2), random.Random(2)
    frames = set()
    while game.decision is not None:
        frame = table_image(game, game.decision.player, ["a", "b", "c"])
        assert frame.shape == (HEIGHT, WIDTH, 3) and frame.dtype == np.uint8
        frames.add(frame.tobytes())
        game.step(rng.choice(game.legal_actions()))
        if len(frames) >= 40:
            break
    assert len(frames) == 40  # each decision gives its own picture
    assert np.array_equal(table_image(None, None, ["a"]), table_image(None, None, ["a"]))
