"""``imperiale bench --peers``: the batched engine beside OpenSpiel's hearts and skat.

Same machine, same run, one core, uniformly random legal play; each figure is decisions per
second (chance nodes, the deal, are played but not counted).  With observations, each
OpenSpiel decision also fills a preallocated numpy buffer from OpenSpiel's observer (its
fastest path from Python: ``make_observation(...).set_from(state, player)``; hearts has no
observation tensor, so its information-state tensor), as our engine fills ``observe(out=)``.
OpenSpiel is the optional ``bench`` extra.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator

import numpy as np

from imperiale_cli.devtools.bench_engine import _si, batch_rate
from imperiale_env.core.observation import OBS_DTYPE, OBS_SIZE
from imperiale_env.core.rules import Rules, resolve_rules

PEER_GAMES = ("hearts", "skat")
DEFAULT_BATCH = 4096
#: Environment variables that cap the threads of numeric libraries (set to 1 by the command).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS")


class PeersUnavailable(RuntimeError):
    """OpenSpiel is not installed."""


def _pyspiel():
    try:
        import pyspiel
        from open_spiel.python.observation import make_observation
    except ImportError as exc:
        raise PeersUnavailable(
            f"the peers benchmark needs OpenSpiel ({exc.name} is not installed): install the optional "
            "'bench' extra, pip install 'imperiale[bench]'"
        ) from None
    return pyspiel, make_observation


def _observer(name: str):
    """OpenSpiel's game ``name`` and its fastest observer from Python (see the module docstring)."""
    pyspiel, make_observation = _pyspiel()
    game = pyspiel.load_game(name)
    kind = None if game.get_type().provides_observation_tensor else pyspiel.IIGObservationType(perfect_recall=True)
    return game, make_observation(game, kind)


def openspiel_observation_bytes(name: str) -> int:
    """The bytes of one observation of OpenSpiel's ``name`` (its tensor, float32)."""
    return int(_observer(name)[1].tensor.nbytes)


def openspiel_rate(name: str, seconds: float, observe: bool, seed: int = 0) -> float:
    """Decisions/s of OpenSpiel's ``name`` under random legal play, whole games, for ``seconds``."""
    game, observation = _observer(name)
    if not observe:
        observation = None
    rng = random.Random(seed)
    decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(rng.choices(actions, probs)[0])
                continue
            if observation is not None:
                observation.set_from(state, state.current_player())
            state.apply_action(rng.choice(state.legal_actions()))
            decisions += 1
    return decisions / (time.perf_counter() - start)


def run_peers_bench(batch: int = DEFAULT_BATCH, seconds: float = 2.0, rules: Rules | str | None = None
                    ) -> Iterator[str]:
    """Measure OpenSpiel's games and the batched engine for ``seconds`` each; one line each, then the ratios."""
    rules = resolve_rules(rules)
    if seconds <= 0:
        raise ValueError(f"seconds must be positive, got {seconds}")
    if batch < 1:
        raise ValueError(f"the batch size must be a positive integer, got {batch}")
    _pyspiel()  # fail before measuring anything
    yield f"one core, random legal play, {seconds:g} s a measurement; decisions/s without / with observations"
    peers = {}
    for name in PEER_GAMES:
        plain, observed = openspiel_rate(name, seconds, False), openspiel_rate(name, seconds, True)
        peers[name] = (plain, observed)
        size = openspiel_observation_bytes(name)
        yield f"OpenSpiel {name}: {_si(plain)} / {_si(observed)}, {size:,} bytes an observation"
    plain, _ = batch_rate(rules, batch, seconds, observe=False)
    observed, _ = batch_rate(rules, batch, seconds, observe=True)
    ours = OBS_SIZE * np.dtype(OBS_DTYPE).itemsize
    yield (f"imperiale batched engine ({rules.preset}, batch {batch}): {_si(plain)} / {_si(observed)}, "
           f"{ours:,} bytes an observation")
    best_plain = max(p for p, _ in peers.values())
    best_observed = max(o for _, o in peers.values())
    yield (f"ratio to the faster peer: {plain / best_plain:.1f}x without observations, "
           f"{observed / best_observed:.1f}x with")
