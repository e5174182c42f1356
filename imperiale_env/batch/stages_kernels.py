"""The stage machine of the batched engine, compiled: one step of every game, and games started
or resumed, each run through the automatic stages until it waits on a decision again.

A deal is a static list of stages (:mod:`imperiale_env.batch.tables` builds it from the
rules, as the numbers ``t.stage_kind`` / ``t.stage_pos``): a decision stage waits while its
player has something to decide, an automatic stage deals, scores (:mod:`.score_kernels`) or
ends the deal.  :func:`advance` moves one game through them; :func:`run_games` applies each
game's decision (a card through :func:`.batch_play.play_card`, a question, a point), or starts
or resumes games, and advances the games that need it, over a range ``lo .. hi-1``; its
:func:`step_threaded` twin steps the batch one slice a thread (each game is independent of the
others, so the thread count changes the speed, never a result).

The kernels are compiled without reference counting (``_nrt=False``: they allocate nothing and
the caller holds every array for the length of the call) and the stages are inlined into
:func:`run_games`: the state is a named tuple of some fifty arrays, which a compiled call
passes as hundreds of separate numbers, and counting references to them at each call cost
more than the game itself.

What each game did is written to ``flags[i]``: :data:`WAITING` on a decision, :data:`PAUSED`
at the end of a deal whose history the caller keeps (it archives the deal and resumes the
game, :data:`RESUME`), or the game ended: then ``flags[i]`` is its order key, the stage (and
the number of deals begun in this call) where it ended, 0 when the decision itself ended it;
the engine numbers the games that follow in that order.

Score events go into the buffer ``eb`` (rows ``(game_id, deal_index, kind, player,
amount)``, ``en[0]`` of them, each game's in the order they happen); a call stops before a
game that might not fit (``t.event_bound`` rows, at most, a game writes in one call)
and returns where it stopped, so that the caller empties the buffer and calls again.
"""

from __future__ import annotations

from collections import namedtuple
from enum import IntEnum

import numpy as np
from numba import literal_unroll, njit, prange

from imperiale_env.batch.addresses import arrays_at, compiled_fingerprint
from imperiale_env.batch.card_play_kernels import action_bits, illegal_actions, play_card
from imperiale_env.batch.score_kernels import (
    E_TURNED_HONOUR,
    Scores,
    award,
    priority_seat,
    score_by_number,
    score_carte_blanche,
    score_compared,
    score_fallen,
    score_honours,
    score_item,
    score_point,
    score_tricks,
    score_turned,
    scores,
)
from imperiale_env.batch.state import FIRST_DEAL_FIELD, NONE, PLAY, POINT, QUESTION, StateArrays, layout
from imperiale_env.core.actions import POINT_BASE, SHOW, SINK
from imperiale_env.core.cards import HAND_SIZE, NUM_RANKS, TURNED_INDEX
from imperiale_env.core.declarations import CB_ITEM, POINTS_PER_CAPTURED_HONOUR
from imperiale_env.core.events import POINTS_PER_IMPERIALE
from imperiale_env.core.tricks import TRICKS_PER_DEAL
from imperiale_env.kernels.mask_ops import BIT, ONE, SUIT_MASK, ZERO, card_count, lowest_card
from imperiale_env.kernels.seeds import deal_order, first_dealer

#: The kinds of stage, each named once: a member's number (its place here) is what ``t.stage_kind``
#: holds, :mod:`.tables` builds the deal's stages from the members and the kernels compare with them.
StageKind = IntEnum(
    "StageKind",
    "DEAL_START ASK_NOW ASK ASK_TURNED CB_END SCORE_TURNED POINT SCORE_POINT SCORE_CB SCORE_BY_NUMBER "
    "SCORE_COMPARED HONOURS_IN_HAND FIRST_LEAD PLAY HONOURS FALLEN TRICKS DEAL_END",
    start=0,
)
#: ``flags[i]`` of a game waiting on a decision, or paused at the end of a deal to archive.
WAITING, PAUSED = -1, -2
#: What :func:`run_games` does to each game: apply its action, start a new game, resume a paused one.
STEP, START, RESUME = 0, 1, 2

