"""The one action layout shared by every engine, environment and agent, for all presets.

=========  ==========================================================
id         meaning
=========  ==========================================================
0 .. 35    play the card with that index (``suit * 9 + rank``, see :mod:`cards`)
36         ``show``: yes to the pending declaration question
37         ``hide``: no to the pending declaration question
38 .. 41   ``point``: declare the point in suit S, H, D, C
42         ``sink``: declare no point
=========  ==========================================================

Two-player games never use the ids of the sixes (rank index 8), but the layout is the same
so that one network serves every preset.
"""

from __future__ import annotations

from imperiale_env.core.cards import NUM_CARDS, SUITS, card_code, parse_card, parse_suit

SHOW = NUM_CARDS  # 36
HIDE = NUM_CARDS + 1  # 37
POINT_BASE = NUM_CARDS + 2  # 38 .. 41
SINK = POINT_BASE + 4  # 42
NUM_ACTIONS = SINK + 1  # 43


def point_action(suit: int) -> int:
    return POINT_BASE + suit


def is_play(action: int) -> bool:
    return 0 <= action < NUM_CARDS


def is_point(action: int) -> bool:
    return POINT_BASE <= action < SINK


def action_to_record(action: int) -> dict[str, str]:
    """The ``act`` part of a record action (without the player)."""
    if is_play(action):
        return {"act": "play", "card": card_code(action)}
    if action == SHOW:
        return {"act": "show"}
    if action == HIDE:
        return {"act": "hide"}
    if is_point(action):
        return {"act": "point", "suit": SUITS[action - POINT_BASE]}
    if action == SINK:
        return {"act": "sink"}
    raise ValueError(f"action {action!r} is outside the layout 0..{NUM_ACTIONS - 1}")


def action_from_record(entry: dict) -> int:
    """Inverse of :func:`action_to_record`; raises ``ValueError`` on a malformed entry."""
    act = entry.get("act")
    if act == "play":
        return parse_card(entry.get("card"))
    if act == "show":
        return SHOW
    if act == "hide":
        return HIDE
    if act == "point":
        return point_action(parse_suit(entry.get("suit")))
    if act == "sink":
        return SINK
    raise ValueError(f"unknown act {act!r} (allowed: play, show, hide, point, sink)")


def describe(action: int) -> str:
    """Short human form: ``KH``, ``show``, ``point H``, ``sink``."""
    rec = action_to_record(action)
    if rec["act"] == "play":
        return rec["card"]
    if rec["act"] == "point":
        return f"point {rec['suit']}"
    return rec["act"]
