"""The batched numpy engine: N independent games of L'Impériale stepped together.

Hands, captured cards and revealed cards are uint64 bitmasks (bit ``c`` is card ``c``);
every game carries a *stage* index into a static list of stages built from the rules
(:mod:`.tables`).  :meth:`BatchGame.step` applies one action per game and runs every game
that must forward through the automatic stages until it waits on a decision again, in one
compiled call (:mod:`.stages`, :mod:`imperiale_env.batch.stages_kernels`).  The state is one
dataclass of arrays (:mod:`.state`); the legal actions and the observation are in :mod:`.card_play`
and :mod:`.observe`.  This module is the public face: reset, the legal actions, step, the event
log, rewards and checkpoints.

The engine agrees exactly with the reference :class:`~imperiale_env.reference.game.Game` (the
differential tests check masks, trick winners, score events and scores on every deal),
and deals with the same seeded function, so game ``i`` of a batch is the lone game with
the same seed whatever the batch size.

Rewards are given when a game ends: +1 to the winner and ``-1/(P-1)`` to each other
player (zero-sum).  With ``single_deal=True`` a deal that ends without a winner gives
each player the change of his score in impériales (points count 1/24) minus the mean
change of the others, which is zero-sum too.
"""

from __future__ import annotations

import json
import reprlib
from dataclasses import fields
from typing import Any

import numpy as np

from imperiale_env.batch.card_play import action_bits, legal_mask
from imperiale_env.batch.observe import observe
from imperiale_env.batch.stages import StageMachine
from imperiale_env.batch.state import HISTORY_LEN, NONE, PLAY, POINT, QUESTION, BatchState
from imperiale_env.batch.tables import Tables
from imperiale_env.core import actions as act
from imperiale_env.core.card_masks import unpack
from imperiale_env.core.events import EVENT_KINDS, POINTS_PER_IMPERIALE
from imperiale_env.core.input_checks import seed as check_seed
from imperiale_env.core.observation import OBS_DTYPE, OBS_SIZE
from imperiale_env.core.one_thread import one_thread
from imperiale_env.core.rewards import end_rewards, standing
from imperiale_env.core.rules import Rules, resolve_rules
from imperiale_env.core.shuffle import as_seeds, batch_seeds, next_game_seed
from imperiale_env.kernels.threads import check_threads, numba_threads

__all__ = ["EVENT_KINDS", "HISTORY_LEN", "NONE", "PLAY", "POINT", "POINTS_PER_IMPERIALE", "QUESTION", "BatchGame"]

#: Version of :meth:`BatchGame.to_dict`.
CHECKPOINT_VERSION = 1