#: What the compiled kernels read of a batch's tables (see :class:`~imperiale_env.batch.tables.Tables`).
#: ``rules`` is :func:`~imperiale_env.core.rules.rule_record` (every rule, read by name); then the
#: engine's options: one deal a game, keep each deal's history, the events one call may write.
#: Each field with the ``(dtype, ndim)`` of the array it is, or ``None`` for the leading fields passed
#: as they are to the one-thread step (the others go there by address: :data:`TABLE_LAYOUT`).
TABLE_FIELDS = (
    ("rules", None), ("single_deal", None), ("keep_history", None), ("event_bound", None), ("court_cards", None),
    ("stage_kind", ("<i8", 1)), ("stage_pos", ("<i8", 1)), ("pack", ("<i8", 1)), ("honour_mask", ("<u8", 1)),
    ("item_mask", ("<u8", 1)), ("item_weights", ("<i8", 1)), ("turned_need", ("<u8", 2)),
    ("trick_points", ("<i8", 2)), ("fallen_held", ("<u8", 1)), ("fallen_want", ("<u8", 1)),
    ("point_values", ("<i8", 1)), ("deal_fills", ("<i8", 1)),
)
TableArrays = namedtuple("TableArrays", [name for name, _ in TABLE_FIELDS])


@njit(cache=True, _nrt=False)
def reset_deal(d, fills: np.ndarray, i: int) -> None:
    """Every per-deal field of game ``i`` back to its fill value; ``d``: the per-deal arrays
    (the state's fields from :data:`~imperiale_env.batch.state.FIRST_DEAL_FIELD` on), ``fills``
    their fill values."""
    k = 0
    for a in literal_unroll(d):
        a[i] = fills[k]
        k += 1


@njit(cache=True, _nrt=False)
def start_game(s, i: int, seed: np.uint64) -> None:
    """A new game in slot ``i`` with ``seed``, from the start score the batch was reset with."""
    P = s.points.shape[1]
    s.seed[i] = seed
    d = s.restart_dealer[i] if s.restart_dealer[i] >= 0 else first_dealer(seed, P)
    s.dealer[i] = d
    s.start_dealer[i] = d
    for p in range(P):
        s.imperiales[i, p] = s.restart_imperiales[i, p]
        s.points[i, p] = s.restart_points[i, p]
        s.start_imperiales[i, p] = s.imperiales[i, p]
        s.start_points[i, p] = s.points[i, p]
        s.value_at_start[i, p] = s.imperiales[i, p] + s.points[i, p] / POINTS_PER_IMPERIALE
    s.deal_index[i] = 0
    s.stage[i] = 0
    s.over[i] = False
    s.winner[i] = -1


@njit(cache=True, inline="always", _nrt=False)
def deal_start(s, c: Scores, t, d, deals: np.ndarray, eb: np.ndarray, en: np.ndarray, i: int,
               keys: np.ndarray) -> None:
    """Deal the cards (seeded, or the given card order ``deals[i, deal_index]``), note what each
    hand may show, and score a turned honour (step 1)."""
    P = s.points.shape[1]
    reset_deal(d, t.deal_fills, i)
    order = s.order[i]
    index = s.deal_index[i]
    if i < deals.shape[0] and index < deals.shape[1]:
        for x in range(order.shape[0]):
            order[x] = deals[i, index, x]
    else:
        deal_order(s.seed[i], index, t.pack, keys, order)
    dealer = s.dealer[i]
    for k in range(P):
        seat = priority_seat(dealer, k, P)
        hand = ZERO
        for x in range(k * HAND_SIZE, (k + 1) * HAND_SIZE):
            hand |= BIT[order[x]]
        s.dealt[i, seat] = hand
        s.hands[i, seat] = hand
        items = t.item_weights[CB_ITEM] if (hand & t.court_cards) == ZERO else 0  # carte blanche
        for j in range(CB_ITEM + 1, t.item_mask.shape[0]):
            need = t.item_mask[j]
            if (hand & need) == need:
                items += t.item_weights[j]
        s.items[i, seat] = items
        s.pending[i, seat] = items
    turned = order[TURNED_INDEX[P]]
    s.turned[i] = turned
    trump = turned // NUM_RANKS
    s.trump[i] = trump
    s.leader[i] = (dealer + 1) % P
    if t.rules[0]["turned_imperiale"]:
        s.turned_eligible[i] = turned_cards(t.turned_need, s.dealt[i, dealer], turned) != ZERO
    # Step 1: a turned honour.
    if t.rules[0]["turned_honour_points"] and (t.honour_mask[trump] & BIT[turned]) != ZERO:
        s.turned_honour_scored[i] = True
        award(c, t.rules[0], eb, en, i, dealer, t.rules[0]["turned_honour_points"], E_TURNED_HONOUR, False)


