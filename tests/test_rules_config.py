"""The rules configuration: presets by name, overrides, errors, and the record form (to_dict / from_dict)."""

from __future__ import annotations

import json

import pytest

from imperiale_env.core.rules import PRESET_NAMES, Rules, RulesError, make_rules, resolve_rules
from imperiale_env.reference.game import Game


def test_the_four_presets_exist():
    assert PRESET_NAMES == ("academie", "academie3", "foster", "imperijal")


def test_default_is_academie():
    assert make_rules() == Rules() == resolve_rules(None) == make_rules("academie")
    r = make_rules()
    assert (r.preset, r.players, r.target_imperiales, r.chronology) == ("academie", 2, 5, "academie")
    assert r.carte_blanche_imperiales == 2 and r.carte_blanche_ends_deal
    assert r.trump_quart_imperiales == 2
    assert not r.turned_imperiale and r.fallen_imperiale == "off"
    assert r.trick_scoring == "excess" and r.trick_quota == 6 and r.capot_imperiales == 2
    assert r.must_beat and r.must_trump and r.overtrump and not r.first_lead_trump
    assert r.protect_turned_honour and not r.mutual_show_no_wipe


def test_academie3_preset():
    r = make_rules("academie3")
    assert (r.preset, r.players, r.trick_quota, r.first_lead_trump) == ("academie3", 3, 4, True)
    assert r.chronology == "academie" and not r.turned_imperiale


def test_foster_preset():
    r = make_rules("foster")
    assert (r.players, r.chronology, r.declaration_timing) == (2, "foster", "dealer_after_first_lead")
    assert r.carte_blanche_imperiales == 1 and not r.carte_blanche_ends_deal
    assert r.trump_quart_imperiales == 1 and r.comparison == "category"
    assert r.turned_imperiale and r.fallen_imperiale == "tombee" and r.trick_scoring == "difference"
    assert r.mutual_show_no_wipe and not r.protect_turned_honour


def test_imperijal_preset():
    r = make_rules("imperijal")
    assert r.chronology == "imperijal" and r.imperiales_as_points and r.comparison == "number"
    assert r.honour_ranks == ("K", "Q", "J", "low") and r.honours_in_hand_points == 4
    assert (r.carte_blanche_imperiales, r.carte_blanche_points) == (0, 10)
    assert r.extra_sequence and r.turned_imperiale and r.fallen_imperiale == "capture"
    assert r.point_tie == "split" and r.trick_scoring == "bonus"
    assert (r.capot_imperiales, r.capot_points) == (0, 8)
    assert not r.must_beat and r.must_trump and not r.overtrump


def test_unknown_preset_lists_the_presets():
    with pytest.raises(RulesError, match="unknown rules preset 'piquet'") as info:
        make_rules("piquet")
    for name in PRESET_NAMES:
        assert name in str(info.value)


def test_overrides_change_only_what_is_named():
    r = make_rules("foster", target_imperiales=3, trick_quota=5)
    assert r.target_imperiales == 3 and r.trick_quota == 5
    base = make_rules("foster")
    for name in ("chronology", "comparison", "turned_imperiale", "fallen_imperiale", "trick_scoring"):
        assert getattr(r, name) == getattr(base, name)
    assert make_rules("academie", turned_imperiale=True).turned_imperiale
    assert make_rules("academie", fallen_imperiale="tricks").fallen_imperiale == "tricks"


def test_list_overrides_become_tuples():
    r = make_rules("academie", honour_ranks=["K", "Q"], four_ranks=["K"])
    assert r.honour_ranks == ("K", "Q") and r.four_ranks == ("K",)


def test_three_players_switch_off_the_turned_imperiale_unless_asked():
    assert make_rules("imperijal").turned_imperiale
    assert not make_rules("imperijal", players=3).turned_imperiale
    with pytest.raises(RulesError, match="turned-card impériale needs two players"):
        make_rules("imperijal", players=3, turned_imperiale=True)


def test_unknown_field_lists_the_allowed_fields():
    with pytest.raises(RulesError) as info:
        make_rules("academie", target=3)
    message = str(info.value)
    assert "'target'" in message and "allowed" in message
    for name in ("target_imperiales", "must_beat", "turned_imperiale", "players", "trick_quota"):
        assert name in message


def test_rules_error_is_a_value_error():
    assert issubclass(RulesError, ValueError)


@pytest.mark.parametrize(
    "overrides, words",
    [
        ({"players": 4}, r"players must be an integer in 2\.\.3, got 4"),
        ({"players": "2"}, r"players must be an integer in 2\.\.3, got '2' \(str\)"),
        ({"target_imperiales": 0}, r"target_imperiales must be an integer in 1\.\.100, got 0"),
        ({"target_imperiales": True}, r"1\.\.100, got True \(bool\)"),
        ({"trick_quota": 13}, r"trick_quota must be an integer in 0\.\.12"),
        ({"trick_quota": -1}, r"trick_quota must be an integer in 0\.\.12"),
        ({"chronology": "piquet"}, "chronology='piquet'"),
        ({"declaration_timing": "never"}, "declaration_timing"),
        ({"comparison": "best"}, "comparison='best'"),
        ({"fallen_imperiale": "yes"}, "fallen_imperiale='yes'"),
        ({"point_tie": "coin"}, "point_tie"),
        ({"trick_scoring": "all"}, "trick_scoring"),
        ({"point_points": -4}, r"point_points must be an integer in 0\.\.24"),
        ({"turned_honour_points": -1}, r"turned_honour_points must be an integer in 0\.\.24"),
        ({"must_beat": 1}, r"must_beat must be true or false, got 1 \(int\)"),
        ({"honour_ranks": "AKQJ"}, "honour_ranks"),
        ({"honour_ranks": ("A", "X")}, "unknown rank"),
        ({"honour_ranks": ("7", "low")}, "names a rank twice"),
        ({"four_ranks": ("K", "6")}, "the 6"),
    ],
)
def test_bad_values_are_refused_with_what_is_allowed(overrides, words):
    with pytest.raises(RulesError, match=words):
        make_rules("academie", **overrides)


