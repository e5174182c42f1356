"""An exact solver for the rest of a deal's play when every hand is known (perfect information).

Hands are Python ints (bit ``c`` = card ``c``, the numbering of :mod:`imperiale_env.core.cards`), so
that the move generator is a handful of bit operations.  The search is alpha-beta minimax over
cards (the solving player maximises, the others minimise: with three players this is the
*paranoid* reduction), with

* a **transposition table** keyed by the hands, the leader and the tricks won so far, at trick
  boundaries (the value of a position is the future only, so the key needs nothing else);
* **move ordering**: the follower tries its cheapest winning card first, then the cheapest
  loser; the leader its masters and high cards first;
* **equivalent cards**: two cards of one suit in one hand with no live card of another hand
  between them, of the same honour status, lead to the same outcomes: only one is searched
  (the engine-level value of the other is the same, and :meth:`Solver.move_values` reports it).

The value of a play-out for the solving player (seat ``me``) is the after-play scoring of the
rules, as a difference of points, read from :func:`imperiale_env.core.tricks.play_out_scoring`
(the compiled solver reads the same): the honours captured, any prize of a trick, the trick score
of the deal's end with capot (its impériales counted as 24 points each); minus the mean of the same
for the other players.  Wipes, the target and the fallen impériale are ignored (a plain difference
of points).

The legality is the rules' (docs/rules.md section 4 step 5): must follow, must beat the winning
card of the led suit, must trump when void, must overtrump a trump if possible (else anything),
the first lead in trumps where ``first_lead_trump``: :func:`legal_cards_python`, this solver's
own writing of it on Python ints (the reference engine's legality, on bitmasks).
"""

from __future__ import annotations

from imperiale_env.core.cards import NUM_RANKS, NUM_SUITS
from imperiale_env.core.rules import Rules
from imperiale_env.core.tricks import STRONGER_BITS, SUIT_BITS, beats_one, play_out_scoring

INF = float("inf")
EXACT, LOWER, UPPER = 0, 1, 2


