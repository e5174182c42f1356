"""The rules configuration: one frozen dataclass holding every rule docs/rules.md distinguishes.

A game is played under exactly one :class:`Rules`.  The four presets of docs/rules.md are
selected by name with :func:`make_rules` (``academie`` is the default), and any field can
be overridden; an unknown field, a bad value or an impossible combination raises
:class:`RulesError` saying what was wrong and what is allowed.

Choices where the sources are silent (docs/rules.md section 11; each also noted where it is used):

* The turned honour (4 points to the dealer) is scored in every preset, three players
  included (docs/rules.md section 5 changes the turned card's owner, not its value).
* ``imperijal`` with three players keeps the 6-trick threshold of section 7 ("more than 6
  tricks"); the turned-card impériale does not exist there, so overriding ``players=3``
  on a preset that has it switches it off unless it is given explicitly.
* A carte blanche in the Foster preset is an impériale in hand for the "both players
  show" wipe exception.
* Imperijal's turned-card impériale completes a sequence only (K Q J A or Q J A low of
  trumps), as section 7 lists it, not a four (``turned_imperiale_fours=False``).
"""

from __future__ import annotations

import reprlib
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from imperiale_env.core.cards import RANKS

#: Rank names a rules field may use; ``low`` is the 7 with two players and the 6 with three.
RANK_NAMES: tuple[str, ...] = ("K", "Q", "J", "A", "10", "9", "8", "7", "6", "low")

CHRONOLOGIES = ("academie", "foster", "imperijal")
COMPARISONS = ("each", "category", "number")
DECLARATION_TIMINGS = ("before_play", "dealer_after_first_lead")
FALLEN_IMPERIALES = ("off", "tricks", "tombee", "capture")
POINT_TIES = ("priority", "split")
TRICK_SCORINGS = ("excess", "difference", "bonus")


class RulesError(ValueError):
    """A rules configuration that cannot be played: the message says what is allowed."""


