"""The batched numpy engine: N independent games of L'Impériale stepped together.

Hands, captured cards and revealed cards are uint64 bitmasks (bit ``c`` is card ``c``);
every game carries a *stage* index into a static list of stages built from the rules
(the chronology of :mod:`game`, written as data).  A stage is either a decision (the
in-hand questions of one player, the turned-card impériale, one player's point, the play)
or an automatic scoring step.  :meth:`BatchGame.step` applies one action per game, then
runs every game forward through automatic stages until each waits on a decision again;
the loop is over *stages*, never over games, so games in different phases step together.

The engine agrees exactly with the reference :class:`~imperiale_env.game.Game` (the
differential tests check masks, trick winners, score events and scores on every deal),
and deals with the same seeded function, so game ``i`` of a batch is the lone game with
the same seed whatever the batch size.

Rewards are given when a game ends: +1 to the winner and ``-1/(P-1)`` to each other
player (zero-sum).  With ``single_deal=True`` a deal that ends without a winner gives
each player the change of his score in impériales (points count 1/24) minus the mean
change of the others, which is zero-sum too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import actions as act
from ..bitcards import (
    BIT,
    CARD_RANK,
    CARD_SUIT,
    ONE,
    RANK_MASK,
    STRONGER,
    SUIT_MASK,
    lowest_bit_index,
    mask_of,
    point_values,
    popcount,
    unpack,
)
from ..cards import NUM_CARDS, NUM_SUITS, A, J, K, Q, card, deck, low_rank
from ..observation import OBS_SIZE, OFFSETS
from ..rules import Rules, rank_index, resolve_rules
from ..shuffle import as_seeds, batch_seeds, first_dealer, next_game_seed, shuffled

POINTS_PER_IMPERIALE = 24
HISTORY_LEN = 128

EVENT_KINDS: tuple[str, ...] = (
    "turned_honour", "carte_blanche", "quart_major", "four_of_a_kind", "turned_imperiale", "point",
    "honours", "fallen_imperiale", "tricks", "capot", "wipe", "imperiale", "game_over",
)
_EV = {name: i for i, name in enumerate(EVENT_KINDS)}

# Decision kinds.
QUESTION, POINT, PLAY, NONE = 0, 1, 2, 3

# In-hand item slots (bit j of a player's item mask): carte blanche, quarts by suit,
# Imperijal sequences by suit, fours in rules.four_ranks order (canonical question order).
CB_ITEM = 0
QUART_ITEMS = range(1, 5)
SEQUENCE_ITEMS = range(5, 9)
FOUR_ITEMS_START = 9
NUM_ITEMS = 14
KQJ = RANK_MASK[K] | RANK_MASK[Q] | RANK_MASK[J]
#: ``_VOID_BITS[v]``: the four suit flags of a void mask, as float32.
_VOID_BITS = ((np.arange(16)[:, None] >> np.arange(NUM_SUITS)) & 1).astype(np.float32)


@dataclass(frozen=True)
class Stage:
    """One step of a deal: ``kind`` names the handler, ``pos`` a priority position."""

    kind: str
    pos: int = 0


def build_stages(rules: Rules) -> list[Stage]:
    """The chronology of a deal under ``rules`` (the same order as the reference engine)."""
    P = rules.players
    points = [Stage("point", k) for k in range(P)] + [Stage("score_point")]
    after = {
        "academie": ["honours", "fallen", "tricks"],
        "foster": ["fallen", "honours", "tricks"],
        "imperijal": ["honours", "tricks", "fallen"],
    }[rules.chronology]
    s: list[Stage] = [Stage("deal_start")]
    if rules.chronology == "academie":
        s += [Stage("ask_now", k) for k in range(P)]
        s += [Stage("cb_end"), Stage("ask_turned"), Stage("score_turned")]
        s += points
    elif rules.chronology == "foster":
        s += points + [Stage("ask", 0)]
        if rules.declaration_timing == "dealer_after_first_lead":
            s += [Stage("first_lead")]
        s += [Stage("ask", 1), Stage("ask_turned"), Stage("score_compared"), Stage("score_turned")]
    else:
        s += [Stage("ask", k) for k in range(P)] + [Stage("ask_turned")]
        s += [Stage("score_cb"), Stage("score_by_number")] + points
        s += [Stage("honours_in_hand"), Stage("cb_end")]
    s += [Stage("play")] + [Stage(x) for x in after] + [Stage("deal_end")]
    idle = {
        "fallen": rules.fallen_imperiale == "off",
        "ask_turned": not rules.turned_imperiale,
        "score_turned": not rules.turned_imperiale,
        "cb_end": not rules.carte_blanche_ends_deal,
        "honours_in_hand": not rules.honours_in_hand_points,
    }
    return [st for st in s if not idle.get(st.kind, False)]


_DECISION_STAGES = {"ask_now": QUESTION, "ask": QUESTION, "ask_turned": QUESTION, "point": POINT,
                    "play": PLAY, "first_lead": PLAY}


class BatchGame:
    """``num_games`` games under one ``rules``, stepped together.

    ``auto_next_game``: when a game ends its slot starts the next game at once (seed
    :func:`~imperiale_env.shuffle.next_game_seed`), so the batch never idles; the step
    that ended it reports the rewards and ``terminated``.  ``single_deal``: a game is one
    deal, from the start score given to :meth:`reset`.  ``record_events``: keep the score
    events for :meth:`pop_events` (tests, replays); ``keep_history``: keep every game's
    deals and decisions so that :func:`~imperiale_env.batch_records.record_from_batch` can
    write its record; ``keep_final_obs``: fill :attr:`final_observation` for games that end
    (same-step autoreset); all off for speed.
    """

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
    ):
        self.rules = resolve_rules(rules)
        self.players = P = self.rules.players
        self.n = int(num_games)
        if self.n < 1:
            raise ValueError(f"num_games must be at least 1, got {num_games}")
        self.auto_next_game = auto_next_game
        self.single_deal = single_deal
        self.record_events = record_events
        self.keep_history = keep_history
        self.keep_final_obs = keep_final_obs
        #: With ``keep_final_obs``: the last observation of each game that ended at the last
        #: step, for the player who made its last move (before ``auto_next_game`` restarts it).
        self.final_observation = np.zeros((self.n if keep_final_obs else 0, OBS_SIZE), dtype=np.float32)
        #: With ``keep_history``: arrays per started game and per finished deal (see _archive_*).
        self.game_log: list[dict[str, np.ndarray]] = []
        self.deal_log: list[dict[str, np.ndarray]] = []
        self.stages = build_stages(self.rules)
        self._decision_kind = np.array([_DECISION_STAGES.get(st.kind, NONE) for st in self.stages], dtype=np.int64)
        self._pack = np.array(deck(P), dtype=np.int64)
        self._seats = np.arange(P)[None, :]
        self._is_turned_stage = np.array([st.kind == "ask_turned" for st in self.stages])
        self._is_now_stage = np.array([st.kind == "ask_now" for st in self.stages])
        self._is_play_stage = np.array([st.kind == "play" for st in self.stages])
        self._build_tables()
        n = self.n
        self._ar = np.arange(n)
        self.seed = np.zeros(n, dtype=np.uint64)
        self.game_id = np.zeros(n, dtype=np.int64)
        self.imperiales = np.zeros((n, P), dtype=np.int64)
        self.points = np.zeros((n, P), dtype=np.int64)
        self.start_imperiales = np.zeros((n, P), dtype=np.int64)
        self.start_points = np.zeros((n, P), dtype=np.int64)
        self.dealer = np.zeros(n, dtype=np.int64)
        self.start_dealer = np.zeros(n, dtype=np.int64)
        self.deal_index = np.zeros(n, dtype=np.int64)
        self.stage = np.zeros(n, dtype=np.int64)
        self.over = np.zeros(n, dtype=bool)
        self.winner = np.full(n, -1, dtype=np.int64)
        # The deal.
        self.dealt = np.zeros((n, P), dtype=np.uint64)
        self.hands = np.zeros((n, P), dtype=np.uint64)
        self.captured = np.zeros((n, P), dtype=np.uint64)
        self.played = np.zeros((n, P), dtype=np.uint64)
        self.revealed = np.zeros((n, P), dtype=np.uint64)
        self.voids = np.zeros((n, P), dtype=np.int64)  # bit s: known to lack suit s
        self.order = np.zeros((n, len(self._pack)), dtype=np.int64)
        self.turned = np.zeros(n, dtype=np.int64)
        self.trump = np.zeros(n, dtype=np.int64)
        self.items = np.zeros((n, P), dtype=np.int64)
        self.pending = np.zeros((n, P), dtype=np.int64)
        self.shown = np.zeros((n, P), dtype=np.int64)
        self.turned_eligible = np.zeros(n, dtype=bool)
        self.turned_shown = np.zeros(n, dtype=bool)
        self.turned_asked = np.zeros(n, dtype=bool)
        self.turned_honour_scored = np.zeros(n, dtype=bool)
        self.point_suit = np.full((n, P), -1, dtype=np.int64)
        self.point_count = np.zeros((n, P), dtype=np.int64)
        self.point_value = np.zeros((n, P), dtype=np.int64)
        self.point_answered = np.zeros((n, P), dtype=bool)
        self.tricks = np.zeros((n, P), dtype=np.int64)
        self.tricks_played = np.zeros(n, dtype=np.int64)
        self.trick_cards = np.full((n, P), -1, dtype=np.int64)
        self.trick_len = np.zeros(n, dtype=np.int64)
        self.leader = np.zeros(n, dtype=np.int64)
        self.win_card = np.zeros(n, dtype=np.int64)
        self.win_player = np.zeros(n, dtype=np.int64)
        self.current_player = np.zeros(n, dtype=np.int64)
        self.last_player = np.zeros(n, dtype=np.int64)  # who made each game's last move
        self.kind = np.full(n, NONE, dtype=np.int64)
        self.history_actions = np.full((n, HISTORY_LEN), -1, dtype=np.int64)
        self.history_players = np.full((n, HISTORY_LEN), -1, dtype=np.int64)
        self.history_len = np.zeros(n, dtype=np.int64)
        self.explicit_deals: np.ndarray | None = None
        self._events: list[np.ndarray] = []
        self._ended: list[np.ndarray] = []
        self._bits: np.ndarray | None = None
        self.final_imperiales = np.zeros((n, P), dtype=np.int64)
        self.final_points = np.zeros((n, P), dtype=np.int64)
        self._obs_masks = np.zeros((n, 12), dtype=np.uint64)
        self._value_at_start = np.zeros((n, P), dtype=np.float64)

    # ------------------------------------------------------------------ tables

    def _build_tables(self) -> None:
        r, P = self.rules, self.players
        low = low_rank(P)
        self.honour_mask = np.array(
            [sum(1 << card(s, rank_index(x, P)) for x in r.honour_ranks) for s in range(NUM_SUITS)], dtype=np.uint64
        )
        item_mask = np.zeros(NUM_ITEMS, dtype=np.uint64)
        enabled = np.zeros(NUM_ITEMS, dtype=bool)
        enabled[CB_ITEM] = True
        for s in range(NUM_SUITS):
            item_mask[QUART_ITEMS[s]] = sum(1 << card(s, x) for x in (A, K, Q, J))
            enabled[QUART_ITEMS[s]] = True
            item_mask[SEQUENCE_ITEMS[s]] = sum(1 << card(s, x) for x in (Q, J, A, low))
            enabled[SEQUENCE_ITEMS[s]] = r.extra_sequence
        self.four_ranks = [rank_index(x, P) for x in r.four_ranks]
        for j, rank in enumerate(self.four_ranks):
            item_mask[FOUR_ITEMS_START + j] = RANK_MASK[rank]
            enabled[FOUR_ITEMS_START + j] = True
        self.item_mask = item_mask
        self._item_weights = np.where(enabled, 1 << np.arange(NUM_ITEMS), 0).astype(np.int64)
        # Which item slots are sequences / fours, and their comparison strength (Foster).
        self.item_kind = np.array(
            ["carte_blanche"] + ["quart_major"] * 4 + ["sequence"] * 4 + ["four_of_a_kind"] * 5, dtype=object
        )
        # Turned-card impériale: for each possible turned card, the other three cards of each
        # impériale it would complete (a zero mask marks no such impériale).
        need = np.zeros((NUM_CARDS, 3), dtype=np.uint64)
        for c in range(NUM_CARDS):
            s, rk = int(CARD_SUIT[c]), int(CARD_RANK[c])
            groups = [(A, K, Q, J)] + ([(Q, J, A, low)] if r.extra_sequence else [])
            for g, ranks in enumerate(groups):
                if rk in ranks:
                    need[c, g] = sum(1 << card(s, x) for x in ranks if x != rk)
            if rk in self.four_ranks and r.turned_imperiale_fours:
                need[c, 2] = int(RANK_MASK[rk]) & ~(1 << c)
        self.turned_need = need

    # ------------------------------------------------------------------ reset

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

        ``seed``: one integer (game ``i`` gets :func:`~imperiale_env.shuffle.batch_seeds`)
        or one seed per game.  ``dealer`` / ``imperiales`` / ``points`` start from a given
        score (one for all games or one per game); games restarted by ``auto_next_game``
        start from it too (the dealer drawn from the new seed unless ``dealer`` was given).
        ``deals``: optional ``(N, D, cards)`` card orders (priority order hands, then the
        turned card and talon, as :func:`~imperiale_env.game.deal_cards` lays them) used for
        the first ``D`` deals instead of the seeded ones (records)."""
        seeds = batch_seeds(seed, self.n) if isinstance(seed, (int, np.integer)) else as_seeds(seed)
        if seeds.shape != (self.n,):
            raise ValueError(f"expected one seed or {self.n} seeds, got shape {seeds.shape}")
        self.explicit_deals = None if deals is None else np.asarray(deals, dtype=np.int64)
        self._events = []
        self._ended = []
        self._bits = None
        n, P = self.n, self.players
        self._restart_dealer = np.broadcast_to(np.asarray(-1 if dealer is None else dealer, np.int64), (n,)).copy()
        self._restart_imperiales = np.broadcast_to(np.asarray(0 if imperiales is None else imperiales), (n, P)).copy()
        self._restart_points = np.broadcast_to(np.asarray(0 if points is None else points), (n, P)).copy()
        self._start_games(self._ar, seeds)
        self.game_id[:] = self._ar
        self._next_game_id = self.n
        self.game_log, self.deal_log = [], []
        self._archive_games(self._ar)
        self._run(self._ar)
        if self._ended:  # a game may end before any decision (a turned honour at the target)
            ended = np.concatenate(self._ended)
            self._archive_deals(ended)
            self.final_imperiales[ended] = self.imperiales[ended]
            self.final_points[ended] = self.points[ended]
            self._ended = []

    def _start_games(self, idx: np.ndarray, seeds: np.ndarray) -> None:
        """New games in the slots ``idx``, from the start score the batch was reset with."""
        P = self.players
        self.seed[idx] = seeds
        fixed = self._restart_dealer[idx]
        d = np.where(fixed >= 0, fixed, first_dealer(seeds, P))
        self.dealer[idx] = d
        self.start_dealer[idx] = d
        self.imperiales[idx] = self._restart_imperiales[idx]
        self.points[idx] = self._restart_points[idx]
        self.start_imperiales[idx] = self.imperiales[idx]
        self.start_points[idx] = self.points[idx]
        self._value_at_start[idx] = self.imperiales[idx] + self.points[idx] / POINTS_PER_IMPERIALE
        self.deal_index[idx] = 0
        self.stage[idx] = 0
        self.over[idx] = False
        self.winner[idx] = -1

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

    # ------------------------------------------------------------------ events and score keeping

    def _log(self, idx: np.ndarray, kind: str, player: np.ndarray, amount: np.ndarray | int) -> None:
        if not self.record_events or len(idx) == 0:
            return
        amount = np.broadcast_to(np.asarray(amount, dtype=np.int64), idx.shape)
        self._events.append(
            np.stack([self.game_id[idx], self.deal_index[idx], np.full(len(idx), _EV[kind]),
                      np.asarray(player, np.int64), amount], axis=1)
        )

    def pop_events(self) -> np.ndarray:
        """Events since the last call, ordered by game then time: rows of
        ``(game_id, deal_index, kind, player, amount)`` where ``kind`` indexes
        :data:`EVENT_KINDS` and ``amount`` is the points of an award, the impériales of a
        gain-type event, the count of an ``imperiale`` event, the points lost in a
        ``wipe``, 0 for ``game_over``."""
        if not self._events:
            return np.zeros((0, 5), dtype=np.int64)
        ev = np.concatenate(self._events)
        self._events = []
        return ev[np.argsort(ev[:, 0], kind="stable")]

    def _award(self, idx: np.ndarray, p: np.ndarray, n: np.ndarray | int, kind: str) -> None:
        """award(p, n) of RULES.md section 3, for the games ``idx`` (each with its player)."""
        if not len(idx):
            return
        self._log(idx, kind, p, n)
        P = self.players
        points = self.points.reshape(-1)
        fi = idx * P + p
        points[fi] += n
        crossed = points[fi] >= POINTS_PER_IMPERIALE
        while crossed.any():
            idx, p = idx[crossed], p[crossed]
            points[idx * P + p] -= POINTS_PER_IMPERIALE
            self._gain(idx, p, 1)
            idx, p = self._alive(idx, p)
            crossed = points[idx * P + p] >= POINTS_PER_IMPERIALE

    def _gain(self, idx: np.ndarray, p: np.ndarray, k: np.ndarray | int, *, wipe: np.ndarray | bool = True,
              protect: bool = False) -> None:
        """gain(p, k): impériales, the wipe of every opponent, the end of the game at the target.

        With ``protect`` (Académie step 2) the dealer keeps at most the turned honour's points."""
        if not len(idx):
            return
        imperiales = self.imperiales.reshape(-1)
        fi = idx * self.players + p
        imperiales[fi] += k
        self._log(idx, "imperiale", p, k)
        points = self.points[idx]
        opponent = self._seats != p[:, None]
        if wipe is not True:
            opponent &= np.asarray(wipe)[:, None]
        keep = 0
        if protect:
            shield = self.turned_honour_scored[idx, None] & (self._seats == self.dealer[idx, None])
            keep = np.where(shield, np.minimum(points, self.rules.turned_honour_points), 0)
        after = np.where(opponent, keep, points)
        if self.record_events:
            lost = points - after
            for q in range(self.players):
                wiped = lost[:, q] > 0
                self._log(idx[wiped], "wipe", np.full(wiped.sum(), q), lost[wiped, q])
        self.points[idx] = after
        reached = imperiales[fi] >= self.rules.target_imperiales
        if reached.any():
            ri = idx[reached]
            self.over[ri] = True
            self.winner[ri] = p[reached]
            self._log(ri, "game_over", p[reached], 0)

    def _alive(self, idx: np.ndarray, *arrays: np.ndarray):
        keep = ~self.over[idx]
        return (idx[keep], *(a[keep] for a in arrays))

    def _score_item(self, idx: np.ndarray, p: np.ndarray, j: int, *, wipe: np.ndarray | bool = True,
                    protect: bool = False) -> None:
        """Score shown in-hand item ``j`` for each game (see Game._score_in_hand)."""
        r = self.rules
        kind = self.item_kind[j]
        event = "quart_major" if kind == "sequence" else kind
        if j == CB_ITEM:
            if r.carte_blanche_points:
                self._award(idx, p, r.carte_blanche_points, event)
                return
            value = np.full(len(idx), r.carte_blanche_imperiales)
        elif kind == "quart_major":
            value = np.where(self.trump[idx] == j - QUART_ITEMS[0], r.trump_quart_imperiales, 1)
        else:
            value = np.ones(len(idx), dtype=np.int64)
        if r.imperiales_as_points and j != CB_ITEM:
            self._award(idx, p, POINTS_PER_IMPERIALE * value, event)
            return
        self._log(idx, event, p, value)
        self._gain(idx, p, value, wipe=wipe, protect=protect)

    # ------------------------------------------------------------------ the stage machine

    def _run(self, idx: np.ndarray) -> None:
        """Move the games ``idx`` through the stages until each waits on a decision or ends.

        One sweep visits the stages in order, so a game flows through every automatic stage
        it reaches in the same sweep; only a new deal (back to stage 0) needs another."""
        self.kind[idx] = NONE
        idx = self._still_running(idx)
        while len(idx):
            for s in range(int(self.stage[idx].min()), len(self.stages)):
                st = self.stages[s]
                sel = idx[self.stage[idx] == s]
                if not len(sel):
                    continue
                if self._decision_kind[s] != NONE:
                    self.stage[self._decision_stage(st, s, sel)] += 1
                else:
                    getattr(self, "_stage_" + st.kind)(sel, st)
                idx = self._still_running(idx)
                if not len(idx):
                    break

    def _still_running(self, idx: np.ndarray) -> np.ndarray:
        """Drop the games that wait on a decision; note those that just ended."""
        over = self.over[idx]
        if over.any():
            self._ended.append(idx[over])
        return idx[(self.kind[idx] == NONE) & ~over]

    def _decision_stage(self, st: Stage, s: int, idx: np.ndarray) -> np.ndarray:
        """Set the decision of games at decision stage ``s``; return those with none to take."""
        P = self.players
        if st.kind in ("ask_now", "ask"):
            p = (self.dealer[idx] + 1 + st.pos) % P
            has = self.pending[idx, p] != 0
        elif st.kind == "ask_turned":
            p = self.dealer[idx]
            has = self.turned_eligible[idx] & ~self.turned_asked[idx]
        elif st.kind == "point":
            p = (self.dealer[idx] + 1 + st.pos) % P
            has = ~self.point_answered[idx, p]
        elif st.kind == "first_lead":
            p = self.leader[idx]
            has = (self.tricks_played[idx] == 0) & (self.trick_len[idx] == 0)
        else:  # play
            p = np.where(self.trick_len[idx] == 0, self.leader[idx], (self.leader[idx] + self.trick_len[idx]) % P)
            has = self.tricks_played[idx] < 12
        wait = idx[has]
        self.current_player[wait] = p[has]
        self.kind[wait] = self._decision_kind[s]
        return idx[~has]

    # Automatic stages ---------------------------------------------------

    def _stage_deal_start(self, idx: np.ndarray, st: Stage) -> None:
        P = self.players
        order = shuffled(self.seed[idx], self.deal_index[idx], self._pack)
        if self.explicit_deals is not None:
            given = self.deal_index[idx] < self.explicit_deals.shape[1]
            if given.any():
                gi = np.flatnonzero(given)
                order[gi] = self.explicit_deals[idx[gi], self.deal_index[idx[gi]]]
        self.order[idx] = order
        dealer = self.dealer[idx]
        seats = (dealer[:, None] + 1 + self._seats) % P
        dealt = np.empty((len(idx), P), dtype=np.uint64)
        np.put_along_axis(dealt, seats, mask_of(order[:, : 12 * P].reshape(len(idx), P, 12)), axis=1)
        self.dealt[idx] = dealt
        self.hands[idx] = dealt
        self.turned[idx] = order[:, 24] if P == 2 else order[:, 35]
        self.trump[idx] = CARD_SUIT[self.turned[idx]]
        for name in ("captured", "played", "revealed", "shown"):
            getattr(self, name)[idx] = 0
        self.voids[idx] = 0
        self.point_suit[idx] = -1
        self.point_count[idx] = 0
        self.point_value[idx] = 0
        self.point_answered[idx] = False
        self.tricks[idx] = 0
        self.tricks_played[idx] = 0
        self.trick_cards[idx] = -1
        self.trick_len[idx] = 0
        self.leader[idx] = (dealer + 1) % P
        self.history_len[idx] = 0
        self.turned_shown[idx] = False
        self.turned_asked[idx] = False
        self.turned_honour_scored[idx] = False
        # What each hand may show, in canonical order.
        has = (dealt[:, :, None] & self.item_mask) == self.item_mask
        has[:, :, CB_ITEM] = (dealt & KQJ) == 0
        items = has.astype(np.int64) @ self._item_weights
        self.items[idx] = items
        self.pending[idx] = items
        if self.rules.turned_imperiale:
            need = self.turned_need[self.turned[idx]]
            dh = dealt[np.arange(len(idx)), dealer][:, None]
            self.turned_eligible[idx] = ((need != 0) & ((dh & need) == need)).any(axis=1)
        else:
            self.turned_eligible[idx] = False
        # Step 1: a turned honour.
        hit = (self.honour_mask[self.trump[idx]] & BIT[self.turned[idx]]) != 0
        if self.rules.turned_honour_points and hit.any():
            gi = idx[hit]
            self.turned_honour_scored[gi] = True
            self._award(gi, self.dealer[gi], self.rules.turned_honour_points, "turned_honour")
        self.stage[idx] += 1

    def _stage_cb_end(self, idx: np.ndarray, st: Stage) -> None:
        shown_cb = ((self.shown[idx] >> CB_ITEM) & 1).any(axis=1)
        ends = shown_cb & self.rules.carte_blanche_ends_deal
        self.stage[idx] += 1
        self.stage[idx[ends]] = len(self.stages) - 1

    def _stage_score_turned(self, idx: np.ndarray, st: Stage) -> None:
        gi = idx[self.turned_shown[idx]]
        self._score_turned(gi)
        self.stage[idx] += 1

    def _score_turned(self, gi: np.ndarray) -> None:
        if self.rules.imperiales_as_points:
            self._award(gi, self.dealer[gi], POINTS_PER_IMPERIALE, "turned_imperiale")
        else:
            self._log(gi, "turned_imperiale", self.dealer[gi], 1)
            self._gain(gi, self.dealer[gi], 1)

    def _stage_score_cb(self, idx: np.ndarray, st: Stage) -> None:
        P = self.players
        for k in range(P):
            gi = idx[~self.over[idx]]
            p = (self.dealer[gi] + 1 + k) % P
            has = ((self.shown[gi, p] >> CB_ITEM) & 1) == 1
            self._score_item(gi[has], p[has], CB_ITEM)
        self.stage[idx] += 1

    def _stage_score_compared(self, idx: np.ndarray, st: Stage) -> None:
        """Foster: carte blanche, then the best sequence's holder takes all his sequences,
        then likewise the fours; no wipes if both players showed something in hand."""
        P = self.players
        wipe = ~(self.rules.mutual_show_no_wipe & (self.shown[idx] != 0).all(axis=1))
        for k in range(P):
            keep = ~self.over[idx]
            gi, w = idx[keep], wipe[keep]
            p = (self.dealer[gi] + 1 + k) % P
            has = ((self.shown[gi, p] >> CB_ITEM) & 1) == 1
            self._score_item(gi[has], p[has], CB_ITEM, wipe=w[has])
        seq_slots = list(QUART_ITEMS) + list(SEQUENCE_ITEMS)
        four_slots = [FOUR_ITEMS_START + j for j in range(len(self.four_ranks))]
        for slots in (seq_slots, four_slots):
            keep = ~self.over[idx]
            gi, w = idx[keep], wipe[keep]
            # Strength of each priority position's best shown item of the category (0: none).
            best = np.zeros((len(gi), P), dtype=np.int64)
            for k in range(P):
                p = (self.dealer[gi] + 1 + k) % P
                shown = self.shown[gi, p]
                for j in slots:
                    if j in QUART_ITEMS or j in SEQUENCE_ITEMS:
                        strength = 1 + 2 * (j in QUART_ITEMS) + (self.trump[gi] == (j - 1) % 4)
                    else:
                        strength = np.full(len(gi), 1 + len(slots) - (j - FOUR_ITEMS_START))
                    best[:, k] = np.where((shown >> j) & 1 == 1, np.maximum(best[:, k], strength), best[:, k])
            any_shown = best.max(axis=1) > 0
            winner_pos = best.argmax(axis=1)
            gi, w, winner_pos = gi[any_shown], w[any_shown], winner_pos[any_shown]
            p = (self.dealer[gi] + 1 + winner_pos) % P
            for j in slots:
                keep = ~self.over[gi]
                gi, w, p = gi[keep], w[keep], p[keep]
                has = ((self.shown[gi, p] >> j) & 1) == 1
                self._score_item(gi[has], p[has], j, wipe=w[has])
        self.stage[idx] += 1

    def _stage_score_by_number(self, idx: np.ndarray, st: Stage) -> None:
        """Imperijal: those who showed the most impériales score 24 points each."""
        P = self.players
        counts = popcount(self.shown[idx].astype(np.uint64) & ~np.uint64(1 << CB_ITEM))
        counts[np.arange(len(idx)), self.dealer[idx]] += self.turned_shown[idx]
        most = counts.max(axis=1)
        leaders = counts == most[:, None]
        scoring = (most > 0) & (leaders.sum(axis=1) < P)
        for k in range(P):
            keep = scoring & ~self.over[idx]
            gi = idx[keep]
            p = (self.dealer[gi] + 1 + k) % P
            lead = leaders[keep][np.arange(len(gi)), p]
            gi, p = gi[lead], p[lead]
            for j in range(1, NUM_ITEMS):
                gi, p = self._alive(gi, p)
                has = ((self.shown[gi, p] >> j) & 1) == 1
                self._score_item(gi[has], p[has], j)
            gi, p = self._alive(gi, p)
            ti = (p == self.dealer[gi]) & self.turned_shown[gi]
            self._score_turned(gi[ti])
        self.stage[idx] += 1

    def _stage_score_point(self, idx: np.ndarray, st: Stage) -> None:
        P = self.players
        declared = self.point_suit[idx] >= 0
        key = np.where(declared, self.point_count[idx] * 1000 + self.point_value[idx], -1)
        # Rotate to priority order so that argmax and ties follow priority.
        prio = (self.dealer[idx][:, None] + 1 + np.arange(P)[None, :]) % P
        key_prio = np.take_along_axis(key, prio, axis=1)
        best = key_prio.max(axis=1)
        leaders = (key_prio == best[:, None]) & (best[:, None] >= 0)
        n_lead = leaders.sum(axis=1)
        split = (self.rules.point_tie == "split") & (n_lead > 1)
        first = leaders.argmax(axis=1)
        points = np.where(split, self.rules.point_points // 2, self.rules.point_points)
        for k in range(P):
            keep = ~self.over[idx]
            wins = keep & leaders[:, k] & (split | (first == k))
            gi = idx[wins]
            p = prio[wins, k]
            suit = self.point_suit[gi, p]
            self.revealed[gi, p] |= self.dealt[gi, p] & SUIT_MASK[suit]
            self._award(gi, p, points[wins], "point")
        self.stage[idx] += 1

    def _stage_honours_in_hand(self, idx: np.ndarray, st: Stage) -> None:
        self._score_honours(idx, self.hands, self.rules.honours_in_hand_points)
        self.stage[idx] += 1

    def _stage_honours(self, idx: np.ndarray, st: Stage) -> None:
        self._score_honours(idx, self.captured, 4)
        self.stage[idx] += 1

    def _score_honours(self, idx: np.ndarray, where: np.ndarray, per: int) -> None:
        if not per:
            return
        for k in range(self.players):
            gi = idx[~self.over[idx]]
            p = (self.dealer[gi] + 1 + k) % self.players
            n = popcount(where[gi, p] & self.honour_mask[self.trump[gi]])
            has = n > 0
            self._award(gi[has], p[has], per * n[has], "honours")

    def _stage_fallen(self, idx: np.ndarray, st: Stage) -> None:
        mode = self.rules.fallen_imperiale
        if mode != "off":
            P = self.players
            for k in range(P):
                gi = idx[~self.over[idx]]
                p = (self.dealer[gi] + 1 + k) % P
                t = self.trump[gi]
                dealt, cap = self.dealt[gi, p], self.captured[gi, p]
                kq = BIT[t * 9 + K] | BIT[t * 9 + Q]
                held_kq = (dealt & kq) == kq
                if mode == "tricks":
                    quart = self.item_mask[np.asarray(QUART_ITEMS)[t]]
                    fallen = (cap & quart) == quart
                elif mode == "tombee":
                    want = BIT[t * 9 + J] | BIT[t * 9 + A]
                    others = np.bitwise_or.reduce(self.dealt[gi], axis=1) & ~dealt
                    fallen = held_kq & ((others & want) == want) & ((cap & want) == want)
                else:
                    want = BIT[t * 9 + A] | BIT[t * 9 + low_rank(P)]
                    fallen = held_kq & ((dealt & want) == 0) & ((cap & want) == want)
                gi, p = gi[fallen], p[fallen]
                if self.rules.imperiales_as_points:
                    self._award(gi, p, POINTS_PER_IMPERIALE, "fallen_imperiale")
                else:
                    self._log(gi, "fallen_imperiale", p, 1)
                    self._gain(gi, p, 1)
        self.stage[idx] += 1

    def _stage_tricks(self, idx: np.ndarray, st: Stage) -> None:
        r, P = self.rules, self.players
        for k in range(P):
            gi = idx[~self.over[idx]]
            p = (self.dealer[gi] + 1 + k) % P
            t = self.tricks[gi, p]
            capot = t == 12
            if r.capot_imperiales:
                ci = gi[capot]
                self._log(ci, "capot", p[capot], r.capot_imperiales)
                self._gain(ci, p[capot], r.capot_imperiales)
                gi, p, t, capot = gi[~capot], p[~capot], t[~capot], capot[~capot]
            if r.trick_scoring == "excess":
                n = 4 * (t - r.trick_quota)
            elif r.trick_scoring == "difference":
                n = 4 * (2 * t - 12)
            else:
                n = np.where(t > r.trick_quota, 4, 0)
            has = n > 0
            self._award(gi[has], p[has], n[has], "tricks")
            if r.capot_points:
                gi, p, capot = self._alive(gi, p, capot)
                self._award(gi[capot], p[capot], r.capot_points, "capot")
        self.stage[idx] += 1

    def _stage_deal_end(self, idx: np.ndarray, st: Stage) -> None:
        if self.single_deal:
            self.over[idx] = True
            return
        self._archive_deals(idx)
        self.dealer[idx] = (self.dealer[idx] + 1) % self.players
        self.deal_index[idx] += 1
        self.stage[idx] = 0

    # ------------------------------------------------------------------ actions

    def action_bits(self) -> np.ndarray:
        """Legal actions of every game as a uint64 bitmask over the action layout."""
        if self._bits is not None:
            return self._bits
        bits = np.zeros(self.n, dtype=np.uint64)
        kind = self.kind
        cur = self.current_player
        q = kind == QUESTION
        bits[q] = (ONE << np.uint64(act.SHOW)) | (ONE << np.uint64(act.HIDE))
        pt = np.flatnonzero(kind == POINT)
        if len(pt):
            hand = self.hands[pt, cur[pt]]
            held = np.zeros(len(pt), dtype=np.uint64)
            for s in range(NUM_SUITS):
                held |= ((hand & SUIT_MASK[s]) != 0).astype(np.uint64) << np.uint64(act.POINT_BASE + s)
            bits[pt] = held | (ONE << np.uint64(act.SINK))
        pl = np.flatnonzero(kind == PLAY)
        if len(pl):
            bits[pl] = self._legal_cards(pl)
        self._bits = bits
        return bits

    def _legal_cards(self, idx: np.ndarray) -> np.ndarray:
        """Legal card masks (section 4 step 5) for games whose decision is a play."""
        r = self.rules
        hand = self.hands[idx, self.current_player[idx]]
        trumps = hand & SUIT_MASK[self.trump[idx]]
        lead = hand
        if r.first_lead_trump:
            first = (self.tricks_played[idx] == 0) & (trumps != 0)
            lead = np.where(first, trumps, hand)
        led = np.maximum(self.trick_cards[idx, 0], 0)
        win = self.win_card[idx]
        follow = hand & SUIT_MASK[CARD_SUIT[led]]
        if r.must_beat:
            higher = follow & STRONGER[win]
            follow = np.where(higher != 0, higher, follow)
        if r.must_trump:
            if r.overtrump:
                over = trumps & STRONGER[win]
                trumped = CARD_SUIT[win] == self.trump[idx]
                void_play = np.where(trumps == 0, hand, np.where(trumped, np.where(over != 0, over, hand), trumps))
            else:
                void_play = np.where(trumps != 0, trumps, hand)
        else:
            void_play = hand
        following = np.where(follow != 0, follow, void_play)
        return np.where(self.trick_len[idx] == 0, lead, following)

    def legal_action_mask(self) -> np.ndarray:
        """``(N, 43)`` bool: the legal actions of the player to act in each game."""
        return unpack(self.action_bits(), act.NUM_ACTIONS)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Apply one action per game; returns ``(rewards (N, P) float32, terminated (N,) bool)``.

        Games already over (without ``auto_next_game``) ignore their action.  An illegal
        action raises ``ValueError`` naming the games, the actions and what was legal.
        """
        a = np.asarray(actions, dtype=np.int64).reshape(-1)
        if a.shape != (self.n,):
            raise ValueError(f"expected {self.n} actions, got shape {np.shape(actions)}")
        active = self.kind != NONE
        bits = self.action_bits()
        inside = (a >= 0) & (a < act.NUM_ACTIONS)
        ok = inside & (((bits >> np.where(inside, a, 0).astype(np.uint64)) & ONE) == ONE)
        bad = np.flatnonzero(active & ~ok)
        if len(bad):
            i = int(bad[0])
            legal = [act.describe(x) for x in np.flatnonzero(unpack(bits[i], act.NUM_ACTIONS))]
            raise ValueError(
                f"illegal action in {len(bad)} game(s): game {i} (player {self.current_player[i]}) "
                f"chose {a[i]}, legal: {', '.join(legal)}"
            )
        self._bits = None
        self._ended = []
        self.last_player = self.current_player.copy()
        idx = self._ar if active.all() else np.flatnonzero(active)
        # A deal has at most 82 decisions (3 x 14 questions, the turned card, 3 points, 36 cards).
        at = idx * HISTORY_LEN + self.history_len[idx]
        self.history_actions.reshape(-1)[at] = a[idx]
        self.history_players.reshape(-1)[at] = self.current_player[idx]
        self.history_len[idx] += 1
        kind = self.kind[idx]
        plays = kind == PLAY
        if plays.all():  # the common case: every game is playing a card
            self._run(self._apply_play(idx, a))
        else:
            moving = [self._apply_question(idx[kind == QUESTION], a), self._apply_point(idx[kind == POINT], a),
                      self._apply_play(idx[plays], a)]
            self._run(np.concatenate(moving))
        return self._finish_step()

    def _apply_question(self, idx: np.ndarray, a: np.ndarray) -> np.ndarray:
        if not len(idx):
            return idx
        show = a[idx] == act.SHOW
        st = self.stage[idx]
        turned_q = self._is_turned_stage[st]
        # The turned-card impériale.
        ti = idx[turned_q]
        self.turned_shown[ti] = show[turned_q]
        self.turned_asked[ti] = True
        # In-hand items: the lowest pending item of the player.
        qi, qshow = idx[~turned_q], show[~turned_q]
        p = self.current_player[qi]
        j = lowest_bit_index(self.pending[qi, p].astype(np.uint64))
        self.pending[qi, p] &= ~(1 << j)
        s_idx, s_p, s_j = qi[qshow], p[qshow], j[qshow]
        self.shown[s_idx, s_p] |= 1 << s_j
        cards = np.where(s_j == CB_ITEM, self.dealt[s_idx, s_p], self.item_mask[s_j])
        self.revealed[s_idx, s_p] |= cards
        now = self._is_now_stage[st[~turned_q]][qshow]
        for jj in np.unique(s_j[now]) if now.any() else []:
            sel = now & (s_j == jj)
            self._score_item(s_idx[sel], s_p[sel], int(jj), protect=self.rules.protect_turned_honour)
        return idx

    def _apply_point(self, idx: np.ndarray, a: np.ndarray) -> np.ndarray:
        if not len(idx):
            return idx
        p = self.current_player[idx]
        declare = a[idx] != act.SINK
        suit = a[idx] - act.POINT_BASE
        di, dp, ds = idx[declare], p[declare], suit[declare]
        cards = self.hands[di, dp] & SUIT_MASK[ds]
        self.point_suit[di, dp] = ds
        self.point_count[di, dp] = popcount(cards)
        self.point_value[di, dp] = point_values(cards)
        self.point_answered[idx, p] = True
        return idx

    def _apply_play(self, idx: np.ndarray, a: np.ndarray) -> np.ndarray:
        """Play the cards; returns the games that leave the play stage (no trick left, or
        the Foster first lead); the others wait on the next card at once."""
        if not len(idx):
            return idx
        P = self.players
        p = self.current_player[idx]
        fi = idx * P + p
        c = a[idx]
        bit = BIT[c]
        hands, played = self.hands.reshape(-1), self.played.reshape(-1)
        hands[fi] &= ~bit
        played[fi] |= bit
        pos = self.trick_len[idx]
        trick = self.trick_cards.reshape(-1)
        trick[idx * P + pos] = c
        first = pos == 0
        suit_c = CARD_SUIT[c]
        suit_led = np.where(first, suit_c, CARD_SUIT[trick[idx * P]])
        voids = self.voids.reshape(-1)
        voids[fi] |= np.where(suit_c != suit_led, 1 << suit_led, 0)
        win = self.win_card[idx]
        trump = self.trump[idx]
        suit_w = CARD_SUIT[win]
        beats = ((suit_w == suit_c) & (CARD_RANK[c] < CARD_RANK[win])) | ((suit_c == trump) & (suit_w != trump))
        take = first | beats
        self.win_card[idx] = np.where(take, c, win)
        winner = np.where(take, p, self.win_player[idx])
        self.win_player[idx] = winner
        length = pos + 1
        done = length == P
        self.trick_len[idx] = np.where(done, 0, length)
        di = idx[done]
        if len(di):
            w = winner[done]
            wi = di * P + w
            self.captured.reshape(-1)[wi] |= mask_of(self.trick_cards[di])
            self.tricks.reshape(-1)[wi] += 1
            self.tricks_played[di] += 1
            self.trick_cards[di] = -1
            self.leader[di] = w
        leader = self.leader[idx]
        self.current_player[idx] = np.where(done, leader, (leader + length) % P)
        return idx[(done & (self.tricks_played[idx] == 12)) | ~self._is_play_stage[self.stage[idx]]]

    def _finish_step(self) -> tuple[np.ndarray, np.ndarray]:
        P = self.players
        rewards = np.zeros((self.n, P), dtype=np.float32)
        terminated = np.zeros(self.n, dtype=bool)
        ended = np.concatenate(self._ended) if self._ended else self._ar[:0]
        self._ended = []
        if len(ended):
            terminated[ended] = True
            won = self.winner[ended] >= 0
            wi = ended[won]
            rewards[wi] = -1.0 / (P - 1)
            rewards[wi, self.winner[wi]] = 1.0
            di = ended[~won]
            if len(di):
                value = self.imperiales[di] + self.points[di] / POINTS_PER_IMPERIALE
                change = value - self._value_at_start[di]
                others = (change.sum(axis=1, keepdims=True) - change) / (P - 1)
                rewards[di] = (change - others).astype(np.float32)
            self.final_imperiales[ended] = self.imperiales[ended]
            self.final_points[ended] = self.points[ended]
            self._archive_deals(ended)
            if self.keep_final_obs:
                self.final_observation[ended] = self.observe(rows=ended, players=self.last_player[ended])
            if self.auto_next_game:
                self._start_games(ended, next_game_seed(self.seed[ended]))
                self.game_id[ended] = self._next_game_id + np.arange(len(ended))
                self._next_game_id += len(ended)
                self._archive_games(ended)
                self._run(ended)
        return rewards, terminated

    @property
    def done(self) -> np.ndarray:
        """Games waiting on no decision (over, and not restarted)."""
        return self.kind == NONE

    # ------------------------------------------------------------------ observation

    def observe(
        self, out: np.ndarray | None = None, players: np.ndarray | None = None, rows: np.ndarray | None = None
    ) -> np.ndarray:
        """Observations ``(N, OBS_SIZE)`` float32 (layout in :mod:`observation`) of the acting
        player in every game, or of ``players`` (one seat per game; a player who is not to act
        sees no pending decision).  ``rows`` encodes only those games (``players`` then has
        one seat per row).  Pass ``out`` to fill a preallocated buffer.

        The card blocks are one bitmask per block, unpacked in a single call; every block is
        written whole, so the buffer is never cleared first (the observation is memory-bound).
        The score blocks are clipped to 1: a finished game can hold more than the target in
        impériales, or 24 points or more left by the award that won it."""
        P = self.players
        g = self._ar if rows is None else np.asarray(rows, dtype=np.int64)
        n = len(g)
        if out is None:
            out = np.empty((n, OBS_SIZE), dtype=np.float32)
        kind, current = self.kind[g], self.current_player[g]
        cur = np.maximum(current, 0) if players is None else np.asarray(players, dtype=np.int64)
        acting = (kind != NONE) & (cur == current)
        local = np.arange(n)
        seats = (cur[:, None] + self._seats) % P  # relative seat -> absolute
        flat = g[:, None] * P + seats
        # Card blocks: hand, played x3, trick x3, revealed x3, turned, question cards.
        masks = self._obs_masks[:n]
        masks[:, 0] = self.hands.reshape(-1)[flat[:, 0]]
        tc = self.trick_cards[g]
        by_pos = np.where(tc >= 0, BIT[np.maximum(tc, 0)], np.uint64(0)).reshape(-1)
        leader = self.leader[g]
        masks[:, 4 : 4 + P] = by_pos[local[:, None] * P + (seats - leader[:, None]) % P]
        masks[:, 1 : 1 + P] = self.played.reshape(-1)[flat]
        masks[:, 7 : 7 + P] = self.revealed.reshape(-1)[flat]
        masks[:, 10] = BIT[self.turned[g]]
        q = acting & (kind == QUESTION)
        masks[:, 11] = 0
        if q.any():
            item = self._question_item(g[q], cur[q])
            turned_q = self._is_turned_stage[self.stage[g[q]]]
            masks[q, 11] = np.where(
                turned_q, BIT[self.turned[g[q]]],
                np.where(item == CB_ITEM, self.dealt.reshape(-1)[flat[q, 0]], self.item_mask[np.maximum(item, 0)]),
            )
        bits = np.unpackbits(masks.view(np.uint8).reshape(n, 12, 8), axis=-1, bitorder="little", count=NUM_CARDS)
        cards_end = OFFSETS["turned"].stop
        out[:, :cards_end] = bits[:, :11].reshape(n, cards_end)
        out[:, cards_end:] = 0.0
        out[:, OFFSETS["question_cards"]] = bits[:, 11]
        out[local, OFFSETS["trump"].start + self.trump[g]] = 1.0
        sl = OFFSETS["voids"].start
        out[:, sl : sl + 4 * P] = _VOID_BITS[self.voids.reshape(-1)[flat]].reshape(n, -1)
        out[local[acting], OFFSETS["phase"].start + kind[acting]] = 1.0
        if q.any():
            question_kind = np.select([item == CB_ITEM, item < 5, item < 9], [0, 1, 2], 3)
            out[local[q], OFFSETS["question_kind"].start + np.where(turned_q, 4, question_kind)] = 1.0
        declared = self.point_suit.reshape(-1)[flat] >= 0
        point = out[:, OFFSETS["declared_point"]].reshape(n, 3, 4)
        point[:, :P, 0] = declared
        point[:, :P, 1] = self.point_answered.reshape(-1)[flat] & ~declared
        point[:, :P, 2] = self.point_count.reshape(-1)[flat] / 12.0
        point[:, :P, 3] = self.point_value.reshape(-1)[flat] / 120.0
        for name, values, scale in (
            ("imperiales", self.imperiales, self.rules.target_imperiales),
            ("points", self.points, POINTS_PER_IMPERIALE),
            ("tricks", self.tricks, 12.0),
        ):
            sl = OFFSETS[name].start
            out[:, sl : sl + P] = np.minimum(values.reshape(-1)[flat] / scale, 1.0)
        out[local, OFFSETS["dealer"].start + (self.dealer[g] - cur) % P] = 1.0
        led = self.trick_len[g] > 0
        out[local[led], OFFSETS["leader"].start + ((leader - cur) % P)[led]] = 1.0
        sl = OFFSETS["progress"].start
        out[:, sl] = self.tricks_played[g] / 12.0
        out[:, sl + 1] = float(P == 3)
        return out

    def _question_item(self, g: np.ndarray, seat: np.ndarray) -> np.ndarray:
        """The in-hand item slot a player is asked about (-1 for the turned-card question)."""
        pending = self.pending.reshape(-1)[g * self.players + seat].astype(np.uint64)
        return np.where(pending != 0, lowest_bit_index(np.where(pending != 0, pending, ONE)), -1)
