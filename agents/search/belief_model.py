"""Beliefs learned from the play: where each unseen card lies, from the observation with its history.

A belief model maps an observation (version 1: the order of play included) to, for every card,
the probability that it lies in the hand of relative seat 1, of seat 2, or in the talon (two
players).  It is a small network trained on deals played by the shipped champion against the true
deal (:mod:`imperiale_train.belief_training`), and it plays in numpy like the policies
(:mod:`imperiale_agents.policies.policy_net`): no torch needed.

Only the places the observation allows count (:func:`possible`): a card seen (held, played,
turned with two players, shown and not played) has none; a seat that is proven not to hold a
card (``not_held``, ``voids``) is not one of its places.  The model's probabilities are spread
over the allowed places only, then fitted to the number of cards each place holds
(:func:`fit_to_counts`: iterative proportional fitting's answer, found exactly), so that a seat's
probabilities add up to its cards.

The network does not start from nothing: its logits are added to the log of the sampler's own
marginal (:func:`imperiale_agents.search.pimc.sampler_marginal`: the hand sizes, everything proven, the
declared point), so it learns only what the order of play adds (its last layer starts at zero:
the untrained belief is the sampler).

``pimc:N:belief`` draws its worlds from the exact sampler of :mod:`imperiale_agents.search.pimc` (every
world agrees with every known fact) and resamples them by the network's correction: a world's
weight is the product, over the unseen cards, of ``exp(logit)`` of the place it gives the card
(:meth:`BeliefNet.worlds`, :func:`world_log_weights`).  A world the sampler could not draw is never
kept: the belief only chooses among the sampler's worlds.

The file (``agents/champions/PRESET-belief.npz``) is a numpy archive read with
``allow_pickle=False``: ``layer{i}.weight`` ``(out, in)`` and ``layer{i}.bias`` float32, and
``metadata`` (JSON: format ``imperiale-belief``, version, obs_version, activation, rules,
provenance with the held-out log losses).
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from imperiale_agents.observation_view import CARD_SUIT, View, deck_mask
from imperiale_agents.policies.policy_net import ACTIVATIONS, forward
from imperiale_agents.search.pimc import sample_worlds, sampler_marginal
from imperiale_agents.search.play_likelihood import resample
from imperiale_env.core.cards import NUM_CARDS
from imperiale_env.core.observation import FEATURES, OBS_SIZE, OBS_VERSION
from imperiale_env.core.rules import Rules

FORMAT = "imperiale-belief"
VERSION = 1
#: The places of a card the model tells apart, relative to the observer.
PLACES = ("seat 1", "seat 2", "talon")
OUTPUTS = NUM_CARDS * len(PLACES)
#: The largest belief network a file may declare.
MAX_PARAMETERS = 16 * 1024 * 1024
#: Consistent worlds drawn for each world ``pimc:N:belief`` solves.
CANDIDATES_PER_SAMPLE = 8


class BeliefFileError(RuntimeError):
    """A belief file that cannot be read or does not fit this code."""


def possible(v: View) -> np.ndarray:
    """``(B, 36, 3)`` bool: the places each card may be in, by what the observation proves.

    A card known to the observer (held, played, the turned card with two players, shown and
    not played) has no place here: it is not a belief."""
    b = v.n
    out = np.zeros((b, NUM_CARDS, len(PLACES)), dtype=bool)
    known = v.hand | v.played.any(axis=1) | (v.revealed & ~v.played).any(axis=1)
    two = v.players == 2
    known |= v.turned & two[:, None]
    unseen = deck_mask(v.players) & ~known
    for seat in (1, 2):
        present = v.players > seat
        void = v.voids[:, seat][:, CARD_SUIT]  # (B, 36)
        out[:, :, seat - 1] = unseen & present[:, None] & ~v.not_held[:, seat] & ~void
    out[:, :, 2] = unseen & two[:, None]
    return out


def place_counts(v: View) -> np.ndarray:
    """``(B, 3)``: how many cards the observer has not seen lie in each place (relative seat 1, seat 2,
    the talon): a seat's cards in hand less those it showed and has not played; the talon the rest."""
    b = v.n
    out = np.zeros((b, len(PLACES)), dtype=np.float64)
    in_hand = 12 - v.played.sum(axis=2)  # (B, 3) cards each seat still holds
    shown = (v.revealed & ~v.played).sum(axis=2)  # of which the observer knows these
    for seat in (1, 2):
        out[:, seat - 1] = np.where(v.players > seat, in_hand[:, seat] - shown[:, seat], 0)
    unseen = possible(v).any(axis=-1).sum(axis=1)
    out[:, 2] = np.where(v.players == 2, unseen - out[:, 0], 0)
    return out


