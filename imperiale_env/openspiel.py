"""L'Impériale as an OpenSpiel game: importing this module registers ``python_imperiale`` with pyspiel.

>>> import pyspiel, imperiale_env.openspiel  # doctest: +SKIP
>>> game = pyspiel.load_game("python_imperiale", {"rules": "foster"})  # doctest: +SKIP

Parameters: ``rules`` (a preset name, default ``academie``), every field of :class:`Rules` (left
at its sentinel, -1 or an empty string, it keeps the preset's value; flags are ``true`` /
``false``, rank lists comma-separated like ``K,Q,J,low``), ``episode``: ``deal`` (one deal, the
default, returns as the envs' ``episode="deal"``) or ``game`` (to the target, +1 to the winner), and
the score the game starts from, ``imperiales`` and ``points`` (one whole number a seat, comma-separated;
empty: all 0), as the envs' start score (a deal studied at the score it was played at), and
``obs_type``: ``bytes`` (the default) or ``features``, what the observation tensor holds.

The reference engine plays the game; chance deals it: first the dealer, then the cards one at a
time in dealing order (priority order, 12 each, then the turned card with two players; with three
the dealer's last card is the turned one).  Observation tensors are the envs' observation
(:mod:`imperiale_env.core.observation`), as float32, or with ``obs_type=features`` the float
features of :mod:`imperiale_env.kernels.features` (the envs' ``obs_type="features"``); the
information state is that observation plus the player's perfect recall as a string: his hands,
the turned cards and every action he saw (his own, every play, show, point count and sink of the
others; their hidden answers he never sees).
:meth:`ImperialeState.resample_from_infostate` gives ISMCTS a world that agrees with all of it.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import fields
from typing import Any

import numpy as np
import pyspiel

from imperiale_env.core import actions as act
from imperiale_env.core.cards import HAND_SIZE, NUM_CARDS, TURNED_INDEX, card_code, deck, suit_of
from imperiale_env.core.declarations import point_of
from imperiale_env.core.events import POINTS_PER_IMPERIALE
from imperiale_env.core.observation import OBS_SIZE, views
from imperiale_env.core.rules import PRESET_NAMES, RANK_FIELDS, Rules, RulesError, make_rules
from imperiale_env.envs.env_checks import OBS_TYPES, end_rewards
from imperiale_env.envs.render_text import table_text
from imperiale_env.kernels.features import FEATURE_LAYOUT, FEATURE_SIZE, policy_features, read_feature
from imperiale_env.reference.game import Deal, Game, deal_from_order, order_of_deal
from imperiale_env.reference.observe import observe

SHORT_NAME = "python_imperiale"
EPISODES = ("deal", "game")
#: Most decisions of one deal (12 plays each, every question, the point) and of one game, for GameInfo.
_DEAL_LENGTH = 100
_GAME_DEALS = 400

_FIELDS = {f.name: f for f in fields(Rules) if f.name != "preset"}
_DEFAULT = Rules()  # the fields' types (built once: a Rules validates itself)


def _sentinel(name: str) -> Any:
    """The parameter default meaning "the preset's value": -1 for counts, "" for the rest."""
    value = getattr(_DEFAULT, name)
    return -1 if isinstance(value, int) and not isinstance(value, bool) else ""


PARAMETERS: dict[str, Any] = {"rules": "academie", "episode": "deal", "imperiales": "", "points": "",
                              "obs_type": "bytes", **{n: _sentinel(n) for n in _FIELDS}}


def _override(name: str, value: Any) -> Any:
    """A parameter's value as a rules field, refusing a flag that is not ``true`` or ``false``."""
    if isinstance(getattr(_DEFAULT, name), bool):
        if value not in ("true", "false"):
            raise RulesError(f"OpenSpiel parameter {name!r} is a flag: true or false (or empty), got {value!r}")
        return value == "true"
    if name in RANK_FIELDS:
        return tuple(value.split(","))
    return value


def rules_from_parameters(params: dict[str, Any]) -> Rules:
    """The :class:`Rules` of the game parameters (the sentinels keep the preset's values)."""
    preset = params.get("rules", "academie")
    if preset not in PRESET_NAMES:
        raise RulesError(f"unknown rules preset {preset!r} for {SHORT_NAME} (allowed: {', '.join(PRESET_NAMES)})")
    given = {n: _override(n, v) for n, v in params.items() if n in _FIELDS and v != _sentinel(n)}
    return make_rules(preset, **given)