@dataclass(frozen=True)
class Rules:
    """Every rule field of L'Impériale.  Build it with :func:`make_rules`, not by hand.

    The defaults are the ``academie`` preset (docs/rules.md section 4).

    Allowed values (:func:`make_rules` and :meth:`from_dict` refuse anything else with a
    :class:`RulesError` naming the field and this range).  Integer fields take Python ints
    only (``True`` and ``5.0`` are refused; numpy integers are taken at their value), flags
    take ``True`` / ``False`` only.  The sources use the small values of the presets; the
    ranges leave generous room for variants while keeping every game short enough to play
    and to train on (a game to 100 impériales lasts about 200 deals)::

        preset                    academie, academie3, foster, imperijal
        players                   2..3
        target_imperiales         1..100   (the sources play to 5)
        chronology                academie, foster, imperijal
        declaration_timing        before_play, dealer_after_first_lead
        turned_honour_points      0..24    (points; 24 make an impériale)
        honours_in_hand_points    0..24    (points per honour held)
        carte_blanche_imperiales  0..10
        carte_blanche_points      0..24
        trump_quart_imperiales    0..10
        comparison                each, category, number
        fallen_imperiale          off, tricks, tombee, capture
        point_points              0..24
        point_tie                 priority, split
        trick_scoring             excess, difference, bonus
        trick_quota               0..12    (a deal has 12 tricks)
        capot_imperiales          0..10
        capot_points              0..24
        honour_ranks, four_ranks  distinct rank names among K Q J A 10 9 8 7 6 low
                                  (the 6 with three players only; ``low`` is the 7 or the 6)
        every other field         a flag: True or False

    A point value above 24 would be an impériale and more in one award, and an impériale
    count above 10 is more than any deal of the sources gives in all; neither is needed to
    express a variant, and unbounded values make games that never end.
    """

    preset: str = "academie"
    players: int = 2
    target_imperiales: int = 5

    # Chronology and timing (sections 4, 6, 7).
    chronology: str = "academie"
    declaration_timing: str = "before_play"

    # Turned card (section 4 step 1) and its protection from wipes in step 2.
    turned_honour_points: int = 4
    protect_turned_honour: bool = True

    # Honours: ranks of the trump suit that count, and points for honours held in hand.
    honour_ranks: tuple[str, ...] = ("A", "K", "Q", "J", "low")
    honours_in_hand_points: int = 0

    # Carte blanche: worth impériales (gain) or points (award), and whether it ends the deal.
    carte_blanche_imperiales: int = 2
    carte_blanche_points: int = 0
    carte_blanche_ends_deal: bool = True

    # Impériales in hand.
    trump_quart_imperiales: int = 2
    extra_sequence: bool = False  # Q J A low of a suit (Imperijal)
    four_ranks: tuple[str, ...] = ("K", "Q", "J", "A", "low")
    comparison: str = "each"  # each scores / best category scores (Foster) / by number
    imperiales_as_points: bool = False  # Imperijal: each impériale is award(24), not gain(1)
    turned_imperiale: bool = False
    turned_imperiale_fours: bool = True  # may the turned card complete a four (not in Imperijal)
    fallen_imperiale: str = "off"

    # Point.
    point_points: int = 4
    point_tie: str = "priority"

    # Tricks and capot.
    trick_scoring: str = "excess"
    trick_quota: int = 6
    capot_imperiales: int = 2
    capot_points: int = 0

    # Play.
    must_beat: bool = True
    must_trump: bool = True
    overtrump: bool = True
    first_lead_trump: bool = False

    # Wipe exception (Foster): both players show impériales in hand -> neither wipes.
    mutual_show_no_wipe: bool = False

    def __post_init__(self) -> None:
        _validate(self)

    def to_dict(self) -> dict[str, Any]:
        """The record form: the preset name plus the fields that differ from it."""
        base = make_rules(self.preset, players=self.players)
        out: dict[str, Any] = {"preset": self.preset}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "preset":
                continue
            if f.name == "players" or value != getattr(base, f.name):
                out[f.name] = list(value) if isinstance(value, tuple) else value
        if self.players == _PRESETS[self.preset].get("players", 2):
            out.pop("players", None)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rules:
        """Inverse of :meth:`to_dict` (the ``rules`` object of a record)."""
        if not isinstance(data, dict):
            raise RulesError(f"rules must be an object with a 'preset' name, got {data!r}")
        data = dict(data)
        if "preset" not in data:
            raise RulesError(f"rules need a 'preset' name (allowed: {', '.join(PRESET_NAMES)}), got {data!r}")
        keys = [k for k in data if not isinstance(k, str)]
        if keys:
            raise RulesError(f"rules field names must be strings, got {keys!r}")
        preset = data.pop("preset")
        return make_rules(preset, **data)


_PRESETS: dict[str, dict[str, Any]] = {
    "academie": {},
    "academie3": {"players": 3, "trick_quota": 4, "first_lead_trump": True},
    "foster": {
        "chronology": "foster",
        "declaration_timing": "dealer_after_first_lead",
        "protect_turned_honour": False,
        "carte_blanche_imperiales": 1,
        "carte_blanche_ends_deal": False,
        "trump_quart_imperiales": 1,
        "comparison": "category",
        "turned_imperiale": True,
        "fallen_imperiale": "tombee",
        "trick_scoring": "difference",
        "mutual_show_no_wipe": True,
    },
    "imperijal": {
        "chronology": "imperijal",
        "protect_turned_honour": False,
        "honour_ranks": ("K", "Q", "J", "low"),
        "honours_in_hand_points": 4,
        "carte_blanche_imperiales": 0,
        "carte_blanche_points": 10,
        "trump_quart_imperiales": 1,
        "extra_sequence": True,
        "comparison": "number",
        "imperiales_as_points": True,
        "turned_imperiale": True,
        "turned_imperiale_fours": False,
        "fallen_imperiale": "capture",
        "point_tie": "split",
        "trick_scoring": "bonus",
        "capot_imperiales": 0,
        "capot_points": 8,
        "must_beat": False,
        "overtrump": False,
    },
}

PRESET_NAMES: tuple[str, ...] = tuple(_PRESETS)


