"""A game between a person and bots, kept by the server, and the views the page draws.

The server holds the whole game (a :class:`~imperiale_env.reference.observed_game.ObservedGame`: the reference engine
and the acting player's observation of it).  :meth:`Table.view` is what the person may see: his own hand, the
cards on the table, what was shown or won, the score; never a bot's hand, and no seed while the game
runs (the seed rebuilds every deal).  The record, which holds every hand, is given only once the game
ended or the person resigned (:meth:`Table.record`).  The bots act from their observation only
(``ObservedGame.observe``), as in tournaments.
"""

from __future__ import annotations

import secrets
from typing import Any

import numpy as np

from imperiale_agents.base import AgentError, make_agent
from imperiale_env.core import actions as act
from imperiale_env.core.cards import SUITS, card_code, sort_for_display, suit_of
from imperiale_env.core.declarations import point_of
from imperiale_env.core.input_checks import InputError
from imperiale_env.core.input_checks import seed as check_seed
from imperiale_env.core.rules import PRESET_NAMES, RulesError, make_rules
from imperiale_env.envs.render_text import QUESTION_WORDS, SUIT_NAMES
from imperiale_env.envs.seating import agent_choice, play_until
from imperiale_env.records.game_records import record_from_game
from imperiale_env.records.narrate import EventsTold, decision_rule_text, explain_events, seat_names, why_trick_won
from imperiale_env.reference.game import Decision, Game
from imperiale_env.reference.observed_game import ObservedGame