def game_parameters(rules: Rules, **given: Any) -> dict[str, Any]:
    """The parameters of the game of ``rules`` (its preset and every field, as
    :func:`rules_from_parameters` reads them), with ``given`` ones (``episode``, ``imperiales``...)."""
    params: dict[str, Any] = {"rules": rules.preset}
    for name in _FIELDS:
        value = getattr(rules, name)
        params[name] = ("true" if value else "false") if isinstance(value, bool) else \
            ",".join(value) if name in RANK_FIELDS else value
    return {**params, **given}


def start_score(params: dict[str, Any], rules: Rules) -> tuple[list[int], list[int]]:
    """The ``imperiales`` and ``points`` parameters as the score the game starts from: one whole
    number a seat, below the target and below 24 (a score the game can be at before a deal)."""
    out = []
    for name, top in (("imperiales", rules.target_imperiales), ("points", POINTS_PER_IMPERIALE)):
        text = str(params.get(name, ""))
        values = text.split(",") if text else ["0"] * rules.players
        if len(values) != rules.players or not all(x.isascii() and x.isdigit() and int(x) < top for x in values):
            raise ValueError(f"{SHORT_NAME}: {name} is {rules.players} whole numbers from 0 to {top - 1}, "
                             f"comma-separated (one a seat), or empty for 0 each; got {text!r}")
        out.append([int(x) for x in values])
    return out[0], out[1]


_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="L'Impériale (imperiale)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=3,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=PARAMETERS,
)


class ImperialeGame(pyspiel.Game):
    """The game of the parameters: its rules, its episode and OpenSpiel's sizes."""

    def __init__(self, params: dict[str, Any] | None = None):
        params = {**PARAMETERS, **(params or {})}
        self.rules = rules_from_parameters(params)
        self.episode = params["episode"]
        if self.episode not in EPISODES:
            raise ValueError(f"{SHORT_NAME}: episode must be one of {', '.join(EPISODES)}, got {self.episode!r}")
        self.start_imperiales, self.start_points = start_score(params, self.rules)
        self.obs_type = params["obs_type"]
        if self.obs_type not in OBS_TYPES:
            raise ValueError(f"{SHORT_NAME}: obs_type must be one of {', '.join(OBS_TYPES)}, got {self.obs_type!r}")
        P = self.rules.players
        top = 1.0 if self.episode == "game" else 2.0 * (self.rules.target_imperiales + 1)
        info = pyspiel.GameInfo(num_distinct_actions=act.NUM_ACTIONS, max_chance_outcomes=NUM_CARDS,
                                num_players=P, min_utility=-top, max_utility=top, utility_sum=0.0,
                                max_game_length=_DEAL_LENGTH * (1 if self.episode == "deal" else _GAME_DEALS))
        super().__init__(_GAME_TYPE, info, params)

    def new_initial_state(self) -> ImperialeState:
        return ImperialeState(self)

    def make_py_observer(self, iig_obs_type=None, params=None) -> ImperialeObserver:
        perfect_recall = iig_obs_type is None or iig_obs_type.perfect_recall
        return ImperialeObserver(perfect_recall, self.obs_type)


class DealBook:
    """The deals chance has dealt so far, as the reference engine's ``deals`` source; a copied
    state gets its own book, so that a deal dealt in one copy is not seen by the other."""

    def __init__(self, deals: list[Deal] | None = None):
        self.deals = list(deals or [])

    def __call__(self, index: int, dealer: int) -> Deal | None:
        return self.deals[index] if index < len(self.deals) else None


