"""Policy-weighted worlds for PIMC: sampled deals weighed by how likely the opponent's plays were.

Plain PIMC (:mod:`imperiale_agents.search.pimc`) draws the opponent's hand uniformly among the hands that
agree with what is known for sure (his played cards, the cards his plays prove he lacks, shown
cards, declared point).  But *how* he played says more: a player who ducked a trick he could have
taken cheaply probably holds no cheap winner.  The standard refinement, here: draw many candidate
worlds, give each the probability that an opponent model (a trained policy) would have played the
opponent's cards of this deal had it held that world's hand, and resample the worlds PIMC solves
by those weights.  A card the rules would not have allowed with that hand gets weight 0.

The history is read from the observation alone (version 1 keeps the order of play: the trick each
card fell in, who played it, who led each trick), so the agent remembers nothing between
decisions and can join a deal at any point.  The opponent's observation at each of his past card
decisions is rebuilt from the agent's current one in two parts.  What the play determines (the
order of play, voids, cards proven absent, tricks won and played: every block of
:data:`~imperiale_env.reference.observe.PLAY_BLOCKS`) is written by the reference encoder's own
:func:`~imperiale_env.reference.observe.write_play`, given the deal's plays cut back to that
decision and his seat: the one writing of those blocks, so a block that changes during the play
is rebuilt here with no code of its own.  The rest does not change during the play and is taken
from the agent's row with the seats exchanged (:func:`_their_view`).  Nothing scores during the
play, so the scores, the shown cards and the declared points he saw are the ones seen now, with
one exception: under ``declaration_timing = "dealer_after_first_lead"`` the elder leads the first
card before the dealer declares, and what the elder saw of the scores then is not in the
observation (the rebuilt row hides the dealer's declarations and keeps the scores of now).  Two
players only: with three, the model would need each opponent's view of the other's hand.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from imperiale_agents.observation_view import View
from imperiale_env.core.actions import NUM_ACTIONS
from imperiale_env.core.cards import NUM_CARDS
from imperiale_env.core.observation import LAYOUT, OBS_SIZE, PHASES, read, views, write
from imperiale_env.core.rules import Rules
from imperiale_env.kernels.trick_rules import legal_cards
from imperiale_env.reference.observe import PLAY_BLOCKS, write_play

#: Candidate worlds drawn for each world kept.
CANDIDATES_PER_SAMPLE = 4
#: The share of the opponent model's probability spread uniformly over the legal cards, so that
#: one play the model finds unlikely cannot rule a world out (an illegal one still does).
UNIFORM_SHARE = 0.1
#: The blocks with seats in them that do not change during the play, by how the seats are written
#: (``Block.seats``): exchanged to see the deal from the opponent's seat (the play's blocks are
#: written by ``write_play``).  A block declared in the layout is exchanged with no edit here.
_SEAT_ROWS, _SEAT_VALUES, _SEAT = (tuple(b.name for b in LAYOUT if b.seats == kind and b.name not in PLAY_BLOCKS)
                                   for kind in ("rows", "values", "seat"))
#: What the opponent saw that the agent does not: cleared (his hand is set per world, his phase per decision).
_HIDDEN = ("hand", "phase", "question_kind", "question_cards")
assert not set(_HIDDEN) & set(PLAY_BLOCKS)


class TheirDecisions(NamedTuple):
    """The opponent's card decisions of the deal, as he saw them, for each hand he may hold."""

    obs: np.ndarray  # (K, M, OBS_SIZE) uint8: his observation at each decision, for each hand
    mask: np.ndarray  # (K, M, 43) bool: the cards the rules allowed him there
    card: np.ndarray  # (K,) int: the card he played


class _Decision(NamedTuple):
    at: int  # its index in the deal's plays (:func:`_plays`)
    trick: int  # 0-based trick number
    led: int  # the agent's card he followed, -1 if he led
    card: int  # the card he played


def _plays(v: View) -> list[tuple[int, int]]:
    """The deal's plays so far as ``(seat, card)``, in order (seats the agent's: 0 the agent, 1 the
    opponent), from the observation: the trick each card fell in and who led it."""
    played_in, played_by = v.played_in[0], v.played_by[0]
    out: list[tuple[int, int]] = []
    for k in range(int(played_in.max()) + 1):
        by = {int(played_by[c]): int(c) for c in np.flatnonzero(played_in == k)}
        leader = int(v.leaders[0, k])
        out += [(p, by[p]) for p in (leader, 1 - leader) if p in by]
    return out


