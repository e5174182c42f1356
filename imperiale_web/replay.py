"""A record as frames for the page: the whole table (every hand) before each action and at the end."""

from __future__ import annotations

from typing import Any

from imperiale_env.core.actions import action_to_record
from imperiale_env.records.game_records import game_from_record, replay_record
from imperiale_env.reference.game import Deal, Game
from imperiale_web.table import table_state


def replay_frames(record: dict[str, Any]) -> dict[str, Any]:
    """Check ``record`` (RecordError names what is wrong) and return its frames and summary."""
    played = game_from_record(record)
    summary = replay_record(record)
    deals: list[Deal] = [s.deal for s in played.history]
    game = Game(played.rules, dealer=played.start_dealer, imperiales=played.start_imperiales,
                points=played.start_points, deals=lambda i, _d: deals[i] if i < len(deals) else None)
    names = record.get("names") or [f"Player {p}" for p in range(played.players)]  # checked by game_from_record
    frames = []
    for d, state in enumerate(played.history):
        for i, (player, action) in enumerate(state.actions):
            frame = table_state(game, names, viewer=None)
            frame["next"] = {"deal": d, "index": i, "player": player, **action_to_record(action)}
            frames.append(frame)
            game.step(action)
    end = table_state(game, names, viewer=None)
    end["next"] = None
    frames.append(end)
    return {"frames": frames, "summary": summary}
