"""A rule-based player written from the game's strategy, vectorised over the batch.

Every decision is a score per legal action, computed for all games at once with numpy from
the decoded observation (:mod:`imperiale_agents.observation_view`); the agent plays the legal action of highest score.

* **Questions** (carte blanche, impériales in hand, turned-card impériale): always show.
* **Point**: the longest suit held, then the highest value; never sinks.
* **Following**: win as cheaply as possible (the lowest winning card of the led suit, else the
  lowest winning trump; trumping with the low trump honour first, which secures it); when the
  trick cannot be won, give away the least: never an honour when another card is legal, then
  no trump, no master, the lowest card of the shortest suit.
* **Leading**: cash master cards of plain suits the opponents still follow (or cannot trump);
  draw trumps with the master trump when at least as long in trumps as all unseen trumps
  together (drawing trumps under the must-beat rule also catches the opponents' honours);
  cash masters of trumps once the other trumps are gone; otherwise lead the lowest card of the
  longest plain suit (which forces the opponent to spend a higher card under must-beat), never
  an honour or the low trump that is not a master.
* **Trick counting**: with two players every trick moves the deal's trick difference by one
  (``4 * (t - 6)`` for one, ``4 * (6 - t)`` against), so winners are never wasted; with three
  players a player who can no longer reach the quota + 1 stops spending winners on tricks that
  hold no honour.

The heuristic has no randomness: the same observation always gives the same action.
"""

from __future__ import annotations

import numpy as np

from imperiale_agents.observation_view import (
    CARD_RANK,
    CARD_SUIT,
    POINT_VALUE,
    STRENGTH,
    SUIT_ONEHOT,
    View,
    beats,
    deck_mask,
    decode,
    honour_mask,
    trick_winner,
)
from imperiale_env.core import actions as act
from imperiale_env.core.cards import NUM_CARDS, low_rank
from imperiale_env.core.rules import Rules, resolve_rules
from imperiale_env.core.tricks import TRICKS_PER_DEAL


class HeuristicAgent:
    name = "heuristic"

    def __init__(self, rules: Rules | str | dict | None = None):
        self.rules = resolve_rules(rules)

    def reset(self) -> None:
        pass

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        mask = np.asarray(mask, dtype=bool)
        view = decode(obs)
        score = np.zeros(mask.shape, dtype=np.float64)
        # Questions: show.
        score[:, act.SHOW] = 1.0
        score[:, act.HIDE] = 0.0
        # Point: longest suit, then value (a sink only if nothing else is legal).
        counts = (view.hand[:, None, :] & SUIT_ONEHOT[None]).sum(axis=2)
        values = (view.hand[:, None, :] & SUIT_ONEHOT[None]) @ POINT_VALUE
        score[:, act.POINT_BASE : act.POINT_BASE + 4] = counts * 1000 + values
        score[:, act.SINK] = -1.0
        plays = view.phase == 2
        if plays.any():
            rows = np.flatnonzero(plays)
            score[rows, :NUM_CARDS] = play_scores(self.rules, _take(view, rows), mask[rows, :NUM_CARDS])
        return masked_argmax(score, mask)

    def play_scores(self, view: View, legal: np.ndarray) -> np.ndarray:
        return play_scores(self.rules, view, legal)


def masked_argmax(score: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return np.argmax(np.where(mask, score, -np.inf), axis=1).astype(np.int64)


def _take(view: View, rows: np.ndarray) -> View:
    return View(**{k: v[rows] for k, v in vars(view).items()})


def play_scores(rules: Rules, v: View, legal: np.ndarray) -> np.ndarray:
    """Scores of every card (B, 36) for games in the play phase; higher is better."""
    b = v.n
    legal = legal & v.hand
    is_trump = CARD_SUIT[None, :] == v.trump[:, None]
    honours = honour_mask(rules, v.trump)
    seen = v.hand | v.played.any(axis=1) | v.turned
    unseen = deck_mask(v.players) & ~seen
    # Strength of the best unseen card of each suit: a card above it is a master.
    best_unseen = np.where(unseen[:, None, :] & SUIT_ONEHOT[None], STRENGTH[None, None, :], -1).max(axis=2)
    master = STRENGTH[None, :] > best_unseen[np.arange(b)[:, None], CARD_SUIT[None, :]]
    suit_len = (v.hand[:, None, :] & SUIT_ONEHOT[None]).sum(axis=2)  # (B, 4)
    my_suit_len = suit_len[np.arange(b)[:, None], CARD_SUIT[None, :]]
    unseen_trumps = (unseen & is_trump).sum(axis=1)
    my_trumps = (v.hand & is_trump).sum(axis=1)
    strength = STRENGTH[None, :].astype(np.float64)

    # ---------------------------------------------------------------- following
    win_card, _ = trick_winner(v)
    following = win_card >= 0
    wc = np.maximum(win_card, 0)
    winners = legal & beats(np.arange(NUM_CARDS)[None, :], wc[:, None], v.trump[:, None])
    can_win = winners.any(axis=1)
    table = v.trick.any(axis=1)
    honour_on_table = (table & honours).any(axis=1)
    if rules.players == 3:
        need = rules.trick_quota + 1 - v.tricks[:, 0]
        hopeless = need > TRICKS_PER_DEAL - v.tricks_played
        # A later opponent may still overtake: then only cards above every unseen card are sure.
        can_win &= ~(hopeless & ~honour_on_table)
    low_trump = is_trump & (CARD_RANK[None, :] == low_rank(rules.players)) & honours
    win_cost = strength + 20.0 * is_trump - 25.0 * low_trump
    lose_cost = 100.0 * honours + 30.0 * is_trump + 15.0 * master + strength + 0.5 * my_suit_len
    follow_score = np.where(can_win[:, None], np.where(winners, 1000.0 - win_cost, -lose_cost), -lose_cost)

    # ---------------------------------------------------------------- leading
    # Opponents who may trump a plain suit: known void in it while trumps are unseen.
    opp_void = v.voids[:, 1:, :].any(axis=1)  # (B, 4)
    ruff_risk = opp_void & (unseen_trumps[:, None] > 0)
    risky = ruff_risk[np.arange(b)[:, None], CARD_SUIT[None, :]] & ~is_trump
    lead = np.zeros((b, NUM_CARDS))
    cash_plain = master & ~is_trump & ~risky
    lead = np.where(cash_plain, 600.0 + strength, lead)
    long_in_trumps = (my_trumps >= unseen_trumps) & (unseen_trumps > 0)
    draw = master & is_trump & long_in_trumps[:, None]
    lead = np.where(draw, 700.0 + strength, lead)
    cash_trump = master & is_trump & (unseen_trumps == 0)[:, None]
    lead = np.where(cash_trump, 650.0 + strength, lead)
    low_plain = ~master & ~is_trump
    lead = np.where(low_plain, 300.0 - strength + 3.0 * my_suit_len - 50.0 * risky, lead)
    other_trump = is_trump & ~master
    lead = np.where(other_trump, 100.0 - strength - 200.0 * honours, lead)
    return np.where(following[:, None], follow_score, lead)
