"""Perfect Information Monte Carlo: sample the hidden cards, solve each sample exactly, average.

For each card to play, :func:`sample_worlds` draws deals of the unseen cards that agree with
everything the acting player knows, *from the observation alone* (it never receives the
engine, so it cannot read a hidden hand):

* his own hand; the cards each seat has played this deal (the current trick included);
* the cards each seat revealed (impériales shown, the winning point): those still in that
  seat's hand unless played since; with three players, the dealer's shown trump card too;
* the cards the play proves a seat does not hold (the observation's ``not_held``: a void, a
  card it would have had to play instead under the preset's follow / beat / trump
  obligations) and the voids;
* the hand sizes (12 minus the cards played);
* the points declared and not shown (count and value): the seat's cards at the declaration
  (its hand now plus what it played) must hold a suit of exactly that count and value.  This
  one is built into the draw of the first declared opponent (:func:`_point_options`); with
  three players the other opponent's hand (the cards left) is checked, over draws made in
  bulk for up to ``max_tries`` rounds; when fewer consistent worlds than asked turn up, the
  missing ones are copies of those found.  No world that contradicts the observation is ever returned; an
  observation no hand fits raises :class:`ValueError`.

``knowledge="voids"`` (spec ``pimc:N:voids``) is the sampler before observation version 1,
which knew the voids but not the other proofs of play: kept for the comparison in
``docs/benchmarks.md``.

With two players the unseen cards are split between the opponent's hand and the 7 cards of
the talon: the opponent's hand is a uniform sample of the right size from the unseen cards of
the suits he may still hold.  With three players the unseen cards are dealt to the two
opponents, uniformly among the splits that respect voids and known cards.

Each sampled deal is solved exactly for the rest of the deal by the compiled solver
(:class:`imperiale_agents.search.compiled_solver.CompiledSolver`; ``solver="python"`` uses the pure-Python
:class:`imperiale_agents.search.solver.Solver` instead, the same values far slower: for tests and benchmarks);
the agent plays the card of best mean value, ties broken by the heuristic.  A forced card (one
legal card) is the heuristic's, and so is every decision that is not a card to play
(questions, point) unless ``declarations="search"`` (spec ``pimc:N:search``): then those are
decided by sampled worlds too (:mod:`imperiale_agents.search.declaration_search`).

With an opponent model (``infer``, spec ``pimc:N:infer``; two players) the worlds are not
uniform among the consistent ones: :func:`weighted_worlds` draws several times more and keeps
``N`` of them by how likely the model finds the opponent's plays of the deal with each world's
hand (:mod:`imperiale_agents.search.play_likelihood`).

With a belief model (``belief``, spec ``pimc:N:belief``) the worlds are drawn the same way and
resampled by what the belief learnt from the order of play (:mod:`imperiale_agents.search.belief_model`): still
only worlds that agree with every known fact, more often the ones the play makes likely.
:func:`sampler_marginal` is the sampler's probability of each card's place, the belief's prior.
"""

from __future__ import annotations

import numpy as np

from imperiale_agents.observation_view import CARD_SUIT, POINT_VALUE, SUIT_ONEHOT, View, deck_mask, decode
from imperiale_agents.parallel.process_pool import LazyPool
from imperiale_agents.policies.heuristic import HeuristicAgent, play_scores
from imperiale_agents.search import declaration_search, play_likelihood
from imperiale_agents.search.compiled_solver import CompiledSolver
from imperiale_agents.search.solver import Solver
from imperiale_env.core.cards import NUM_CARDS
from imperiale_env.core.rules import Rules, resolve_rules

DEFAULT_SAMPLES = 16
SOLVERS = ("compiled", "python")
#: Who answers the declarations (questions, point): the heuristic, or a search of sampled worlds
#: (:mod:`imperiale_agents.search.declaration_search`).
DECLARATIONS = ("heuristic", "search")
#: What the sampler keeps out of an opponent's hand: everything the play proves, or the voids
#: alone (the sampler before observation version 1; for comparisons).
KNOWLEDGE = ("all", "voids")