@njit(cache=True, _nrt=False)
def turned_cards(turned_need: np.ndarray, hand: np.uint64, turned: int) -> np.uint64:
    """The three cards of ``hand`` the turned card completes (the first of the quart, the
    sequence and the four it completes, as the reference engine shows it), or none."""
    for g in range(turned_need.shape[1]):
        need = turned_need[turned, g]
        if need != ZERO and (hand & need) == need:
            return need
    return ZERO


@njit(cache=True, _nrt=False)
def wait(current_player: np.ndarray, kinds: np.ndarray, i: int, p: int, kind: int) -> int:
    """Game ``i`` waits on a decision of player ``p``."""
    current_player[i] = p
    kinds[i] = kind
    return WAITING


@njit(cache=True, inline="always", _nrt=False)
def advance(s, c: Scores, t, d, deals: np.ndarray, eb: np.ndarray, en: np.ndarray, i: int, archived: bool,
            keys: np.ndarray) -> int:
    """Move game ``i`` through the stages until it waits on a decision, ends, or (keeping the
    history, unless ``archived`` says its deal is archived already) reaches the end of a deal;
    returns its flag (see the module's docstring)."""
    P = s.points.shape[1]
    r = t.rules[0]
    ends = t.stage_kind.shape[0] + 1  # order keys a deal: its stages, after the decision
    begun = 0
    s.kind[i] = NONE
    while True:
        st = np.int64(s.stage[i])  # int64: the order key below must not wrap in plain Python (JIT disabled)
        sk = t.stage_kind[st]
        if sk == StageKind.ASK_NOW or sk == StageKind.ASK:
            p = priority_seat(s.dealer[i], t.stage_pos[st], P)
            if s.pending[i, p] != 0:
                return wait(s.current_player, s.kind, i, p, QUESTION)
        elif sk == StageKind.ASK_TURNED:
            if s.turned_eligible[i] and not s.turned_asked[i]:
                return wait(s.current_player, s.kind, i, s.dealer[i], QUESTION)
        elif sk == StageKind.POINT:
            p = priority_seat(s.dealer[i], t.stage_pos[st], P)
            if not s.point_answered[i, p]:
                return wait(s.current_player, s.kind, i, p, POINT)
        elif sk == StageKind.FIRST_LEAD:
            if s.tricks_played[i] == 0 and s.trick_len[i] == 0:
                return wait(s.current_player, s.kind, i, s.leader[i], PLAY)
        elif sk == StageKind.PLAY:
            if s.tricks_played[i] < TRICKS_PER_DEAL:
                n = s.trick_len[i]
                return wait(s.current_player, s.kind, i, s.leader[i] if n == 0 else (s.leader[i] + n) % P, PLAY)
        elif sk == StageKind.DEAL_START:
            deal_start(s, c, t, d, deals, eb, en, i, keys)
        elif sk == StageKind.CB_END:
            shown_cb = False
            for q in range(P):
                shown_cb = shown_cb or (s.shown[i, q] >> CB_ITEM) & 1 == 1
            if shown_cb and r["carte_blanche_ends_deal"]:
                s.stage[i] = t.stage_kind.shape[0] - 1  # on to the deal's end
                continue
        elif sk == StageKind.SCORE_TURNED:
            if s.turned_shown[i]:
                score_turned(c, r, eb, en, i)
        elif sk == StageKind.SCORE_CB:
            score_carte_blanche(c, s.shown, r, eb, en, i, True)
        elif sk == StageKind.SCORE_BY_NUMBER:
            score_by_number(c, s.shown, s.turned_shown, r, eb, en, i)
        elif sk == StageKind.SCORE_COMPARED:
            score_compared(c, s.shown, r, eb, en, i)
        elif sk == StageKind.SCORE_POINT:
            score_point(c, s.point_suit, s.point_count, s.point_value, s.revealed, s.dealt, r, eb, en, i)
        elif sk == StageKind.HONOURS_IN_HAND:
            score_honours(c, s.hands, t.honour_mask, r["honours_in_hand_points"], r, eb, en, i)
        elif sk == StageKind.HONOURS:
            score_honours(c, s.captured, t.honour_mask, POINTS_PER_CAPTURED_HONOUR, r, eb, en, i)
        elif sk == StageKind.FALLEN:
            score_fallen(c, s.dealt, s.captured, t.fallen_held, t.fallen_want, r, eb, en, i)
        elif sk == StageKind.TRICKS:
            score_tricks(c, s.tricks, t.trick_points, r, eb, en, i)
        else:  # StageKind.DEAL_END
            if t.single_deal:
                s.over[i] = True
                return begun * ends + st + 1
            if t.keep_history and not archived:
                return PAUSED
            archived = False
            s.dealer[i] = (s.dealer[i] + 1) % P
            s.deal_index[i] += 1
            s.stage[i] = 0
            begun += 1
            continue
        s.stage[i] += 1
        if s.over[i]:
            return begun * ends + st + 1


