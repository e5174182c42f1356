"""The reference engine and a one-game batched engine stepped together.

The reference :class:`~imperiale_env.game.Game` is the oracle and knows everything (the web
table shows its state, the analysis reads the hands from it); a bot or an analysis from one
player's information must read only that player's observation, which the batched engine
encodes.  :class:`Twin` keeps the two in lockstep and checks after every step that they agree
on who acts and on the legal actions, so a disagreement is an error, never a silent drift.

A twin starts from a seed (a new game) or from the deals and starting score of a replayed
record (:meth:`Twin.from_game`).
"""

from __future__ import annotations

import numpy as np

from .batch import BatchGame
from .game import HAND_SIZE, Deal, Game, priority_order
from .rules import Rules


class TwinError(RuntimeError):
    """The two engines disagree: a bug in one of them, never a user error."""


def card_order(deal: Deal, players: int) -> list[int]:
    """The deal as the batched engine's card order: hands in priority order, then (two players)
    the turned card and the talon; with three players the turned card is the dealer's last card."""
    order: list[int] = []
    for seat in priority_order(deal.dealer, players):
        hand = sorted(deal.hands[seat])
        if players == 3 and seat == deal.dealer:
            hand.remove(deal.turned)
            hand.append(deal.turned)
        assert len(hand) == HAND_SIZE
        order += hand
    if players == 2:
        order += [deal.turned, *deal.talon]
    return order


class Twin:
    """A reference game and its one-game batched copy; :meth:`step` moves both."""

    def __init__(self, game: Game, batch: BatchGame):
        self.game = game
        self.batch = batch
        self.check()

    @classmethod
    def new(cls, rules: Rules, seed: int) -> Twin:
        """A new seeded game (the same game in both engines)."""
        batch = BatchGame(rules, 1)
        batch.reset(np.array([seed], dtype=np.uint64))
        return cls(Game(rules, seed=seed), batch)

    @classmethod
    def from_game(cls, played: Game) -> Twin:
        """A fresh twin at the start of ``played``, dealing the deals ``played`` has dealt
        (a replayed record): the caller steps it through the record's actions."""
        deals = [state.deal for state in played.history]
        rules = played.rules

        def feed(index: int, dealer: int) -> Deal | None:
            return deals[index] if index < len(deals) else None

        game = Game(rules, dealer=played.start_dealer, imperiales=played.start_imperiales,
                    points=played.start_points, deals=feed)
        batch = BatchGame(rules, 1)
        orders = np.array([[card_order(d, rules.players) for d in deals]], dtype=np.int64) if deals else None
        batch.reset(0, dealer=played.start_dealer, imperiales=np.array([played.start_imperiales]),
                    points=np.array([played.start_points]), deals=orders)
        return cls(game, batch)

    def observe(self) -> tuple[np.ndarray, np.ndarray]:
        """The acting player's observation ``(1, OBS_SIZE)`` and legal mask ``(1, 43)``."""
        return self.batch.observe(), self.batch.legal_action_mask()

    def check(self) -> None:
        g, b = self.game, self.batch
        if g.decision is None:
            # A record's game may wait for a deal it does not hold while the batch deals on.
            if not b.done[0] and g.is_over:
                raise TwinError("the engines disagree: the reference game is over, the batched one is not")
            return
        if b.done[0] or int(b.current_player[0]) != g.decision.player:
            raise TwinError(f"the engines disagree on who acts: {g.decision.player} vs {int(b.current_player[0])}")
        if not np.array_equal(b.legal_action_mask()[0], g.legal_mask()):
            raise TwinError("the engines disagree on the legal actions")

    def step(self, action: int) -> None:
        self.game.step(action)
        self.batch.step(np.array([action], dtype=np.int64))
        self.check()
