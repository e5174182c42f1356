"""What the rules fix for a whole batch: the stages of a deal and the card tables of the declarations.

A deal is a static list of stages built from the rules (the chronology of :mod:`~imperiale_env.game`,
written as data).  A stage is either a decision (the in-hand questions of one player, the
turned-card impériale, one player's point, the play) or an automatic step run by a handler.

The in-hand items a player may show are numbered slots (bit ``j`` of his item masks):
carte blanche, quarts major by suit, Imperijal sequences by suit, fours in
``rules.four_ranks`` order, which is the canonical question order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..bitcards import CARD_RANK, CARD_SUIT, RANK_MASK
from ..cards import NUM_CARDS, NUM_SUITS, A, J, K, Q, card, deck, low_rank
from ..rules import Rules, rank_index
from ..tricks import trick_points_table
from .state import NONE, PLAY, POINT, QUESTION

CB_ITEM = 0
QUART_ITEMS = range(1, 5)
SEQUENCE_ITEMS = range(5, 9)
FOUR_ITEMS_START = 9
NUM_ITEMS = 14
KQJ = RANK_MASK[K] | RANK_MASK[Q] | RANK_MASK[J]
#: The kind of each item slot (a sequence scores as a quart major).
ITEM_KIND = ("carte_blanche",) + ("quart_major",) * 4 + ("sequence",) * 4 + ("four_of_a_kind",) * 5


@dataclass(frozen=True)
class Stage:
    """One step of a deal: ``kind`` names the handler, ``pos`` a priority position."""

    kind: str
    pos: int = 0


DECISION_STAGES = {"ask_now": QUESTION, "ask": QUESTION, "ask_turned": QUESTION, "point": POINT,
                   "play": PLAY, "first_lead": PLAY}


def build_stages(rules: Rules) -> list[Stage]:
    """The chronology of a deal under ``rules`` (the same order as the reference engine)."""
    P = rules.players
    points = [Stage("point", k) for k in range(P)] + [Stage("score_point")]
    after = {
        "academie": ["honours", "fallen", "tricks"],
        "foster": ["fallen", "honours", "tricks"],
        "imperijal": ["honours", "tricks", "fallen"],
    }[rules.chronology]
    s: list[Stage] = [Stage("deal_start")]
    if rules.chronology == "academie":
        s += [Stage("ask_now", k) for k in range(P)]
        s += [Stage("cb_end"), Stage("ask_turned"), Stage("score_turned")]
        s += points
    elif rules.chronology == "foster":
        s += points + [Stage("ask", 0)]
        if rules.declaration_timing == "dealer_after_first_lead":
            s += [Stage("first_lead")]
        s += [Stage("ask", 1), Stage("ask_turned"), Stage("score_compared"), Stage("score_turned")]
    else:
        s += [Stage("ask", k) for k in range(P)] + [Stage("ask_turned")]
        s += [Stage("score_cb"), Stage("score_by_number")] + points
        s += [Stage("honours_in_hand"), Stage("cb_end")]
    s += [Stage("play")] + [Stage(x) for x in after] + [Stage("deal_end")]
    idle = {
        "fallen": rules.fallen_imperiale == "off",
        "ask_turned": not rules.turned_imperiale,
        "score_turned": not rules.turned_imperiale,
        "cb_end": not rules.carte_blanche_ends_deal,
        "honours_in_hand": not rules.honours_in_hand_points,
    }
    return [st for st in s if not idle.get(st.kind, False)]


class Tables:
    """The stages and card tables of one rules configuration (built once per batch)."""

    def __init__(self, rules: Rules):
        P = rules.players
        low = low_rank(P)
        self.stages = build_stages(rules)
        self.decision_kind = np.array([DECISION_STAGES.get(st.kind, NONE) for st in self.stages], dtype=np.int64)
        self.is_turned_stage = np.array([st.kind == "ask_turned" for st in self.stages])
        self.is_now_stage = np.array([st.kind == "ask_now" for st in self.stages])
        self.is_play_stage = np.array([st.kind == "play" for st in self.stages])
        self.pack = np.array(deck(P), dtype=np.int64)
        self.honour_mask = np.array(
            [sum(1 << card(s, rank_index(x, P)) for x in rules.honour_ranks) for s in range(NUM_SUITS)],
            dtype=np.uint64,
        )
        item_mask = np.zeros(NUM_ITEMS, dtype=np.uint64)
        enabled = np.zeros(NUM_ITEMS, dtype=bool)
        enabled[CB_ITEM] = True
        for s in range(NUM_SUITS):
            item_mask[QUART_ITEMS[s]] = sum(1 << card(s, x) for x in (A, K, Q, J))
            enabled[QUART_ITEMS[s]] = True
            item_mask[SEQUENCE_ITEMS[s]] = sum(1 << card(s, x) for x in (Q, J, A, low))
            enabled[SEQUENCE_ITEMS[s]] = rules.extra_sequence
        self.four_ranks = [rank_index(x, P) for x in rules.four_ranks]
        for j, rank in enumerate(self.four_ranks):
            item_mask[FOUR_ITEMS_START + j] = RANK_MASK[rank]
            enabled[FOUR_ITEMS_START + j] = True
        self.item_mask = item_mask
        self.item_weights = np.where(enabled, 1 << np.arange(NUM_ITEMS), 0).astype(np.int64)
        # Turned-card impériale: for each possible turned card, the other three cards of each
        # impériale it would complete (a zero mask marks no such impériale).
        need = np.zeros((NUM_CARDS, 3), dtype=np.uint64)
        for c in range(NUM_CARDS):
            s, rk = int(CARD_SUIT[c]), int(CARD_RANK[c])
            groups = [(A, K, Q, J)] + ([(Q, J, A, low)] if rules.extra_sequence else [])
            for g, ranks in enumerate(groups):
                if rk in ranks:
                    need[c, g] = sum(1 << card(s, x) for x in ranks if x != rk)
            if rk in self.four_ranks and rules.turned_imperiale_fours:
                need[c, 2] = int(RANK_MASK[rk]) & ~(1 << c)
        self.turned_need = need
        self.trick_points = trick_points_table(rules)

    def turned_cards(self, hands: np.ndarray, turned: np.ndarray) -> np.ndarray:
        """The three cards of each dealer's hand the turned card completes (the first of the
        quart, the sequence and the four it completes, as the reference engine shows it)."""
        need = self.turned_need[turned]  # (n, 3)
        complete = (need != 0) & ((hands[:, None] & need) == need)
        first = complete.argmax(axis=1)
        return np.where(complete.any(axis=1), need[np.arange(len(turned)), first], np.uint64(0))