def make_rules(preset: str = "academie", **overrides: Any) -> Rules:
    """The rules of ``preset`` with ``overrides`` applied.

    >>> make_rules("foster", target_imperiales=3).target_imperiales
    3
    """
    if not isinstance(preset, str) or preset not in _PRESETS:
        raise RulesError(f"unknown rules preset {reprlib.repr(preset)} (allowed: {', '.join(PRESET_NAMES)})")
    known = {f.name for f in fields(Rules)} - {"preset"}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise RulesError(
            f"unknown rules field(s) {', '.join(map(repr, unknown))} "
            f"(allowed: {', '.join(sorted(known))})"
        )
    values: dict[str, Any] = dict(_PRESETS[preset])
    if overrides.get("players", values.get("players", 2)) == 3 and "turned_imperiale" not in overrides:
        values["turned_imperiale"] = False
    values.update({name: _plain(value) for name, value in overrides.items()})
    for name in RANK_FIELDS:
        if isinstance(values.get(name), list):
            values[name] = tuple(values[name])
    return Rules(preset=preset, **values)


def _plain(value: Any) -> Any:
    """A numpy integer or bool as the Python value it holds (lossless), anything else as given,
    so that a value from a numpy sweep is checked like the same value typed by hand."""
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def resolve_rules(rules: Rules | str | dict[str, Any] | None) -> Rules:
    """Accept what users pass as ``rules=``: a Rules, a preset name, a record dict or None."""
    if rules is None:
        return make_rules()
    if isinstance(rules, Rules):
        return rules
    if isinstance(rules, str):
        return make_rules(rules)
    if isinstance(rules, dict):
        return Rules.from_dict(rules)
    raise RulesError(f"rules must be a Rules, a preset name or a dict, got {type(rules).__name__}")


def rank_index(name: str, players: int) -> int:
    """Trick-order rank index of a rank name from a rules field (``low`` resolved)."""
    if name == "low":
        name = "7" if players == 2 else "6"
    return RANKS.index(name)


#: The inclusive range of every integer field (the table in :class:`Rules`' docstring).
INT_RANGES: dict[str, tuple[int, int]] = {
    "players": (2, 3),
    "target_imperiales": (1, 100),
    "turned_honour_points": (0, 24),
    "honours_in_hand_points": (0, 24),
    "carte_blanche_imperiales": (0, 10),
    "carte_blanche_points": (0, 24),
    "trump_quart_imperiales": (0, 10),
    "point_points": (0, 24),
    "trick_quota": (0, 12),
    "capot_imperiales": (0, 10),
    "capot_points": (0, 24),
}

#: The allowed values of every enumeration field.
CHOICES: dict[str, tuple[str, ...]] = {
    "preset": PRESET_NAMES,
    "chronology": CHRONOLOGIES,
    "declaration_timing": DECLARATION_TIMINGS,
    "comparison": COMPARISONS,
    "fallen_imperiale": FALLEN_IMPERIALES,
    "point_tie": POINT_TIES,
    "trick_scoring": TRICK_SCORINGS,
}

RANK_FIELDS = ("honour_ranks", "four_ranks")

#: The flags: every field that is none of the above.
FLAGS: tuple[str, ...] = tuple(
    f.name for f in fields(Rules) if f.name not in INT_RANGES and f.name not in CHOICES and f.name not in RANK_FIELDS
)


