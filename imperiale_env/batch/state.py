"""The state of N games as one dataclass of numpy arrays, each field marked per game or per deal.

A field's metadata says its scope, dtype, trailing shape and fill value.  Per-deal fields
are reset to their fill value at the start of every deal by the compiled deal start
(:func:`~imperiale_env.batch.stages_kernels.reset_deal`), which walks every field from
:data:`FIRST_DEAL_FIELD` on: a new per-deal field cannot leak from one deal into the next
because nobody has to remember to add it to a list.  The trailing shape names the sizes
known only when the batch is built: ``P`` players, ``C`` cards in the pack, ``D`` cards in
the deck (36: card ids), ``T`` tricks in a deal, ``H`` the decision history of one deal.

:meth:`BatchState.to_dict` / :meth:`BatchState.from_dict` give a versioned dict of plain
numpy arrays (no objects, nothing that runs code on load) for checkpoints.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from imperiale_env.batch.addresses import header
from imperiale_env.core.cards import NUM_CARDS
from imperiale_env.core.tricks import TRICKS_PER_DEAL

GAME, DEAL = "game", "deal"
#: Decision kinds (the ``kind`` field): a question, the point, a card, or nothing to decide.
QUESTION, POINT, PLAY, NONE = 0, 1, 2, 3
#: Decisions kept per deal (at most 82: 3 x 14 questions, the turned card, 3 points, 36 cards).
HISTORY_LEN = 128
#: Version of :meth:`BatchState.to_dict`.  3: the small numbers (seats, cards, stages, counts, scores) held
#: as int8 / int16, so that a game's state is a few hundred bytes and a batch of thousands stays in the
#: cache; version 2 held them as int64, and is refused (its arrays are not this engine's).
STATE_VERSION = 3


def _array(scope: str, dtype: type, shape: tuple[str, ...] = (), fill: Any = 0) -> Any:
    return field(default=None, metadata={"scope": scope, "dtype": np.dtype(dtype), "shape": shape, "fill": fill})


def game(dtype: type, shape: tuple[str, ...] = (), fill: Any = 0) -> Any:
    """A field kept for the whole game (set when a game starts)."""
    return _array(GAME, dtype, shape, fill)


def deal(dtype: type, shape: tuple[str, ...] = (), fill: Any = 0) -> Any:
    """A field reset to ``fill`` at the start of every deal."""
    return _array(DEAL, dtype, shape, fill)


@dataclass
class BatchState:
    """Every array of a batch of games; row ``i`` is game slot ``i``."""

    # The game.
    seed: np.ndarray = game(np.uint64)
    game_id: np.ndarray = game(np.int64)
    imperiales: np.ndarray = game(np.int16, ("P",))
    points: np.ndarray = game(np.int16, ("P",))
    start_imperiales: np.ndarray = game(np.int16, ("P",))
    start_points: np.ndarray = game(np.int16, ("P",))
    #: The score a restarted game starts from (what :meth:`BatchGame.reset` was given).
    restart_dealer: np.ndarray = game(np.int8, fill=-1)
    restart_imperiales: np.ndarray = game(np.int16, ("P",))
    restart_points: np.ndarray = game(np.int16, ("P",))
    value_at_start: np.ndarray = game(np.float64, ("P",))
    dealer: np.ndarray = game(np.int8)
    start_dealer: np.ndarray = game(np.int8)
    deal_index: np.ndarray = game(np.int32)
    stage: np.ndarray = game(np.int8)
    over: np.ndarray = game(np.bool_)
    winner: np.ndarray = game(np.int8, fill=-1)
    final_imperiales: np.ndarray = game(np.int16, ("P",))
    final_points: np.ndarray = game(np.int16, ("P",))
    current_player: np.ndarray = game(np.int8)
    last_player: np.ndarray = game(np.int8)  # who made each game's last move
    kind: np.ndarray = game(np.int8, fill=NONE)
    # Read up to history_len (reset per deal), so the rows themselves need no clearing.
    history_actions: np.ndarray = game(np.int8, ("H",), fill=-1)
    history_players: np.ndarray = game(np.int8, ("H",), fill=-1)

    # The deal.
    history_len: np.ndarray = deal(np.int16)
    order: np.ndarray = deal(np.int8, ("C",))
    dealt: np.ndarray = deal(np.uint64, ("P",))
    hands: np.ndarray = deal(np.uint64, ("P",))
    captured: np.ndarray = deal(np.uint64, ("P",))
    played: np.ndarray = deal(np.uint64, ("P",))
    revealed: np.ndarray = deal(np.uint64, ("P",))
    voids: np.ndarray = deal(np.int8, ("P",))  # bit s: known to lack suit s
    # The order of play, for the observation: each card's trick (1-12, 0 not played) and player,
    # each trick's leader, and the cards each player's plays prove it does not hold.
    played_in: np.ndarray = deal(np.uint8, ("D",))
    played_by: np.ndarray = deal(np.int8, ("D",), fill=-1)
    leaders: np.ndarray = deal(np.int8, ("T",), fill=-1)
    not_held: np.ndarray = deal(np.uint64, ("P",))
    turned: np.ndarray = deal(np.int8)
    trump: np.ndarray = deal(np.int8)
    items: np.ndarray = deal(np.int16, ("P",))  # in-hand item slots each hand may show
    pending: np.ndarray = deal(np.int16, ("P",))  # ... not yet asked
    shown: np.ndarray = deal(np.int16, ("P",))  # ... shown
    turned_eligible: np.ndarray = deal(np.bool_)
    turned_shown: np.ndarray = deal(np.bool_)
    turned_asked: np.ndarray = deal(np.bool_)
    turned_honour_scored: np.ndarray = deal(np.bool_)
    point_suit: np.ndarray = deal(np.int8, ("P",), fill=-1)
    point_count: np.ndarray = deal(np.int8, ("P",))
    point_value: np.ndarray = deal(np.int16, ("P",))
    point_answered: np.ndarray = deal(np.bool_, ("P",))
    tricks: np.ndarray = deal(np.int8, ("P",))
    tricks_played: np.ndarray = deal(np.int8)
    trick_cards: np.ndarray = deal(np.int8, ("P",), fill=-1)
    trick_len: np.ndarray = deal(np.int8)
    leader: np.ndarray = deal(np.int8)
    win_card: np.ndarray = deal(np.int8)
    win_player: np.ndarray = deal(np.int8)

    @classmethod
    def allocate(cls, num_games: int, players: int, pack: int) -> BatchState:
        """Arrays for ``num_games`` games, every field at its fill value."""
        sizes = {"P": players, "C": pack, "D": NUM_CARDS, "T": TRICKS_PER_DEAL, "H": HISTORY_LEN}
        return cls(**{
            f.name: np.full((num_games, *(sizes[d] for d in f.metadata["shape"])), f.metadata["fill"],
                            dtype=f.metadata["dtype"])
            for f in fields(cls)
        })

    def __setattr__(self, name: str, value: Any) -> None:
        # The kernels' tuples hold the arrays themselves: a field given a new array drops them.
        object.__setattr__(self, name, value)
        self.__dict__.pop("_packed", None)
        self.__dict__.pop("_header", None)

    def __getstate__(self) -> dict[str, Any]:
        # A copy or a pickle leaves the kept tuples and headers behind: a header holds the addresses of
        # this state's own arrays, and a copy stepped through it would write into the original.
        return {k: v for k, v in self.__dict__.items() if k not in ("_packed", "_header")}

    def packed(self, names: tuple[str, ...] | None = None) -> tuple[np.ndarray, ...]:
        """Every array (or those of ``names``) as a plain tuple, the form the compiled entry points
        take (they name them again inside: :data:`StateArrays`).  Built once and kept: numba types
        a plain tuple of arrays in C but a named tuple in Python, and at batch 1 that difference
        (some 30 microseconds a step) was most of the step."""
        packs = self.__dict__.setdefault("_packed", {})
        if names not in packs:
            packs[names] = tuple(getattr(self, name) for name in (names or FIELD_NAMES))
        return packs[names]

    def header(self, names: tuple[str, ...] | None = None) -> np.ndarray:
        """Every array (or those of ``names``) by address and shape in one int64 array
        (:func:`~imperiale_env.batch.addresses.header`; the compiled side reads it with the types of
        :func:`layout`), the cheapest form to pass to a compiled call.  Built once and kept, like
        :meth:`packed`, and dropped with it when a field gets a new array: the state holds the
        arrays it points into."""
        if names is None and "_header" in self.__dict__:  # the step's, once a decision at batch 1
            return self.__dict__["_header"]
        packs = self.__dict__.setdefault("_packed", {})
        key = ("header", names)
        if key not in packs:
            packs[key] = header(self.packed(names))
            if names is None:
                self.__dict__["_header"] = packs[key]
        return packs[key]

    def to_dict(self) -> dict[str, Any]:
        """``{"version": STATE_VERSION, field: array, ...}``: plain numpy arrays, safe to store and load."""
        return {"version": STATE_VERSION, **{f.name: getattr(self, f.name).copy() for f in fields(self)}}

    @classmethod
    def from_dict(cls, data: dict[str, Any], num_games: int, players: int, pack: int) -> BatchState:
        """Inverse of :meth:`to_dict`; every field must be there with the expected shape and dtype."""
        if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
            got = data.get("version") if isinstance(data, dict) else type(data).__name__
            why = (" (written by an older engine, whose fields had other dtypes: start the games anew)"
                   if isinstance(got, int) and 0 < got < STATE_VERSION else "")
            raise ValueError(f"batch state version {got!r} is not supported (expected {STATE_VERSION}){why}")
        empty = cls.allocate(num_games, players, pack)
        missing = [f.name for f in fields(cls) if f.name not in data]
        unknown = sorted(set(data) - {f.name for f in fields(cls)} - {"version"})
        if missing or unknown:
            raise ValueError(f"batch state fields missing {missing} or unknown {unknown}")
        out = {}
        for f in fields(cls):
            want = getattr(empty, f.name)
            got = data[f.name]
            if not isinstance(got, np.ndarray) or got.shape != want.shape or got.dtype != want.dtype:
                desc = f"{got.dtype}{got.shape}" if isinstance(got, np.ndarray) else type(got).__name__
                raise ValueError(f"batch state field {f.name}: expected {want.dtype}{want.shape}, got {desc}")
            out[f.name] = got.copy()
        return cls(**out)


FIELD_NAMES = tuple(f.name for f in fields(BatchState))


def layout(names: tuple[str, ...] | None = None) -> tuple[tuple[str, int], ...]:
    """The element type and dimensions of every field (or of ``names``), in that order: the arrays
    a :meth:`BatchState.header` points to, as :func:`~imperiale_env.batch.addresses.arrays_at` takes them."""
    by_name = {f.name: f.metadata for f in fields(BatchState)}
    return tuple((by_name[name]["dtype"].str, 1 + len(by_name[name]["shape"])) for name in (names or FIELD_NAMES))

#: The kernels' form of the state: one named tuple of every array, in field order.
StateArrays = namedtuple("StateArrays", FIELD_NAMES)
#: The per-deal fields follow the per-game ones, so the kernels take them as ``state[FIRST_DEAL_FIELD:]``.
FIRST_DEAL_FIELD = next(k for k, f in enumerate(fields(BatchState)) if f.metadata["scope"] == DEAL)
_DEAL_FIELDS = fields(BatchState)[FIRST_DEAL_FIELD:]
if any(f.metadata["scope"] != DEAL for f in _DEAL_FIELDS):
    raise TypeError("BatchState: declare the per-deal fields after the per-game ones")
#: The fill values of the per-deal arrays, in field order (the compiled deal start puts them back).
DEAL_FILLS = np.array([f.metadata["fill"] for f in _DEAL_FIELDS], dtype=np.int64)