@njit(cache=True, inline="always", _nrt=False)
def apply_question(s, c: Scores, t, eb: np.ndarray, en: np.ndarray, i: int, a: int) -> None:
    """Show (or hide) what the player to act in game ``i`` is asked about: the turned-card
    impériale, or his lowest pending in-hand item (scored at once at an Académie question)."""
    show = a == SHOW
    sk = t.stage_kind[s.stage[i]]
    if sk == StageKind.ASK_TURNED:
        s.turned_shown[i] = show
        s.turned_asked[i] = True
        if show:  # shown like an impériale in hand: the three cards the turned card completes
            dealer = s.dealer[i]
            s.revealed[i, dealer] |= turned_cards(t.turned_need, s.hands[i, dealer], s.turned[i])
        return
    p = s.current_player[i]
    j = lowest_card(np.uint64(s.pending[i, p]))
    s.pending[i, p] &= ~(1 << j)
    if not show:
        return
    s.shown[i, p] |= 1 << j
    s.revealed[i, p] |= s.dealt[i, p] if j == CB_ITEM else t.item_mask[j]
    if sk == StageKind.ASK_NOW:
        score_item(c, t.rules[0], eb, en, i, p, j, True, t.rules[0]["protect_turned_honour"] != 0)


@njit(cache=True, inline="always", _nrt=False)
def apply_point(s, i: int, a: int, values: np.ndarray) -> None:
    """The player to act in game ``i`` declares a point suit (its count and value noted) or sinks."""
    p = s.current_player[i]
    if a != SINK:
        suit = a - POINT_BASE
        cards = s.hands[i, p] & SUIT_MASK[suit]
        s.point_suit[i, p] = suit
        s.point_count[i, p] = card_count(cards)
        value = 0
        rest = cards
        while rest != ZERO:
            value += values[lowest_card(rest)]
            rest &= rest - ONE
        s.point_value[i, p] = value
    s.point_answered[i, p] = True


