"""The differential check over every rule variant, observations of every seat included."""

from __future__ import annotations

import numpy as np
import pytest

from imperiale_cli.devtools import differential
from imperiale_cli.devtools.differential import Disagreement, compare, compare_variants
from imperiale_cli.devtools.rule_variants import field_values, rule_variants
from imperiale_env.core.observation import OFFSETS
from imperiale_env.core.rules import PRESET_NAMES, make_rules
from imperiale_env.reference.game import Game
from imperiale_env.reference.observe import observe

GAMES_PER_VARIANT = 4


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_every_rule_variant_agrees_observations_included(preset):
    variants, games, decisions = compare_variants(GAMES_PER_VARIANT, seed=100, presets=(preset,))
    assert variants >= 50 and games == variants * GAMES_PER_VARIANT and decisions > games * 20


def test_every_field_is_varied_in_every_preset_that_allows_it():
    labels = [label for label, _ in rule_variants()]
    for field in ("must_beat", "overtrump", "point_tie", "fallen_imperiale", "capot_points", "honour_ranks",
                  "turned_imperiale_fours", "mutual_show_no_wipe", "declaration_timing"):
        assert any(f" {field}=" in label for label in labels), field
    with pytest.raises(TypeError, match="add it to CHOICES"):
        field_values("a_new_enumeration", "some_value")


def test_an_observation_bug_is_caught(monkeypatch):
    real = differential.observe

    def off_by_one_trick(game: Game, seat: int) -> np.ndarray:
        out = real(game, seat)
        out[OFFSETS["tricks"].start] += 1 if game.state.tricks_played == 3 else 0
        return out

    monkeypatch.setattr(differential, "observe", off_by_one_trick)
    with pytest.raises(Disagreement, match="block 'tricks'"):
        compare("academie", 5, seed=1)


def test_the_reference_observation_reads_the_documented_blocks():
    game = Game(make_rules("academie"), seed=3)
    while game.decision.kind != "play":
        game.step(game.legal_actions()[-1])
    seat = game.current_player
    obs = observe(game, seat)
    hand = np.flatnonzero(obs[OFFSETS["hand"]])
    assert sorted(game.state.hands[seat]) == hand.tolist()
    assert obs[OFFSETS["phase"]].tolist() == [3]
    assert observe(game, 1 - seat)[OFFSETS["phase"]].tolist() == [0]
    assert obs[OFFSETS["trump"]].tolist() == [game.state.deal.trump]
