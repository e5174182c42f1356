"""A game record told as text, trick by trick: what ``imperiale replay RECORD`` prints.

The record is checked and replayed by :func:`imperiale_env.records.game_records.game_from_record`
(which names the deal and action at fault), then stepped again through the reference engine so
that every sentence comes at its moment: the deal and its trump, each seat's hand (a record
holds every card, so nothing is secret in a replay), the declarations, each trick with who won
it and why, the score events and the score after each deal.  The words are the terminal
game's: :func:`~imperiale_env.records.narrate.decision_note`,
:func:`~imperiale_env.records.narrate.trick_text` and
:func:`~imperiale_env.records.narrate.explain_events`, with deals numbered from 1 as
``imperiale play`` and ``imperiale analyse`` number them.  Seats are named as the record's
``names`` say ("You", "champion"...), or ``Player 0`` ... for a record that does not name them.
"""

from __future__ import annotations

from typing import Any

from imperiale_env.core.cards import SUIT_NAMES, card_code
from imperiale_env.envs.render_text import hand_line, score_line
from imperiale_env.records.game_records import DealFeed, game_from_record
from imperiale_env.records.narrate import Words, decision_note, explain_events, seat_names, trick_text
from imperiale_env.reference.game import DealState, Game

INDENT = "  "


def replay_text(record: dict[str, Any]) -> str:
    """The game of ``record`` in words, one line per event; raises ``RecordError`` for a bad record."""
    played = game_from_record(record)
    rules, players = played.rules, played.players
    names = list(record.get("names") or seat_names(players, -1))  # who played, when the record says
    viewer = names.index("You") if "You" in names else -1  # a record saved by a player: his seat is "You"
    words = Words(names, viewer)
    deals = [state.deal for state in played.history]
    feed = DealFeed(lambda index, _dealer: deals[index] if index < len(deals) else None)
    game = feed.attach(Game(rules, dealer=played.start_dealer, imperiales=list(played.start_imperiales),
                            points=list(played.start_points), deals=feed))
    changed = sorted(k for k in record["rules"] if k != "preset")
    lines = [f"L'Impériale ({rules.preset}" + (f" with {', '.join(changed)} changed" if changed else "")
             + f", {players} players, to {rules.target_imperiales} impériales), {len(deals)} deal"
             + ("" if len(deals) == 1 else "s") + ".",
             "Start: " + score_line(game, names, {"imperiales": list(played.start_imperiales),
                                                   "points": list(played.start_points)}) + "."]
    for d, past in enumerate(played.history):
        state = game.history[d]
        trump = state.deal.trump
        lines.append("")
        lines.append(f"Deal {d + 1}: {words.verb(state.deal.dealer, 'deal')}; trump is {SUIT_NAMES[trump]} "
                     f"({card_code(state.deal.turned)}).")
        for p in range(players):
            whose = "Your" if p == viewer else f"{names[p]}'s"
            lines.append(f"{INDENT}{whose} hand: {hand_line(state.deal.hands[p], set(), trump)}")
        told = _tell(lines, state, 0, rules, names)
        for _player, action in past.actions:
            decision = game.decision
            assert decision is not None, "the checked record has an action after the game ended"
            note = decision_note(game, decision, action, words, rules) if decision.kind != "play" else None
            trick, tricks_played = list(state.trick), state.tricks_played
            game.step(action)
            if decision.kind == "question" and len(state.events) > told:
                note = None  # a show scored at once is told by its score event
            if note:
                lines.append(INDENT + note)
            if decision.kind == "play" and len(trick) + 1 == players:
                cards = trick + [(decision.player, action)]
                lines.append(f"{INDENT}Trick {tricks_played + 1}: {trick_text(cards, trump, words)}.")
            told = _tell(lines, state, told, rules, names)
        if game.state is state and game.decision is not None:
            pending = game.decision
            lines.append(f"{INDENT}The record stops here, in deal {d + 1}: {names[pending.player]} to "
                         f"{'play a card' if pending.kind == 'play' else 'answer a ' + pending.kind}.")
        else:
            after = feed.scores[d] if d < len(feed.scores) else None
            lines.append(f"{INDENT}Score after deal {d + 1}: {score_line(game, names, after)}.")
    lines.append("")
    if game.winner is not None:
        w = game.winner
        order = [w] + [p for p in range(players) if p != w]
        lines.append(f"{names[w]} wins the game, {' to '.join(str(game.imperiales[p]) for p in order)} impériales.")
    lines.append(f"Final score: {score_line(game, names)}.")
    return "\n".join(lines)


def _tell(lines: list[str], state: DealState, told: int, rules, names: list[str]) -> int:
    """Tell ``state``'s score events after the first ``told``; how many are told now."""
    for sentence in explain_events(state.events[told:], rules, names, -1, state.deal.trump):
        lines.append(INDENT + sentence)
    return len(state.events)
