"""The score events: every kind once, with its unit (its words: :mod:`imperiale_env.records.narrate`).

Both engines log a score event each time a score changes (docs/records.md).  The reference
engine writes a dict ``{"event": kind, "player": p, <amount key>: n, ...}``; the batched
engine writes a row ``(game, deal, code, player, amount)`` where ``code`` indexes
:data:`EVENT_KINDS`.  Records, the narrator, the tournament's deal accounting and the
differential check all read the kinds from here, so a new kind is
written once.

The unit of an amount is points (an *award*: 24 points make an impériale) or impériales
(a *gain*).  For some kinds it depends on the rules (Imperijal scores its impériales as
24 points; carte blanche and capot are worth points or impériales): :func:`unit` decides.

Three kinds are bookkeeping around the others: ``imperiale`` (the impériales a gain or 24
points make, its amount a count), ``wipe`` (the points an opponent loses) and
``game_over``.  :func:`value` turns any event into the change of its player's value in
impériales (points count 1/24), where ``imperiale`` counts zero because the award or gain
that made it already counted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from imperiale_env.core.rules import Rules

POINTS_PER_IMPERIALE = 24
POINTS, IMPERIALES, COUNT, NOTHING = "points", "imperiales", "count", "nothing"


@dataclass(frozen=True)
class EventKind:
    """One kind of score event: its name and how to find its unit.

    ``unit`` maps the rules to :data:`POINTS`, :data:`IMPERIALES`, :data:`COUNT` (the
    ``imperiale`` event) or :data:`NOTHING` (``game_over``).  ``sign`` is how the amount moves
    the player's value (-1 for a wipe, 0 for the bookkeeping of a gain already counted).  The
    words of each kind are :func:`imperiale_env.records.narrate.explain_events`'s."""

    name: str
    unit: Callable[[Rules], str]
    sign: int = 1


def _always(unit: str) -> Callable[[Rules], str]:
    return lambda rules: unit


def _imperiales_unless_as_points(rules: Rules) -> str:
    return POINTS if rules.imperiales_as_points else IMPERIALES


KINDS: tuple[EventKind, ...] = (
    EventKind("turned_honour", _always(POINTS)),
    EventKind("carte_blanche", lambda r: POINTS if r.carte_blanche_points else IMPERIALES),
    EventKind("quart_major", _imperiales_unless_as_points),
    EventKind("four_of_a_kind", _imperiales_unless_as_points),
    EventKind("turned_imperiale", _imperiales_unless_as_points),
    EventKind("point", _always(POINTS)),
    EventKind("honours", _always(POINTS)),
    EventKind("fallen_imperiale", _imperiales_unless_as_points),
    EventKind("tricks", _always(POINTS)),
    EventKind("capot", lambda r: POINTS if r.capot_points else IMPERIALES),
    EventKind("wipe", _always(POINTS), sign=-1),
    EventKind("imperiale", _always(COUNT), sign=0),
    EventKind("game_over", _always(NOTHING), sign=0),
)
BY_NAME: dict[str, EventKind] = {k.name: k for k in KINDS}
#: Event names in code order: row code ``i`` of the batched engine is ``EVENT_KINDS[i]``.
EVENT_KINDS: tuple[str, ...] = tuple(k.name for k in KINDS)
CODE: dict[str, int] = {name: i for i, name in enumerate(EVENT_KINDS)}

# The names, for the engines to write events with (a typo is then an import error).
(TURNED_HONOUR, CARTE_BLANCHE, QUART_MAJOR, FOUR_OF_A_KIND, TURNED_IMPERIALE, POINT, HONOURS, FALLEN_IMPERIALE,
 TRICKS, CAPOT, WIPE, IMPERIALE, GAME_OVER) = EVENT_KINDS


def unit(kind: str, rules: Rules) -> str:
    """The unit of ``kind``'s amount under ``rules``: points, impériales, count or nothing."""
    return BY_NAME[kind].unit(rules)


def amount_key(kind: str, rules: Rules) -> str | None:
    """The key of the amount in a reference event dict (``points``, ``imperiales``, ``count``)."""
    return {POINTS: "points", IMPERIALES: "imperiales", COUNT: "count", NOTHING: None}[unit(kind, rules)]


def amount_of(event: dict[str, Any], rules: Rules) -> int:
    """The amount of a reference event dict, as the batched engine logs it (0 for ``game_over``)."""
    key = amount_key(event["event"], rules)
    return 0 if key is None else int(event[key])


def value(kind: str, amount: float, rules: Rules) -> float:
    """The change of its player's value in impériales (points count 1/24) an event makes."""
    k = BY_NAME[kind]
    scale = 1 / POINTS_PER_IMPERIALE if k.unit(rules) == POINTS else 1.0
    return k.sign * amount * scale


def value_table(rules: Rules) -> np.ndarray:
    """``value_table(rules)[code] * amount`` is :func:`value` for a batched event row."""
    return np.array([value(name, 1, rules) for name in EVENT_KINDS], dtype=np.float64)
