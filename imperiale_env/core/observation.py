"""The observation of a seat, version 1: everything the player at that seat knows, one byte an entry.

This module is the one place the observation is declared.  :data:`LAYOUT` lists its blocks
(name, shape, range, meaning); the offsets, the size, the bounds of the environments'
``Box`` spaces, the decoder (:func:`read`), the features a network makes of the bytes
(:data:`FEATURES`) and the table in ``docs/observation.md`` (:func:`markdown_table`) are
all computed from it.  The two encoders (the reference one, the oracle, and the batched
engine's compiled one) write it block by block by these names, and the differential check
compares them for every seat at every decision.

Every entry is a small exact integer (``uint8``): a flag, a count, or a category such as
"0 for none, else 1 + a seat".  Nothing is normalised here; a network turns the bytes into
floats (:data:`FEATURES`: one-hot for categories, a division for counts) on its own device.

Seats are **relative**: seat 0 is the observer, seat 1 the next in seat order, seat 2 the one
after (its blocks are zero with two players).  Card blocks are 36 wide, indexed like the
cards (``suit * 9 + rank``, rank in trick order K Q J A 10 9 8 7 6).

The order of play is exact: for every card played this deal, the trick it fell in
(``played_in``) and who played it (``played_by``), and who led each trick (``leaders``); the
order inside a trick follows from its leader and the seat order.  ``not_held`` is what the
play proves about the other hands: a card a seat could not hold and still have played what it
played, under the preset's obligations (follow, beat, trump, overtrump, lead a trump first);
``voids`` are the suits it is proven to lack.  The declarations of the deal are the items each
seat showed (``shown_items``, in the canonical question order of the rules, so their order
is known) and each seat's answer to the point, with the count and value of a declared one
(the suit of a point is not announced).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from imperiale_env.core.cards import NUM_CARDS, NUM_SUITS, POINT_VALUE
from imperiale_env.core.declarations import NUM_ITEMS
from imperiale_env.core.events import POINTS_PER_IMPERIALE

if TYPE_CHECKING:
    from imperiale_env.core.rules import Rules

#: The version of the observation: stored in checkpoints and exported policies, which are
#: refused when they were trained for another one.
OBS_VERSION = 1
#: What the observation was in each earlier version: their environment ids stay registered to refuse
#: with this and the id that replaces each (:mod:`imperiale_env.envs.registration`).
PAST_VERSIONS: dict[int, str] = {0: "485 floats"}
OBS_DTYPE = np.uint8
MAX_SEATS = 3
TRICKS = 12
#: The item slots of ``shown_items``: carte blanche, quart major by suit, the Imperijal sequence
#: by suit, the fours of a kind in the order of ``rules.four_ranks``, the turned-card impériale.
TURNED_IMPERIALE_ITEM = NUM_ITEMS  # after the in-hand items of core.declarations
NUM_SHOWN_ITEMS = NUM_ITEMS + 1
QUESTION_KINDS: tuple[str, ...] = ("carte_blanche", "quart_major", "sequence", "four_of_a_kind", "turned_imperiale")
#: ``phase`` is 0 when the observer is not to act, else 1 + the index of the decision here.
PHASES: tuple[str, ...] = ("question", "point", "play")
#: ``point``: 0 not answered yet, 1 declared, 2 sunk.
POINT_DECLARED, POINT_SUNK = 1, 2
#: The largest point: the nine cards of a suit (three players).
MAX_POINT_COUNT = 9
MAX_POINT_VALUE = sum(POINT_VALUE)
#: ``high`` of a block bounded by the rules in play: the target number of impériales.
TARGET = "target_imperiales"


@dataclass(frozen=True)
class Block:
    """One block of the observation.

    ``encoding`` says what a network should make of it: ``flag`` (0 or 1), ``count`` (an
    amount, divided by ``scale``) or ``category`` (one of ``low .. high``, one-hot).  ``high``
    is :data:`TARGET` for a count capped at the rules' target.  ``seats`` says where the seats
    (relative to the observer) are in it, so that code seeing the deal from another seat
    exchanges them with no list of its own: ``rows`` (one row a seat, the observer's first),
    ``values`` (it holds 1 + a seat, 0 for none), ``seat`` (it holds a seat), ``others`` (rows for
    seats 1 and 2 only) or ``""`` (no seat in it)."""

    name: str
    shape: tuple[int, ...]
    low: int
    high: int | str
    encoding: str
    meaning: str
    scale: float = 1.0
    seats: str = ""

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))


_C = NUM_CARDS
LAYOUT: tuple[Block, ...] = (
    Block("hand", (_C,), 0, 1, "flag", "the cards the observer holds"),
    Block("played_by", (_C,), 0, 3, "category",
          "per card: 0 not played this deal, else 1 + the seat that played it", seats="values"),
    Block("played_in", (_C,), 0, TRICKS, "category",
          "per card: 0 not played this deal, else its trick (1-12)"),
    Block("leaders", (TRICKS,), 0, 3, "category",
          "per trick of the deal: 0 not led yet, else 1 + the seat that led it", seats="values"),
    Block("shown_by", (_C,), 0, 3, "category",
          "per card: 0, else 1 + the seat that showed it (impériales in hand, the winning point; with three "
          "players the dealer's turned trump card)", seats="values"),
    Block("turned", (1,), 0, _C - 1, "category", "the turned card"),
    Block("trump", (1,), 0, NUM_SUITS - 1, "category", "the trump suit: 0 S, 1 H, 2 D, 3 C"),
    Block("not_held", (MAX_SEATS - 1, _C), 0, 1, "flag",
          "for seats 1 and 2: the cards its plays prove it does not hold (the obligations of the preset)",
          seats="others"),
    Block("voids", (MAX_SEATS, NUM_SUITS), 0, 1, "flag", "per seat: the suits it is known to lack (did not follow)",
          seats="rows"),
    Block("phase", (1,), 0, len(PHASES), "category",
          "0 the observer is not to act, 1 question, 2 point, 3 play"),
    Block("question_kind", (1,), 0, len(QUESTION_KINDS), "category",
          "0 none, else 1 + carte_blanche, quart_major, sequence, four_of_a_kind, turned_imperiale"),
    Block("question_cards", (_C,), 0, 1, "flag",
          "the cards the pending question is about (the hand for carte blanche)"),
    Block("shown_items", (MAX_SEATS, NUM_SHOWN_ITEMS), 0, 1, "flag",
          "per seat: the items shown this deal: carte blanche, quart major S H D C, sequence S H D C, the fours "
          "in the order of rules.four_ranks, the turned-card impériale", seats="rows"),
    Block("point", (MAX_SEATS,), 0, 2, "category", "per seat: 0 not answered, 1 declared a point, 2 sank it",
          seats="rows"),
    Block("point_count", (MAX_SEATS,), 0, MAX_POINT_COUNT, "count", "per seat: the cards of its declared point",
          MAX_POINT_COUNT, seats="rows"),
    Block("point_value", (MAX_SEATS,), 0, MAX_POINT_VALUE, "count", "per seat: the value of its declared point",
          MAX_POINT_VALUE, seats="rows"),
    Block("imperiales", (MAX_SEATS,), 0, TARGET, "count", "per seat: impériales won, capped at the target", 5.0,
          seats="rows"),
    Block("points", (MAX_SEATS,), 0, POINTS_PER_IMPERIALE, "count",
          f"per seat: points towards the next impériale, capped at {POINTS_PER_IMPERIALE}", POINTS_PER_IMPERIALE,
          seats="rows"),
    Block("tricks", (MAX_SEATS,), 0, TRICKS, "count", "per seat: tricks won this deal", TRICKS, seats="rows"),
    Block("dealer", (1,), 0, MAX_SEATS - 1, "category", "the seat of the dealer", seats="seat"),
    Block("tricks_played", (1,), 0, TRICKS, "count", "tricks played this deal", TRICKS),
    Block("players", (1,), 2, MAX_SEATS, "category", "the number of players"),
)

def block_offsets(blocks) -> tuple[dict[str, slice], int]:
    """Where each of ``blocks`` (objects with ``name`` and ``size``) lies when they are laid end to
    end, and their total width: the observation's layout, and the network features' too."""
    offsets, at = {}, 0
    for b in blocks:
        offsets[b.name] = slice(at, at + b.size)
        at += b.size
    return offsets, at


BLOCKS: dict[str, Block] = {b.name: b for b in LAYOUT}
OFFSETS, OBS_SIZE = block_offsets(LAYOUT)


def bounds(rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    """The ``(low, high)`` of every entry under ``rules`` (``uint8`` arrays of :data:`OBS_SIZE`):
    each entry's exact highest value, and 0 as the lowest everywhere.  Only ``players`` never
    holds 0 (it is 2 or 3; its block's ``low`` says so, for the one-hot); its space still starts at
    0 so that the all-zero observation, which libraries fill in where there is none (an ended
    agent, a vector env's padding, TorchRL's spec check), lies in the space."""
    low = np.zeros(OBS_SIZE, dtype=OBS_DTYPE)
    high = np.zeros(OBS_SIZE, dtype=OBS_DTYPE)
    for b in LAYOUT:
        high[OFFSETS[b.name]] = getattr(rules, b.high) if isinstance(b.high, str) else b.high
    return low, high


def read(obs: np.ndarray, name: str) -> np.ndarray:
    """Block ``name`` of a batch of observations ``(B, OBS_SIZE)`` as ``(B, *shape)`` (a view)."""
    b = BLOCKS[name]
    return obs[..., OFFSETS[name]].reshape(*obs.shape[:-1], *b.shape)


def views(obs: np.ndarray) -> dict[str, np.ndarray]:
    """Every block of one observation ``(OBS_SIZE,)`` as a named view of its shape: what an
    encoder writes through (the reference observer, OpenSpiel's ``dict``)."""
    return {b.name: obs[OFFSETS[b.name]].reshape(b.shape) for b in LAYOUT}


def write(obs: np.ndarray, name: str, value) -> None:
    """Set block ``name`` of observations ``obs`` (``(..., OBS_SIZE)``) to ``value`` (broadcast to its shape)."""
    read(obs, name)[...] = value


@dataclass(frozen=True)
class Features:
    """How a network turns a batch of observations into floats: the plan, computed from
    :data:`LAYOUT` once and read by both forward passes (numpy and torch).

    Category entries become one-hot groups: entry ``category_columns[k]`` of value ``v`` sets
    feature ``category_base[k] + v - low``.  Flags and counts are one feature each:
    ``value * scalar_scale[k]`` at ``scalar_features[k]``."""

    size: int
    category_columns: np.ndarray
    category_base: np.ndarray
    category_low: np.ndarray
    scalar_columns: np.ndarray
    scalar_features: np.ndarray
    scalar_scale: np.ndarray

    def expand(self, obs: np.ndarray) -> np.ndarray:
        """``(B, size)`` float32 features of ``(B, OBS_SIZE)`` observations (numpy)."""
        obs = np.asarray(obs)
        out = np.zeros((obs.shape[0], self.size), dtype=np.float32)
        out[:, self.scalar_features] = obs[:, self.scalar_columns] * self.scalar_scale
        index = self.category_base + obs[:, self.category_columns].astype(np.int64) - self.category_low
        np.put_along_axis(out, index, 1.0, axis=1)
        return out


def _features() -> Features:
    cat_cols, cat_base, cat_low, sc_cols, sc_feat, sc_scale = [], [], [], [], [], []
    at = 0
    for b in LAYOUT:
        for col in range(OFFSETS[b.name].start, OFFSETS[b.name].stop):
            if b.encoding == "category":
                cat_cols.append(col)
                cat_base.append(at)
                cat_low.append(b.low)
                at += int(b.high) - b.low + 1
            else:
                sc_cols.append(col)
                sc_feat.append(at)
                sc_scale.append(1.0 / b.scale)
                at += 1
    as_int = lambda x: np.array(x, dtype=np.int64)  # noqa: E731
    return Features(at, as_int(cat_cols), as_int(cat_base), as_int(cat_low), as_int(sc_cols), as_int(sc_feat),
                    np.array(sc_scale, dtype=np.float32))


FEATURES = _features()


def markdown_table() -> str:
    """The layout as a markdown table (docs/observation.md is this, checked by a test)."""
    rows = ["| block | shape | offset | range | network input | meaning |", "|---|---|---:|---|---|---|"]
    for b in LAYOUT:
        high = "target" if isinstance(b.high, str) else b.high
        shape = " x ".join(map(str, b.shape))
        start = OFFSETS[b.name].start
        rows.append(f"| `{b.name}` | {shape} | {start} | {b.low}..{high} | {b.encoding} | {b.meaning} |")
    return "\n".join(rows)