class ImperialeState(pyspiel.State):
    """A state: the reference game, the deal being dealt and each player's view of what happened."""

    def __init__(self, game: ImperialeGame):
        super().__init__(game)
        self.rules = game.rules
        self.single_deal = game.episode == "deal"
        self.start = {"imperiales": game.start_imperiales, "points": game.start_points}
        self.book = DealBook()
        self.engine: Game | None = None  # built once chance has chosen the first dealer
        self.dealing: list[int] = []
        self.seen: list[list[str]] = [[] for _ in range(self.rules.players)]

    # ------------------------------------------------------------------ whose turn

    def current_player(self) -> int:
        if self.engine is not None and self.engine.is_over:
            return pyspiel.PlayerId.TERMINAL
        if self.engine is None or self.engine.decision is None:
            return pyspiel.PlayerId.CHANCE
        return self.engine.decision.player

    def is_terminal(self) -> bool:
        return self.engine is not None and self.engine.is_over

    def _dealer(self) -> int:
        assert self.engine is not None
        return self.engine.dealer

    def _legal_actions(self, player: int) -> list[int]:
        assert self.engine is not None and player == self.engine.current_player
        return self.engine.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if not self.is_chance_node():
            return []
        if self.engine is None:
            return [(p, 1.0 / self.rules.players) for p in range(self.rules.players)]
        left = sorted(set(deck(self.rules.players)) - set(self.dealing))
        return [(c, 1.0 / len(left)) for c in left]

    # ------------------------------------------------------------------ moves

    def _apply_action(self, action: int) -> None:
        if self.is_terminal():
            raise ValueError(f"action {action}: the game is over (returns {self.returns()}); a new state "
                             "(game.new_initial_state()) plays the next one")
        if self.is_chance_node():
            possible = [outcome for outcome, _ in self.chance_outcomes()]
            if action not in possible:
                what = (f"the first dealer, a seat 0..{self.rules.players - 1}" if self.engine is None else
                        f"card {len(self.dealing) + 1} of the deal, one not dealt yet (the deck less "
                        f"{' '.join(card_code(c) for c in self.dealing)})")
                raise ValueError(f"chance outcome {action} is not possible here: chance chooses {what}; "
                                 f"possible: {possible}")
            self._deal(action)
            return
        assert self.engine is not None and self.engine.decision is not None  # neither terminal nor chance
        player, state = self.engine.decision.player, self.engine.state
        self.engine.step(action)
        for seat in range(self.rules.players):
            token = _token_seen(seat, player, action, state)
            if token:
                self.seen[seat].append(token)

    def _deal(self, outcome: int) -> None:
        """One chance outcome: the first dealer, or the next card of the deal."""
        if self.engine is None:
            self.engine = Game(self.rules, dealer=outcome, deals=self.book, single_deal=self.single_deal, **self.start)
            return
        self.dealing.append(outcome)
        if len(self.dealing) < _cards_dealt(self.rules.players):
            return
        deal = deal_from_order(self.dealing, self._dealer(), self.rules.players)
        if self.rules.players == 2:  # the talon is never seen nor played: not a chance node, sorted
            deal = dataclasses.replace(deal, talon=tuple(sorted(set(deck(2)) - set(self.dealing))))
        self.book.deals.append(deal)
        self.dealing = []
        self.engine.resume()
        for seat in range(self.rules.players):
            self.seen[seat].append(_deal_seen(self.engine, seat, deal))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"dealer {action}" if self.engine is None else f"deal {card_code(action)}"
        return act.describe(action)

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0] * self.rules.players
        assert self.engine is not None
        rewards = end_rewards(self.engine).astype(np.float64)
        return [float(r) for r in rewards - rewards.mean()]  # the envs' float32 rewards, summing to 0 exactly

    def __str__(self) -> str:
        if self.engine is None or self.engine.state is None:
            return f"dealing {len(self.dealing)} cards"
        hands = " | ".join(" ".join(card_code(c) for c in sorted(h)) for h in self.engine.state.hands)
        return f"dealer {self._dealer()} imperiales {self.engine.imperiales} points {self.engine.points}: {hands}"

    # ------------------------------------------------------------------ copies

    def __deepcopy__(self, memo: dict) -> ImperialeState:
        """The same game replayed from the start: its own deal book, engine and history."""
        return replay(self.get_game(), [a.action for a in self.full_history()])

    def clone(self) -> ImperialeState:
        return copy.deepcopy(self)

    def resample_from_infostate(self, player_id: int, probability_sampler=None) -> ImperialeState:
        """A state with the same information state for ``player_id``: see :func:`resample`."""
        return resample(self, player_id, np.random.default_rng(_sampler_seed(probability_sampler)))


def _sampler_seed(probability_sampler) -> int:
    """A seed drawn from OpenSpiel's sampler (a callable giving numbers in [0, 1)), so that its
    random state drives the worlds; none given: fresh entropy."""
    if probability_sampler is None:
        return int(np.random.SeedSequence().generate_state(1)[0])
    return int(probability_sampler() * 2**31)


def _cards_dealt(players: int) -> int:
    """Chance outcomes of one deal: 12 a hand, plus the turned card with two players."""
    return max(HAND_SIZE * players, TURNED_INDEX[players] + 1)