def _decisions(plays: list[tuple[int, int]]) -> list[_Decision]:
    """The opponent's card decisions in the deal's ``plays`` (the lead on the table included), in order."""
    return [_Decision(i, i // 2, -1 if i % 2 == 0 else plays[i - 1][1], c) for i, (p, c) in enumerate(plays) if p == 1]


def _their_view(obs: np.ndarray) -> np.ndarray:
    """The observation row ``obs`` with seats 0 and 1 exchanged in what does not change during the
    play (shown cards, declared points, scores, dealer, trump), his hidden blocks cleared.  The
    play is written per decision by :func:`_decision_row`."""
    out = obs.copy()
    for name in _SEAT_ROWS:
        rows = read(out, name)
        rows[[0, 1]] = rows[[1, 0]]
    for name in _SEAT_VALUES:
        x = read(out, name)
        x[...] = np.choose(x, (0, 2, 1, 3)).astype(x.dtype)
    for name in _SEAT:
        x = read(out, name)
        x[...] = 1 - x
    for name in _HIDDEN:
        write(out, name, 0)
    return out


def _decision_row(rules: Rules, base: np.ndarray, plays: list[tuple[int, int]], d: _Decision,
                  first_lead_then_declare: bool) -> np.ndarray:
    """The opponent's observation at decision ``d`` without his hand: ``base`` (:func:`_their_view`)
    with the play of that moment, written by the reference encoder (his seat, 1, as the observer)."""
    row = base.copy()
    write_play(views(row), rules, int(read(row, "trump")[0]), plays[: d.at], 1, 2)
    write(row, "phase", 1 + PHASES.index("play"))
    if first_lead_then_declare and d.trick == 0 and d.led < 0:  # he led before the agent declared
        read(row, "shown_items")[1] = 0
        shown_by = read(row, "shown_by")
        shown_by[shown_by == 2] = 0
    return row


def their_decisions(rules: Rules, obs: np.ndarray, v: View, their_hands: np.ndarray) -> TheirDecisions:
    """The ``K`` card decisions of the opponent so far this deal (the lead on the table included)
    for each of the ``M`` hands ``their_hands`` (``(M, 36)`` bool: his hand *now*) he may hold.

    ``obs``, ``v``: the agent's observation row and its decoded view (one row).  With his true
    hand, these are exactly the observations and legal masks the engine gave him (but for the
    exception in the module's docstring; tests/test_inference.py checks it)."""
    if int(v.players[0]) != 2:
        raise ValueError(f"the opponent's decisions are rebuilt for two players, not {int(v.players[0])}")
    trump = int(v.trump[0])
    plays = _plays(v)
    decisions = _decisions(plays)
    k, m = len(decisions), len(their_hands)
    base = _their_view(np.asarray(obs).reshape(OBS_SIZE))
    late = rules.declaration_timing == "dealer_after_first_lead"
    obs_rows = np.empty((k, m, OBS_SIZE), dtype=base.dtype)
    masks = np.zeros((k, m, NUM_ACTIONS), dtype=bool)
    card_bit = np.uint64(1) << np.arange(NUM_CARDS, dtype=np.uint64)
    now = (np.asarray(their_hands, dtype=bool).astype(np.uint64) * card_bit).sum(axis=1, dtype=np.uint64)
    later = np.uint64(0)  # his cards played at or after the decision, walking back from the last
    for i in range(k - 1, -1, -1):
        d = decisions[i]
        later |= np.uint64(1) << np.uint64(d.card)
        obs_rows[i] = _decision_row(rules, base, plays, d, late)
        hands = now | later
        read(obs_rows[i], "hand")[...] = (hands[:, None] & card_bit) != 0
        for w in range(m):
            legal = legal_cards(rules, int(hands[w]), trump, d.led, d.led, d.trick == 0)
            masks[i, w, :NUM_CARDS] = (np.uint64(legal) & card_bit) != 0
    return TheirDecisions(obs_rows, masks, np.array([d.card for d in decisions], dtype=np.int64))


def play_log_likelihood(rules: Rules, obs: np.ndarray, v: View, their_hands: np.ndarray,
                        log_probs, uniform_share: float = UNIFORM_SHARE) -> np.ndarray:
    """``(M,)``: the log-probability, under the opponent model ``log_probs`` (``(n, OBS_SIZE)``
    observations and ``(n, 43)`` masks to ``(n, 43)`` log-probabilities), of every card the opponent
    played this deal, for each hand of ``their_hands`` (arguments as :func:`their_decisions`).
    ``-inf`` where the rules would not have let him play a card with that hand.  Each probability
    is mixed with ``uniform_share`` of the uniform choice among his legal cards."""
    d = their_decisions(rules, obs, v, their_hands)
    k, m = d.mask.shape[:2]
    if not k or not m:
        return np.zeros(m)
    allowed = d.mask[np.arange(k), :, d.card]  # (K, M)
    safe = d.mask.copy()
    safe[..., 0] |= ~safe.any(axis=-1)  # a consistent world always has a legal card; keep the model finite anyway
    lp = log_probs(d.obs.reshape(k * m, OBS_SIZE), safe.reshape(k * m, -1)).reshape(k, m, -1)
    p = np.exp(lp[np.arange(k), :, d.card])
    mixed = (1.0 - uniform_share) * p + uniform_share / d.mask.sum(axis=-1).clip(min=1)
    with np.errstate(divide="ignore"):
        return np.where(allowed, np.log(mixed), -np.inf).sum(axis=0)


def resample(log_weights: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` indices drawn with probabilities proportional to ``exp(log_weights)`` (uniform if
    every weight is 0)."""
    finite = np.isfinite(log_weights)
    if not finite.any():
        return rng.integers(0, len(log_weights), size=n)
    w = np.where(finite, np.exp(log_weights - log_weights[finite].max()), 0.0)
    return rng.choice(len(w), size=n, p=w / w.sum())
