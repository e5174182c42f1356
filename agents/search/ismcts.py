"""OpenSpiel's ISMCTS as an agent (spec ``ismcts:N``): N simulations a decision, random rollouts.

OpenSpiel's Information Set Monte Carlo Tree Search plays OpenSpiel states of ``python_imperiale``
(:mod:`imperiale_env.openspiel`) and draws the worlds it searches with the game's resampler, which
replays the deal in other hands and keeps the worlds that show the player every action he saw.
An agent here gets nothing but the observation, the legal mask and a generator
(:mod:`imperiale_agents.base`), so each decision first rebuilds *one* OpenSpiel state that its
seat cannot tell from the real one (:func:`rebuild`), and ISMCTS's resampler does the rest:

* the seats are relative, as in the observation: the agent is player 0, the dealer is the
  observation's;
* the other hands are a world of :func:`imperiale_agents.search.pimc.sample_worlds` (everything the
  observation proves), the cards they played added back to give the hands as dealt;
* the deal is replayed in those hands: each question answered ``show`` when that item is among
  the seat's shown items, each point declared as the observation says (count and value, or sunk),
  the cards played in the observation's order of play (version 1: trick, player and leader of
  every card);
* the score the deal started from is not in the observation, only the score now; the start is
  found by replaying from 0 and moving it by what the replay missed, until the replay shows
  the score now (a world whose declarations cannot score that, as Imperijal's honours in hand,
  scored unseen, may not, is given up for the next).

The rebuilt state's observation for player 0 must equal the agent's byte for byte, else no state
is used and an error says so.  The search is for one deal (``episode="deal"``: the change of
value over the deal, as the envs' deal reward).  Deterministic for a generator: every row gets
its own seed before the work is split over ``workers`` processes, and the bot's sampler (which
seeds the resampler) and its rollouts run on that seed.
"""

from __future__ import annotations

import numpy as np
from open_spiel.python.algorithms import ismcts, mcts

from imperiale_agents.observation_view import View, decode
from imperiale_agents.parallel.process_pool import LazyPool
from imperiale_agents.search.pimc import sample_worlds
from imperiale_env import openspiel as ios
from imperiale_env.core import actions as act
from imperiale_env.core.cards import suit_of
from imperiale_env.core.declarations import point_of
from imperiale_env.core.events import POINTS_PER_IMPERIALE
from imperiale_env.core.observation import POINT_DECLARED, POINT_SUNK, read
from imperiale_env.core.rules import Rules, resolve_rules
from imperiale_env.reference.game import Deal
from imperiale_env.reference.observe import observe

DEFAULT_SIMULATIONS = 100
#: OpenSpiel's ISMCTS spends its first simulation expanding the root, and fails with one alone.
MIN_SIMULATIONS = 2
#: Exploration constant of the UCT child selection (returns are a few impériales wide).
UCT_C = 2.0
#: Worlds tried before the rebuild gives up.  A pimc world nearly always replays, but its score
#: may differ: Imperijal's honours in hand score without being shown, and the sampler does not
#: know the score.
WORLD_TRIES = 64
#: Rounds of moving the start score before the rebuild gives up.
SCORE_ROUNDS = 6
#: The observation's blocks that a wrong start score changes (and nothing else does).
_SCORE_BLOCKS = ("imperiales", "points")


class RebuildError(RuntimeError):
    """No OpenSpiel state showing the agent exactly its observation was found."""


def make_bot(game, simulations: int, seed: int) -> ismcts.ISMCTSBot:
    """OpenSpiel's Python ISMCTS bot with random rollouts, every draw from ``seed``: its own
    sampler feeds the resampler (OpenSpiel's default sampler is seeded from the system's entropy)."""
    if simulations < MIN_SIMULATIONS:
        raise ValueError(f"ISMCTS needs at least {MIN_SIMULATIONS} simulations a decision, got {simulations}")
    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(seed % 2**32))
    bot = ismcts.ISMCTSBot(game, evaluator, UCT_C, simulations, random_state=np.random.RandomState(seed % 2**32))
    bot.set_resampler(lambda state, player: state.resample_from_infostate(player, bot.random_number))
    return bot