class BatchGame:
    """``num_games`` games under one ``rules``, stepped together.

    ``auto_next_game``: when a game ends its slot starts the next game at once (seed
    :func:`~imperiale_env.core.shuffle.next_game_seed`), so the batch never idles; the step
    that ended it reports the rewards and ``terminated``.  ``single_deal``: a game is one
    deal, from the start score given to :meth:`reset`.  ``record_events``: keep the score
    events for :meth:`pop_events` (tests, replays); ``keep_history``: keep every game's
    deals and decisions so that :func:`~imperiale_env.records.batch_records.record_from_batch` can
    write its record; ``keep_final_obs``: fill :attr:`final_observation` for games that end
    (same-step autoreset); all off for speed.  ``threads``: how many cores the compiled loops
    (legal actions, the play of the cards, the observation) use; every result is the same
    whatever the count.

    Every field of :attr:`state` (:class:`~.state.BatchState`) reads as an attribute of
    the game: ``game.hands``, ``game.imperiales`` ...
    """

    state: BatchState

    def __init__(
        self,
        rules: Rules | str | dict | None = None,
        num_games: int = 1,
        *,
        auto_next_game: bool = False,
        single_deal: bool = False,
        record_events: bool = False,
        keep_history: bool = False,
        keep_final_obs: bool = False,
        threads: int = 1,
    ):
        self.rules = resolve_rules(rules)
        self.players = P = self.rules.players
        self.n = _check_num_games(num_games)
        self.auto_next_game = auto_next_game
        self.single_deal = single_deal
        self.record_events = record_events
        self.keep_history = keep_history
        self.keep_final_obs = keep_final_obs
        self.threads = check_threads(threads)
        self.tables = Tables(self.rules, single_deal=single_deal, keep_history=keep_history)
        self.stages = self.tables.stages
        n = self.n
        self._ar = np.arange(n)
        self.state = BatchState.allocate(n, P, len(self.tables.pack))
        #: With ``keep_final_obs``: the last observation of each game that ended at the last
        #: step, for the player who made its last move (before ``auto_next_game`` restarts it).
        self.final_observation = np.zeros((n if keep_final_obs else 0, OBS_SIZE), dtype=OBS_DTYPE)
        #: With ``keep_history``: arrays per started game and per finished deal (see _archive_*).
        self.game_log: list[dict[str, np.ndarray]] = []
        self.deal_log: list[dict[str, np.ndarray]] = []
        self.explicit_deals: np.ndarray | None = None
        self._no_deals = np.zeros((0, 0, len(self.tables.pack)), dtype=np.int64)
        self._next_game_id = n
        self._events: list[np.ndarray] = []
        self._bits: np.ndarray | None = None
        self._reset_done = False
        self._machine = StageMachine(self.tables, n, self.threads, record_events, self._log_events,
                                     self._archive_deals if keep_history else None)

    # ------------------------------------------------------------------ reset

    def _checked_seeds(self, seed: Any) -> np.ndarray:
        """The games' seeds from ``reset``'s ``seed``: one integer in ``[0, 2**63)``, or one
        non-negative integer per game (uint64 arrays as the engine derives them pass as they are)."""
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
            return batch_seeds(check_seed(int(seed), "BatchGame seed"), self.n)
        arr = np.asarray(seed)
        if arr.dtype.kind not in "iu" or arr.shape != (self.n,):
            raise ValueError(f"BatchGame.reset: seed must be one integer in [0, 2**63) or {self.n} integers "
                             f"(one per game), got {arr.dtype} of shape {arr.shape}")
        if arr.dtype.kind == "i" and (arr < 0).any():
            raise ValueError("BatchGame.reset: seeds must be non-negative integers")
        return as_seeds(arr)

    def _check_start(self, dealer: Any, imperiales: Any, points: Any) -> None:
        """Refuse a start score outside the game: a dealer that is no seat, impériales at or past
        the target (the game would be over), points that make an impériale (24 or more)."""
        P, target = self.players, self.rules.target_imperiales
        for name, value, high in (("dealer", dealer, P - 1), ("imperiales", imperiales, target - 1),
                                  ("points", points, POINTS_PER_IMPERIALE - 1)):
            if value is None:
                continue
            arr = np.asarray(value)
            if arr.dtype.kind not in "iu" or (arr.size and not ((arr >= 0) & (arr <= high)).all()):
                raise ValueError(f"BatchGame.reset: {name} must be integers from 0 to {high}, got {value!r}")

    @one_thread
    def reset(
        self,
        seed: int | np.ndarray = 0,
        *,
        dealer: np.ndarray | int | None = None,
        imperiales: np.ndarray | None = None,
        points: np.ndarray | None = None,
        deals: np.ndarray | None = None,
    ) -> None:
        """Start a game in every slot.

        ``seed``: one integer (game ``i`` gets :func:`~imperiale_env.core.shuffle.batch_seeds`)
        or one seed per game.  ``dealer`` / ``imperiales`` / ``points`` start from a given
        score (one for all games or one per game); games restarted by ``auto_next_game``
        start from it too (the dealer drawn from the new seed unless ``dealer`` was given).
        ``deals``: optional ``(N, D, cards)`` card orders (priority order hands, then the
        turned card and talon, as :func:`~imperiale_env.reference.game.deal_cards` lays them) used for
        the first ``D`` deals instead of the seeded ones (records)."""
        seeds = self._checked_seeds(seed)
        self._check_start(dealer, imperiales, points)
        self.explicit_deals = None if deals is None else self._checked_deals(deals)
        self._events = []
        self._bits = None
        n, P = self.n, self.players
        self.restart_dealer[:] = np.broadcast_to(np.asarray(-1 if dealer is None else dealer, np.int64), (n,))
        self.restart_imperiales[:] = np.broadcast_to(np.asarray(0 if imperiales is None else imperiales), (n, P))
        self.restart_points[:] = np.broadcast_to(np.asarray(0 if points is None else points), (n, P))
        self._next_game_id = 0
        self.game_log, self.deal_log = [], []
        self._reset_done = True
        # A game may end before any decision (a turned honour at the target).
        ended = self._start_games(self._ar, seeds)
        self._archive_deals(ended)
        self._keep_final_score(ended)

    def _checked_deals(self, deals: Any) -> np.ndarray:
        """``reset``'s ``deals``: ``(N, D, cards)`` cards of the pack (the compiled deal reads them unchecked)."""
        arr = np.asarray(deals)
        pack = self.tables.pack
        if (arr.dtype.kind not in "iu" or arr.ndim != 3 or arr.shape[0] != self.n or arr.shape[2] != len(pack)
                or not np.isin(arr, pack).all()):
            raise ValueError(f"BatchGame.reset: deals must be ({self.n}, deals, {len(pack)}) cards of the pack "
                             f"({pack.min()} to {pack.max()}), got {arr.dtype} of shape {arr.shape}")
        return np.ascontiguousarray(arr, dtype=np.int64)

    @property
    def deal_orders(self) -> np.ndarray:
        """The card orders given to :meth:`reset` (``(N, D, cards)``, none if there were none)."""
        return self._no_deals if self.explicit_deals is None else self.explicit_deals

    def _archive_games(self, idx: np.ndarray) -> None:
        if self.keep_history:
            self.game_log.append({
                "game_id": self.game_id[idx].copy(), "seed": self.seed[idx].copy(),
                "dealer": self.start_dealer[idx].copy(), "imperiales": self.start_imperiales[idx].copy(),
                "points": self.start_points[idx].copy(),
            })

    def _archive_deals(self, idx: np.ndarray) -> None:
        """Keep the deals of ``idx`` (cards and decisions) before they are dealt anew."""
        if self.keep_history and len(idx):
            self.deal_log.append({
                "game_id": self.game_id[idx].copy(), "deal_index": self.deal_index[idx].copy(),
                "dealer": self.dealer[idx].copy(), "order": self.order[idx].copy(),
                "actions": self.history_actions[idx].copy(), "players": self.history_players[idx].copy(),
                "length": self.history_len[idx].copy(),
            })

    # ------------------------------------------------------------------ events

    def _log_events(self, events: np.ndarray) -> None:
        self._events.append(events)

    def pop_events(self) -> np.ndarray:
        """Events since the last call, ordered by game then time: rows of
        ``(game_id, deal_index, kind, player, amount)`` where ``kind`` indexes
        :data:`~imperiale_env.core.events.EVENT_KINDS` and ``amount`` is in the event's unit
        (:func:`~imperiale_env.core.events.unit`): the points of an award, the impériales of a
        gain-type event, the count of an ``imperiale`` event, the points lost in a
        ``wipe``, 0 for ``game_over``."""
        if not self._events:
            return np.zeros((0, 5), dtype=np.int64)
        ev = np.concatenate(self._events)
        self._events = []
        return ev[np.argsort(ev[:, 0], kind="stable")]

    # ------------------------------------------------------------------ actions

    def action_bits(self) -> np.ndarray:
        """Legal actions of every game as a uint64 bitmask over the action layout; read-only,
        since :meth:`step` checks the actions against this very array."""
        if self._bits is None:
            self._require_reset("legal actions")
            with numba_threads(self.threads):
                self._bits = action_bits(self.state, self.tables.arrays.rules, self.threads)
            self._bits.flags.writeable = False
        return self._bits

    def legal_action_mask(self) -> np.ndarray:
        """``(N, 43)`` bool: the legal actions of the player to act in each game."""
        return legal_mask(self.action_bits(), act.NUM_ACTIONS)

    @one_thread
    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Apply one action per game; returns ``(rewards (N, P) float32, terminated (N,) bool)``.

        Games already over (without ``auto_next_game``) ignore their action.  An illegal
        action raises ``ValueError`` naming the games, the actions and what was legal.  One
        thread at a time: a second thread stepping or resetting the same object is refused.
        """
        self._require_reset("step()")
        a = np.asarray(actions, dtype=np.int64).reshape(-1)
        if a.shape != (self.n,):
            raise ValueError(f"expected {self.n} actions, got shape {np.shape(actions)}")
        a = np.ascontiguousarray(a)
        bits = self.action_bits()
        self._bits = None
        with numba_threads(self.threads):
            ended = self._machine.step(self.state, self.deal_orders, a, bits)
        if ended is None:
            self._bits = bits  # nothing moved
            count, i = self._machine.illegal
            legal = [act.describe(x) for x in np.flatnonzero(unpack(bits[i], act.NUM_ACTIONS))]
            raise ValueError(
                f"illegal action in {count} game(s): game {i} (player {self.current_player[i]}) "
                f"chose {a[i]}, legal: {', '.join(legal)}"
            )
        # The step found the next legal actions too, unless games restart now (their slots change).
        self._bits = None if self.auto_next_game and len(ended) else self._machine.next_bits
        if self._bits is not None:
            self._bits.flags.writeable = False
        return self._finish_step(ended)

    def _finish_step(self, ended: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        P = self.players
        rewards = np.zeros((self.n, P), dtype=np.float32)
        terminated = np.zeros(self.n, dtype=bool)
        if len(ended):
            terminated[ended] = True
            rewards[ended] = end_rewards(self.winner[ended], self.value_at_start[ended],
                                         standing(self.imperiales[ended], self.points[ended]))
            self._keep_final_score(ended)
            self._archive_deals(ended)
            if self.keep_final_obs:
                self.final_observation[ended] = self.observe(rows=ended, players=self.last_player[ended])
            if self.auto_next_game:
                # A restarted game that ends before any decision stays over (reported by no step).
                self._start_games(ended, next_game_seed(self.seed[ended]))
        return rewards, terminated

    @one_thread
    def restart(self, rows: np.ndarray, seeds: np.ndarray) -> np.ndarray:
        """Start a new game with ``seeds`` (one per row, in ``[0, 2**63)``) in each slot of ``rows``
        whose game is over, from the start score given to :meth:`reset`: how a caller picks the next
        deal itself (self-play's mirrored deals play each seed twice) where ``auto_next_game`` would
        take the seed that follows.  A game in progress is never replaced (``ValueError``).
        Returns the rows whose new game ended before any decision (they stay over)."""
        self._require_reset("restart()")
        rows = np.asarray(rows)
        if rows.dtype.kind not in "iu" or rows.ndim != 1 or (rows.size and not (
                (rows >= 0).all() and (rows < self.n).all() and len(np.unique(rows)) == len(rows))):
            raise ValueError(f"BatchGame.restart: rows must be distinct slots from 0 to {self.n - 1}, got {rows!r}")
        arr = np.asarray(seeds)
        if arr.dtype.kind not in "iu" or arr.shape != rows.shape or (arr.size and (
                (arr < 0).any() or (arr.astype(np.uint64) > np.uint64(2**63 - 1)).any())):
            raise ValueError(f"BatchGame.restart: seeds must be one integer in [0, 2**63) per row ({len(rows)}), "
                             f"got {arr.dtype} of shape {arr.shape}")
        rows = rows.astype(np.int64)
        live = rows[~self.done[rows]]
        if len(live):
            raise ValueError(f"BatchGame.restart: the games in slots {reprlib.repr(live.tolist())} are in progress; "
                             "only a slot whose game is over can start a new one")
        self._bits = None
        ended = self._start_games(rows, as_seeds(arr))
        self._keep_final_score(ended)
        return ended

    def _start_games(self, rows: np.ndarray, seeds: np.ndarray) -> np.ndarray:
        """New games (new ids) with ``seeds`` in slots ``rows``; returns those that ended at once."""
        self.game_id[rows] = self._next_game_id + np.arange(len(rows))
        self._next_game_id += len(rows)
        ended = self._machine.start(self.state, self.deal_orders, rows, seeds)
        self._archive_games(rows)
        return ended

    def _keep_final_score(self, ended: np.ndarray) -> None:
        """The score the games ``ended`` finished with, kept apart from the state a restart overwrites."""
        self.final_imperiales[ended] = self.imperiales[ended]
        self.final_points[ended] = self.points[ended]

    @property
    def done(self) -> np.ndarray:
        """Games waiting on no decision (over, and not restarted)."""
        return self.kind == NONE

    # ------------------------------------------------------------------ observation

    def observe(
        self, out: np.ndarray | None = None, players: np.ndarray | None = None, rows: np.ndarray | None = None
    ) -> np.ndarray:
        """Observations ``(N, OBS_SIZE)`` uint8 (layout in :mod:`~imperiale_env.core.observation`)
        of the acting player in every game, or of ``players`` (one seat per game; a player who
        is not to act sees no pending decision).  ``rows`` encodes only those games
        (``players`` then has one seat per row).  Pass ``out`` to fill a preallocated buffer."""
        self._require_reset("observe()")
        with numba_threads(self.threads):
            return observe(self.state, self.tables, self.threads, out, players, rows)

    def _require_reset(self, what: str) -> None:
        if not self._reset_done:
            raise RuntimeError(f"BatchGame: call reset(seed) before {what}: no game has been dealt yet")

    # ------------------------------------------------------------------ checkpoints

    def to_dict(self) -> dict[str, Any]:
        """The whole batch as plain data for a checkpoint: numpy arrays and numbers, plus the
        rules as a JSON string; nothing in it runs code when loaded.  Versioned
        (``version``); :meth:`from_dict` restores a batch that steps on exactly as this one.
        The event log and the record history (``keep_history``) are not kept."""
        flags = {name: int(getattr(self, name)) for name in _FLAGS}
        explicit = self.explicit_deals if self.explicit_deals is not None else np.zeros((0, 0, 0), np.int64)
        return {
            "version": CHECKPOINT_VERSION,
            "rules_json": json.dumps(self.rules.to_dict(), sort_keys=True),
            "num_games": self.n,
            "next_game_id": int(self._next_game_id),
            "has_explicit_deals": int(self.explicit_deals is not None),
            "explicit_deals": explicit.copy(),
            **flags,
            "state": self.state.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BatchGame:
        """Inverse of :meth:`to_dict`; a dict of another version or shape is refused, naming why."""
        if not isinstance(data, dict) or data.get("version") != CHECKPOINT_VERSION:
            got = data.get("version") if isinstance(data, dict) else type(data).__name__
            raise ValueError(f"BatchGame checkpoint version {got!r} is not supported (expected {CHECKPOINT_VERSION})")
        missing = [k for k in ("rules_json", "num_games", "next_game_id", "has_explicit_deals", "explicit_deals",
                               "state", *_FLAGS) if k not in data]
        if missing:
            raise ValueError(f"BatchGame checkpoint lacks {', '.join(missing)}")
        n, state = _as_int(data["num_games"], "num_games"), data["state"]
        seeds = state.get("seed") if isinstance(state, dict) else None
        if not isinstance(seeds, np.ndarray) or seeds.shape != (n,):
            # Checked before anything is built, so that what is allocated is bounded by the data.
            raise ValueError(f"BatchGame checkpoint: the state must hold num_games={n} seeds")
        flags = {name: _as_int(data[name], name) for name in (*_FLAGS, "has_explicit_deals")}
        if any(v not in (0, 1) for v in flags.values()):
            raise ValueError(f"BatchGame checkpoint flags {', '.join(flags)} must be 0 or 1")
        if flags["keep_history"]:
            raise ValueError("a BatchGame checkpoint never keeps the record history (keep_history)")
        if not isinstance(data["rules_json"], str):
            raise ValueError("BatchGame checkpoint rules_json must be the rules as a JSON string")
        try:
            rules = json.loads(data["rules_json"])
        except (json.JSONDecodeError, RecursionError) as exc:
            raise ValueError(f"BatchGame checkpoint rules_json is not JSON: {exc}") from None
        game = cls(rules, n, **{name: bool(flags[name]) for name in _FLAGS})
        game.state = BatchState.from_dict(data["state"], game.n, game.players, len(game.tables.pack))
        game._next_game_id = _as_int(data["next_game_id"], "next_game_id")
        game._reset_done = True
        if data["has_explicit_deals"]:
            game.explicit_deals = np.asarray(data["explicit_deals"], np.int64).copy()
        return game


def _as_int(value: Any, name: str) -> int:
    """A whole number read from a checkpoint (a Python or numpy int, or a 0-d integer array)."""
    arr = np.asarray(value) if isinstance(value, np.ndarray) else None
    if arr is not None and arr.ndim == 0 and arr.dtype.kind in "iu":
        return int(arr)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"BatchGame checkpoint {name} must be a whole number, got {type(value).__name__}")
    return int(value)


#: The most games one batch holds: some 600 bytes of state a game (state version 3), under 3 GB at the limit.
MAX_GAMES = 1 << 22


def _check_num_games(num_games: Any) -> int:
    """``num_games`` as an int, or a ValueError saying what is allowed (no silent rounding)."""
    if isinstance(num_games, bool) or not isinstance(num_games, (int, np.integer)):
        raise ValueError(f"num_games must be a whole number from 1 to {MAX_GAMES}, got {num_games!r}")
    if not 1 <= num_games <= MAX_GAMES:
        raise ValueError(f"num_games must be from 1 to {MAX_GAMES} (one batch's state must fit in memory), "
                         f"got {num_games}")
    return int(num_games)


_FLAGS = ("auto_next_game", "single_deal", "record_events", "keep_history", "keep_final_obs")


def _state_attribute(name: str) -> property:
    return property(lambda self: getattr(self.state, name), lambda self, value: setattr(self.state, name, value),
                    doc=f"``state.{name}``")


for _f in fields(BatchState):
    setattr(BatchGame, _f.name, _state_attribute(_f.name))