def bits(mask: int):
    """The card indices of a mask, strongest (lowest index) first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _fold(maximise: bool, v: float, best: float, alpha: float, beta: float) -> tuple[float, float, float]:
    """Alpha-beta: one move's value ``v`` folded into the best so far and the window ``alpha, beta``
    of the side that maximises (or minimises)."""
    if maximise:
        if v > best:
            best = v
            if v > alpha:
                alpha = v
    elif v < best:
        best = v
        if v < beta:
            beta = v
    return best, alpha, beta


def _bound(best: float, a0: float, b0: float) -> int:
    """What a searched value is, given the window it was searched in: exact, or only a bound."""
    if best <= a0:
        return UPPER
    if best >= b0:
        return LOWER
    return EXACT


def legal_cards_python(rules: Rules, hand: int, trump: int, led: int, win: int, first_trick: bool) -> int:
    """The legal cards of ``hand`` (Python ints; ``led`` the trick's first card, -1 when leading,
    ``win`` the card winning it).  This solver's own writing of the rule, in plain Python: it is
    the test oracle of the compiled solver and the baseline ``imperiale bench --solver`` measures,
    so it shares no code with the kernels (:func:`imperiale_env.kernels.trick_rules.legal_plays`);
    ``tests/test_tricks.py`` holds it to the reference engine."""
    trumps = hand & SUIT_BITS[trump]
    if led < 0:
        return trumps if rules.first_lead_trump and first_trick and trumps else hand
    follow = hand & SUIT_BITS[led // NUM_RANKS]
    if follow:
        higher = follow & STRONGER_BITS[win] if rules.must_beat else 0
        return higher or follow
    if not rules.must_trump or not trumps:
        return hand
    if rules.overtrump and win // NUM_RANKS == trump:
        return (trumps & STRONGER_BITS[win]) or hand
    return trumps


class Solver:
    """Exact play-out values under ``rules`` with trump suit ``trump``; ``me`` is the seat
    that maximises (seats are any fixed numbering ``0 .. P-1``)."""

    def __init__(self, rules: Rules, trump: int, me: int = 0):
        self.rules = rules
        self.P = rules.players
        self.trump = trump
        self.trump_mask = SUIT_BITS[trump]
        self.me = me
        self.tt: dict = {}
        self.nodes = 0
        self._final: dict[tuple[int, ...], float] = {}
        self._rep_cache: dict = {}
        # The scoring, as both solvers read it (see PlayOutScoring: with linear two-player scoring a
        # trick won is worth ``per_trick`` as it is taken and the table key needs only the capot state;
        # values then omit a constant, the same for every move and sample).
        scoring = play_out_scoring(rules)
        self.honours = scoring.honours[trump]
        self.honour_points = scoring.honour_points
        self.prize = tuple(float(x) for x in scoring.trick_prize)
        self.share = scoring.share
        self.linear = scoring.linear
        self.per_trick = scoring.per_trick
        self.final = scoring.final[me]

    # ------------------------------------------------------------------ rules on bitmasks

    def legal(self, hand: int, trick: tuple[int, ...], win: int, first_trick: bool) -> int:
        """Legal cards of ``hand`` given the cards of the current trick and its winning card."""
        return legal_cards_python(self.rules, hand, self.trump, trick[0] if trick else -1, win, first_trick)

    def beats(self, c: int, win: int) -> bool:
        return beats_one(c, win, self.trump)

    def final_value(self, tricks: tuple[int, ...]) -> float:
        v = self._final.get(tricks)
        if v is None:
            v = self._final[tricks] = float(self.final[(*tricks, 0)[:3]])
        return v

    # ------------------------------------------------------------------ search

    def _reps(self, mine: int, others: int) -> int:
        """Cards of ``mine`` that head a run of equivalent cards (see the module docstring)."""
        out = 0
        for s in range(NUM_SUITS):
            sh = NUM_RANKS * s
            m9 = (mine >> sh) & 0x1FF
            if not m9:
                continue
            key = (s, m9, (others >> sh) & 0x1FF)
            r = self._rep_cache.get(key)
            if r is None:
                o9, h9 = key[2], (self.honours >> sh) & 0x1FF
                r, prev_mine, prev_h = 0, False, -1
                for k in range(NUM_RANKS):
                    b = 1 << k
                    if m9 & b:
                        h = (h9 >> k) & 1
                        if not (prev_mine and prev_h == h):
                            r |= b
                        prev_mine, prev_h = True, h
                    elif o9 & b:
                        prev_mine = False
                self._rep_cache[key] = r
            out |= r << sh
        return out

    def _moves(self, hands: tuple[int, ...], seat: int, legal: int, trick: tuple[int, ...], win: int) -> list[int]:
        """Representatives of the legal cards (one per run of equivalent cards), ordered."""
        if legal & (legal - 1) == 0:
            return [legal.bit_length() - 1]
        live = 0
        for h in hands:
            live |= h
        mine = hands[seat]
        others = live & ~mine
        for x in trick:
            others |= 1 << x
        reps = legal & self._reps(mine, others)
        if reps & (reps - 1) == 0:
            return [reps.bit_length() - 1]
        cards = list(bits(reps))
        trump = self.trump
        if trick:
            # Follower: cheapest winner first (weakest plain winner, then weakest trump), then losers
            # (honours last, trumps late, weakest first).
            beat = STRONGER_BITS[win] | (0 if win // NUM_RANKS == trump else self.trump_mask)
            hon = self.honours
            return sorted(cards, key=lambda c: (0, c // NUM_RANKS == trump, -c) if (beat >> c) & 1
                          else (1, (hon >> c) & 1, c // NUM_RANKS == trump, -c))
        # Leader: masters (no stronger live card of the suit elsewhere) first, then by strength.
        return sorted(cards, key=lambda c: (0 if not (others & STRONGER_BITS[c]) else 1, c % NUM_RANKS))

    def search(self, hands: tuple[int, ...], leader: int, trick: tuple[int, ...], win: int, win_seat: int,
               tricks: tuple[int, ...], played: int, alpha: float, beta: float) -> float:
        """Value for ``me`` of the rest of the deal (future honours and the final trick score)."""
        self.nodes += 1
        if not trick:
            if not hands[leader]:
                return self.final_value(tricks)
            key = (hands, leader, self._tkey(tricks))
            hit = self.tt.get(key)
            if hit is not None:
                v, flag = hit
                if flag == EXACT or (flag == LOWER and v >= beta) or (flag == UPPER and v <= alpha):
                    return v
            a0, b0 = alpha, beta
        seat = (leader + len(trick)) % self.P
        legal = self.legal(hands[seat], trick, win, played == 0)
        maximise = seat == self.me
        best = -INF if maximise else INF
        for c in self._moves(hands, seat, legal, trick, win):
            v = self._after(hands, leader, trick, win, win_seat, tricks, played, seat, c, alpha, beta)
            best, alpha, beta = _fold(maximise, v, best, alpha, beta)
            if alpha >= beta:
                break
        if not trick:
            self.tt[key] = (best, _bound(best, a0, b0))
        return best

    def search2(self, hands: tuple[int, ...], leader: int, tricks: tuple[int, ...], played: int,
                alpha: float, beta: float) -> float:
        """:meth:`search` at a trick boundary, two players: both cards of a trick in one frame."""
        self.nodes += 1
        lh = hands[leader]
        if not lh:
            return self.final_value(tricks)
        key = (hands, leader, self._tkey(tricks))
        hit = self.tt.get(key)
        if hit is not None:
            v, flag = hit
            if flag == EXACT or (flag == LOWER and v >= beta) or (flag == UPPER and v <= alpha):
                return v
        a0, b0 = alpha, beta
        me, fol = self.me, 1 - leader
        fh = hands[fol]
        lead_max = leader == me
        first = played == 0
        hon, per_trick, trump, honour_points = self.honours, self.per_trick, self.trump, self.honour_points
        prize = self.prize[played]
        best = -INF if lead_max else INF
        for c in self._moves(hands, leader, self.legal(lh, (), 0, first), (), 0):
            nl = lh & ~(1 << c)
            after_lead = (nl, fh) if leader == 0 else (fh, nl)
            fa, fb = alpha, beta
            fbest = INF if lead_max else -INF
            cs = c // NUM_RANKS
            for d in self._moves(after_lead, fol, self.legal(fh, (c,), c, first), (c,), c):
                ds = d // NUM_RANKS
                winner = fol if ((ds == cs and d < c) or (ds == trump and cs != trump)) else leader
                h = (((1 << c) | (1 << d)) & hon).bit_count() * honour_points + prize
                r = h + per_trick if winner == me else -h
                nf = fh & ~(1 << d)
                nh = (nl, nf) if leader == 0 else (nf, nl)
                nt = (tricks[0] + 1, tricks[1]) if winner == 0 else (tricks[0], tricks[1] + 1)
                v = r + self.search2(nh, winner, nt, played + 1, fa - r, fb - r)
                fbest, fa, fb = _fold(not lead_max, v, fbest, fa, fb)
                if fa >= fb:
                    break
            best, alpha, beta = _fold(lead_max, fbest, best, alpha, beta)
            if alpha >= beta:
                break
        self.tt[key] = (best, _bound(best, a0, b0))
        return best

    def _tkey(self, tricks: tuple[int, ...]):
        """What of the tricks won so far the future value depends on: all of it, or (linear
        two-player scoring) only whether one side has taken every trick (capot)."""
        if not self.linear:
            return tricks
        t, total = tricks[self.me], sum(tricks)
        return 1 if t == total else (2 if t == 0 else 0)

    def _after(self, hands, leader, trick, win, win_seat, tricks, played, seat, c, alpha, beta) -> float:
        """Value after ``seat`` plays card ``c``."""
        P = self.P
        new_hands = hands[:seat] + (hands[seat] & ~(1 << c),) + hands[seat + 1 :]
        if not trick or self.beats(c, win):
            win, win_seat = c, seat
        trick = trick + (c,)
        if len(trick) < P:
            return self.search(new_hands, leader, trick, win, win_seat, tricks, played, alpha, beta)
        mask = 0
        for x in trick:
            mask |= 1 << x
        h = (mask & self.honours).bit_count() * self.honour_points + self.prize[played]
        if win_seat == self.me:
            r = h + self.per_trick
        else:
            r = -self.share * h
        tricks = tricks[:win_seat] + (tricks[win_seat] + 1,) + tricks[win_seat + 1 :]
        if P == 2:
            return r + self.search2(new_hands, win_seat, tricks, played + 1, alpha - r, beta - r)
        return r + self.search(new_hands, win_seat, (), 0, 0, tricks, played + 1, alpha - r, beta - r)

    def move_values(self, hands: tuple[int, ...], leader: int, trick: tuple[int, ...], tricks: tuple[int, ...],
                    played: int) -> dict[int, float]:
        """Exact value for ``me`` of every legal card of the seat to play, given the hands of every
        seat, the leader and the cards of the current trick (in play order), the tricks won so
        far by seat and the number of tricks played.  The seat to play is usually ``me``; when it
        is another seat, these are ``me``'s values of that seat's cards (the position's value for
        ``me`` is then their minimum: every other seat plays against ``me``)."""
        P = self.P
        seat = (leader + len(trick)) % P
        win, win_seat = 0, 0
        for k, x in enumerate(trick):
            if k == 0 or self.beats(x, win):
                win, win_seat = x, (leader + k) % P
        legal = self.legal(hands[seat], trick, win, played == 0)
        reps = self._moves(hands, seat, legal, trick, win)
        values = {}
        for c in reps:
            values[c] = self._after(hands, leader, trick, win, win_seat, tricks, played, seat, c, -INF, INF)
        if self.linear:  # the constant the linear scoring leaves out: exact values
            offset = self.per_trick * (tricks[self.me] - 6)
            values = {c: v + offset for c, v in values.items()}
        # Equivalent cards share the value of their representative.
        for c in bits(legal):
            if c not in values:
                rep = max(x for x in reps if x < c and x // NUM_RANKS == c // NUM_RANKS)
                values[c] = values[rep]
        return values
