"""The table as a person reads it: the one table renderer of the project.

:func:`table_text` draws a reference :class:`~imperiale_env.reference.game.Game` as one seat sees it:
the deal, trump and turned card, the score of each player in impériales and counters
(4 points), what was shown and declared, the cards a seat is known to hold, the tricks, the
trick on the table, the other hands as counts, the seat's own hand (the legal cards marked
``*``), and the pending decision (the moves and the question when it is that seat's, else
who is to act, or how the game ended).  The terminal game, the AEC and Gymnasium
environments (``render()``) and, through :func:`hand_line` and :func:`score_text`, the human
agent draw their tables with it; the score events are told by :mod:`imperiale_env.records.narrate`.

Grammar follows the names: a seat named ``You`` is spoken to in the second person.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import gymnasium
import numpy as np

from imperiale_env.core import actions as act
from imperiale_env.core.cards import POINT_VALUE, SUIT_NAMES, SUITS, card_code, rank_of, sort_for_display, suit_of
from imperiale_env.core.declarations import honour_cards
from imperiale_env.records.narrate import cards_text, explain_events, imperiales, item_text, plural, question_text
from imperiale_env.reference.game import TRICKS_PER_DEAL, Decision, Game, trick_winner_card

__all__ = ["QUESTION_WORDS", "SUIT_NAMES", "decision_prompt", "hand_line", "present", "score_line", "score_text",
           "table_text"]

QUESTION_WORDS = {
    "carte_blanche": "carte blanche",
    "quart_major": "a quart major",
    "sequence": "a sequence",
    "four_of_a_kind": "four of a kind",
    "turned_imperiale": "the turned-card impériale",
}
YOU = "You"


def score_text(imperiales: int, points: int) -> str:
    """``2 impériales, 3 counters`` (a remainder below 4 points is written out)."""
    counters, rest = divmod(int(points), 4)
    imp = f"{int(imperiales)} impériale" + ("" if imperiales == 1 else "s")
    text = f"{imp}, {counters} counter" + ("" if counters == 1 else "s")
    if rest:
        text += f" + {rest} point" + ("" if rest == 1 else "s")
    return text


def _score(imperiales: int, points: int) -> str:
    """``2 impériales, 3 counters (12 points)``."""
    text = score_text(imperiales, points)
    return f"{text} ({points} points)" if points >= 4 and points % 4 == 0 else text


def score_line(game: Game, names: Sequence[str], score: dict | None = None) -> str:
    """``score`` (``{"imperiales", "points"}``, by default the game's score now) in words."""
    imperiales, points = (game.imperiales, game.points) if score is None else (score["imperiales"], score["points"])
    return "; ".join(f"{names[p]}: {_score(imperiales[p], points[p])}" for p in range(game.players))


def hand_line(hand: Iterable[int], legal: set[int], trump: int | None) -> str:
    """A hand grouped by suit, highest first in trick order, the ``legal`` cards marked ``*``:
    ``S (trump): KS* 10S*   H: QH JH``."""
    held = sort_for_display(list(hand))
    groups = []
    for s, name in enumerate(SUITS):
        cards = [c for c in held if suit_of(c) == s]
        if cards:
            shown = " ".join(card_code(c) + ("*" if c in legal else "") for c in cards)
            groups.append(f"{name}{' (trump)' if s == trump else ''}: {shown}")
    return "   ".join(groups) if groups else "(no cards)"


def _verb(name: str, base: str, third: str) -> str:
    return f"{name} {base if name == YOU else third}"


def _point_declarations(game: Game, names: Sequence[str], viewer: int | None) -> list[str]:
    s = game.state
    out = []
    for p, a in s.actions:
        if a == act.SINK:
            out.append(f"{names[p]} sank the point")
        elif act.is_point(a):
            suit, count, value = s.declared_points[p]
            of = f" of {SUIT_NAMES[suit]}" if p == viewer else ""
            out.append(f"{names[p]} declared {plural(count, 'card')}{of} worth {value}")
    return out


def _move_label(a: int, game: Game, seat: int) -> str:
    if act.is_point(a):
        suit = a - act.POINT_BASE
        cards = [c for c in game.state.hands[seat] if suit_of(c) == suit]
        value = sum(POINT_VALUE[rank_of(c)] for c in cards)
        return f"point {SUITS[suit]} ({plural(len(cards), 'card')}, {value})"
    return act.describe(a)


def table_text(game: Game, viewer: int | None, names: Sequence[str], *, mark_legal: bool = True,
               last_trick: str | None = None, tell_events: bool = False) -> str:
    """The table as seat ``viewer`` sees it (``None``: an onlooker, who sees no hand).

    ``mark_legal``: mark the viewer's legal cards ``*`` when it is his turn to play.
    ``last_trick``: the last complete trick in words, shown while the next one starts.
    ``tell_events``: add the score events of this deal and of the one before in words (the
    terminal game tells them as they happen instead)."""
    s = game.state
    if s is None:
        return "L'Impériale: no deal (no more deals are known)"
    rules = game.rules
    P = game.players
    trump = s.deal.trump
    d = game.decision
    mine = d is not None and d.player == viewer
    legal = set(d.legal) if mine and mark_legal and d.kind == "play" else set()
    dealer, elder = s.deal.dealer, (s.deal.dealer + 1) % P
    lines = [f"=== Deal {s.index + 1} ({rules.preset}): {_verb(names[dealer], 'deal', 'deals')}, "
             f"{_verb(names[elder], 'are', 'is')} elder ==="]
    turned = card_code(s.deal.turned)
    honour = ""
    if rules.turned_honour_points and s.deal.turned in honour_cards(rules, trump):
        honour = f" - an honour, {rules.turned_honour_points} points to the dealer"
    shown_how = "turned card" if P == 2 else "the dealer's trump card"
    lines.append(f"Trump:   {SUIT_NAMES[trump]} ({SUITS[trump]}); {shown_how} {turned}{honour}")
    width = max(9, *(len(n) for n in names))  # a long agent spec keeps the score column straight
    for p in range(P):
        label = "Score:" if p == 0 else ""
        lines.append(f"{label:<8} {names[p]:<{width}} {_score(game.imperiales[p], game.points[p])}")
    lines.append(f"{'':<8} first to {imperiales(rules.target_imperiales)}; a counter is 4 points, "
                 "24 points make an impériale")
    for p in range(P):
        for item in s.shown[p]:
            lines.append(f"Shown:   {names[p]} showed {item_text(item.kind, item.cards, trump, rules)} "
                         f"({cards_text(item.cards)})")
        if s.turned_imperiale_shown and p == dealer:
            lines.append(f"Shown:   {names[p]} showed the turned-card impériale ({turned})")
    declared = _point_declarations(game, names, viewer)
    if declared:
        lines.append("Point:   " + "; ".join(declared))
    for e in s.events:
        if e["event"] == "point":
            p = int(e["player"])
            point_cards = [c for c in s.deal.hands[p] if suit_of(c) == SUITS.index(e["suit"])]
            lines.append(f"         {names[p]} won the point and showed {cards_text(point_cards)}")
    for p in range(P):
        if p != viewer:
            known = s.revealed[p] & s.hands[p]
            if P == 3 and p == dealer and s.deal.turned in s.hands[p]:
                known = known | {s.deal.turned}  # the dealer's shown trump card
            if known:
                lines.append(f"Known:   {names[p]} still holds {cards_text(known)}")
    if s.tricks_played or s.trick or (d is not None and d.kind == "play"):
        won = ", ".join(f"{names[p]} {s.tricks[p]}" for p in range(P))
        lines.append(f"Tricks:  {won} ({s.tricks_played} of {TRICKS_PER_DEAL} played)")
        gone = [c for c in range(36) if any(c in s.captured[p] for p in range(P))]
        if gone:
            lines.append(f"Played:  {cards_text(gone)} (earlier tricks)")
        if last_trick:
            lines.append(f"Last:    {last_trick}")
        if s.trick:
            on_table = ", ".join(f"{names[p]} {card_code(c)}" for p, c in s.trick)
            lines.append(f"Trick:   {on_table} (winning: {card_code(trick_winner_card(s.trick, trump))})")
    for p in range(P):
        if p != viewer:
            lines.append(f"{'':<8} {names[p]} holds {plural(len(s.hands[p]), 'card')}")
    if viewer is not None:
        mark = " (* = legal now)" if legal else ""
        lines.append(f"Hand{mark}: {hand_line(s.hands[viewer], legal, trump)}")
    if tell_events:
        second = names.index(YOU) if YOU in names else -1
        told = explain_events(s.events, rules, names, second, trump)
        if told:
            lines.append("Scored:  " + " ".join(told))
        if len(game.history) > 1:
            before = game.history[-2]
            told = explain_events(before.events, rules, names, second, before.deal.trump)
            lines.append("Last deal: " + (" ".join(told) or "nobody scored."))
    if mine:
        lines.append("Moves:   " + "  ".join(f"{i + 1}) {_move_label(a, game, viewer)}" for i, a in enumerate(d.legal)))
        lines.append(decision_prompt(game, d, viewer))
    elif d is not None:
        lines.append(f"To act:  {names[d.player]}")
    elif game.winner is not None:
        lines.append(f"Over:    {_verb(names[game.winner], 'win', 'wins')} the game")
    else:
        lines.append("Over:    the deal is over")
    return "\n".join(lines)


def decision_prompt(game: Game, d: Decision, seat: int) -> str:
    """The pending decision of ``seat`` as a question."""
    s = game.state
    if d.kind == "question":
        assert d.question is not None
        return question_text(d.question, s.deal.trump, game.rules, s.deal.turned)
    if d.kind == "point":
        suits = "/".join(act.describe(a).split()[-1] for a in d.legal if act.is_point(a))
        return f"Declare your point: point {suits}, or sink? [point X/sink]"
    if not s.trick:
        return "Your lead: which card? [card code or number]"
    return "Your turn to play: which card? [card code or number]"


def present(render_mode: str | None, table: Callable[[], str], image: Callable[[], np.ndarray]
            ) -> str | np.ndarray | None:
    """The environments' ``render()``: warn without a render mode, return the table for
    ``"ansi"``, the same seat's view drawn with cards for ``"rgb_array"`` (``image()``, made with
    :func:`imperiale_env.envs.render_image.table_image`), print the table for ``"human"``."""
    if render_mode is None:
        gymnasium.logger.warn("You are calling render method without specifying any render mode.")
        return None
    if render_mode == "rgb_array":
        return image()
    text = table()
    if render_mode == "ansi":
        return text
    print(text + "\n")
    return None
