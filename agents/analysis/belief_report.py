"""The belief model's view of a decision, for people: where each hidden card may lie, in words and numbers.

:mod:`imperiale_agents.search.belief_model` gives, for one observation, each card's probability of lying with
relative seat 1, seat 2 or in the talon.  People read absolute seats and cards by suit, and want
to know why a card has no belief at all (it is in their hand, it was played, turned or shown):
:func:`decision_belief` turns one observation into that, :func:`belief_text` into the compact
lines of ``imperiale analyse --beliefs``, and the web page draws the same object as a heat map.

Everything here reads the observation of the seat whose decision it is and nothing else: a
record's other hands never reach the network, so the view is what that seat could infer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from imperiale_agents.observation_view import deck_mask, decode
from imperiale_agents.search.belief_model import (
    PLACES,
    BeliefFileError,
    BeliefNet,
    read_belief,
    shipped_belief,
    shipped_belief_path,
)
from imperiale_env.core.cards import NUM_CARDS, NUM_RANKS, RANKS, SUITS, card_code
from imperiale_env.core.rules import Rules
from imperiale_env.records.game_records import game_from_record
from imperiale_env.reference.game import Deal, Game
from imperiale_env.reference.observe import observe

#: Why a card has no belief, in the order they are checked (a played card was also held once).
KNOWN_REASONS = ("in the hand", "played", "shown", "turned", "not in the deck")


def load_belief(rules: Rules, path: str | Path | None = None) -> BeliefNet:
    """The belief model for ``rules``: the file at ``path``, or the one shipped for the preset.

    A file trained for a different number of players cannot be read against these observations;
    one trained under another preset is refused too (its beliefs would be about another game),
    rather than silently used.  :class:`BeliefFileError` names what is missing and what to pass."""
    if path is None:
        if not shipped_belief_path(rules.preset).is_file():
            raise BeliefFileError(f"no belief model is shipped for {rules.preset}; pass --belief FILE (train one "
                                  f"with python -m imperiale_train.belief_training --rules {rules.preset})")
        return shipped_belief(rules.preset)
    net = read_belief(path)
    trained = (net.meta.get("rules") or {}).get("preset")
    if trained != rules.preset:
        raise BeliefFileError(f"{path} was trained under the {trained!r} rules; the record is played under "
                              f"{rules.preset!r}: pass a belief file trained for {rules.preset}")
    return net


def place_seats(me: int, players: int) -> list[int | None]:
    """The absolute seat of each of :data:`PLACES` seen from ``me`` (``None``: the talon), for the
    places that exist with ``players`` players."""
    seats: list[int | None] = [(me + rel) % players for rel in range(1, players)]
    return seats + [None] if players == 2 else seats


def _known_reasons(v, row: int = 0) -> dict[int, str]:
    """Each card the observer has no belief about, with why (:data:`KNOWN_REASONS`)."""
    players = int(v.players[row])
    checks = (v.hand[row], v.played[row].any(axis=0), (v.revealed[row] & ~v.played[row]).any(axis=0),
              v.turned[row] & (players == 2), ~deck_mask(v.players[row : row + 1])[0])
    out: dict[int, str] = {}
    for reason, cards in zip(KNOWN_REASONS, checks, strict=True):
        for c in np.flatnonzero(cards):
            out.setdefault(int(c), reason)
    return out


def decision_belief(net: BeliefNet, obs: np.ndarray, me: int) -> dict[str, Any]:
    """The belief of seat ``me`` from its observation ``obs`` (one row; seats in the answer absolute).

    ``places``: one entry per place (``{"seat": s}`` or ``{"seat": None}`` for the talon);
    ``cards``: every card the seat does not know, ``code -> [probability of each place]`` (they sum
    to 1); ``known``: every other card, ``code -> why`` (:data:`KNOWN_REASONS`)."""
    obs = np.asarray(obs).reshape(1, -1)
    v = decode(obs)
    players = int(v.players[0])
    kept = [0, 2] if players == 2 else [0, 1]  # the places that exist: PLACES are relative seat 1, 2, talon
    probs = net.probabilities(obs, v)[0][:, kept]
    known = _known_reasons(v)
    cards = {card_code(c): [round(float(p), 4) for p in probs[c]] for c in range(NUM_CARDS) if c not in known}
    return {"places": [{"seat": s} for s in place_seats(me, players)],
            "cards": cards, "known": {card_code(c): why for c, why in sorted(known.items())}}


def belief_at(net: BeliefNet, record: dict[str, Any], deal: int, index: int) -> dict[str, Any]:
    """The belief of the player to act before action ``index`` of deal ``deal`` (0-based) of ``record``
    (checked first: :class:`~imperiale_env.records.game_records.RecordError`), from that player's
    observation alone; ``ValueError`` names the decisions the record has."""
    played = game_from_record(record)
    if not 0 <= deal < len(played.history):
        raise ValueError(f"the record has deals 0 to {len(played.history) - 1}, not {deal}")
    actions = played.history[deal].actions
    if not 0 <= index < len(actions):
        raise ValueError(f"deal {deal} of the record has decisions 0 to {len(actions) - 1}, not {index}")
    deals: list[Deal] = [s.deal for s in played.history]
    game = Game(played.rules, dealer=played.start_dealer, imperiales=played.start_imperiales,
                points=played.start_points, deals=lambda i, _d: deals[i] if i < len(deals) else None)
    for s in played.history[:deal]:
        for _player, action in s.actions:
            game.step(action)
    for _player, action in actions[:index]:
        game.step(action)
    decision = game.decision
    assert decision is not None and decision.player == actions[index][0]
    out = decision_belief(net, observe(game, decision.player), decision.player)
    return {"deal": deal, "index": index, "player": decision.player, **out}


def place_name(place: dict[str, Any], names: list[str] | None = None) -> str:
    """``talon``, ``player 1``, or the seat's name from ``names``."""
    seat = place["seat"]
    if seat is None:
        return "talon"
    return names[seat] if names is not None else f"player {seat}"


def belief_text(belief: dict[str, Any], names: list[str] | None = None) -> list[str]:
    """Compact lines: the places, then per suit each unseen card with its probability of each place."""
    heads = [place_name(p, names) for p in belief["places"]]
    lines = [f"belief ({' / '.join(heads)}):"]
    for s, suit in enumerate(SUITS):
        items = []
        for r in range(NUM_RANKS):
            code = card_code(s * NUM_RANKS + r)
            if code in belief["cards"]:
                items.append(f"{RANKS[r]} {'/'.join(f'{p:.2f}' for p in belief['cards'][code])}")
        lines.append(f"  {suit}: {', '.join(items) if items else '-'}")
    return lines


__all__ = ["KNOWN_REASONS", "PLACES", "belief_at", "belief_text", "decision_belief", "load_belief", "place_name",
           "place_seats"]
