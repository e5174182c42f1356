"""The table as a person reads it: the text rendering shared by the AEC and Gymnasium environments.

:func:`render_table` draws game ``i`` of a :class:`~imperiale_env.batch.BatchGame`: trump and
turned card, the score of each player in impériales and counters (4 points), the point
declarations, the cards shown, the tricks won, the trick on the table, the hand of one player
(``viewer``, by default the acting player; the other hands are given as counts), the score
events of the deal in words, and what the acting player must decide with the legal actions.
:func:`describe_events` turns the rows of :meth:`BatchGame.pop_events` into sentences.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import gymnasium
import numpy as np

from . import actions as act
from .batch import NONE, POINT, QUESTION, BatchGame
from .cards import NUM_CARDS, NUM_RANKS, RANKS, SUIT_NAMES, SUITS, card_code, sort_for_display
from .events import EVENT_KINDS, describe
from .observation import OFFSETS, QUESTION_KINDS
from .rules import Rules

QUESTION_WORDS = {
    "carte_blanche": "carte blanche",
    "quart_major": "a quart major",
    "sequence": "a sequence",
    "four_of_a_kind": "four of a kind",
    "turned_imperiale": "the turned-card impériale",
}


def cards_of(mask: int) -> list[int]:
    """The card indices of a bitmask."""
    mask = int(mask)
    return [c for c in range(NUM_CARDS) if (mask >> c) & 1]


def hand_text(mask: int) -> str:
    """A hand grouped by suit, highest first in trick order: ``S: K 10 7  H: Q J``."""
    groups = []
    held = sort_for_display(cards_of(mask))
    for s, name in enumerate(SUITS):
        ranks = [RANKS[c % NUM_RANKS] for c in held if c // NUM_RANKS == s]
        if ranks:
            groups.append(f"{name}: {' '.join(ranks)}")
    return "  ".join(groups) if groups else "(no cards)"


def score_text(imperiales: int, points: int) -> str:
    """``2 impériales, 3 counters`` (a remainder below 4 points is written out)."""
    counters, rest = divmod(int(points), 4)
    imp = f"{int(imperiales)} impériale" + ("" if imperiales == 1 else "s")
    text = f"{imp}, {counters} counter" + ("" if counters == 1 else "s")
    if rest:
        text += f" + {rest} point" + ("" if rest == 1 else "s")
    return text


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def describe_events(rows: np.ndarray, rules: Rules, names: Sequence[str]) -> list[str]:
    """Sentences for event rows ``(game_id, deal_index, kind, player, amount)``."""
    return [describe(EVENT_KINDS[int(row[2])], names[int(row[3])], int(row[4]), rules)
            for row in np.asarray(rows).reshape(-1, 5)]


def render_table(
    game: BatchGame,
    i: int = 0,
    *,
    names: Sequence[str] | None = None,
    viewer: int | None = None,
    events: np.ndarray | None = None,
    title: str = "L'Impériale",
) -> str:
    """Game ``i`` of ``game`` as text.  ``viewer``: the seat whose hand is shown (default: the
    acting player; after the end of the game, no hand is shown unless ``viewer`` is given).
    ``events``: the event rows to tell (those of the current deal, for instance)."""
    rules = game.rules
    P = game.players
    names = list(names) if names is not None else [f"player_{p}" for p in range(P)]
    kind = int(game.kind[i])
    acting = None if kind == NONE else int(game.current_player[i])
    if viewer is None:
        viewer = acting
    dealer = int(game.dealer[i])
    lines = [f"{title} ({rules.preset}), deal {int(game.deal_index[i]) + 1}, {names[dealer]} deals"]
    trump = int(game.trump[i])
    turned = card_code(int(game.turned[i]))
    shown_how = "turned card" if P == 2 else "the dealer's trump card"
    lines.append(f"Trump    {SUIT_NAMES[trump]} ({SUITS[trump]}), {shown_how} {turned}")
    for p in range(P):
        label = "Score" if p == 0 else ""
        lines.append(f"{label:<8} {names[p]}: {score_text(game.imperiales[i, p], game.points[i, p])}")
    declared = []
    for p in range(P):
        if not game.point_answered[i, p]:
            continue
        suit = int(game.point_suit[i, p])
        if suit < 0:
            declared.append(f"{names[p]} sank the point")
        else:
            count, value = int(game.point_count[i, p]), int(game.point_value[i, p])
            declared.append(f"{names[p]} declared {_plural(count, 'card')} worth {value}")
    if declared:
        lines.append("Point    " + "; ".join(declared))
    for p in range(P):
        if int(game.revealed[i, p]):
            lines.append(f"Shown    {names[p]}: {hand_text(int(game.revealed[i, p]))}")
    played = int(game.tricks_played[i])
    won = ", ".join(f"{names[p]} {int(game.tricks[i, p])}" for p in range(P))
    lines.append(f"Tricks   {won} ({played} of 12 played)")
    length = int(game.trick_len[i])
    if length:
        leader = int(game.leader[i])
        on_table = [f"{names[(leader + k) % P]} {card_code(int(game.trick_cards[i, k]))}" for k in range(length)]
        lines.append("Trick    " + ", ".join(on_table))
    for p in range(P):
        label = "Hands" if p == 0 else ""
        held = int(game.hands[i, p])
        if viewer is not None and p == viewer:
            lines.append(f"{label:<8} {names[p]}: {hand_text(held)}")
        else:
            lines.append(f"{label:<8} {names[p]}: {_plural(bin(held).count('1'), 'card')}")
    if events is not None and len(events):
        told = describe_events(events, rules, names)
        lines.append("Deal     " + "; ".join(told))
    if acting is None:
        winner = int(game.winner[i])
        if winner >= 0:
            lines.append(f"Over     {names[winner]} wins the game")
        else:
            lines.append("Over     the deal is over")
    else:
        lines.append(f"To act   {names[acting]}: {_decision_text(game, i, kind)}")
    return "\n".join(lines)


def _decision_text(game: BatchGame, i: int, kind: int) -> str:
    legal = np.flatnonzero(game.legal_action_mask()[i])
    if kind == QUESTION:
        obs = game.observe()[i]
        which = QUESTION_KINDS[int(np.argmax(obs[OFFSETS["question_kind"]]))]
        cards = np.flatnonzero(obs[OFFSETS["question_cards"]])
        about = " ".join(card_code(int(c)) for c in cards) if which != "carte_blanche" else "no K, Q or J"
        return f"show or hide {QUESTION_WORDS[which]} ({about})?"
    if kind == POINT:
        return "declare a point: " + ", ".join(act.describe(int(a)) for a in legal)
    return "play one of " + " ".join(act.describe(int(a)) for a in legal)


def present(render_mode: str | None, table: Callable[[], str]) -> str | np.ndarray | None:
    """The environments' ``render()``: warn without a render mode, return the table for
    ``"ansi"``, its image for ``"rgb_array"`` (:mod:`imperiale_env.render_image`), print it for ``"human"``."""
    if render_mode is None:
        gymnasium.logger.warn("You are calling render method without specifying any render mode.")
        return None
    text = table()
    if render_mode == "ansi":
        return text
    if render_mode == "rgb_array":
        from .render_image import text_image

        return text_image(text)
    print(text + "\n")
    return None
