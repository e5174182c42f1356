"""The stage machine of the batched engine: games flow through the stages of :mod:`.tables`.

:func:`run` moves games forward through automatic stages until each waits on a decision or
ends; the loop is over *stages*, never over games, so games in different phases step
together.  The deal's own stages (dealing, carte blanche ending the deal, the next deal)
live here; the scoring stages in :mod:`.scoring`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import events as ev
from ..bitcards import BIT, CARD_SUIT, mask_of
from ..shuffle import shuffled
from ..tricks import TRICKS_PER_DEAL
from . import scoring
from .state import NONE
from .tables import CB_ITEM, KQJ, Stage

if TYPE_CHECKING:
    from .engine import BatchGame


def run(g: BatchGame, idx: np.ndarray) -> None:
    """Move the games ``idx`` through the stages until each waits on a decision or ends.

    One sweep visits the stages in order, so a game flows through every automatic stage
    it reaches in the same sweep; only a new deal (back to stage 0) needs another."""
    g.kind[idx] = NONE
    idx = still_running(g, idx)
    stages, decision_kind = g.tables.stages, g.tables.decision_kind
    while len(idx):
        for s in range(int(g.stage[idx].min()), len(stages)):
            st = stages[s]
            sel = idx[g.stage[idx] == s]
            if not len(sel):
                continue
            if decision_kind[s] != NONE:
                g.stage[decision_stage(g, st, s, sel)] += 1
            else:
                HANDLERS[st.kind](g, sel, st)
            idx = still_running(g, idx)
            if not len(idx):
                break


def still_running(g: BatchGame, idx: np.ndarray) -> np.ndarray:
    """Drop the games that wait on a decision; note those that just ended."""
    over = g.over[idx]
    if over.any():
        g._ended.append(idx[over])
    return idx[(g.kind[idx] == NONE) & ~over]


def decision_stage(g: BatchGame, st: Stage, s: int, idx: np.ndarray) -> np.ndarray:
    """Set the decision of games at decision stage ``s``; return those with none to take."""
    P = g.players
    if st.kind in ("ask_now", "ask"):
        p = (g.dealer[idx] + 1 + st.pos) % P
        has = g.pending[idx, p] != 0
    elif st.kind == "ask_turned":
        p = g.dealer[idx]
        has = g.turned_eligible[idx] & ~g.turned_asked[idx]
    elif st.kind == "point":
        p = (g.dealer[idx] + 1 + st.pos) % P
        has = ~g.point_answered[idx, p]
    elif st.kind == "first_lead":
        p = g.leader[idx]
        has = (g.tricks_played[idx] == 0) & (g.trick_len[idx] == 0)
    else:  # play
        p = np.where(g.trick_len[idx] == 0, g.leader[idx], (g.leader[idx] + g.trick_len[idx]) % P)
        has = g.tricks_played[idx] < TRICKS_PER_DEAL
    wait = idx[has]
    g.current_player[wait] = p[has]
    g.kind[wait] = g.tables.decision_kind[s]
    return idx[~has]


def stage_deal_start(g: BatchGame, idx: np.ndarray, st: Stage) -> None:
    """Deal the cards (seeded, or the given card orders), note what each hand may show, and
    score a turned honour (step 1)."""
    P, t = g.players, g.tables
    order = shuffled(g.seed[idx], g.deal_index[idx], t.pack)
    if g.explicit_deals is not None:
        given = g.deal_index[idx] < g.explicit_deals.shape[1]
        if given.any():
            gi = np.flatnonzero(given)
            order[gi] = g.explicit_deals[idx[gi], g.deal_index[idx[gi]]]
    g.state.reset_deal(idx)
    g.order[idx] = order
    dealer = g.dealer[idx]
    seats = (dealer[:, None] + 1 + g.seats) % P
    dealt = np.empty((len(idx), P), dtype=np.uint64)
    np.put_along_axis(dealt, seats, mask_of(order[:, : 12 * P].reshape(len(idx), P, 12)), axis=1)
    g.dealt[idx] = dealt
    g.hands[idx] = dealt
    g.turned[idx] = order[:, 24] if P == 2 else order[:, 35]
    g.trump[idx] = CARD_SUIT[g.turned[idx]]
    g.leader[idx] = (dealer + 1) % P
    # What each hand may show, in canonical order.
    has = (dealt[:, :, None] & t.item_mask) == t.item_mask
    has[:, :, CB_ITEM] = (dealt & KQJ) == 0
    items = has.astype(np.int64) @ t.item_weights
    g.items[idx] = items
    g.pending[idx] = items
    if g.rules.turned_imperiale:
        need = t.turned_need[g.turned[idx]]
        dh = dealt[np.arange(len(idx)), dealer][:, None]
        g.turned_eligible[idx] = ((need != 0) & ((dh & need) == need)).any(axis=1)
    # Step 1: a turned honour.
    hit = (t.honour_mask[g.trump[idx]] & BIT[g.turned[idx]]) != 0
    if g.rules.turned_honour_points and hit.any():
        gi = idx[hit]
        g.turned_honour_scored[gi] = True
        scoring.award(g, gi, g.dealer[gi], g.rules.turned_honour_points, ev.TURNED_HONOUR)
    g.stage[idx] += 1


def stage_cb_end(g: BatchGame, idx: np.ndarray, st: Stage) -> None:
    """A shown carte blanche ends the deal (Académie, Imperijal)."""
    shown_cb = ((g.shown[idx] >> CB_ITEM) & 1).any(axis=1)
    ends = shown_cb & g.rules.carte_blanche_ends_deal
    g.stage[idx] += 1
    g.stage[idx[ends]] = len(g.tables.stages) - 1


def stage_deal_end(g: BatchGame, idx: np.ndarray, st: Stage) -> None:
    if g.single_deal:
        g.over[idx] = True
        return
    g._archive_deals(idx)
    g.dealer[idx] = (g.dealer[idx] + 1) % g.players
    g.deal_index[idx] += 1
    g.stage[idx] = 0


HANDLERS = {
    "deal_start": stage_deal_start,
    "cb_end": stage_cb_end,
    "deal_end": stage_deal_end,
    **scoring.HANDLERS,
}