def _deal_seen(game: Game, seat: int, deal: Deal) -> str:
    """What ``seat`` sees of a new deal: the score, the dealer, his hand and the turned card."""
    hand = " ".join(card_code(c) for c in sorted(deal.hands[seat]))
    turned = card_code(deal.turned)
    return f"deal dealer={deal.dealer} imp={game.imperiales} pts={game.points} hand={hand} turned={turned}"


def _token_seen(seat: int, player: int, action: int, state) -> str:
    """What ``seat`` sees of ``player``'s ``action``: all of his own; of another, a play, a show
    (with the cards revealed), the count and value of a point, a sink; nothing of a hide."""
    if seat == player:
        return f"{player}:{act.describe(action)}"
    if action == act.HIDE:
        return ""
    if action == act.SHOW:
        return f"{player}:show"
    if act.is_point(action):
        _, count, value = state.declared_points[player]
        return f"{player}:point {count} {value}"
    return f"{player}:{act.describe(action)}"


class ImperialeObserver:
    """OpenSpiel's observer: the tensor is our observation (version 1, as float32), or with the
    parameter ``obs_type=features`` the float features the suite's networks read (feature
    version 2, what the envs give with ``obs_type="features"``), with one named view per block of
    its layout in ``dict``; the string is the player's recall (information state), or the table as
    the player sees it, in words (the terminal game's text: his hand, the trick, the score, what
    was declared), for a person reading a state."""

    def __init__(self, perfect_recall: bool, obs_type: str = "bytes"):
        self.perfect_recall = perfect_recall
        self.features = obs_type == "features"
        if self.features:
            self.tensor = np.zeros(FEATURE_SIZE, dtype=np.float32)
            self.dict = {b.name: read_feature(self.tensor, b.name) for b in FEATURE_LAYOUT}
        else:
            self.tensor = np.zeros(OBS_SIZE, dtype=np.float32)
            self.dict = views(self.tensor)

    def set_from(self, state: ImperialeState, player: int) -> None:
        self.tensor[:] = 0.0
        if state.engine is not None and state.engine.state is not None:
            seen = observe(state.engine, player)
            self.tensor[:] = policy_features(seen) if self.features else seen

    def string_from(self, state: ImperialeState, player: int) -> str:
        if self.perfect_recall:
            return f"seat {player} dealer {state.engine.start_dealer if state.engine else '?'}: " + \
                " / ".join(state.seen[player])
        if state.engine is None or state.engine.state is None:
            return f"seat {player}: the deal is being dealt ({len(state.dealing)} cards so far)"
        names = [f"player {p}" for p in range(state.rules.players)]
        return table_text(state.engine, player, names, mark_legal=False)


# ---------------------------------------------------------------------- the resampler

def known_cards(state: ImperialeState, observer: int) -> list[set[int]]:
    """The cards of each other seat's hand this deal that ``observer`` has seen: played,
    revealed, and with three players the dealer's turned card."""
    game = state.engine
    assert game is not None and game.state is not None
    s = game.state
    known = []
    for p in range(game.players):
        seen = set(s.revealed[p]) | {c for q, c in _plays(s) if q == p}
        if game.players == 3 and p == s.deal.dealer:
            seen.add(s.deal.turned)
        known.append(seen)
    return known


def _plays(s) -> list[tuple[int, int]]:
    return [(p, a) for p, a in s.actions if act.is_play(a)]


def _voids(s, players: int) -> list[set[int]]:
    """Suits each seat failed to follow: it held no unseen card of them."""
    voids: list[set[int]] = [set() for _ in range(players)]
    plays = _plays(s)
    for start in range(0, len(plays), players):
        trick = plays[start:start + players]
        for p, c in trick[1:]:
            if suit_of(c) != suit_of(trick[0][1]):
                voids[p].add(suit_of(trick[0][1]))
    return voids