class TableError(ValueError):
    """Bad input from the page (an unknown preset or agent, an illegal move): a 4xx answer."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def codes(cards) -> list[str]:
    return [card_code(c) for c in sort_for_display(list(cards))]


def words_of_events(events: list[dict[str, Any]], game: Game, names: list[str], human: int | None,
                    trump: int) -> list[str]:
    """Every score event in words (:func:`imperiale_env.records.narrate.explain_events`, as in the terminal game)."""
    return explain_events(events, game.rules, names, -1 if human is None else human, trump)


def decision_view(d: Decision | None, hand: frozenset[int] | None) -> dict[str, Any] | None:
    """The pending decision as the page asks it: a question, the point (each suit with its count and
    value, from ``hand``, the deciding player's cards, as the terminal tells them), or a card."""
    if d is None:
        return None
    legal = [act.action_to_record(a) for a in d.legal]
    if d.kind == "point" and hand is not None:
        for a in legal:
            if a["act"] == "point":
                a["count"], a["value"] = point_of(frozenset(hand), SUITS.index(a["suit"]))
    out: dict[str, Any] = {"player": d.player, "kind": d.kind, "legal": legal}
    if d.kind == "question":
        q = d.question
        assert q is not None
        what = QUESTION_WORDS[q.kind]
        cards = "no K, Q or J in hand" if q.kind == "carte_blanche" else " ".join(codes(q.cards))
        out["question"] = {"kind": q.kind, "cards": codes(q.cards), "text": f"Show or hide {what} ({cards})?"}
    elif d.kind == "point":
        out["text"] = "Declare your point (a suit you hold) or sink it."
    else:
        out["text"] = "Play a card."
    return out


def table_state(game: Game, names: list[str], *, viewer: int | None) -> dict[str, Any]:
    """The table: with ``viewer`` a seat, only that seat's hand (the others as counts and the cards
    they showed); with ``viewer=None`` (a replay) every hand."""
    s = game.state
    out: dict[str, Any] = {
        "players": game.players, "names": names, "preset": game.rules.preset,
        "target": game.rules.target_imperiales,
        "imperiales": [int(x) for x in game.imperiales], "points": [int(x) for x in game.points],
        "over": game.is_over, "winner": game.winner,
    }
    if s is None:
        return out
    trump = s.deal.trump
    shown = [codes(r) for r in s.revealed]
    out.update({
        "deal": s.index, "dealer": s.deal.dealer, "trump": "SHDC"[trump], "trump_name": SUIT_NAMES[trump],
        "turned": card_code(s.deal.turned), "tricks": list(s.tricks), "tricks_played": s.tricks_played,
        "trick": [{"player": p, "card": card_code(c)} for p, c in s.trick],
        "counts": [len(h) for h in s.hands], "shown": shown,
        "hands": [codes(h) if viewer is None or p == viewer else None for p, h in enumerate(s.hands)],
        "declared": [None if d is None else {"suit": "SHDC"[d[0]], "count": d[1], "value": d[2]}
                     for d in s.declared_points],
        "events": words_of_events(s.events, game, names, viewer, trump),
    })
    d = game.decision
    seen = viewer is None or d is None or d.player == viewer
    if seen:
        out["decision"] = decision_view(d, None if d is None else s.hands[d.player])
        if d is not None and viewer is not None:  # the rule behind the person's own decision
            out["decision"]["why"] = decision_rule_text(game, viewer)
    else:  # another seat's turn: its legal moves and question would tell its cards
        out["decision"] = {"player": d.player, "kind": d.kind}
    out["played"] = _played_by_suit(s.actions)
    finished = s if s.tricks_played else (game.history[-2] if len(game.history) > 1 else None)
    out["last_trick"] = None if finished is None else last_trick(finished.actions, game.players, finished.tricks_played,
                                                                 finished.deal.trump, names)
    if len(game.history) > 1:
        before = game.history[-2]
        out["last_deal_events"] = words_of_events(before.events, game, names, viewer, before.deal.trump)
    return out


def _played_by_suit(actions: list[tuple[int, int]]) -> dict[str, list[str]]:
    """The cards played so far in the deal, by suit (public: every card played was seen)."""
    played = [a for _, a in actions if act.is_play(a)]
    return {SUITS[s]: codes(c for c in played if suit_of(c) == s) for s in range(len(SUITS))}


def last_trick(actions: list[tuple[int, int]], players: int, played: int, trump: int,
               names: list[str]) -> dict[str, Any] | None:
    """The last complete trick of a deal, who won it and why (it stays shown while the next one starts,
    so that a trick the bot won and led after is never missed)."""
    if played == 0:
        return None
    cards = [(p, a) for p, a in actions if act.is_play(a)]
    done = played * players
    trick = cards[done - players : done]
    winner, best, reason = why_trick_won(trick, trump)
    return {"cards": [{"player": p, "card": card_code(c)} for p, c in trick], "winner": winner,
            "card": card_code(best), "reason": reason,
            "text": f"{names[winner]} won the trick with {card_code(best)}: {reason}"}


class Table:
    """One game: the person in ``seat``, the bot ``opponent`` in every other seat."""

    def __init__(self, preset: Any, opponent: Any, seed: Any = None, seat: Any = 0):
        if not isinstance(preset, str) or preset not in PRESET_NAMES:
            raise TableError(f"unknown preset {preset!r} (allowed: {', '.join(PRESET_NAMES)})")
        try:
            self.rules = make_rules(preset)
        except RulesError as exc:
            raise TableError(str(exc)) from None
        if not isinstance(opponent, str) or opponent.strip().partition(":")[0] == "human":
            raise TableError("the opponent must be a bot's agent spec (heuristic, random, champion, champion:search, "
                             f"pimc:N, neural:PATH, ...), got {opponent!r}")
        try:
            self.bot = make_agent(opponent, self.rules)
        except AgentError as exc:
            raise TableError(str(exc)) from None
        try:
            self.seed = secrets.randbelow(2**63) if seed is None else check_seed(seed)
        except InputError as exc:
            raise TableError(str(exc)) from None
        P = self.rules.players
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < P:
            raise TableError(f"seat must be an integer from 0 to {P - 1}, got {seat!r}")
        self.seat = seat
        self.opponent = opponent
        # the bots are named by their spec, as the person chose them (and by seat when two play)
        self.names = seat_names(P, seat, opponent)
        self.observed = ObservedGame.new(self.rules, self.seed)
        self.rng = np.random.default_rng(self.seed)
        self.resigned = False
        self.told = EventsTold()
        self.bots_act()
        self.news = self.new_events()

    @property
    def finished(self) -> bool:
        """Over, or given up: from then on the record and the seed are the person's to see."""
        return self.resigned or self.game.decision is None

    @property
    def game(self) -> Game:
        return self.observed.game

    def new_events(self) -> list[dict[str, Any]]:
        """The score events logged since the last call, in words, with the deal they belong to: what
        the person's last move (and the bots' answers to it) scored, told at the moment it happens."""
        news = []
        for st in self.game.history:
            for text in words_of_events(self.told.new(st), self.game, self.names, self.seat, st.deal.trump):
                news.append({"deal": st.index, "text": text})
        return news

    def bots_act(self) -> None:
        """The bots play until it is the person's turn or the game is over."""
        play_until(self.observed, (self.seat,), agent_choice(self.bot.act, self.rng))

    def resign(self) -> None:
        """The person gives up the game: no more moves; the record and seed become visible."""
        if self.game.decision is None:
            raise TableError("the game is over already", 409)
        self.resigned = True
        self.news = []

    def play(self, action: Any) -> None:
        """The person's move, ``{"act": ..., ...}`` as in records; refused unless legal now."""
        d = self.game.decision
        if d is None or self.resigned:
            raise TableError("the game is over: no move is possible", 409)
        if not isinstance(action, dict):
            raise TableError(f"a move is an object like {{\"act\": \"play\", \"card\": \"KH\"}}, got {action!r}")
        try:
            a = act.action_from_record(action)
        except (ValueError, TypeError) as exc:
            raise TableError(f"malformed move {action!r}: {exc}") from None
        if a not in d.legal:
            legal = ", ".join(act.describe(x) for x in d.legal)
            raise TableError(f"{act.describe(a)} is not legal now (legal: {legal})", 422)
        self.observed.step(a)
        self.bots_act()
        self.news = self.new_events()

    def view(self) -> dict[str, Any]:
        out = table_state(self.game, self.names, viewer=self.seat)
        out.update({"seat": self.seat, "opponent": self.opponent, "seed": self.seed if self.finished else None,
                    "resigned": self.resigned, "finished": self.finished, "news": self.news,
                    "deals_history": [words_of_events(st.events, self.game, self.names, self.seat, st.deal.trump)
                                      for st in self.game.history[:-1]]})
        return out

    def record(self) -> dict[str, Any]:
        """The game's record, every hand in it: only once the game is over or given up."""
        if not self.finished:
            raise TableError("the record holds every hand of the game; it is yours once the game is over (or "
                             "after you give it up)", 409)
        return record_from_game(self.game, self.names, self.seed)
