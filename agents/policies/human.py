"""A person at the terminal, as an agent: the same interface as the bots.

It sees exactly what a bot sees (the observation and the mask, decoded by :mod:`imperiale_agents.observation_view`)
and asks for each decision of the batch in turn, its table drawn in the lines of
:func:`imperiale_env.envs.render_text.table_text` (which ``imperiale play`` and the environments draw
in full from the reference engine).  This agent lets a person sit in any place an agent fits
(a tournament, a Gymnasium opponent, a notebook).

Input: a move number, a card code (any case: ``kh``, ``10s``), ``show``/``hide`` (or ``y``/``n``),
``point h`` or ``sink``.  Anything else is refused with the list of legal moves.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from imperiale_agents.observation_view import View, decode
from imperiale_env.core import actions as act
from imperiale_env.core.cards import SUIT_NAMES, SUITS, card_code
from imperiale_env.core.observation import QUESTION_KINDS
from imperiale_env.core.typed_moves import read_move
from imperiale_env.envs.render_text import hand_line


def _cards(flags: np.ndarray) -> str:
    return " ".join(card_code(int(c)) for c in np.flatnonzero(flags)) or "-"


def describe(view: View, i: int, legal: list[int] | None = None) -> str:
    """The table as the observation shows it to the player of row ``i``, in the lines of
    :func:`imperiale_env.envs.render_text.table_text` (the same hand line, ``legal`` cards marked ``*``);
    seats are relative, as in the observation: ``you``, ``seat+1``, ``seat+2``."""
    P = int(view.players[i])
    trump = int(view.trump[i])
    names = ["you"] + [f"seat+{k}" for k in range(1, P)]
    won = ", ".join(f"{names[k]} {int(view.tricks[i, k])}" for k in range(P))
    lines = [
        f"Trump:   {SUIT_NAMES[trump]} ({SUITS[trump]}); turned card {_cards(view.turned[i])}; "
        f"{names[int(view.dealer[i])]} dealt",
        f"Tricks:  {won} ({int(view.tricks_played[i])} of 12 played)",
    ]
    leader = int(view.leader[i])
    if leader >= 0:
        order = [(leader + k) % P for k in range(P)]
        on_table = ", ".join(f"{names[k]} {_cards(view.trick[i, k])}" for k in order if view.trick[i, k].any())
        lines.append(f"Trick:   {on_table}")
    playing = view.phase[i] == 2 and legal is not None
    marked = set(legal) if playing else set()
    mark = " (* = legal now)" if playing else ""
    lines.append(f"Hand{mark}: {hand_line(np.flatnonzero(view.hand[i]).tolist(), marked, trump)}")
    if view.phase[i] == 0:
        lines.append(f"Question: show your {QUESTION_KINDS[view.question_kind[i]].replace('_', ' ')}?")
    return "\n".join(lines)


def parse(text: str, legal: list[int]) -> int | None:
    """The action a person typed (:func:`imperiale_env.core.typed_moves.read_move`), if it is one of ``legal``."""
    choice = read_move(text, legal)
    return choice if choice in legal else None


class HumanAgent:
    """Asks at the terminal; ``input_fn`` / ``print_fn`` make it scriptable."""

    name = "human"

    def __init__(self, input_fn: Callable[[str], str] = input, print_fn: Callable[[str], None] = print):
        self.input_fn = input_fn
        self.print_fn = print_fn

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        view = decode(obs)
        return np.array([self._ask(view, i, np.flatnonzero(mask[i]).tolist()) for i in range(view.n)], dtype=np.int64)

    def _ask(self, view: View, i: int, legal: list[int]) -> int:
        if not legal:
            raise ValueError(f"row {i} of the batch has no legal action: ask only about games with a decision")
        self.print_fn(describe(view, i, legal))
        moves = "  ".join(f"{k + 1}) {act.describe(a)}" for k, a in enumerate(legal))
        self.print_fn(f"Moves {moves}")
        while True:
            choice = parse(self.input_fn("> "), legal)
            if choice is not None:
                return choice
            self.print_fn(f"Not a legal move: type a number 1..{len(legal)} or one of: "
                          + ", ".join(act.describe(a) for a in legal))