def play_order(v: View) -> list[tuple[int, int]]:
    """``(seat, card)`` of every card played this deal, in the order played: trick by trick, from
    the trick's leader in seat order (relative seats; ``v`` one row)."""
    players = int(v.players[0])
    order = []
    for trick in range(int(v.tricks_played[0]) + 1):
        leader = int(v.leaders[0, trick]) if trick < len(v.leaders[0]) else -1
        if leader < 0:
            break
        cards = np.flatnonzero(v.played_in[0] == trick)
        order += sorted(((int(v.played_by[0, c]), int(c)) for c in cards), key=lambda sc: (sc[0] - leader) % players)
    return order


def _but_scores(row: np.ndarray) -> np.ndarray:
    out = row.copy()
    for name in _SCORE_BLOCKS:
        read(out, name)[...] = 0
    return out


def _show_agrees(state, target: np.ndarray) -> bool:
    """Does showing the pending item keep player 0's shown items among the target's?"""
    shown = state.clone()
    shown.apply_action(act.SHOW)
    return bool((read(observe(shown.engine, 0), "shown_items") <= read(target, "shown_items")).all())


def _point(state, p: int, target: np.ndarray) -> int | None:
    """Seat ``p``'s point as the target shows it: sunk, or a suit of its count and value (of
    several such suits, the one whose cards the target shows revealed by ``p``, if any)."""
    legal = state.engine.decision.legal
    answer = int(read(target, "point")[p])
    if answer == POINT_SUNK:
        return act.SINK
    if answer != POINT_DECLARED:
        return None
    hand = frozenset(state.engine.state.hands[p])
    count, value = int(read(target, "point_count")[p]), int(read(target, "point_value")[p])
    suits = [a for a in legal if a != act.SINK and point_of(hand, a - act.POINT_BASE) == (count, value)]
    shown_by = read(target, "shown_by")
    revealed = [a for a in suits
                if all(shown_by[c] == 1 + p for c in hand if suit_of(c) == a - act.POINT_BASE)]
    return (revealed or suits or [None])[0]


def _replay(game: ios.ImperialeGame, v: View, dealt: list[frozenset[int]], target: np.ndarray):
    """The deal dealt ``dealt`` (absolute seats = the observation's relative ones), replayed to
    show player 0 the target (but for the scores); ``None`` if these hands cannot."""
    dealer, turned = int(v.dealer[0]), int(np.flatnonzero(v.turned[0])[0])
    state = game.new_initial_state()
    state.apply_action(dealer)
    for card in ios.dealt_in_order(Deal(dealer, tuple(dealt), turned), dealt, game.rules.players):
        state.apply_action(card)
    plays, k = play_order(v), 0
    want = _but_scores(target)
    while not state.is_terminal():
        decision = state.engine.decision
        p = decision.player
        if p == 0 and k == len(plays) and np.array_equal(_but_scores(observe(state.engine, 0)), want):
            return state
        if decision.kind == "play":
            if k == len(plays) or plays[k][0] != p:
                return None
            action, k = plays[k][1], k + 1
        elif decision.kind == "question":
            action = act.SHOW if _show_agrees(state, target) else act.HIDE
        else:
            action = _point(state, p, target)
        if action not in decision.legal:
            return None
        state.apply_action(action)
    return None


