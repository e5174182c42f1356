"""Policy-weighted worlds for PIMC: sampled deals weighed by how likely the opponent's plays were.

Plain PIMC (:mod:`imperiale_agents.pimc`) draws the opponent's hand uniformly among the hands that agree
with what is known for sure (his played cards, voids, shown cards, declared point).  But *how*
he played says more: a player who ducked a trick he could have taken cheaply probably holds no
cheap winner, and one who followed low while the rules made him beat when he could (``must_beat``)
holds no higher card of that suit at all.  The standard refinement, here: draw many candidate
worlds, give each the probability that an opponent model (a trained policy) would have played
the opponent's cards of this deal had it held that world's hand, and resample the worlds PIMC
solves by those weights.  A card the rules would not have allowed with that hand gets weight 0.

The observation carries the cards played this deal but not their order, so the agent remembers
the tricks itself: :class:`PlayMemory` rebuilds each deal's tricks from the agent's own
successive observations of that deal (one a trick).  Where it missed a trick (it joined a deal
midway), the weights use no play at all and the worlds are plain PIMC's.  Two players only: with
three, a trick's order cannot be told from two snapshots of one seat.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import NamedTuple

import numpy as np

from imperiale_agents.view import CARD_SUIT, View
from imperiale_env.core.actions import NUM_ACTIONS
from imperiale_env.core.cards import NUM_CARDS, NUM_SUITS
from imperiale_env.core.observation import OBS_SIZE, OFFSETS, PHASES
from imperiale_env.core.rules import Rules
from imperiale_env.core.tricks import TRICKS_PER_DEAL, beats_one, legal_cards_one

#: A trick of a two-player deal, seats relative to the agent: who led (0 the agent, 1 the
#: opponent), the agent's card and the opponent's card.
Trick = tuple[int, int, int]
#: Candidate worlds drawn for each world kept.
CANDIDATES_PER_SAMPLE = 4
#: The share of the opponent model's probability spread uniformly over the legal cards, so that
#: one play the model finds unlikely cannot rule a world out (an illegal one still does).
UNIFORM_SHARE = 0.1
#: Deals remembered at once (oldest forgotten first); more than a batch plays side by side.
MEMORY_LIMIT = 50_000


def _bits(cards: np.ndarray) -> int:
    """A row of 36 booleans as a card bitmask."""
    return sum(1 << int(c) for c in np.flatnonzero(cards))


_SCORES = ("imperiales", "points")


class DealSoFar(NamedTuple):
    """What the agent remembers of a deal at one of its card decisions."""

    tricks: tuple[Trick, ...]  # the complete tricks, in order
    scores: np.ndarray  # (len(tricks) + 1, 6): the impériales and points blocks it saw in each trick


class _Seen(NamedTuple):
    tricks_played: int
    mine: int  # bitmask of the agent's played cards
    theirs: int  # bitmask of the opponent's played cards
    their_lead: int  # the opponent's card on the table (he led this trick), -1 if none
    deal: DealSoFar | None  # None: a trick was missed


def _scores(obs: np.ndarray) -> np.ndarray:
    return np.concatenate([obs[OFFSETS[name]] for name in _SCORES]).astype(np.float32)


class PlayMemory:
    """The tricks of the two-player deals an agent plays, one entry a deal.

    A deal is known by the agent's twelve dealt cards, the turned card and the dealer's seat.
    Between two of the agent's card decisions one trick is complete: the agent's new played card
    is its card in it, and the opponent's new played card that is not on the table now is his.
    """

    def __init__(self, limit: int = MEMORY_LIMIT):
        self.limit = limit
        self._deals: OrderedDict[tuple, _Seen] = OrderedDict()

    def clear(self) -> None:
        self._deals.clear()

    def record_plays(self, obs: np.ndarray, v: View) -> dict[int, DealSoFar | None]:
        """:meth:`record` every card decision of a batch (``obs`` and its decoded ``v``), forced or
        not, so that no trick is missed: row -> what is known of its deal."""
        return {int(r): self.record(obs[r], v, int(r)) for r in np.flatnonzero(v.phase == PHASES.index("play"))}

    def record(self, obs: np.ndarray, v: View, row: int) -> DealSoFar | None:
        """Record the card decision of row ``row`` (``obs``: its observation row, ``v``: the decoded
        batch) and return what is known of the deal so far (``None`` if a trick was missed).  Call it
        for each of the agent's card decisions, in order.

        The scores are kept trick by trick because some presets score during the play (a captured
        impériale): the opponent's decision in a trick saw the scores the agent sees in it."""
        mine = _bits(v.played[row, 0])
        theirs = _bits(v.played[row, 1])
        key = (mine | _bits(v.hand[row]), int(np.argmax(v.turned[row])), int(v.dealer[row]))
        done = int(v.tricks_played[row])
        lead = np.flatnonzero(v.trick[row, 1])
        their_lead = int(lead[0]) if len(lead) else -1
        before = self._deals.pop(key, None)
        scores = _scores(obs)[None]
        if done == 0:
            deal: DealSoFar | None = DealSoFar((), scores)
        elif before is None or before.deal is None or before.tricks_played != done - 1:
            deal = before.deal if before is not None and before.tricks_played == done else None
        else:
            trick = _last_trick(before, mine, theirs, their_lead)
            deal = None if trick is None else DealSoFar((*before.deal.tricks, trick),
                                                        np.concatenate([before.deal.scores, scores]))
        self._deals[key] = _Seen(done, mine, theirs, their_lead, deal)
        while len(self._deals) > self.limit:
            self._deals.popitem(last=False)
        return deal


