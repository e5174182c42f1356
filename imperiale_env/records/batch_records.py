"""Records to and from the batched engine, through the reference engine.

:func:`record_from_batch` writes the record of any game a :class:`BatchGame` with
``keep_history=True`` has played (finished, or in progress in its slot); the reference
engine replays its decisions on the same deals, so every record written is checked on the
way.  :func:`batch_from_records` loads records into a batch (one record a slot, the
record's deals instead of seeded ones) and plays their actions in the batched engine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from imperiale_env.batch import BatchGame
from imperiale_env.records.game_records import RecordError, game_from_record, record_from_game
from imperiale_env.reference.game import Game, deal_from_order, order_of_deal


def _live_deal(batch: BatchGame, slot: int) -> dict[str, np.ndarray]:
    return {
        "dealer": batch.dealer[slot], "order": batch.order[slot], "deal_index": batch.deal_index[slot],
        "actions": batch.history_actions[slot], "players": batch.history_players[slot],
        "length": batch.history_len[slot],
    }


def record_from_batch(batch: BatchGame, game_id: int) -> dict[str, Any]:
    """The record of game ``game_id`` (see ``BatchGame.game_id``), checked by the reference engine."""
    if not batch.keep_history:
        raise ValueError("record_from_batch needs a BatchGame made with keep_history=True")
    start = next((g for g in batch.game_log if game_id in g["game_id"]), None)
    if start is None:
        raise ValueError(f"no game {game_id} in this batch's history")
    at = int(np.flatnonzero(start["game_id"] == game_id)[0])
    deals = [
        {k: v[i] for k, v in log.items()}
        for log in batch.deal_log
        for i in np.flatnonzero(log["game_id"] == game_id)
    ]
    slots = np.flatnonzero(batch.game_id == game_id)
    if len(slots) and not any(d["deal_index"] == batch.deal_index[slots[0]] for d in deals):
        deals.append(_live_deal(batch, int(slots[0])))
    deals.sort(key=lambda d: int(d["deal_index"]))
    P = batch.players
    cards = [deal_from_order(d["order"], int(d["dealer"]), P) for d in deals]
    game = Game(
        batch.rules, seed=int(start["seed"][at]), dealer=int(start["dealer"][at]),
        imperiales=[int(x) for x in start["imperiales"][at]], points=[int(x) for x in start["points"][at]],
        deals=lambda i, dealer: cards[i] if i < len(cards) else None, single_deal=batch.single_deal,
    )
    for d in deals:
        for a, p in zip(d["actions"][: int(d["length"])], d["players"][: int(d["length"])], strict=True):
            if game.current_player != p:
                raise RecordError(f"game {game_id}: the reference engine expects player {game.current_player}, "
                                  f"the batch logged player {p}")
            game.step(int(a))
    return record_from_game(game)


def batch_from_records(records: list[dict[str, Any]], *, record_events: bool = False) -> BatchGame:
    """A batch holding one record a slot, its actions played in the batched engine.

    Each record is checked by the reference engine first (so a bad record gets the clear
    :class:`~imperiale_env.records.game_records.RecordError`); all records must share one rules set.
    """
    games = [game_from_record(r) for r in records]
    if not games:
        raise RecordError("no records to load")
    rules = games[0].rules
    if any(g.rules != rules for g in games):
        raise RecordError("records in one batch must share the same rules")
    P = rules.players
    depth = max(len(g.history) for g in games)
    orders = np.zeros((len(games), depth, 36 if P == 3 else 32), dtype=np.int64)
    for i, g in enumerate(games):
        for d, state in enumerate(g.history):
            orders[i, d] = order_of_deal(state.deal, P)
    batch = BatchGame(rules, len(games), record_events=record_events, keep_history=True)
    batch.reset(
        np.zeros(len(games), dtype=np.uint64),
        dealer=np.array([g.start_dealer for g in games]),
        imperiales=np.array([g.start_imperiales for g in games]),
        points=np.array([g.start_points for g in games]),
        deals=orders,
    )
    actions = [[a for state in g.history for _, a in state.actions] for g in games]
    for t in range(max(len(a) for a in actions)):
        step = np.array([a[t] if t < len(a) else 0 for a in actions])
        live = np.array([t < len(a) for a in actions])
        if np.any(batch.done & live):
            raise RecordError("the batched engine ended a game before its record did")
        batch.step(step)
    return batch