def fit_to_counts(probs: np.ndarray, allowed: np.ndarray, counts: np.ndarray, steps: int = 100) -> np.ndarray:
    """``probs`` ``(B, 36, 3)`` made to agree with the number of cards each place holds (``counts``
    ``(B, 3)``): the table closest to ``probs`` (in relative entropy: iterative proportional fitting's
    answer) whose every card lies somewhere and whose every place holds its cards, so that a seat's
    probabilities add up to the cards it holds.

    A card has at most two places (relative seat 1 and the talon with two players, seats 1 and 2 with
    three), so the fit is one number a row: every card's odds of the first place are multiplied by
    ``exp(shift)``, and the ``shift`` that gives the first place its count is found by bisection
    (``steps`` halvings: exact to the float).  A place of probability 0 (not allowed, or ruled out
    by the prior) stays 0; a card with one place keeps probability 1 there."""
    p = np.where(allowed, probs, 0.0)
    second = np.where(allowed[:, :, 2].any(axis=1), 2, 1)  # the talon (two players) or seat 2 (three)
    where = np.broadcast_to(second[:, None, None], p.shape[:2] + (1,))  # (B, 36, 1): each row's second place
    a, b = p[:, :, 0], np.take_along_axis(p, where, axis=2)[:, :, 0]
    both = (a > 0) & (b > 0)
    fixed = ((a > 0) & ~both).sum(axis=1)  # cards surely in the first place
    need = counts[:, 0] - fixed
    odds = np.log(np.where(both, a, 1.0)) - np.log(np.where(both, b, 1.0))
    low, high = np.full(len(p), -60.0), np.full(len(p), 60.0)
    for _ in range(steps):
        mid = (low + high) / 2
        got = np.where(both, 1.0 / (1.0 + np.exp(-(odds + mid[:, None]))), 0.0).sum(axis=1)
        low, high = np.where(got < need, mid, low), np.where(got < need, high, mid)
    x = odds + ((low + high) / 2)[:, None]
    out = np.zeros_like(p)
    with np.errstate(over="ignore"):  # exp of a huge odds is inf: its share is then exactly 0 or 1
        out[:, :, 0] = np.where(both, 1.0 / (1.0 + np.exp(-x)), (a > 0) * 1.0)
        # the second place's share computed as itself (not 1 - the first's): a small share stays above 0
        second_share = np.where(both, 1.0 / (1.0 + np.exp(x)), (b > 0) * 1.0)
    np.put_along_axis(out, where, second_share[:, :, None], axis=2)
    return out


@dataclass(frozen=True)
class BeliefNet:
    """The belief network: ``layers[i] = (weight (out, in), bias (out,))``, ``activation`` between."""

    layers: tuple[tuple[np.ndarray, np.ndarray], ...]
    activation: str
    meta: dict[str, Any]

    def correction(self, obs: np.ndarray) -> np.ndarray:
        """``(B, 36, 3)`` float64: the network's logits, what the play adds to the sampler's marginal."""
        x = FEATURES.expand(np.asarray(obs).reshape(-1, OBS_SIZE))
        return forward(self.layers, self.activation, x).reshape(-1, NUM_CARDS, len(PLACES)).astype(np.float64)

    def probabilities(self, obs: np.ndarray, v: View, fitted: bool = True) -> np.ndarray:
        """``(B, 36, 3)`` float64: each card's probability of each place, over the allowed places
        (:func:`possible`; all zero for a card the observer knows): the softmax of the network's
        logits added to the log of the sampler's marginal (:func:`imperiale_agents.search.pimc.sampler_marginal`),
        then (``fitted``, the default) fitted to the cards each place holds (:func:`fit_to_counts`):
        each card's softmax alone does not know that a seat holding two unseen cards holds two."""
        allowed = possible(v)
        with np.errstate(divide="ignore"):
            logits = self.correction(obs) + np.log(sampler_marginal(v))
        logits = np.where(allowed, logits, -np.inf)
        top = np.max(logits, axis=-1, keepdims=True)
        e = np.where(allowed, np.exp(logits - np.where(np.isfinite(top), top, 0.0)), 0.0)
        total = e.sum(axis=-1, keepdims=True)
        probs = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
        return fit_to_counts(probs, allowed, place_counts(v)) if fitted else probs

    def worlds(self, rules: Rules, obs: np.ndarray, v: View, seed: int, samples: int,
               candidates: int = CANDIDATES_PER_SAMPLE, fitted: bool = False) -> np.ndarray:
        """``samples`` worlds for the observation row ``obs`` (``v``: its view, one row): drawn from
        ``candidates * samples`` worlds of pimc's exact sampler by the weight the network's
        correction gives each (:func:`world_log_weights`).  The sampler's worlds follow its own
        marginal already, so only the correction weighs them: the resampled worlds then follow the
        belief's probabilities, and each is a world the sampler drew.

        ``fitted``: the weights are then moved, as little as can be, until the weighted candidates
        put every card in each place with exactly the probability :meth:`probabilities` gives it
        (:func:`match_marginals`), so the worlds solved follow the marginals the heat maps show."""
        rng = np.random.default_rng(seed)
        pool = sample_worlds(obs, rules, candidates * samples, rng)
        allowed = possible(v)[0]
        log_w = world_log_weights(pool, self.correction(obs)[0], allowed, rules.players)
        if fitted:
            log_w = match_marginals(log_w, world_places(pool, rules.players),
                                    self.probabilities(np.atleast_2d(obs), v)[0], allowed)
        return pool[resample(log_w, samples, rng)]