def _last_trick(before: _Seen, mine: int, theirs: int, their_lead: int) -> Trick | None:
    """The trick completed since the decision ``before``, from the cards played since."""
    new_mine = mine & ~before.mine
    new_theirs = theirs & ~before.theirs
    if their_lead >= 0:
        new_theirs &= ~(1 << their_lead)
    if before.their_lead >= 0:  # he led, the agent followed
        trick = (1, new_mine, 1 << before.their_lead) if new_theirs == 0 else None
    else:
        trick = (0, new_mine, new_theirs)
    if trick is None or trick[1].bit_count() != 1 or trick[2].bit_count() != 1:
        return None
    return trick[0], trick[1].bit_length() - 1, trick[2].bit_length() - 1


#: The per-seat blocks of the observation and their width a seat.
_SEAT_BLOCKS = (("played", NUM_CARDS), ("trick", NUM_CARDS), ("revealed", NUM_CARDS), ("voids", NUM_SUITS),
                ("declared_point", 4), ("imperiales", 1), ("points", 1), ("tricks", 1), ("dealer", 1), ("leader", 1))


def _their_view(obs: np.ndarray) -> np.ndarray:
    """The observation row ``obs`` with seats 0 and 1 exchanged in every per-seat block: what the
    opponent sees of everything that is not time-dependent (scores, shown cards, declared point,
    dealer, trump).  The rest is set per decision by :func:`_decision_rows`."""
    out = obs.astype(np.float32).copy()
    for name, width in _SEAT_BLOCKS:
        start = OFFSETS[name].start
        out[start : start + width] = obs[start + width : start + 2 * width]
        out[start + width : start + 2 * width] = obs[start : start + width]
    return out


class _Decision(NamedTuple):
    trick: int  # 0-based trick number
    led: int  # the agent's card he followed, -1 if he led
    card: int  # the card he played


def _decisions(tricks: tuple[Trick, ...], their_lead: int) -> list[_Decision]:
    """The opponent's card decisions of the deal so far, the lead on the table included."""
    out = [_Decision(k, -1 if leader == 1 else mine, theirs) for k, (leader, mine, theirs) in enumerate(tricks)]
    if their_lead >= 0:
        out.append(_Decision(len(tricks), -1, their_lead))
    return out