def _point_ok(cards: np.ndarray, count: int, value: int) -> np.ndarray:
    """Which rows of ``cards`` (``(n, 36)`` bool) hold a suit of exactly ``count`` cards and ``value``?"""
    per_suit = cards[:, None, :] & SUIT_ONEHOT[None]
    return ((per_suit.sum(axis=2) == count) & (per_suit @ POINT_VALUE == value)).any(axis=1)


#: The least number of candidate worlds drawn a round with three players (most are rejected
#: when both opponents declared a point).
CANDIDATES_3P = 256


def _subsets(rng: np.random.Generator, n: int, cards: np.ndarray, k: int) -> np.ndarray:
    """``n`` uniform ``k``-card subsets of the cards ``cards`` (indices), as ``(n, 36)`` bool: the
    ``k`` cards of smallest random key in each row."""
    out = np.zeros((n, NUM_CARDS), dtype=bool)
    if k > 0 and n:
        keys = rng.random((n, len(cards)))
        pick = np.argpartition(keys, k - 1, axis=1)[:, :k] if k < len(cards) else np.arange(k)[None].repeat(n, 0)
        out[np.arange(n)[:, None], cards[pick]] = True
    return out


def sample_worlds(obs: np.ndarray, rules: Rules, n: int, rng: np.random.Generator, *,
                  max_tries: int = 50, knowledge: str = "all") -> np.ndarray:
    """``n`` sampled hands of every seat, ``(n, 3, 36)`` bool by relative seat (seat 0 = the
    acting player, always his real hand), consistent with the observation ``obs`` (one row)."""
    return _sample(decode(obs), rules, n, rng, max_tries, knowledge)


def _sample(v: View, rules: Rules, n: int, rng: np.random.Generator, max_tries: int = 50,
            knowledge: str = "all") -> np.ndarray:
    """:func:`sample_worlds` of the decoded observation ``v`` (row 0), every world drawn at once."""
    P = rules.players
    hand = v.hand[0]
    played = v.played[0]
    revealed = v.revealed[0]
    voids = v.voids[0]
    deck = deck_mask(v.players)[0]
    sizes = 12 - played.sum(axis=1)
    known = np.zeros((3, NUM_CARDS), dtype=bool)
    for s in range(1, P):
        known[s] = revealed[s] & ~played[s]
    if P == 3:
        dealer = int(v.dealer[0])
        turned = v.turned[0]
        if dealer != 0:
            known[dealer] |= turned & ~played[dealer]
        out_of_pool = hand | played.any(axis=0) | known.any(axis=0)
    else:
        out_of_pool = hand | played.any(axis=0) | known.any(axis=0) | v.turned[0]
    pool = deck & ~out_of_pool
    allowed = np.zeros((3, NUM_CARDS), dtype=bool)
    for s in range(1, P):
        allowed[s] = pool & ~voids[s][CARD_SUIT]
        if knowledge == "all":
            allowed[s] &= ~v.not_held[0, s]
    # A shown point is known cards already; a declared one constrains the cards held then.
    checks = [(s, int(v.point_count[0, s]), int(v.point_value[0, s])) for s in range(1, P) if v.declared[0, s]]
    worlds = np.zeros((n, 3, NUM_CARDS), dtype=bool)
    worlds[:, 0] = hand
    # Seat ``s`` is drawn first (the declared one, if any), seat ``o`` (three players) gets the rest.
    declared = {seat: (cnt, val) for seat, cnt, val in checks}
    s = next(iter(declared), 1)
    o = 3 - s if P == 3 else None
    if P == 3:
        only_s = allowed[s] & ~allowed[o]
        eligible = allowed[s] & allowed[o]
    else:
        only_s = np.zeros(NUM_CARDS, dtype=bool)
        eligible = allowed[s]
    forced = known[s] | only_s
    need = int(sizes[s] - forced.sum())
    options = _point_options(declared[s], played[s], forced, eligible, need) if s in declared else None
    feasible = need >= 0 and need <= eligible.sum() and (options is None or options)
    if not feasible:
        raise ValueError("no hand fits this observation: the cards left cannot make the opponents' hands "
                         "under what they showed, declared and are proven not to hold")
    if o is None:
        worlds[:, s] = _draw(rng, n, options, eligible, need) | forced
        return worlds
    # Three players: the other opponent gets the cards left; keep the draws that fit him, drawn
    # in bulk (at least CANDIDATES_3P a round) for up to ``max_tries`` rounds.
    kept: list[np.ndarray] = []
    found = 0
    for _ in range(max_tries):
        w = _draw(rng, max(n - found, CANDIDATES_3P), options, eligible, need) | forced
        w_o = pool & ~w | known[o]
        fits = (w_o.sum(axis=1) == sizes[o]) & ~(w_o & ~(allowed[o] | known[o])).any(axis=1)
        if o in declared:
            fits &= _point_ok(w_o | played[o], *declared[o])
        good = np.flatnonzero(fits)[: n - found]
        kept.append(np.stack([w[good], w_o[good]], axis=1))
        found += len(good)
        if found == n:
            break
    if not found:
        raise ValueError(f"no consistent world in {max_tries} rounds of draws: the opponents' hands are too "
                         "constrained for the sampler")
    pairs = np.concatenate(kept)
    if found < n:  # fill with copies of the consistent worlds found
        pairs = np.concatenate([pairs, pairs[rng.choice(found, size=n - found)]])
    worlds[:, s], worlds[:, o] = pairs[:, 0], pairs[:, 1]
    return worlds


