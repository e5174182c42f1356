"""The one loop that seats the players: the bots play until a waiting seat must decide.

Three front ends let bots play around somebody: the Gymnasium env around its agent, the terminal
game and the web table around a person.  They play on different engines (the env on the batched
engine's game of one, the other two on the reference engine), so the loop is written against what
both engines answer alike, :class:`TurnTaking` (the methods PGX's ``Env`` and OpenSpiel's ``State``
share in their own words), and each bot's answer is checked here, once, the same way everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Container
from typing import Any, Protocol

import numpy as np

from imperiale_env.core import actions as act
from imperiale_env.envs.env_checks import check_action


class TurnTaking(Protocol):
    """A game as a seat-taking loop sees it: whose turn, what that seat sees and may do, a move."""

    @property
    def current_player(self) -> int | None:
        """The seat to act; ``None`` once the game is over."""

    def legal_mask(self) -> np.ndarray:
        """The legal actions of the seat to act, ``(43,)`` bool."""

    def observe(self, seat: int) -> np.ndarray:
        """What ``seat`` sees now, the observation bytes ``(OBS_SIZE,)`` uint8."""

    def step(self, action: int) -> None:
        """Play the legal action id ``action`` for the seat to act."""


class IllegalBotMove(ValueError):
    """A bot chose an action id that is illegal now: a bug of the bot, never the waiting player's
    doing; the message names the bot, its seat, the action and the legal actions."""


Choose = Callable[[int, np.ndarray, np.ndarray], Any]


def agent_choice(agent_act: Callable[..., Any], *extra: Any, bot: str = "the bot") -> Choose:
    """A batched agent's ``agent_act(obs (B, OBS_SIZE), mask (B, 43), *extra)`` as the ``choose`` of
    :func:`play_until`: called on a batch of one, its answer must have shape ``(1,)`` (else
    ``ValueError`` naming ``bot``)."""

    def choose(seat: int, obs: np.ndarray, mask: np.ndarray) -> Any:
        actions = np.asarray(agent_act(obs[None], mask[None], *extra))
        if actions.shape != (1,):
            raise ValueError(f"{bot}'s act() must return one action per row, shape (1,), got shape {actions.shape}")
        return actions[0]

    return choose


def play_until(game: TurnTaking, waiting: Container[int], choose: Choose,
               move: Callable[[int], None] | None = None, bot: str = "the bot") -> None:
    """Let the bots play until a seat in ``waiting`` must decide or the game is over.

    ``choose(seat, obs, mask)`` is the answer of the bot at ``seat``: an action id, as a Python or
    numpy integer.  It is checked before the game moves, as an agent's action is
    (:func:`~imperiale_env.envs.env_checks.check_action`: ``TypeError`` for what is not an integer,
    ``ValueError`` for an id outside 0..42), and :class:`IllegalBotMove` if it is illegal now; each
    message names ``bot`` and the seat.  ``move(action)`` plays it (default ``game.step``): a front
    end that tells each move passes its own, which must step the game.
    """
    move = game.step if move is None else move
    while (seat := game.current_player) is not None and seat not in waiting:
        mask = game.legal_mask()
        who = f"{bot} (seat {seat})"
        action = check_action(choose(seat, game.observe(seat), mask), game.legal_mask, who)
        if not mask[action]:
            legal = ", ".join(f"{a} {act.describe(a)}" for a in np.flatnonzero(mask))
            raise IllegalBotMove(f"{who} chose the illegal action {action} {act.describe(action)}; legal: {legal}")
        move(action)