def _got(value: Any) -> str:
    """``value`` for an error message, kept short (a huge integer by its size, not its digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"
    text = reprlib.repr(value)
    return f"{text} ({type(value).__name__})"


def _check_field(name: str, value: Any) -> None:
    """One field against its type and range: the message names the field and what is allowed."""
    if name in INT_RANGES:
        low, high = INT_RANGES[name]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise RulesError(f"rules field {name} must be an integer in {low}..{high}, got {_got(value)}")
    elif name in CHOICES:
        if not isinstance(value, str) or value not in CHOICES[name]:
            allowed = ", ".join(CHOICES[name])
            raise RulesError(f"rules field {name}={reprlib.repr(value)} is not allowed (allowed: {allowed})")
    elif name in RANK_FIELDS:
        if not isinstance(value, tuple) or not all(isinstance(r, str) for r in value):
            raise RulesError(f"rules field {name} must be a list of rank names ({', '.join(RANK_NAMES)}), "
                             f"got {_got(value)}")
        bad = [r for r in value if r not in RANK_NAMES]
        if bad:
            raise RulesError(f"rules field {name} has unknown rank(s) {reprlib.repr(bad)} "
                             f"(allowed: {', '.join(RANK_NAMES)})")
    elif not isinstance(value, bool):
        raise RulesError(f"rules field {name} must be true or false, got {_got(value)}")


def _validate(rules: Rules) -> None:
    if not isinstance(rules.preset, str) or rules.preset not in _PRESETS:
        raise RulesError(f"unknown rules preset {reprlib.repr(rules.preset)} (allowed: {', '.join(PRESET_NAMES)})")
    for f in fields(rules):
        _check_field(f.name, getattr(rules, f.name))
    for name in RANK_FIELDS:
        ranks = getattr(rules, name)
        resolved = [rank_index(r, rules.players) for r in ranks]
        if len(set(resolved)) != len(resolved):
            raise RulesError(f"rules field {name} names a rank twice: {reprlib.repr(ranks)}")
        if rules.players == 2 and RANKS.index("6") in resolved:
            raise RulesError(f"rules field {name} names the 6, which two players do not use")
    if rules.carte_blanche_imperiales and rules.carte_blanche_points:
        raise RulesError(
            "carte blanche is worth impériales or points, not both: set one of "
            "carte_blanche_imperiales / carte_blanche_points to 0"
        )
    if rules.capot_imperiales and rules.capot_points:
        raise RulesError("capot is worth impériales or points, not both: set one of them to 0")
    if rules.players == 3:
        if rules.turned_imperiale:
            raise RulesError("the turned-card impériale needs two players (with three there is no turned card)")
        if rules.chronology == "foster" or rules.declaration_timing != "before_play":
            raise RulesError("the Foster chronology and declaration timing are for two players only")
        if rules.comparison == "category":
            raise RulesError("comparison='category' (Foster) is for two players only")
        if rules.fallen_imperiale == "tombee":
            raise RulesError("fallen_imperiale='tombee' (Foster) is for two players only")
        if rules.trick_scoring == "difference":
            raise RulesError("trick_scoring='difference' (Foster) is for two players only")
    if rules.declaration_timing == "dealer_after_first_lead" and rules.chronology != "foster":
        raise RulesError(
            "declaration_timing='dealer_after_first_lead' needs chronology='foster' "
            "(the other chronologies score impériales in hand before the point)"
        )
    if rules.comparison == "number" and not rules.imperiales_as_points:
        raise RulesError("comparison='number' scores 24 points an impériale: it needs imperiales_as_points=True")
    if rules.carte_blanche_ends_deal and rules.chronology == "foster":
        raise RulesError("carte_blanche_ends_deal needs a chronology that scores it before the point")



#: The compiled engines' form of the rules: a numpy record, one int64 field a :class:`Rules` field
#: (same name, same order).  Kernels read the rules by name from it (``r["target_imperiales"]``), so
#: a new field reaches them with no table to extend by hand; a record (not a tuple) because
#: numba's threaded loops take arrays, and its dtype is part of the compiled code's type, so a
#: changed schema can never meet a stale cache.  A plain ndarray, not a recarray: numba's
#: dispatch types a subclass the slow way, at every call.
RULE_DTYPE = np.dtype([(f.name, np.int64) for f in fields(Rules)])


def rule_record(rules: Rules) -> np.ndarray:
    """``rules`` as a read-only array of one :data:`RULE_DTYPE` record: integers as they are, flags
    as 0 / 1, an enumeration as its index in :data:`CHOICES`, a rank list as the mask of its
    trick-order ranks (bit :func:`rank_index`; ``low`` resolved for the players)."""
    record = np.array([tuple(_field_number(rules, f.name) for f in fields(rules))], dtype=RULE_DTYPE)
    record.flags.writeable = False
    return record


def _field_number(rules: Rules, name: str) -> int:
    """One field of ``rules`` as the integer :func:`rule_record` gives it."""
    value = getattr(rules, name)
    if name in CHOICES:
        return CHOICES[name].index(value)
    if name in RANK_FIELDS:
        return sum(1 << rank_index(r, rules.players) for r in value)
    return int(value)