def _draw(rng: np.random.Generator, m: int, options, eligible: np.ndarray, need: int) -> np.ndarray:
    """``m`` draws of the ``need`` cards of the first opponent outside his forced ones: through
    his declared point's ``options`` when he declared one, else uniform from ``eligible``."""
    if not options:
        return _subsets(rng, m, np.flatnonzero(eligible), need)
    w = np.zeros((m, NUM_CARDS), dtype=bool)
    chosen = rng.choice(len(options), size=m, p=_weights(options))
    for k in np.unique(chosen):
        _, t, rest, more = options[k]
        rows = np.flatnonzero(chosen == k)
        w[rows] = _subsets(rng, len(rows), rest, more)
        w[np.ix_(rows, t)] = True
    return w


def _weights(options) -> np.ndarray:
    w = np.array([o[0] for o in options], dtype=np.float64)
    return w / w.sum()


def _suit_options(check, played, forced, eligible) -> list[list[tuple[int, ...]]]:
    """A declared point's ways by suit: for each suit, every set ``T`` of the ``eligible`` cards of
    that suit that, with the cards of the suit the seat played or surely holds (``forced``), makes
    exactly the declared count and value."""
    from itertools import combinations

    count, value = check
    out: list[list[tuple[int, ...]]] = []
    for x in range(4):
        in_suit = SUIT_ONEHOT[x]
        fixed = (played | forced) & in_suit
        cand = np.flatnonzero(eligible & in_suit).tolist()
        k = count - int(fixed.sum())
        base = int(POINT_VALUE[fixed].sum())
        out.append([] if k < 0 or k > len(cand) else
                   [t for t in combinations(cand, k) if base + int(POINT_VALUE[list(t)].sum()) == value])
    return out