def world_places(worlds: np.ndarray, players: int) -> np.ndarray:
    """``(n, 36)`` the place index of every card in each world ``(n, 3, 36)`` (relative seats):
    0 seat 1, 1 seat 2, 2 the talon (two players: in no hand)."""
    place = np.full(worlds.shape[:1] + (NUM_CARDS,), 2, dtype=np.int64)
    place[worlds[:, 1]] = 0
    if players == 3:
        place[worlds[:, 2]] = 1
    return place


def world_log_weights(worlds: np.ndarray, logits: np.ndarray, allowed: np.ndarray, players: int) -> np.ndarray:
    """``(n,)``: the sum, over the cards with a choice of place (``allowed`` of one row ``(36, 3)``),
    of ``logits`` ``(36, 3)`` at the place each world ``(n, 3, 36)`` gives the card: up to a constant,
    the log of the product of ``softmax(logits)`` over the cards."""
    uncertain = allowed.sum(axis=-1) > 1
    place = world_places(worlds, players)
    picked = logits[np.arange(NUM_CARDS)[None, :], place]  # (n, 36)
    return np.where(uncertain[None, :], picked, 0.0).sum(axis=1)


def match_marginals(log_w: np.ndarray, places: np.ndarray, target: np.ndarray, allowed: np.ndarray,
                    steps: int = 50, tolerance: float = 1e-9) -> np.ndarray:
    """The log weights ``log_w`` ``(n,)`` of ``n`` worlds (``places`` ``(n, 36)``, :func:`world_places`)
    moved the least, in relative entropy, so that the weighted worlds put each card with a choice of
    place (``allowed`` ``(36, 3)``) in its first place with the probability ``target`` ``(36, 3)`` gives.

    Each such card has two places, so the weights are ``log_w + places_first @ lam``, one ``lam`` a
    card, and ``lam`` solves the convex dual (the log of the weights' sum less ``lam . target``) by
    Newton's method with a halving line search, to ``tolerance`` on every card.  A card the worlds
    all place alike cannot be moved by any weight and is left out; if the worlds cannot meet every
    target together, the weights are those of the steps (the start included) whose largest miss
    was least, so the match is never further than the correction's own weights."""
    uncertain = np.flatnonzero(allowed.sum(axis=-1) > 1)
    first = np.argmax(allowed[uncertain], axis=-1)
    x = (places[:, uncertain] == first[None, :]).astype(np.float64)  # (n, C): card in its first place
    t = target[uncertain, first]
    movable = x.min(axis=0) < x.max(axis=0)
    x, t = x[:, movable], t[movable]
    if not len(t):
        return log_w

    def dual(lam: np.ndarray) -> tuple[float, np.ndarray]:
        z = log_w + x @ lam
        top = z.max()
        p = np.exp(z - top)
        total = p.sum()
        return float(top + np.log(total) - lam @ t), p / total

    lam = np.zeros(len(t))
    value, p = dual(lam)
    best = (np.inf, lam)
    for _ in range(steps):
        mean = p @ x
        gap = mean - t
        best = min(best, (np.abs(gap).max(), lam), key=lambda b: b[0])
        if best[0] < tolerance:
            break
        hessian = (x * p[:, None]).T @ x - np.outer(mean, mean) + 1e-12 * np.eye(len(t))
        step = np.linalg.solve(hessian, gap)
        size = 1.0
        while size > 1e-6:
            trial, trial_p = dual(lam - size * step)
            if trial <= value:
                break
            size /= 2
        else:
            break
        lam, value, p = lam - size * step, trial, trial_p
    else:
        best = min(best, (np.abs(p @ x - t).max(), lam), key=lambda b: b[0])
    return log_w + x @ best[1]


# --- files -------------------------------------------------------------------------------------


def shipped_belief_path(preset: str) -> Path:
    """Where the belief file shipped for ``preset`` lives (next to its champion), whether or not
    there is one."""
    from imperiale_agents.champions import CHAMPIONS_DIR

    return CHAMPIONS_DIR / f"{preset}-belief.npz"


