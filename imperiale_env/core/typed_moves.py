"""What a person types for a move, read once for every front end (the terminal game, the human agent).

A line is a move number (1-based, in the order of the legal actions), ``show`` / ``hide``
(``y`` / ``n``), ``sink``, ``point H`` (or ``point hearts``, ``p h``, or the suit alone), or a
card code in any case (``kh``, ``10s``).  :func:`read_move` says which action a line *means*,
legal or not, so that each front end can say why a meant action is not allowed now.
"""

from __future__ import annotations

from imperiale_env.core import actions as act
from imperiale_env.core.cards import SUIT_NAMES, SUITS, parse_card

SHOW_WORDS = ("show", "y", "yes")
HIDE_WORDS = ("hide", "n", "no")
SINK_WORDS = ("sink", "pass")


def normalise(text: str) -> str:
    """Lower case, single spaces."""
    return " ".join(text.strip().lower().split())


def suit_word(word: str) -> int | None:
    """The suit a word names: ``h``, ``hearts``, ``heart``; ``None`` if none."""
    word = word.strip()
    for i, (code, name) in enumerate(zip(SUITS, SUIT_NAMES, strict=True)):
        if word and word in (code.lower(), name, name[:-1]):
            return i
    return None


def point_word(line: str) -> int | None:
    """The point action of ``point h`` / ``p hearts`` / ``h``; ``None`` if the line names no suit."""
    word = line.removeprefix("point").strip()
    if word.startswith("p "):
        word = word[2:]
    suit = suit_word(word)
    return None if suit is None else act.point_action(suit)


def read_move(text: str, legal: list[int]) -> int | None:
    """The action a line means (a move number picks from ``legal``); ``None`` if it means none."""
    line = normalise(text)
    if not line:
        return None
    if line.isdigit():
        k = int(line) - 1
        return legal[k] if 0 <= k < len(legal) else None
    if line in SHOW_WORDS:
        return act.SHOW
    if line in HIDE_WORDS:
        return act.HIDE
    if line in SINK_WORDS:
        return act.SINK
    point = point_word(line)
    if point is not None:
        return point
    try:
        return parse_card(line.replace(" ", "").upper())
    except ValueError:
        return None