def test_the_six_is_a_rank_with_three_players():
    assert make_rules("academie3", four_ranks=("K", "6")).four_ranks == ("K", "6")
    with pytest.raises(RulesError, match="names a rank twice"):
        make_rules("academie3", honour_ranks=("6", "low"))


@pytest.mark.parametrize(
    "preset, overrides, words",
    [
        ("academie", {"players": 3, "turned_imperiale": True}, "turned-card impériale needs two players"),
        ("academie3", {"turned_imperiale": True}, "turned-card impériale needs two players"),
        ("foster", {"players": 3}, "Foster chronology"),
        ("academie3", {"comparison": "category"}, "two players only"),
        ("academie3", {"fallen_imperiale": "tombee"}, "two players only"),
        ("academie3", {"trick_scoring": "difference"}, "two players only"),
        ("academie", {"carte_blanche_points": 10}, "not both"),
        ("imperijal", {"carte_blanche_imperiales": 1}, "not both"),
        ("academie", {"capot_points": 8}, "not both"),
        ("academie", {"declaration_timing": "dealer_after_first_lead"}, "needs chronology='foster'"),
        ("academie", {"comparison": "number"}, "imperiales_as_points"),
        ("foster", {"carte_blanche_ends_deal": True}, "carte_blanche_ends_deal"),
    ],
)
def test_impossible_combinations_are_refused(preset, overrides, words):
    with pytest.raises(RulesError, match=words):
        make_rules(preset, **overrides)


def test_a_rules_object_cannot_be_built_wrong_by_hand():
    with pytest.raises(RulesError, match="unknown rules preset"):
        Rules(preset="piquet")
    with pytest.raises(RulesError):
        Rules(players=3, turned_imperiale=True)


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_preset_round_trip(preset):
    r = make_rules(preset)
    d = r.to_dict()
    assert d == {"preset": preset}
    assert Rules.from_dict(d) == r
    assert Rules.from_dict(json.loads(json.dumps(d))) == r
    assert resolve_rules(d) == resolve_rules(preset) == r


@pytest.mark.parametrize(
    "preset, overrides",
    [
        ("academie", {"target_imperiales": 3, "turned_imperiale": True, "fallen_imperiale": "tricks"}),
        ("academie", {"players": 3}),
        ("academie", {"honour_ranks": ["K", "Q", "J"], "four_ranks": ["K", "Q"]}),
        ("academie3", {"first_lead_trump": False, "trick_quota": 5}),
        ("academie3", {"players": 2}),
        ("foster", {"target_imperiales": 7, "mutual_show_no_wipe": False, "turned_imperiale": False}),
        ("imperijal", {"players": 3}),
        ("imperijal", {"point_tie": "priority", "capot_points": 4, "must_beat": True}),
    ],
)
def test_round_trip_with_overrides(preset, overrides):
    r = make_rules(preset, **overrides)
    d = r.to_dict()
    assert d == {"preset": preset, **overrides}
    back = Rules.from_dict(json.loads(json.dumps(d)))
    assert back == r
    assert back.to_dict() == d


def test_to_dict_leaves_out_an_override_equal_to_the_preset():
    assert make_rules("foster", turned_imperiale=True, target_imperiales=5).to_dict() == {"preset": "foster"}


def test_from_dict_errors():
    with pytest.raises(RulesError, match="must be an object"):
        Rules.from_dict("academie")
    with pytest.raises(RulesError, match="unknown rules field"):
        Rules.from_dict({"preset": "academie", "trumps": "H"})
    with pytest.raises(RulesError, match="unknown rules preset"):
        Rules.from_dict({"preset": "nope"})
    with pytest.raises(RulesError, match="need a 'preset'"):
        Rules.from_dict({"target_imperiales": 3})
    with pytest.raises(RulesError, match="unknown rules preset"):
        make_rules(None)


def test_resolve_rules_accepts_what_users_pass():
    r = make_rules("foster", target_imperiales=3)
    assert resolve_rules(r) is r
    assert resolve_rules("imperijal") == make_rules("imperijal")
    with pytest.raises(RulesError, match="must be a Rules"):
        resolve_rules(3)


def test_game_takes_rules_in_every_form():
    assert Game("foster").rules == make_rules("foster")
    assert Game({"preset": "academie3"}).rules.players == 3
    assert Game(make_rules(target_imperiales=2)).rules.target_imperiales == 2
    assert Game().rules == make_rules()
