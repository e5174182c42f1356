"""The games in progress: at most :data:`MAX_GAMES` at once, each dropped after
:data:`IDLE_SECONDS` without a move.

A server that dropped the oldest game whenever a new one started would let any page end another
player's game; instead a full server refuses the new game (503) and says when a place frees up.
"""

from __future__ import annotations

import os
import threading
import time

from imperiale_web.table import Table, TableError

MAX_GAMES = 64
IDLE_SECONDS = 30 * 60


class Games:
    """The live tables by id, with the time each was last used."""

    def __init__(self, max_games: int = MAX_GAMES, idle_seconds: float = IDLE_SECONDS):
        self.max_games, self.idle_seconds = max_games, idle_seconds
        self._tables: dict[str, tuple[Table, float]] = {}
        self._expired: dict[str, None] = {}  # ids dropped for idleness (the latest few thousand), for a clear 410
        self.lock = threading.Lock()

    def add(self, table: Table) -> str:
        with self.lock:
            self._expire()
            if len(self._tables) >= self.max_games:
                raise TableError(f"the table is full: {self.max_games} games are in progress (each is dropped after "
                                 f"{self.idle_seconds // 60:.0f} minutes without a move); try again later", 503)
            game_id = os.urandom(8).hex()
            self._tables[game_id] = (table, time.monotonic())
            return game_id

    def get(self, game_id: str) -> Table:
        with self.lock:
            self._expire()
            if game_id in self._expired:
                raise TableError(f"game {game_id!r} was dropped after {self.idle_seconds // 60:.0f} minutes without a "
                                 "move; start a new one", 410)
            entry = self._tables.get(game_id)
            if entry is None:
                raise TableError(f"no game {game_id!r} (games are kept while the server runs; start a new one)", 404)
            self._tables[game_id] = (entry[0], time.monotonic())
            return entry[0]

    def _expire(self) -> None:
        now = time.monotonic()
        for game_id in [g for g, (_, used) in self._tables.items() if now - used > self.idle_seconds]:
            del self._tables[game_id]
            self._expired[game_id] = None
            while len(self._expired) > 4096:
                del self._expired[next(iter(self._expired))]
