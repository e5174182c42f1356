"""Every rules field has a range: values outside it are refused, naming the field and the range,
before any game is dealt; the ranges are the ones the Rules docstring documents; games at the
edges of the ranges still end."""

from __future__ import annotations

import json
import re
import time

import numpy as np
import pytest

from imperiale_cli.devtools.differential import compare
from imperiale_env.core.rules import CHOICES, FLAGS, INT_RANGES, RANK_FIELDS, Rules, RulesError, make_rules

# A preset on which each integer field can take any value of its range (carte blanche and capot
# are worth impériales or points, not both: the points variants are tried on imperijal).
BASE = {name: "academie" for name in INT_RANGES}
BASE.update(carte_blanche_points="imperijal", capot_points="imperijal")


def range_text(name: str) -> str:
    low, high = INT_RANGES[name]
    return re.escape(f"rules field {name} must be an integer in {low}..{high}")


@pytest.mark.parametrize("name", sorted(INT_RANGES))
def test_both_ends_of_every_range_are_accepted(name):
    low, high = INT_RANGES[name]
    for value in (low, high):
        rules = make_rules(BASE[name], **{name: value})
        assert getattr(rules, name) == value
        assert Rules.from_dict(json.loads(json.dumps(rules.to_dict()))) == rules


@pytest.mark.parametrize("name", sorted(INT_RANGES))
def test_values_outside_every_range_are_refused_naming_it(name):
    low, high = INT_RANGES[name]
    for value in (low - 1, high + 1, -(10**6), 10**6, 10**15):
        with pytest.raises(RulesError, match=range_text(name) + f", got {value} "):
            make_rules(BASE[name], **{name: value})


@pytest.mark.parametrize("name", sorted(INT_RANGES))
@pytest.mark.parametrize("value", [True, False, 5.0, 2.5, float("nan"), float("inf"), "5", None, [5], np.float64(5.0)])
def test_integer_fields_take_integers_only(name, value):
    with pytest.raises(RulesError, match=range_text(name) + r", got .*\(" + type(value).__name__ + r"\)"):
        make_rules(BASE[name], **{name: value})


def test_numpy_integers_are_taken_at_their_value():
    rules = make_rules("academie", target_imperiales=np.int64(7), trick_quota=np.uint8(5), must_beat=np.bool_(False))
    assert rules == make_rules("academie", target_imperiales=7, trick_quota=5, must_beat=False)
    assert type(rules.target_imperiales) is int and type(rules.must_beat) is bool
    assert json.loads(json.dumps(rules.to_dict()))["target_imperiales"] == 7


def test_the_reported_hang_is_refused_at_once():
    begin = time.perf_counter()
    with pytest.raises(RulesError, match="target_imperiales must be an integer in 1..100, got 1000000000000000 "):
        make_rules(turned_honour_points=10**12, target_imperiales=10**15)
    with pytest.raises(RulesError, match="turned_honour_points must be an integer in 0..24, got 1000000000000 "):
        make_rules(turned_honour_points=10**12)
    with pytest.raises(RulesError, match="target_imperiales must be an integer in 1..100, got 1000000 "):
        make_rules(target_imperiales=1000000)
    assert time.perf_counter() - begin < 1.0


def test_a_huge_integer_is_named_by_its_size():
    with pytest.raises(RulesError, match="got an integer of 16610 bits") as info:
        make_rules(target_imperiales=10**5000)
    assert len(str(info.value)) < 200


@pytest.mark.parametrize("name", sorted(CHOICES))
@pytest.mark.parametrize("value", ["nope", "", 3, None, True, ["academie"]])
def test_enumerations_list_their_values(name, value):
    if name == "preset":
        with pytest.raises(RulesError, match="unknown rules preset") as info:
            make_rules(value)
    else:
        with pytest.raises(RulesError, match=f"rules field {name}=.* is not allowed") as info:
            make_rules("academie", **{name: value})
    for allowed in CHOICES[name]:
        assert allowed in str(info.value)


@pytest.mark.parametrize("name", FLAGS)
@pytest.mark.parametrize("value", [1, 0, "true", "False", None, 1.0])
def test_flags_take_true_or_false_only(name, value):
    with pytest.raises(RulesError, match=f"rules field {name} must be true or false, got"):
        make_rules("academie", **{name: value})


@pytest.mark.parametrize("name", RANK_FIELDS)
@pytest.mark.parametrize("value", ["AKQJ", ("A", 7), (None,), 5, ("A", "X"), ("A", "A"), ("7", "low")])
def test_rank_lists_are_rank_names(name, value):
    with pytest.raises(RulesError, match=f"rules field {name} "):
        make_rules("academie", **{name: value})


def test_every_field_is_checked_by_exactly_one_kind_of_check():
    kinds = [set(INT_RANGES), set(CHOICES), set(RANK_FIELDS), set(FLAGS)]
    every = {f for f in Rules.__dataclass_fields__}
    assert set().union(*kinds) == every and sum(map(len, kinds)) == len(every)


def test_the_docstring_documents_every_range_and_choice():
    doc = " ".join(Rules.__doc__.split())
    for name, (low, high) in INT_RANGES.items():
        assert f"{name} {low}..{high}" in doc, name
    for name, allowed in CHOICES.items():
        assert f"{name} {', '.join(allowed)}" in doc, name


@pytest.mark.parametrize("name", sorted(INT_RANGES))
def test_records_go_through_the_same_checks(name):
    low, high = INT_RANGES[name]
    for value in (high + 1, 2.0, True):
        text = json.dumps({"preset": BASE[name], name: value})
        with pytest.raises(RulesError, match=range_text(name)):
            Rules.from_dict(json.loads(text))


def test_records_with_odd_keys_are_refused():
    with pytest.raises(RulesError, match="field names must be strings"):
        Rules.from_dict({"preset": "academie", 1: 2})
    with pytest.raises(RulesError, match="unknown rules preset"):
        Rules.from_dict({"preset": ["academie"]})
    with pytest.raises(RulesError, match="must be true or false"):
        Rules.from_dict({"preset": "academie", "must_beat": "yes"})


@pytest.mark.parametrize("preset", ["academie", "imperijal"])
def test_games_at_the_top_of_every_range_end_and_the_engines_agree(preset):
    """Every award at its largest (one impériale's worth of points, ten impériales) and the
    largest target: the games end, and the batched engine plays them as the reference does."""
    top = {name: high for name, (_, high) in INT_RANGES.items() if name != "players"}
    if preset == "academie":
        top.update(carte_blanche_points=0, capot_points=0)
    else:
        top.update(carte_blanche_imperiales=0, capot_imperiales=0)
    rules = make_rules(preset, **top)
    assert compare(rules, 4, seed=5) > 0
    assert compare(make_rules(preset, target_imperiales=1), 4, seed=6) > 0