def _point_options(check, played, forced, eligible, need):
    """The first declared opponent's point, not shown: every way to hold it.

    For each suit and each set ``T`` of unseen cards of that suit that, with the cards of the
    suit he played or showed, makes exactly the declared count and value (:func:`_suit_options`),
    the number of ways to complete his hand from the unseen cards of the other suits he may hold.
    Drawing ``(suit, T)`` with that weight and then the rest uniformly is uniform over the
    consistent hands (up to hands that match the point in two suits, counted twice)."""
    from math import comb

    out = []
    for x, sets in enumerate(_suit_options(check, played, forced, eligible)):
        rest = np.flatnonzero(eligible & ~SUIT_ONEHOT[x])
        for t in sets:
            if len(t) <= need and (ways := comb(len(rest), need - len(t))):
                out.append((ways, list(t), rest, need - len(t)))
    return out


def sampler_marginal(v: View) -> np.ndarray:
    """``(B, 36, 3)`` float64: the probability the sampler (:func:`sample_worlds`) puts each card in
    each place (relative seat 1, seat 2, the talon), computed, not sampled.

    A card one opponent may hold and the other place may hold too is in his hand with probability
    (cards of his hand still to draw) / (cards he may hold), or, when he declared a point he did not
    show, the mixture over the ways to hold it (:func:`_point_options`: the sampler's own draw).
    With three players and both opponents declared, the ways of the two points are counted together
    (:func:`_both_points`), which is what the sampler's draw of the first and check of the second
    keep.  Exact but for hands that hold a declared point in two suits, which the sampler itself
    counts twice (the first opponent's) or once (the second's)."""
    out = np.zeros((v.n, NUM_CARDS, 3))
    for r in range(v.n):
        out[r] = _marginal_row(_rows(v, [r]))
    return out


def _marginal_row(v: View) -> np.ndarray:
    P = int(v.players[0])
    played, revealed, hand = v.played[0], v.revealed[0], v.hand[0]
    known = revealed & ~played
    known[0] = False
    pool = deck_mask(v.players)[0] & ~(hand | played.any(axis=0) | known.any(axis=0) | (v.turned[0] & (P == 2)))
    allowed = [pool & ~v.voids[0, s][CARD_SUIT] & ~v.not_held[0, s] for s in (1, 2)]
    other = allowed[1] if P == 3 else pool  # the place sharing cards with seat 1
    shared = allowed[0] & other
    # forced: the cards each opponent surely holds (shown, or the only one who may hold them)
    forced = {1: known[1] | (allowed[0] & ~other)}
    need = {1: int(12 - played[1].sum() - forced[1].sum())}
    if P == 3:
        forced[2] = known[2] | (allowed[1] & ~allowed[0])
        need[2] = int(12 - played[2].sum() - forced[2].sum())
    points = {s: (int(v.point_count[0, s]), int(v.point_value[0, s])) for s in need if v.declared[0, s]}
    p1 = np.zeros(NUM_CARDS)
    p1[forced[1] & ~known[1]] = 1.0
    p1[shared] = _seat_1_share(points, played, forced, shared, need)[shared]
    out = np.zeros((NUM_CARDS, 3))
    out[:, 0] = np.where(allowed[0], p1, 0.0)
    out[:, 1 if P == 3 else 2] = np.where(other, 1.0 - p1, 0.0)
    return out


def _seat_1_share(points, played, forced, shared, need) -> np.ndarray:
    """``(36,)``: each ``shared`` card's probability of lying with seat 1 (the rest of its mass is
    the other place's), by the declared ``points`` {seat: (count, value)} when there are ways to
    hold them, else by the counts alone."""
    if len(points) == 2 and (both := _both_points(points, played, forced, shared, need[1])) is not None:
        return both
    if points:
        s = min(points)  # the opponent the sampler draws first
        options = _point_options(points[s], played[s], forced[s], shared, need[s])
        if options:
            ps = np.zeros(NUM_CARDS)
            for weight, (_, t, rest, more) in zip(_weights(options), options, strict=True):
                ps[t] += weight
                if len(rest):
                    ps[rest] += weight * more / len(rest)
            return np.clip(ps if s == 1 else 1.0 - ps, 0.0, 1.0)  # option sums may pass 1 by a rounding
    return np.full(NUM_CARDS, min(max(need[1] / max(int(shared.sum()), 1), 0.0), 1.0))


