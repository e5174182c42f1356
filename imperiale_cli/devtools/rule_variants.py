"""Every rules field switched on: the rule variants the differential and property tests run.

:func:`rule_variants` starts from each preset and changes one field at a time to each of its
values, then a few fields together, skipping what :func:`~imperiale_env.core.rules.make_rules`
refuses (an impossible combination is not a variant).  The values come from the field's
type: both values of a flag, every choice of an enumeration, a few integers (0, 1, 2, the
preset's value, twice it, 24: those :func:`make_rules` accepts), for the rank lists the
empty list, one rank and the preset's list.  A new flag or integer field is therefore
covered as soon as it exists; a new enumeration takes its choices from
:data:`~imperiale_env.core.rules.CHOICES` (where :func:`make_rules` checks them too), and
:func:`field_values` refuses a field it does not know how to vary, so that nobody can add
one without the tests noticing.

The target is kept small (1 or 2 impériales, unless the variant is about the target) so
that a game lasts a few deals.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields
from typing import Any

from imperiale_env.core.rules import CHOICES, PRESET_NAMES, Rules, RulesError, make_rules

#: Fields that are not varied: the preset is the starting point, not a field to change.
NOT_VARIED = ("preset",)
#: Several fields at once, on top of the single changes (where the preset allows them).
COMBINATIONS: tuple[dict[str, Any], ...] = (
    {"turned_imperiale": True, "fallen_imperiale": "tricks", "imperiales_as_points": True},
    {"must_beat": False, "must_trump": False, "first_lead_trump": True},
    {"must_trump": True, "overtrump": False, "trick_scoring": "bonus", "capot_imperiales": 0, "capot_points": 8},
    {"carte_blanche_imperiales": 0, "carte_blanche_points": 10, "carte_blanche_ends_deal": False,
     "honours_in_hand_points": 4},
    {"point_tie": "split", "point_points": 6, "turned_honour_points": 0, "protect_turned_honour": False},
    {"four_ranks": ["A", "low"], "honour_ranks": ["A", "K"], "extra_sequence": True, "trump_quart_imperiales": 3},
    {"players": 3, "trick_quota": 4, "first_lead_trump": True, "chronology": "imperijal"},
    {"comparison": "number", "imperiales_as_points": True, "mutual_show_no_wipe": True},
)
SMALL_TARGET = 2


def field_values(name: str, default: Any) -> list[Any]:
    """The values a field is varied over (before :func:`make_rules` filters them)."""
    if name in CHOICES:
        return list(CHOICES[name])
    if name == "target_imperiales":  # the length of a game, not a rule of a deal: kept short
        return [1, 3]
    if isinstance(default, bool):
        return [False, True]
    if isinstance(default, int):
        return sorted({0, 1, 2, default, 2 * default, 24})
    if isinstance(default, tuple):
        return [[], [default[0]] if default else ["A"], list(default)]
    raise TypeError(f"rule_variants does not know how to vary rules field {name!r} = {default!r}: "
                    "add it to CHOICES (imperiale_env.core.rules)")


def rule_variants(presets: tuple[str, ...] = PRESET_NAMES) -> Iterator[tuple[str, Rules]]:
    """``(label, rules)`` for every variant: each preset, each field at each value, the
    combinations; duplicates and what :func:`make_rules` refuses are skipped."""
    seen: set[Rules] = set()
    for preset in presets:
        base = make_rules(preset)
        changes: list[dict[str, Any]] = [{}]
        for f in fields(Rules):
            if f.name in NOT_VARIED:
                continue
            default = getattr(base, f.name)
            changes += [{f.name: v} for v in field_values(f.name, default) if v != default]
        changes += list(COMBINATIONS)
        for change in changes:
            values = {"target_imperiales": SMALL_TARGET, **change}
            try:
                rules = make_rules(preset, **values)
            except RulesError:
                continue
            if rules in seen:
                continue
            seen.add(rules)
            label = preset + "".join(f" {k}={v}" for k, v in change.items())
            yield label, rules