def _moved(start: np.ndarray, now: np.ndarray, seen: np.ndarray, target_imperiales: int) -> np.ndarray:
    """The start scores ``(2, P)`` moved by what the replay missed (target ``now`` minus ``seen``),
    counted in points (an impériale is 24), kept to scores a deal can start from."""
    value = start[0] * POINTS_PER_IMPERIALE + start[1] + (now[0] - seen[0]) * POINTS_PER_IMPERIALE + now[1] - seen[1]
    value = value.clip(0, target_imperiales * POINTS_PER_IMPERIALE - 1)
    return np.stack([value // POINTS_PER_IMPERIALE, value % POINTS_PER_IMPERIALE])


def rebuild(rules: Rules, obs: np.ndarray, rng: np.random.Generator):
    """An OpenSpiel state (one deal) in which player 0 is to act and observes exactly ``obs`` (one
    row): see the module's docstring.  :class:`RebuildError` when none is found."""
    obs = np.asarray(obs).reshape(-1)
    v = decode(obs)
    P = rules.players
    now = np.stack([read(obs, name)[:P].astype(np.int64) for name in _SCORE_BLOCKS])
    why = "no sampled world replayed the deal"
    for hands in sample_worlds(obs, rules, WORLD_TRIES, rng):
        dealt = [frozenset(int(c) for c in np.flatnonzero(hands[s] | v.played[0, s])) for s in range(P)]
        start = np.zeros_like(now)
        for _ in range(SCORE_ROUNDS):
            game = ios.ImperialeGame(ios.game_parameters(rules, imperiales=",".join(map(str, start[0])),
                                                         points=",".join(map(str, start[1]))))
            state = _replay(game, v, dealt, obs)
            if state is None:
                break
            seen = observe(state.engine, 0)
            if np.array_equal(seen, obs):
                return state
            moved = _moved(start, now, np.stack([read(seen, n)[:P] for n in _SCORE_BLOCKS]), rules.target_imperiales)
            if np.array_equal(moved, start):
                break
            start = moved
            why = f"no start score gave the score of the observation ({now.tolist()}) in {SCORE_ROUNDS} rounds"
    raise RebuildError(f"ismcts: no OpenSpiel state shows this observation ({why}, {WORLD_TRIES} worlds tried)")


def search_row(job: tuple[Rules, np.ndarray, np.ndarray, int, int]) -> int:
    """One decision: rebuild the state of observation ``obs``, run ISMCTS on it, return its action
    (a top-level function, so that a worker process can run it)."""
    rules, obs, mask, simulations, seed = job
    state = rebuild(rules, obs, np.random.default_rng(seed))
    legal = np.flatnonzero(mask).tolist()
    if state.legal_actions() != legal:
        raise RebuildError(f"ismcts: the rebuilt state allows {state.legal_actions()}, the game {legal}")
    bot = make_bot(state.get_game(), simulations, seed)
    return int(bot.step(state))


class ISMCTSAgent:
    """OpenSpiel's ISMCTS with ``simulations`` simulations a decision (a forced action is played
    without search); ``workers`` > 1 spreads the rows of a batch over a process pool."""

    def __init__(self, rules: Rules | str | dict | None = None, simulations: int = DEFAULT_SIMULATIONS,
                 workers: int = 1):
        if int(simulations) < MIN_SIMULATIONS:
            raise ValueError(f"ISMCTS needs at least {MIN_SIMULATIONS} simulations a decision, got {simulations}")
        self.rules = resolve_rules(rules)
        self.simulations = int(simulations)
        self.workers = int(workers)
        self.name = f"ismcts:{self.simulations}"
        self._searches = LazyPool(self.workers, "ismcts searches")

    def reset(self) -> None:
        """Nothing to forget: every decision rebuilds the deal from its observation."""

    def close(self) -> None:
        """Stop the worker processes."""
        self._searches.close()

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        obs, mask = np.atleast_2d(obs), np.atleast_2d(np.asarray(mask, dtype=bool))
        seeds = rng.integers(0, 2**63, size=len(obs))
        out = mask.argmax(axis=1).astype(np.int64)
        rows = np.flatnonzero(mask.sum(axis=1) > 1)
        jobs = [(self.rules, obs[r], mask[r], self.simulations, int(seeds[r])) for r in rows]
        chosen = self._searches.map(search_row, jobs)
        out[rows] = np.asarray(chosen, dtype=np.int64)
        return out