def _decision_rows(base: np.ndarray, deal: DealSoFar, d: _Decision, trump: int) -> np.ndarray:
    """The opponent's observation at decision ``d`` without his hand: ``base`` (:func:`_their_view`)
    with the played cards, the trick, the voids, the tricks won, the leader, the scores and the
    progress of that moment (seat 0 is the opponent, seat 1 the agent)."""
    row = base.copy()
    seen = deal.scores[d.trick]
    for i, name in enumerate(_SCORES):
        start = OFFSETS[name].start
        row[start], row[start + 1] = seen[3 * i + 1], seen[3 * i]
    for name in ("hand", "played", "trick", "voids", "tricks", "leader", "phase", "question_kind", "question_cards"):
        row[OFFSETS[name]] = 0.0
    played, voids, won = OFFSETS["played"].start, OFFSETS["voids"].start, [0, 0]
    for leader, mine, theirs in deal.tricks[: d.trick]:
        row[played + theirs] = 1.0
        row[played + NUM_CARDS + mine] = 1.0
        led, follow = (mine, theirs) if leader == 0 else (theirs, mine)
        follower = 0 if leader == 0 else 1  # relative to the opponent
        if CARD_SUIT[follow] != CARD_SUIT[led]:
            row[voids + NUM_SUITS * follower + CARD_SUIT[led]] = 1.0
        winner = follower if beats_one(follow, led, trump) else 1 - follower
        won[winner] += 1
    row[OFFSETS["tricks"].start : OFFSETS["tricks"].start + 2] = np.array(won, dtype=np.float32) / TRICKS_PER_DEAL
    if d.led >= 0:
        row[played + NUM_CARDS + d.led] = 1.0
        row[OFFSETS["trick"].start + NUM_CARDS + d.led] = 1.0
        row[OFFSETS["leader"].start + 1] = 1.0
    row[OFFSETS["phase"].start + PHASES.index("play")] = 1.0
    row[OFFSETS["progress"].start] = d.trick / TRICKS_PER_DEAL
    return row


class TheirDecisions(NamedTuple):
    """The opponent's card decisions of the deal, as he saw them, for each hand he may hold."""

    obs: np.ndarray  # (K, M, 485) float32: his observation at each decision, for each hand
    mask: np.ndarray  # (K, M, 43) bool: the cards the rules allowed him there
    card: np.ndarray  # (K,) int: the card he played


def their_decisions(rules: Rules, obs: np.ndarray, v: View, deal: DealSoFar,
                    their_hands: np.ndarray) -> TheirDecisions:
    """The ``K`` card decisions of the opponent so far this deal (the lead on the table included)
    for each of the ``M`` hands ``their_hands`` (``(M, 36)`` bool: his hand *now*) he may hold.

    ``obs``, ``v``: the agent's observation row and its decoded view (one row); ``deal``: what it
    remembers of the deal (:meth:`PlayMemory.record`).  With his true hand, these are exactly the observations
    and legal masks the engine gave him (tests/test_inference.py checks it)."""
    trump = int(v.trump[0])
    lead = np.flatnonzero(v.trick[0, 1])
    decisions = _decisions(deal.tricks, int(lead[0]) if len(lead) else -1)
    k, m = len(decisions), len(their_hands)
    base = _their_view(obs)
    now = [_bits(h) for h in their_hands]
    hands = np.zeros((k, m), dtype=np.uint64)
    legal = np.zeros((k, m), dtype=np.uint64)
    obs_rows = np.empty((k, m, OBS_SIZE), dtype=np.float32)
    later = 0  # his cards played at or after the decision, walking back from the last
    for i in range(k - 1, -1, -1):
        d = decisions[i]
        later |= 1 << d.card
        obs_rows[i] = _decision_rows(base, deal, d, trump)
        for w, hand_now in enumerate(now):
            hand = hand_now | later
            hands[i, w] = hand
            legal[i, w] = legal_cards_one(rules, hand, trump, d.led, d.led, d.trick == 0)
    card_bit = np.uint64(1) << np.arange(NUM_CARDS, dtype=np.uint64)
    obs_rows[..., OFFSETS["hand"]] = (hands[..., None] & card_bit) != 0
    masks = np.zeros((k, m, NUM_ACTIONS), dtype=bool)
    masks[..., :NUM_CARDS] = (legal[..., None] & card_bit) != 0
    return TheirDecisions(obs_rows, masks, np.array([d.card for d in decisions], dtype=np.int64))


def play_log_likelihood(rules: Rules, obs: np.ndarray, v: View, deal: DealSoFar, their_hands: np.ndarray,
                        log_probs, uniform_share: float = UNIFORM_SHARE) -> np.ndarray:
    """``(M,)``: the log-probability, under the opponent model ``log_probs`` (``(n, 485)`` observations
    and ``(n, 43)`` masks to ``(n, 43)`` log-probabilities), of every card the opponent played this
    deal, for each hand of ``their_hands`` (arguments as :func:`their_decisions`).  ``-inf`` where
    the rules would not have let him play a card with that hand.  Each probability is mixed with
    ``uniform_share`` of the uniform choice among his legal cards."""
    d = their_decisions(rules, obs, v, deal, their_hands)
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