def sample_hands(state: ImperialeState, observer: int, rng: np.random.Generator) -> list[frozenset[int]] | None:
    """Dealt hands that hold what ``observer`` saw each seat hold and no unseen card of a suit it
    failed to follow; the observer's own hand as dealt.  ``None`` when the voids leave no room."""
    game = state.engine
    s = game.state
    P = game.players
    known = known_cards(state, observer)
    voids = _voids(s, P)
    hands: list[set[int]] = [set(s.deal.hands[p]) if p == observer else set(known[p]) for p in range(P)]
    pool = set(deck(P)) - set().union(*hands) - ({s.deal.turned} if P == 2 else set())
    others = sorted((p for p in range(P) if p != observer), key=lambda p: -len(voids[p]))
    for p in others:
        allowed = sorted(c for c in pool if suit_of(c) not in voids[p])
        need = HAND_SIZE - len(hands[p])
        if need > len(allowed):
            return None
        chosen = rng.choice(len(allowed), size=need, replace=False) if need else []
        hands[p] |= {allowed[i] for i in chosen}
        pool -= hands[p]
    return [frozenset(h) for h in hands]


def _answer(game: Game, seat: int, want: list[str], at: int) -> int | None:
    """The action of the sampled world's player to act that shows ``seat`` the next thing it saw
    (``want[at]``); another player's question not shown is hidden.  ``None`` when no action does."""
    d = game.decision
    p = d.player
    expected = want[at] if at < len(want) else ""
    if d.kind == "question" and p != seat:
        return act.SHOW if expected == f"{p}:show" and act.SHOW in d.legal else act.HIDE
    if not expected.startswith(f"{p}:"):
        return None
    return next((a for a in d.legal if _token_seen(seat, p, a, _as_declared(game, p, a)) == expected), None)


def _as_declared(game: Game, p: int, action: int):
    """The deal state as a point ``action`` would leave it, for :func:`_token_seen`."""
    if not act.is_point(action):
        return game.state
    view = copy.copy(game.state)
    view.declared_points = list(game.state.declared_points)
    suit = action - act.POINT_BASE
    view.declared_points[p] = (suit, *point_of(frozenset(game.state.hands[p]), suit))
    return view


def replay(game: ImperialeGame, actions: list[int]) -> ImperialeState:
    """The state reached from the start by ``actions`` (chance outcomes included)."""
    state = game.new_initial_state()
    for action in actions:
        state.apply_action(action)
    return state


def dealt_in_order(deal: Deal, hands: list[frozenset[int]], players: int) -> list[int]:
    """Chance outcomes that deal ``hands`` (the turned card last, as dealt)."""
    return order_of_deal(dataclasses.replace(deal, hands=tuple(hands), talon=()), players)


def replay_world(state: ImperialeState, observer: int, hands: list[frozenset[int]]) -> ImperialeState | None:
    """The state of the same earlier deals, this deal dealt ``hands``, its decisions chosen to show
    ``observer`` exactly what he saw; ``None`` when these hands could not have done so."""
    history = [a.action for a in state.full_history()]
    chance = [i for i, a in enumerate(state.full_history()) if a.player == pyspiel.PlayerId.CHANCE]
    start = chance[-_cards_dealt(state.rules.players)]
    world = replay(state.get_game(), history[:start])
    for card in dealt_in_order(state.engine.state.deal, hands, state.rules.players):
        world.apply_action(card)
    want = state.seen[observer]
    while len(world.seen[observer]) < len(want) or world.current_player() != observer:
        if world.current_player() < 0:
            return None
        action = _answer(world.engine, observer, want, len(world.seen[observer]))
        if action is None:
            return None
        world.apply_action(action)
        if world.seen[observer] != want[:len(world.seen[observer])]:
            return None
    return world if world.seen[observer] == want else None


def resample(state: ImperialeState, observer: int, rng: np.random.Generator, tries: int = 2000) -> ImperialeState:
    """A world ``observer`` cannot tell from ``state``: other hands drawn from the unseen cards
    (voids and seen cards respected), kept only when replaying the deal in them shows him every
    action he saw, in order (shows, point counts and values, plays that follow the must-beat and
    must-trump rules).  Earlier deals are kept as they were: later deals do not depend on them.
    The world's decisions are the seen ones, hidden answers are hides, so the world's other
    players hold what they held in some history of the same recall."""
    if state.current_player() != observer:
        raise ValueError(f"resample_from_infostate: player {observer} is not to act (player {state.current_player()})")
    for _ in range(tries):
        hands = sample_hands(state, observer, rng)
        world = None if hands is None else replay_world(state, observer, hands)
        if world is not None:
            return world
    raise RuntimeError(f"resample_from_infostate: no world agreed with player {observer}'s view in {tries} tries")


pyspiel.register_game(_GAME_TYPE, ImperialeGame)
