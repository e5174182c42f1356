"""The observation encoder of the batched engine (the layout is documented in
:mod:`~imperiale_env.core.observation`): checks the request, then one compiled loop over the games
(:func:`imperiale_env.batch.observe_kernels.encode`) fills the buffer."""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from imperiale_env.batch.addresses import STALE_CACHE
from imperiale_env.batch.observe_kernels import SEEN_FIELDS, encode_at, encode_slice, encode_threaded
from imperiale_env.batch.state import BatchState
from imperiale_env.batch.tables import Tables
from imperiale_env.core.observation import OBS_DTYPE, OBS_SIZE

_NO_SEATS = np.zeros(0, dtype=np.int64)


def _indices(value: Any, name: str, high: int, length: int | None = None) -> np.ndarray:
    """``value`` as int64 indices in ``[0, high)`` (``length`` of them if given), else a ValueError:
    the compiled encoder reads them unchecked."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu" or arr.ndim != 1 or (length is not None and len(arr) != length):
        want = f"{length} " if length is not None else ""
        raise ValueError(f"observe(): {name} must be a 1-d array of {want}integers, got {arr.dtype} {arr.shape}")
    if arr.size and not ((arr >= 0) & (arr < high)).all():
        raise ValueError(f"observe(): {name} must be from 0 to {high - 1}, got {arr.min()} .. {arr.max()}")
    return np.ascontiguousarray(arr, dtype=np.int64)


def observe(
    s: BatchState, t: Tables, threads: int, out: np.ndarray | None = None, players: np.ndarray | None = None,
    rows: np.ndarray | None = None,
) -> np.ndarray:
    """Observations ``(N, OBS_SIZE)`` uint8 (layout in :mod:`~imperiale_env.core.observation`) of
    the acting player in every game, or of ``players`` (one seat per game; a player who is not
    to act sees no pending decision).  ``rows`` encodes only those games (``players`` then has
    one seat per row).  Pass ``out`` to fill a preallocated ``(n, OBS_SIZE)`` uint8 buffer.

    The score blocks are capped (the layout says where): a finished game can hold more than the
    target in impériales, or 24 points or more left by the award that won it."""
    games, seats_per_game = s.hands.shape[:2]
    gi = np.arange(games) if rows is None else _indices(rows, "rows", games)
    n = len(gi)
    seats = _NO_SEATS if players is None else _indices(players, "players", seats_per_game, n)
    if out is None:
        out = np.empty((n, OBS_SIZE), dtype=OBS_DTYPE)
    elif (not isinstance(out, np.ndarray) or out.dtype != OBS_DTYPE or out.shape != (n, OBS_SIZE)
          or not out.flags.writeable):
        got = (f"{out.dtype} {out.shape}{'' if out.flags.writeable else ' read-only'}" if isinstance(out, np.ndarray)
               else type(out).__name__)
        raise ValueError(f"observe(): out must be a writeable uint8 array of shape {(n, OBS_SIZE)}, got {got}")
    if threads > 1:
        encode_threaded(threads, out, gi, seats, s.packed(SEEN_FIELDS), t.seen_packed)
    elif numba.config.DISABLE_JIT:  # plain Python: no addresses to read, the tuple costs nothing
        encode_slice(0, n, out, gi, seats, s.packed(SEEN_FIELDS), t.seen_packed)
    elif not encode_at(s.header(SEEN_FIELDS), 0, n, out, gi, seats, t.seen_packed):
        raise RuntimeError(STALE_CACHE)
    return out