@njit(cache=True, _nrt=False)
def run_games(lo: int, hi: int, mode: int, rows: np.ndarray, actions: np.ndarray, seeds: np.ndarray, s, t, d,
              deals: np.ndarray, eb: np.ndarray, en: np.ndarray, flags: np.ndarray, keys: np.ndarray) -> int:
    """Run games through the stages, each until it waits on a decision again; ``flags[i]`` says
    how each ended up.  ``mode``: :data:`STEP`, one (legal) action for each game ``lo .. hi-1``
    (the decision goes into the game's history and is applied; ``rows`` is not read);
    :data:`START`, a new game with ``seeds[r]`` in each slot ``rows[r]``, ``lo <= r < hi``;
    :data:`RESUME`, the games ``rows[r]`` paused at the end of a deal now archived.  Returns
    where it stopped (``hi``, or the first whose events might not fit in ``eb``).

    One function for the three, so that the stage machine (inlined) is compiled once."""
    c = scores(s)
    bound = t.event_bound
    for r in range(lo, hi):
        if eb.shape[0] and en[0] + bound > eb.shape[0]:
            return r
        i = r if mode == STEP else rows[r]
        if mode == START:
            start_game(s, i, seeds[r])
        elif mode == STEP:
            flags[i] = WAITING
            p = s.current_player[i]
            s.last_player[i] = p
            k = s.kind[i]
            if k == NONE:
                continue
            a = actions[i]
            at = s.history_len[i]
            s.history_actions[i, at] = a
            s.history_players[i, at] = p
            s.history_len[i] = at + 1
            if k == PLAY:
                if not play_card(s, t.rules, i, a, t.stage_kind[s.stage[i]] == StageKind.PLAY):
                    continue
            elif k == QUESTION:
                apply_question(s, c, t, eb, en, i, a)
            else:
                apply_point(s, i, a, t.point_values)
            if s.over[i]:
                s.kind[i] = NONE
                flags[i] = 0
                continue
        flags[i] = advance(s, c, t, d, deals, eb, en, i, mode == RESUME, keys)
    return hi


@njit(cache=True, _nrt=False)
def run_slice(lo: int, hi: int, mode: int, rows: np.ndarray, actions: np.ndarray, seeds: np.ndarray, state, tables,
              deals: np.ndarray, eb: np.ndarray, en: np.ndarray, flags: np.ndarray, keys: np.ndarray) -> int:
    """:func:`run_games` called from Python: ``state`` and ``tables`` come as the plain tuples
    of :meth:`~imperiale_env.batch.state.BatchState.packed` and ``Tables.packed`` and are named here."""
    return run_games(lo, hi, mode, rows, actions, seeds, StateArrays(*state), TableArrays(*tables),
                     state[FIRST_DEAL_FIELD:], deals, eb, en, flags, keys)


@njit(cache=True, _nrt=False)
def step_slice(actions: np.ndarray, bits: np.ndarray, state, tables, deals: np.ndarray, eb: np.ndarray,
               en: np.ndarray, flags: np.ndarray, keys: np.ndarray, next_bits: np.ndarray) -> tuple[int, int, int, int]:
    """One step of the whole batch on one thread in one compiled call (a call from Python costs
    more than a game at batch 1, mostly in passing the state's arrays): check every action against
    ``bits``, run the games (:func:`run_games`), count the games that ended and, when the whole
    batch was run, write its next legal actions into ``next_bits``.  ``eb``, ``en`` and ``keys``
    are the stage machine's buffers of every thread (the first thread's are used), as
    :func:`step_threaded` takes them.

    Returns ``(stop, illegal, first, ended)``: where it stopped, as :func:`run_slice` does (the
    next legal actions are written when ``stop`` is the batch size); how many actions are not
    legal and the first game with one (then nothing was stepped: ``stop`` is 0); how many games
    ended before ``stop``."""
    s, t = StateArrays(*state), TableArrays(*tables)
    n = actions.shape[0]
    illegal, first = illegal_actions(actions, bits, s.kind)
    if illegal:
        return 0, illegal, first, 0
    # ``rows`` and ``seeds`` are not read when stepping: empty slices of arrays of their types.  The
    # first game and the mode as int64, not literals: numba would compile run_games for the literal
    # values apart from its other callers' (seconds of compiling on first use).
    stop = run_games(np.int64(0), n, np.int64(STEP), flags[:0], actions, s.seed[:0], s, t, state[FIRST_DEAL_FIELD:],
                     deals, eb[0], en[0], flags, keys[0])
    ended = 0
    for i in range(stop):
        if flags[i] >= 0:
            ended += 1
    if stop == n:
        action_bits(0, n, s.kind, s.current_player, s.hands, s.trump, s.trick_cards, s.trick_len, s.win_card,
                    s.tricks_played, t.rules, next_bits)
    return stop, illegal, first, ended