def _both_points(points, played, forced, shared, need) -> np.ndarray | None:
    """Three players, both opponents declared a point they did not show: each shared card's
    probability of lying with seat 1 under the sampler's draw, which draws seat 1's hand through
    his point's ways (a hand counted once for each suit that holds his point) and keeps the draws
    whose cards left hold seat 2's point in some suit (counted once).  ``None`` when no split of
    the ``shared`` cards (seat 1 takes ``need`` of them) holds both points: the sampler refuses
    the observation then.

    Fixing seat 1's point to a set ``T`` of suit ``x`` and seat 2's to sets ``U_y`` of the suits
    ``y`` of a set ``Y`` fixes every shared card of those suits; the other shared cards are split
    uniformly.  "Seat 2 holds his point in some suit" is counted by inclusion and exclusion over
    ``Y``, and the ways are counted by set sizes, not one by one."""
    from itertools import combinations, product
    from math import comb, prod

    options = {s: _suit_options(points[s], played[s], forced[s], shared) for s in (1, 2)}
    in_suit = [shared & SUIT_ONEHOT[x] for x in range(4)]
    seconds = [_by_size(options[2][y]) for y in range(4)]
    mass, total = np.zeros(NUM_CARDS), 0.0
    for x in range(4):
        own = _by_size(options[1][x])
        other_rest = {frozenset(u) for u in options[2][x]}
        suit_x = frozenset(np.flatnonzero(in_suit[x]).tolist())
        # both points in suit x: seat 2 holds exactly the suit's shared cards seat 1 does not
        agreeing = _by_size([t for t in options[1][x] if suit_x - set(t) in other_rest])
        for r in range(1, 5):
            sign = 1 if r % 2 else -1
            for suits in combinations(range(4), r):
                firsts = agreeing if x in suits else own
                others = [y for y in suits if y != x]
                if not firsts or not all(seconds[y] for y in others):
                    continue
                free = shared & ~in_suit[x]
                for y in others:
                    free = free & ~in_suit[y]
                rest, n_free = np.flatnonzero(free), int(free.sum())
                for a, (n1, held1) in firsts.items():
                    for sizes in product(*(seconds[y].items() for y in others)):
                        # seat 1 holds T, and every shared card of the suits y but U_y
                        more = need - a - sum(int(in_suit[y].sum()) - b
                                              for y, (b, _) in zip(others, sizes, strict=True))
                        if not 0 <= more <= n_free:
                            continue
                        n2 = prod(n for _, (n, _) in sizes)
                        w = sign * comb(n_free, more)
                        total += w * n1 * n2
                        mass += w * n2 * held1
                        for y, (_, (n, held2)) in zip(others, sizes, strict=True):
                            mass += w * n1 * (n2 // n) * (n * in_suit[y] - held2)
                        mass[rest] += w * n1 * n2 * more / max(n_free, 1)
    return mass / total if total > 0 else None


def _by_size(sets: list[tuple[int, ...]]) -> dict[int, tuple[int, np.ndarray]]:
    """Card sets grouped by size: ``{k: (how many sets of k cards, (36,) how many of them hold each card)}``."""
    out: dict[int, tuple[int, np.ndarray]] = {}
    for t in sets:
        n, held = out.get(len(t), (0, np.zeros(NUM_CARDS, dtype=np.int64)))
        held = held.copy()
        held[list(t)] += 1
        out[len(t)] = (n + 1, held)
    return out


def position(v: View, row: int, rules: Rules):
    """The solver's position from the observation: (leader, trick cards in play order, tricks, played)."""
    P = rules.players
    trick_cards: list[int] = []
    if v.leader[row] >= 0:
        for k in range(P):
            seat = (int(v.leader[row]) + k) % P
            cards = np.flatnonzero(v.trick[row, seat])
            if not len(cards):
                break
            trick_cards.append(int(cards[0]))
        leader = int(v.leader[row])
    else:
        leader = 0
    tricks = tuple(int(t) for t in v.tricks[row, :P])
    return leader, tuple(trick_cards), tricks, int(v.tricks_played[row])


def world_values(worlds: np.ndarray, rules: Rules, trump: int, pos: tuple, solver: str = "compiled",
                 threads: int = 1) -> np.ndarray:
    """``(n, 36)`` exact values for seat 0 of every legal card (NaN for the others) in each sampled
    deal ``worlds`` (``(n, 3, 36)`` bool by relative seat), at ``pos`` (:func:`position`)."""
    P = rules.players
    leader, trick, tricks, played = pos
    masks = (worlds[:, :P].astype(np.uint64) << np.arange(NUM_CARDS, dtype=np.uint64)).sum(axis=2, dtype=np.uint64)
    if solver == "compiled":
        return CompiledSolver(rules, trump, me=0).values(masks, leader, trick, tricks, played, threads=threads)
    out = np.full((len(worlds), NUM_CARDS), np.nan)
    for i, hands in enumerate(masks):
        solved = Solver(rules, trump, me=0).move_values(tuple(int(h) for h in hands), leader, trick, tricks, played)
        for c, val in solved.items():
            out[i, c] = val
    return out


def search_job(obs: np.ndarray, legal: np.ndarray, rules: Rules, samples: int, seed: int, solver: str = "compiled",
               threads: int = 1, worlds: np.ndarray | None = None) -> tuple:
    """The job of :func:`search_row` for one observation row ``(1, OBS_SIZE)`` and its action mask,
    as :class:`PIMCAgent` builds it (search-guided training labels positions with it)."""
    v = decode(obs)
    pref = play_scores(rules, v, legal[None, :NUM_CARDS])[0]
    return v, legal, pref, rules, samples, seed, solver, threads, worlds


def weighted_worlds(rules: Rules, obs: np.ndarray, v: View, seed: int, samples: int, model,
                    candidates: int = play_likelihood.CANDIDATES_PER_SAMPLE,
                    uniform_share: float = play_likelihood.UNIFORM_SHARE) -> np.ndarray:
    """``samples`` worlds for the observation row ``obs`` (``v``: its decoded view, one row), drawn
    from ``candidates * samples`` consistent ones by the likelihood the opponent model ``model`` (a
    :class:`imperiale_agents.policies.neural.PolicyAgent`) gives the opponent's plays of the deal
    (:mod:`imperiale_agents.search.play_likelihood`, which reads the deal's play from the observation)."""
    rng = np.random.default_rng(seed)
    pool = _sample(v, rules, candidates * samples, rng)
    log_w = play_likelihood.play_log_likelihood(rules, obs, v, pool[:, 1], model.log_probs, uniform_share)
    return pool[play_likelihood.resample(log_w, samples, rng)]


def search_row(args) -> tuple[int, np.ndarray]:
    """One searched decision: ``(view row, legal cards, the heuristic's scores of the cards, rules,
    samples, seed, solver, threads, worlds)`` -> the card, and the mean value of every card over the
    sampled deals, ``(36,)`` (NaN for the illegal ones): the soft targets search-guided training
    imitates.  ``worlds``: the deals to solve (``(n, 3, 36)`` bool), or ``None`` to draw ``samples``
    of them with ``seed``."""
    v, legal, pref, rules, samples, seed, solver, threads, worlds = args
    legal_cards = np.flatnonzero(legal[:NUM_CARDS])
    if worlds is None:
        worlds = _sample(v, rules, samples, np.random.default_rng(seed))
    values = world_values(worlds, rules, int(v.trump[0]), position(v, 0, rules), solver, threads)
    mean = np.where(np.isnan(values), 0.0, values).sum(axis=0) / len(worlds)
    # Best mean value; among equals (within a rounding), the heuristic's preference.
    best = mean[legal_cards].max()
    score = np.where(np.isclose(mean, best, atol=1e-9), 1e6 + pref, -np.inf)
    score[~legal[:NUM_CARDS]] = -np.inf
    return int(np.argmax(score)), np.where(legal[:NUM_CARDS], mean, np.nan)


def solve_row(args) -> int:
    """:func:`search_row`'s card alone (what :class:`PIMCAgent` plays)."""
    return search_row(args)[0]


def _rows(v: View, rows: np.ndarray) -> View:
    return View(**{k: a[rows] for k, a in vars(v).items()})


class PIMCAgent:
    """Perfect Information Monte Carlo with ``samples`` sampled deals per card to play.

    ``horizon``: search only when at most that many tricks are left in the deal (the current
    one included); earlier cards are the heuristic's.  12 (the default) searches every card;
    9 is about ten times cheaper (the first three tricks are the expensive ones).

    ``workers`` > 1 spreads the rows of a batch over a process pool (deterministic: each row
    gets its own seed drawn from the agent's generator before the work is split).  ``threads``
    > 1 solves the sampled deals of one decision on that many threads instead (the values are
    exact, so the choice is the same whatever the thread count).  ``solver``: ``compiled`` (the
    default) or ``python``, the pure-Python oracle (same choices, for tests and benchmarks).
    ``declarations``: ``heuristic`` (the default) or ``search`` (sampled worlds, valued on the
    reference engine: :mod:`imperiale_agents.search.declaration_search`).

    ``infer``: an opponent model (a :class:`imperiale_agents.policies.neural.PolicyAgent`; two players only).  Then
    each decision draws ``candidates * samples`` worlds, weighs each by how likely the model finds the
    opponent's plays of the deal with that world's hand, and solves ``samples`` of them drawn by
    those weights, each play's probability mixed with ``uniform_share`` of a uniform choice
    (:mod:`imperiale_agents.search.play_likelihood`; spec ``pimc:N:infer``, the champion as the model).

    ``belief``: a belief model (:class:`imperiale_agents.search.belief_model.BeliefNet`: its ``worlds(rules, obs, view,
    seed, samples)`` draws the worlds to solve from this module's sampler; spec ``pimc:N:belief``, the
    preset's shipped belief).  ``fitted``: its worlds matched to the belief's fitted marginals (spec
    ``pimc:N:fitted``).
    """

    def __init__(self, rules: Rules | str | dict | None = None, samples: int = DEFAULT_SAMPLES, workers: int = 1,
                 horizon: int = 12, threads: int = 1, solver: str = "compiled", declarations: str = "heuristic",
                 infer=None, candidates: int = play_likelihood.CANDIDATES_PER_SAMPLE,
                 uniform_share: float = play_likelihood.UNIFORM_SHARE, knowledge: str = "all", belief=None,
                 fitted: bool = False):
        if solver not in SOLVERS:
            raise ValueError(f"unknown solver {solver!r} (allowed: {', '.join(SOLVERS)})")
        if declarations not in DECLARATIONS:
            raise ValueError(f"unknown declarations {declarations!r} (allowed: {', '.join(DECLARATIONS)})")
        if knowledge not in KNOWLEDGE:
            raise ValueError(f"unknown knowledge {knowledge!r} (allowed: {', '.join(KNOWLEDGE)})")
        if knowledge != "all" and infer is not None:
            raise ValueError("the voids-only sampler (knowledge='voids') does not weigh worlds (infer)")
        if belief is not None and (infer is not None or knowledge != "all"):
            raise ValueError("worlds drawn by a belief (belief) take the full sampler and no opponent model (infer)")
        if fitted and belief is None:
            raise ValueError("worlds that follow the belief's marginals (fitted) need a belief")
        if int(threads) < 1:
            raise ValueError(f"threads must be at least 1, got {threads}")
        self.rules = resolve_rules(rules)
        if infer is not None and self.rules.players != 2:
            raise ValueError(f"weighing worlds by the opponent's plays (infer) needs two players; "
                             f"{self.rules.name} has {self.rules.players}")
        self.infer = infer
        self.belief, self.fitted = belief, bool(fitted)
        self.candidates, self.uniform_share = int(candidates), float(uniform_share)
        self.samples = int(samples)
        self.workers = int(workers)
        self.horizon = int(horizon)
        self.threads = int(threads)
        self.solver = solver
        self.declarations = declarations
        self.knowledge = knowledge
        self.name = (f"pimc:{self.samples}" + (f":{self.horizon}" if self.horizon < 12 else "")
                     + (":search" if declarations == "search" else "") + (":infer" if infer is not None else "")
                     + (":voids" if knowledge == "voids" else "")
                     + ((":fitted" if fitted else ":belief") if belief is not None else ""))
        self.heuristic = HeuristicAgent(self.rules)
        self._searches = LazyPool(self.workers, "pimc searches")

    def reset(self) -> None:
        """Nothing to forget: every decision reads the deal from its observation."""

    def close(self) -> None:
        """Stop the worker processes (at once: work still queued after a Ctrl-C is dropped)."""
        self._searches.close()

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        mask = np.asarray(mask, dtype=bool)
        obs = np.atleast_2d(obs)
        v = decode(obs)
        choice = np.flatnonzero((v.phase == 2) & (mask[:, :NUM_CARDS].sum(axis=1) > 1))
        seeds = rng.integers(0, 2**63, size=len(choice)) if len(choice) else np.zeros(0, dtype=np.int64)
        near = 12 - v.tricks_played[choice] <= self.horizon
        rows, seeds = choice[near], seeds[near]
        out = np.zeros(len(obs), dtype=np.int64)
        heuristic_rows = np.ones(len(obs), dtype=bool)
        heuristic_rows[rows] = False
        rest = np.flatnonzero(heuristic_rows)
        if len(rest):
            out[rest] = self.heuristic.act(obs[rest], mask[rest], rng)
        if self.declarations == "search":
            for r in np.flatnonzero((v.phase == 0) | (v.phase == 1)):
                row = _rows(v, [r])
                worlds = _sample(row, self.rules, self.samples, np.random.default_rng(rng.integers(0, 2**63)),
                                 knowledge=self.knowledge)
                out[r] = declaration_search.decide(self.rules, row, obs[r], mask[r], worlds)
        if not len(rows):
            return out
        # The heuristic's card scores break ties between cards of equal value.
        pref = play_scores(self.rules, _rows(v, rows), mask[rows, :NUM_CARDS])
        jobs = []
        for k, (r, s) in enumerate(zip(rows, seeds, strict=True)):
            row = _rows(v, [r])
            if self.infer is not None:
                worlds = weighted_worlds(self.rules, obs[r], row, int(s), self.samples, self.infer,
                                         self.candidates, self.uniform_share)
            elif self.belief is not None:
                worlds = self.belief.worlds(self.rules, obs[r], row, int(s), self.samples, fitted=self.fitted)
            elif self.knowledge != "all":  # drawn here with the job's seed, as search_row would
                worlds = _sample(row, self.rules, self.samples, np.random.default_rng(int(s)), knowledge=self.knowledge)
            else:
                worlds = None
            jobs.append((row, mask[r], pref[k], self.rules, self.samples, int(s), self.solver, self.threads, worlds))
        chosen = self._searches.map(solve_row, jobs, chunksize=max(1, len(jobs) // (4 * self.workers)))
        out[rows] = np.asarray(chosen, dtype=np.int64)
        return out


__all__ = ["DECLARATIONS", "DEFAULT_SAMPLES", "KNOWLEDGE", "SOLVERS", "PIMCAgent", "position", "sampler_marginal",
           "sample_worlds", "search_job", "search_row", "solve_row", "weighted_worlds", "world_values"]
