"""A reference game together with what a player at it may see.

The reference :class:`~imperiale_env.reference.game.Game` is the oracle and knows everything (the web
table shows its state, the analysis reads the hands from it); a bot or an analysis from one
player's information must read only that player's observation.  :class:`ObservedGame` holds the game
and gives the acting player's observation (:func:`~imperiale_env.reference.observe.observe`,
checked equal to the batched engine's at every decision by the differential tests) with the
legal mask, in the batched shape the agents take.

An observed game starts from a seed (a new game) or from the deals and starting score of a replayed
record (:meth:`ObservedGame.from_game`).
"""

from __future__ import annotations

import numpy as np

from imperiale_env.core.rules import Rules
from imperiale_env.reference.game import Deal, Game
from imperiale_env.reference.observe import observe


class ObservedGame:
    """A reference game and the acting player's view of it."""

    def __init__(self, game: Game):
        self.game = game

    @classmethod
    def new(cls, rules: Rules, seed: int) -> ObservedGame:
        """A new seeded game."""
        return cls(Game(rules, seed=seed))

    @classmethod
    def from_game(cls, played: Game) -> ObservedGame:
        """A fresh game at the start of ``played``, dealing the deals ``played`` has dealt
        (a replayed record): the caller steps it through the record's actions."""
        deals = [state.deal for state in played.history]

        def feed(index: int, dealer: int) -> Deal | None:
            return deals[index] if index < len(deals) else None

        return cls(Game(played.rules, dealer=played.start_dealer, imperiales=played.start_imperiales,
                        points=played.start_points, deals=feed))

    def acting_view(self) -> tuple[np.ndarray, np.ndarray]:
        """The acting player's observation ``(1, OBS_SIZE)`` and legal mask ``(1, 43)``, the batch
        of one an agent's ``act`` takes."""
        decision = self.game.decision
        if decision is None:
            raise RuntimeError("the game waits for no decision: there is nothing to observe")
        return observe(self.game, decision.player)[None], self.game.legal_mask()[None]

    # ------------------------------------------------------------------ the seat-taking protocol
    # (imperiale_env.envs.seating.TurnTaking, which the batched engine's game of one answers too)

    @property
    def current_player(self) -> int | None:
        return self.game.current_player

    def legal_mask(self) -> np.ndarray:
        return self.game.legal_mask()

    def observe(self, seat: int) -> np.ndarray:
        """What ``seat`` sees now, ``(OBS_SIZE,)`` uint8."""
        return observe(self.game, seat)

    def step(self, action: int) -> None:
        self.game.step(action)