_state_at = arrays_at(layout())
_state_fingerprint = compiled_fingerprint(layout())
#: The tables' leading fields passed as they are (the rules record and four numbers); the arrays after
#: them go by address, of the types :data:`TABLE_FIELDS` declares (``Tables`` checks its arrays against
#: them when it is built).
TABLE_SCALARS = next(k for k, (_, kind) in enumerate(TABLE_FIELDS) if kind is not None)
TABLE_LAYOUT = tuple(kind for _, kind in TABLE_FIELDS[TABLE_SCALARS:])
_tables_at = arrays_at(TABLE_LAYOUT)
_tables_fingerprint = compiled_fingerprint(TABLE_LAYOUT)
#: What :func:`step_at` returns when its code was compiled for another state layout.
STALE = -1


@njit(cache=True, _nrt=False)
def step_at(head: np.ndarray, actions: np.ndarray, bits: np.ndarray, tables, deals: np.ndarray, eb: np.ndarray,
            en: np.ndarray, flags: np.ndarray, keys: np.ndarray, next_bits: np.ndarray) -> tuple[int, int, int, int]:
    """:func:`step_slice` on the state given by its :meth:`~imperiale_env.batch.state.BatchState.header`
    (one array to pass where the state is 55: at batch 1 the passing was most of the call) and the
    tables as ``Tables.by_address`` (their first :data:`TABLE_SCALARS` fields, then the header of
    the others).  Returns ``(STALE, 0, -1, 0)``, touching nothing, when a header is of another
    layout than the one this code was compiled for (a disk cache older than the state or tables)."""
    table_head = tables[TABLE_SCALARS]
    if head[0] != _state_fingerprint() or table_head[0] != _tables_fingerprint():
        return STALE, 0, -1, 0
    return step_slice(actions, bits, _state_at(head), (*tables[:TABLE_SCALARS], *_tables_at(table_head)), deals, eb,
                      en, flags, keys, next_bits)


@njit(cache=True, _nrt=False)
def run_at(head: np.ndarray, tables, lo: int, hi: int, mode: int, rows: np.ndarray, actions: np.ndarray,
           seeds: np.ndarray, deals: np.ndarray, eb: np.ndarray, en: np.ndarray, flags: np.ndarray,
           keys: np.ndarray) -> int:
    """:func:`run_slice` on the state and tables by address, as :func:`step_at` takes them and with
    the same buffers (so that :func:`run_games` is compiled for one set of types); :data:`STALE`,
    touching nothing, when a header is of another layout than this code's."""
    table_head = tables[TABLE_SCALARS]
    if head[0] != _state_fingerprint() or table_head[0] != _tables_fingerprint():
        return STALE
    state = _state_at(head)
    return run_games(lo, hi, mode, rows, actions, seeds, StateArrays(*state),
                     TableArrays(*tables[:TABLE_SCALARS], *_tables_at(table_head)), state[FIRST_DEAL_FIELD:], deals,
                     eb[0], en[0], flags, keys[0])


@njit(cache=True, parallel=True, _nrt=False)
def step_threaded(chunks: int, starts: np.ndarray, rows: np.ndarray, actions: np.ndarray, seeds: np.ndarray, state,
                  tables, deals: np.ndarray, eb: np.ndarray, en: np.ndarray, flags: np.ndarray,
                  keys: np.ndarray) -> None:
    """:func:`run_slice` stepping every game, in ``chunks`` slices run on numba's threads; slice
    ``c`` goes from ``starts[c]``, writes its events into ``eb[c]`` (``en[c, 0]`` rows) and leaves
    in ``starts[c]`` where it stopped (``rows`` and ``seeds``: empty arrays, not read)."""
    n = actions.shape[0]
    s, t, d = StateArrays(*state), TableArrays(*tables), state[FIRST_DEAL_FIELD:]
    for c in prange(chunks):
        starts[c] = run_games(starts[c], (c + 1) * n // chunks, STEP, rows, actions, seeds, s, t, d, deals, eb[c],
                              en[c], flags, keys[c])
