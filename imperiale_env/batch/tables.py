"""What the rules fix for a whole batch: the stages of a deal and the card tables of the declarations.

A deal is a static list of stages built from the rules (the chronology of :mod:`~imperiale_env.reference.game`,
written as data).  A stage is either a decision (the in-hand questions of one player, the
turned-card impériale, one player's point, the play) or an automatic step (dealing, scoring, the
deal's end); the compiled stage machine (:mod:`imperiale_env.batch.stages_kernels`) reads them as
numbers, with the rule values and card tables of :attr:`Tables.arrays`.

The in-hand items a player may show are numbered slots (bit ``j`` of his item masks), declared
once in :mod:`imperiale_env.core.declarations` (``CB_ITEM``, ``QUART_ITEMS``, ...): carte blanche,
quarts major by suit, Imperijal sequences by suit, fours in ``rules.four_ranks`` order, which is the
canonical question order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from imperiale_env.batch.addresses import header, layout_of
from imperiale_env.batch.observe_kernels import SeenTables
from imperiale_env.batch.stages_kernels import TABLE_LAYOUT, TABLE_SCALARS, StageKind, TableArrays
from imperiale_env.batch.state import DEAL_FILLS
from imperiale_env.core.card_masks import CARD_POINT_VALUE, CARD_RANK, CARD_SUIT, RANK_MASK
from imperiale_env.core.cards import NUM_CARDS, NUM_SUITS, A, J, K, Q, card, deck, low_rank
from imperiale_env.core.declarations import (
    CB_ITEM,
    FOUR_ITEMS_START,
    NUM_ITEMS,
    QUART_ITEMS,
    SEQUENCE_ITEMS,
    honour_masks,
)
from imperiale_env.core.rules import Rules, rank_index, rule_record
from imperiale_env.core.tricks import trick_points_table

#: The court cards: a hand without any is a carte blanche.
KQJ = RANK_MASK[K] | RANK_MASK[Q] | RANK_MASK[J]


@dataclass(frozen=True)
class Stage:
    """One step of a deal: ``kind`` says what it does, ``pos`` is a priority position."""

    kind: StageKind
    pos: int = 0


def build_stages(rules: Rules) -> list[Stage]:
    """The chronology of a deal under ``rules`` (the same order as the reference engine)."""
    P, K = rules.players, StageKind
    points = [Stage(K.POINT, k) for k in range(P)] + [Stage(K.SCORE_POINT)]
    after = {
        "academie": [K.HONOURS, K.FALLEN, K.TRICKS],
        "foster": [K.FALLEN, K.HONOURS, K.TRICKS],
        "imperijal": [K.HONOURS, K.TRICKS, K.FALLEN],
    }[rules.chronology]
    s: list[Stage] = [Stage(K.DEAL_START)]
    if rules.chronology == "academie":
        s += [Stage(K.ASK_NOW, k) for k in range(P)]
        s += [Stage(K.CB_END), Stage(K.ASK_TURNED), Stage(K.SCORE_TURNED)]
        s += points
    elif rules.chronology == "foster":
        s += points + [Stage(K.ASK, 0)]
        if rules.declaration_timing == "dealer_after_first_lead":
            s += [Stage(K.FIRST_LEAD)]
        s += [Stage(K.ASK, 1), Stage(K.ASK_TURNED), Stage(K.SCORE_COMPARED), Stage(K.SCORE_TURNED)]
    else:
        s += [Stage(K.ASK, k) for k in range(P)] + [Stage(K.ASK_TURNED)]
        s += [Stage(K.SCORE_CB), Stage(K.SCORE_BY_NUMBER)] + points
        s += [Stage(K.HONOURS_IN_HAND), Stage(K.CB_END)]
    s += [Stage(K.PLAY)] + [Stage(x) for x in after] + [Stage(K.DEAL_END)]
    idle = {
        K.FALLEN: rules.fallen_imperiale == "off",
        K.ASK_TURNED: not rules.turned_imperiale,
        K.SCORE_TURNED: not rules.turned_imperiale,
        K.CB_END: not rules.carte_blanche_ends_deal,
        K.HONOURS_IN_HAND: not rules.honours_in_hand_points,
    }
    return [st for st in s if not idle.get(st.kind, False)]


class Tables:
    """The stages and card tables of one rules configuration (built once per batch)."""

    def __init__(self, rules: Rules, *, single_deal: bool = False, keep_history: bool = False):
        P = rules.players
        low = low_rank(P)
        self.rules = rules
        self.stages = build_stages(rules)
        self.stage_kind = np.array([st.kind for st in self.stages], dtype=np.int64)
        self.stage_pos = np.array([st.pos for st in self.stages], dtype=np.int64)
        self.is_turned_stage = np.array([st.kind == StageKind.ASK_TURNED for st in self.stages])
        self.pack = np.array(deck(P), dtype=np.int64)
        self.honour_mask = np.array(honour_masks(rules), dtype=np.uint64)
        item_mask = np.zeros(NUM_ITEMS, dtype=np.uint64)
        enabled = np.zeros(NUM_ITEMS, dtype=bool)
        enabled[CB_ITEM] = True
        for s in range(NUM_SUITS):
            item_mask[QUART_ITEMS[s]] = sum(1 << card(s, x) for x in (A, K, Q, J))
            enabled[QUART_ITEMS[s]] = True
            item_mask[SEQUENCE_ITEMS[s]] = sum(1 << card(s, x) for x in (Q, J, A, low))
            enabled[SEQUENCE_ITEMS[s]] = rules.extra_sequence
        four_ranks = [rank_index(x, P) for x in rules.four_ranks]
        for j, rank in enumerate(four_ranks):
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
            if rk in four_ranks and rules.turned_imperiale_fours:
                need[c, 2] = int(RANK_MASK[rk]) & ~(1 << c)
        self.turned_need = need
        self.trick_points = trick_points_table(rules)
        # The fallen impériale, by trump suit: the cards the player must have been dealt, and
        # those he must capture (all four of the quart, or two, from the K and Q held).
        held, want = {"tricks": ((), (A, K, Q, J)), "tombee": ((K, Q), (J, A)),
                      "capture": ((K, Q), (A, low)), "off": ((), ())}[rules.fallen_imperiale]
        self.fallen_held = np.array([sum(1 << card(s, x) for x in held) for s in range(NUM_SUITS)], dtype=np.uint64)
        self.fallen_want = np.array([sum(1 << card(s, x) for x in want) for s in range(NUM_SUITS)], dtype=np.uint64)
        self.arrays = TableArrays(
            rules=rule_record(rules), single_deal=single_deal, keep_history=keep_history,
            event_bound=event_bound(rules), court_cards=KQJ, stage_kind=self.stage_kind, stage_pos=self.stage_pos,
            pack=self.pack, honour_mask=self.honour_mask, item_mask=self.item_mask, item_weights=self.item_weights,
            turned_need=self.turned_need, trick_points=self.trick_points, fallen_held=self.fallen_held,
            fallen_want=self.fallen_want, point_values=CARD_POINT_VALUE, deal_fills=DEAL_FILLS,
        )
        #: What the observation encoder reads of these tables.
        self.seen = SeenTables(self.arrays.rules, self.is_turned_stage, self.item_mask)
        #: Both as plain tuples, the form the compiled entry points take (:meth:`BatchState.packed`).
        self.packed, self.seen_packed = tuple(self.arrays), tuple(self.seen)
        by_address = self.packed[TABLE_SCALARS:]
        if layout_of(by_address) != TABLE_LAYOUT:
            raise TypeError(f"Tables: the arrays passed by address are {layout_of(by_address)}, but the compiled "
                            f"step is written for stages_kernels.TABLE_LAYOUT {TABLE_LAYOUT}: change both")

    @property
    def by_address(self) -> tuple:
        """The form the one-thread compiled step takes: the leading fields, then the others by address
        (:func:`~imperiale_env.batch.addresses.header`); built once and kept."""
        if "_by_address" not in self.__dict__:
            self.__dict__["_by_address"] = (*self.packed[:TABLE_SCALARS], header(self.packed[TABLE_SCALARS:]))
        return self.__dict__["_by_address"]

    def __getstate__(self) -> dict:
        # A copy or a pickle builds its own header: this one holds the addresses of these arrays.
        return {k: v for k, v in self.__dict__.items() if k != "_by_address"}


def event_bound(rules: Rules) -> int:
    """The most score events one game can log in one call of the stage machine: the end of a
    deal and the start of the next (the turned honour), or a game's start.

    At most 64 scorings (42 items shown in hand, the turned-card impériale twice, the point,
    honours, the fallen impériale, tricks and capot of each player, two turned honours), each
    an event, an impériale, two wipes and the game's end; and each impériale that 24 points
    make is an impériale, two wipes and the game's end, at most ``target - 1`` a player before
    one reaches the target."""
    return 64 * 5 + 4 * (rules.players * rules.target_imperiales + 1)