def shipped_belief(preset: str) -> BeliefNet:
    """The belief shipped for ``preset``; :class:`BeliefFileError` if there is none or it was
    trained under other rules."""
    path = shipped_belief_path(preset)
    if not path.is_file():
        from imperiale_agents.champions import CHAMPIONS_DIR

        have = sorted(p.name[: -len("-belief.npz")] for p in CHAMPIONS_DIR.glob("*-belief.npz")) or ["none"]
        raise BeliefFileError(f"the rules preset {preset!r} has no shipped belief (presets with one: "
                              f"{', '.join(have)}); train one with python -m imperiale_train.belief_training")
    net = read_belief(path)
    trained = (net.meta.get("rules") or {}).get("preset")
    if trained != preset:
        raise BeliefFileError(f"{path} was trained under the {trained!r} rules, not {preset!r}")
    return net


def belief_archive_bytes(layers, activation: str, rules: dict, provenance: dict) -> bytes:
    """The bytes of a belief file (the caller writes them atomically)."""
    meta = {"format": FORMAT, "version": VERSION, "obs_version": OBS_VERSION, "activation": activation,
            "rules": rules, "provenance": provenance}
    arrays = {"metadata": np.frombuffer(json.dumps(meta, sort_keys=True).encode("utf-8"), dtype=np.uint8)}
    for i, (weight, bias) in enumerate(layers):
        arrays[f"layer{i}.weight"] = np.ascontiguousarray(weight, dtype=np.float32)
        arrays[f"layer{i}.bias"] = np.ascontiguousarray(bias, dtype=np.float32)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def read_belief(path: str | Path) -> BeliefNet:
    """The belief network of ``path``; :class:`BeliefFileError` naming what is wrong."""
    path = Path(path)
    if not path.is_file():
        raise BeliefFileError(f"no belief file at {path}")
    try:
        with zipfile.ZipFile(path) as archive:
            names = {n[: -len(".npy")] for n in archive.namelist() if n.endswith(".npy")}
            if "metadata" not in names or len(names) != len(archive.namelist()):
                raise BeliefFileError(f"{path} is not a belief file (numpy arrays with metadata)")
            meta = json.loads(_array(archive, "metadata").tobytes().decode("utf-8"))
            if not isinstance(meta, dict) or meta.get("format") != FORMAT:
                raise BeliefFileError(f"{path} is not a belief file (format {FORMAT!r})")
            if meta.get("version") != VERSION or meta.get("obs_version") != OBS_VERSION:
                raise BeliefFileError(f"{path} is a belief file of version {meta.get('version')!r} for observation "
                                      f"version {meta.get('obs_version')!r}; this code reads version {VERSION} for "
                                      f"observation version {OBS_VERSION}")
            if meta.get("activation") not in ACTIVATIONS:
                raise BeliefFileError(f"{path}: activation {meta.get('activation')!r} is not one of "
                                      f"{', '.join(ACTIVATIONS)}")
            count = sum(1 for n in names if n.endswith(".weight"))
            if names != {"metadata"} | {f"layer{i}.{x}" for i in range(count) for x in ("weight", "bias")}:
                raise BeliefFileError(f"{path}: a belief file holds layer0..layerN weights and biases and metadata")
            layers, width, total = [], FEATURES.size, 0
            for i in range(count):
                weight, bias = _array(archive, f"layer{i}.weight"), _array(archive, f"layer{i}.bias")
                if weight.ndim != 2 or weight.shape[1] != width or bias.shape != (weight.shape[0],) \
                        or weight.dtype.kind != "f" or bias.dtype.kind != "f":
                    raise BeliefFileError(f"{path}: layer {i} must take {width} inputs (weight (out, {width}), "
                                          "bias (out,), floating point)")
                total += weight.size + bias.size
                if total > MAX_PARAMETERS:
                    raise BeliefFileError(f"{path}: more than {MAX_PARAMETERS:,} parameters")
                if not (np.isfinite(weight).all() and np.isfinite(bias).all()):
                    raise BeliefFileError(f"{path}: layer {i} holds NaN or infinite weights")
                layers.append((weight.astype(np.float32), bias.astype(np.float32)))
                width = weight.shape[0]
            if width != OUTPUTS:
                raise BeliefFileError(f"{path}: the last layer gives {width} values, not {OUTPUTS} "
                                      "(36 cards x 3 places)")
    except (OSError, zipfile.BadZipFile, ValueError, UnicodeDecodeError, EOFError) as exc:
        raise BeliefFileError(f"{path} is a damaged belief file ({type(exc).__name__}: {exc})") from None
    return BeliefNet(tuple(layers), meta["activation"], meta)


def _array(archive: zipfile.ZipFile, name: str) -> np.ndarray:
    with archive.open(f"{name}.npy") as member:
        return np.lib.format.read_array(member, allow_pickle=False)
