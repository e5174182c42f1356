"""Helpers shared by the rule tests: deals written in card codes, and a :class:`Game` driven through them.

``make_deal(dealer, ["KH QH ...", "..."], "7C")`` builds a :class:`Deal`; ``start(rules, deal)`` plays it
as the game's first (and only) deal; ``drive`` answers decisions with a fixed policy and ``play`` plays
cards given by their codes, each checked for legality by the engine.  :class:`Counted` counts what a
third-party library's training did in a Gymnasium env, and :func:`load_recipe` loads a recipe script
of ``benchmarks/`` (the recipes' tests).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium

from imperiale_env.core import actions as act
from imperiale_env.core.cards import card_code, deck, parse_card, parse_suit
from imperiale_env.reference.game import Deal, Decision, Game

HAND_SIZE = 12


def cards(codes: str) -> frozenset[int]:
    """``"KH 10S 7D"`` -> the set of those card indices."""
    return frozenset(parse_card(c) for c in codes.split())


def codes(cs) -> list[str]:
    """Card indices -> their codes, in index order."""
    return [card_code(c) for c in sorted(cs)]


def make_deal(dealer: int, hands: list[str], turned: str, talon: str = "") -> Deal:
    """A deal from card codes, one string per seat (two or three seats).

    A hand written with fewer than 12 cards is completed from the unused cards, taken in index order
    and given one at a time to the short hands in seat order; what is left is the talon (two players).
    With three players the turned card is put in the dealer's hand if it is not written there.
    """
    players = len(hands)
    held = [set(cards(h)) for h in hands]
    turned_card = parse_card(turned)
    if players == 3:
        held[dealer].add(turned_card)
    rest_talon = list(cards(talon))
    used = [c for h in held for c in h] + rest_talon + ([turned_card] if players == 2 else [])
    if len(used) != len(set(used)) or not set(used) <= set(deck(players)):
        raise ValueError(f"cards written twice or not in the {players}-player pack: {codes(used)}")
    if any(len(h) > HAND_SIZE for h in held):
        raise ValueError("a hand has more than 12 cards")
    rest = sorted(set(deck(players)) - set(used))
    short = [p for p in range(players) if len(held[p]) < HAND_SIZE]
    i = 0
    while any(len(held[p]) < HAND_SIZE for p in short):
        p = short[i % len(short)]
        i += 1
        if len(held[p]) < HAND_SIZE:
            held[p].add(rest.pop(0))
    rest_talon += rest
    if len(rest_talon) != (7 if players == 2 else 0):
        raise ValueError(f"talon of {len(rest_talon)} cards: {codes(rest_talon)}")
    return Deal(dealer, tuple(frozenset(h) for h in held), turned_card, tuple(rest_talon))


def start(rules: Any, deal: Deal, **kwargs: Any) -> Game:
    """A game whose first deal is ``deal`` and that knows no later deal (it then waits, unfinished)."""
    return Game(rules, dealer=deal.dealer, deals=lambda i, d: deal if i == 0 else None, **kwargs)


def first_legal(game: Game) -> int:
    return game.legal_actions()[0]


def drive(
    game: Game,
    *,
    show: bool | Callable[[Decision], bool] = False,
    points: dict[int, str] | None = None,
    play: Callable[[Game], int] = first_legal,
    stop: Callable[[Game], bool] | None = None,
) -> Game:
    """Answer every decision until none is pending or ``stop(game)`` holds.

    Questions: ``show`` (a bool, or a function of the decision); the point: ``points[seat]`` is the suit
    declared, seats not named sink; cards: ``play(game)`` (default: the legal card of lowest index).
    """
    points = points or {}
    for _ in range(20000):
        d = game.decision
        if d is None or (stop is not None and stop(game)):
            return game
        if d.kind == "question":
            yes = show(d) if callable(show) else show
            game.step(act.SHOW if yes else act.HIDE)
        elif d.kind == "point":
            suit = points.get(d.player)
            game.step(act.SINK if suit is None else act.point_action(parse_suit(suit)))
        else:
            game.step(play(game))
    raise AssertionError("the game did not stop")


def seeded_single_deals(rules: Any, seeds) -> list[Game]:
    """Single seeded deals played out: every question hidden, every point sunk, the lowest legal card."""
    return [drive(Game(rules, seed=seed, single_deal=True)) for seed in seeds]


def priority(game: Game, deal: int = 0) -> list[int]:
    """The seats in priority order for a deal: the dealer's left first, the dealer last."""
    d, n = game.history[deal].deal.dealer, game.players
    return [(d + 1 + i) % n for i in range(n)]


def until(kind: str) -> Callable[[Game], bool]:
    """A ``stop`` for :func:`drive`: the pending decision is of ``kind`` (question, point, play)."""
    return lambda game: game.decision.kind == kind


def play(game: Game, *tricks: str, **drive_kwargs: Any) -> None:
    """Play the cards written (any grouping, e.g. one string a trick) by whoever is to play; declarations
    asked between two cards (Foster's dealer) are answered by :func:`drive` with ``drive_kwargs``."""
    for code in " ".join(tricks).split():
        drive(game, stop=until("play"), **drive_kwargs)
        assert game.decision is not None and game.decision.kind == "play", f"no card to play for {code}"
        game.step(parse_card(code))


def events(game: Game, deal: int = 0, kind: str | None = None) -> list[dict[str, Any]]:
    """The score events of one deal (optionally only those named ``kind``)."""
    evs = game.history[deal].events
    return [e for e in evs if kind is None or e["event"] == kind]


def names(game: Game, deal: int = 0) -> list[tuple[str, int]]:
    """``(event, player)`` for each score event of the deal, in order."""
    return [(e["event"], e["player"]) for e in events(game, deal)]


def brief(game: Game, deal: int = 0) -> list[tuple[str, int, int | None]]:
    """``(event, player, amount)`` for each score event of the deal: the points awarded or wiped, the
    impériales gained (``count`` for ``imperiale`` events), ``None`` for ``game_over``."""
    return [(e["event"], e["player"], e.get("points", e.get("imperiales", e.get("count")))) for e in events(game, deal)]


def legal_codes(game: Game) -> list[str]:
    """The legal cards of the pending play decision, as codes."""
    return codes(a for a in game.legal_actions() if act.is_play(a))


def by_role(dealer: int, elder: str, dealer_hand: str, turned: str, talon: str = "") -> Deal:
    """A two-player deal written as the elder's and the dealer's hands, whichever seat deals."""
    hands = [dealer_hand, elder] if dealer == 0 else [elder, dealer_hand]
    return make_deal(dealer, hands, turned, talon)


# ---------------------------------------------------------------- deals used by several rule files
# Two players, seat 0 deals, seat 1 is the elder.  The *_PLAY tuples are the 12 tricks, leader's card first.

# Worked example 3: hearts trump (9H turned, no honour), AH QH JH in the talon; the elder holds KH 10H 8H 7H,
# the dealer no trump.  The elder takes 8 tricks with his honours KH and 7H.
EX3 = make_deal(0, ["9S 8S 7S KD QD JD 10D 9D KC QC JC 10C", "KH 10H 8H 7H KS QS JS 10S 8D 7D 8C 7C"], "9H")
EX3_PLAY = ("KH 10C", "10H JC", "8H QC", "7H KC", "KS 9S", "QS 8S", "JS 7S", "10S 9D",
            "8D 10D", "KD 7D", "QD 8C", "JD 7C")
# As EX3, but the dealer holds AH (his only heart) and must give it to the elder's KH.
EX3_AH = make_deal(0, ["9S 8S 7S KD QD JD 10D 9D KC QC JC AH", "KH 10H 8H 7H KS QS JS 10S 8D 7D 8C 7C"], "9H")
EX3_AH_PLAY = ("KH AH",) + EX3_PLAY[1:]

# Worked example 4: no honour in the hands (all in the talon), the elder takes 7 tricks, the dealer 5.
EX4 = make_deal(0, ["9S 8S 7S QC JC AC 10C 9C KD QD JD 10D", "9H 8H KS QS JS 10S KC 7D 8D 9D 7C 8C"], "10H")
EX4_PLAY = ("9H 10D", "8H 9C", "KS 9S", "QS 8S", "JS 7S", "10S 10C", "KC QC", "7D JD",
            "KD 8D", "QD 9D", "JC 7C", "AC 8C")

# All the hearts (trumps) in the talon and the turned 10H: 6 tricks each, nothing to score after play.
EVEN = make_deal(0, ["8S 7S KD QD JD AD 10D KC QC JC AC 10C", "KS QS JS AS 10S 9S 7D 8D 9D 7C 8C 9C"], "10H")
EVEN_PLAY = ("KS 8S", "QS 7S", "JS 10D", "AS 10C", "10S AD", "9S AC", "7D JD", "KD 8D",
             "QD 9D", "KC 7C", "QC 8C", "JC 9C")

# The elder holds every trump but the turned 8H, and the top spades and KD: he takes all 12 tricks,
# whatever anyone plays, and captures the five honours KH QH JH AH 7H.
CAPOT = make_deal(0, ["", "KH QH JH AH 10H 9H 7H KS QS JS AS KD"], "8H")

# The elder holds KH QH, the dealer JH AH (his only hearts), which fall to the elder's KH and QH;
# the elder then takes every trick (capot).
TOMBEE = make_deal(0, ["JH AH 8S 7S QD JD AD 10D 9D 8D 7D KC", "KH QH 10H 9H 7H KS QS JS AS 10S 9S KD"], "8H")
TOMBEE_PLAY = ("KH AH", "QH JH", "KS 8S", "QS 7S", "JS QD", "AS JD", "10S AD", "9S 10D",
               "10H 9D", "9H 8D", "7H 7D", "KD KC")

# As TOMBEE, but the dealer's hearts are AH and 7H (the elder holds JH): both fall to the elder.
CAPTURE = make_deal(0, ["AH 7H 8S 7S QD JD AD 10D 9D 8D 7D KC", "KH QH JH 10H 9H KS QS JS AS 10S 9S KD"], "8H")
CAPTURE_PLAY = ("KH AH", "QH 7H", "KS 8S", "QS 7S", "JS QD", "AS JD", "10S AD", "9S 10D",
                "JH 9D", "10H 8D", "9H 7D", "KD KC")

# The elder has carte blanche (no K, Q or J); the dealer holds the quarts major of S, H and D; clubs trump.
CARTE_BLANCHE = make_deal(0, ["KS QS JS AS KH QH JH AH KD QD JD AD", "10S 9S 8S 7S 10H 9H 8H 7H 10D 9D 8D 7D"], "9C")

# Hearts trump with AH turned (an honour); the elder holds all eight spades (the best point and a quart).
PROTECT = make_deal(0, ["", "KS QS JS AS 10S 9S 8S 7S KD QD JD 9D"], "AH")

# Hearts trump (10H turned); the elder may show a quart of spades, the dealer the four 7s.
BOTH = make_deal(0, ["7S 7H 7D 7C KH QH JH 9H AD 10D KC QC", "KS QS JS AS 10S 9S 8S KD QD 9D 8D 9C"], "10H")

# The elder holds KS QS JS 10S (4 cards, 40), the dealer KH QH JH 10H (4 cards, 40); hearts trump.
TIE_ELDER = "KS QS JS 10S AD 10D 9D 8D AC 10C 9C 8C"
TIE_DEALER = "KH QH JH 10H KD QD JD 7D KC QC JC 7C"


def finish(game: Game, *tricks: str, **drive_kwargs: Any) -> Game:
    """Answer the declarations (``drive_kwargs``), play the ``tricks`` written, then anything left."""
    play(game, *tricks, **drive_kwargs)
    return drive(game, **drive_kwargs)


def json_paths(value: Any, prefix: tuple = ()):
    """Every place in a JSON value, as the tuple of keys and list indices that leads there
    (the empty tuple is the value itself): where the fuzz tests put a wrong value."""
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from json_paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from json_paths(v, (*prefix, i))


#: A training run small enough for a test (seconds on 2 cores), as ``key=value`` arguments by
#: :func:`train_args`; shared by the training tests that start real ``imperiale train`` processes.
TINY_TRAIN = dict(num_envs=8, num_steps=8, hidden=(16,), update_epochs=1, num_minibatches=2, eval_groups=2,
                  eval_single_deal=True, plot=False, eval_every=0, progress=False, tensorboard=False, threads=1,
                  pool_every=1, pool_size=2, p_pool=0.5, eval_opponents=("random",))


def train_args(**kw: Any) -> list[str]:
    """:data:`TINY_TRAIN` with ``kw`` over it, as ``imperiale train`` arguments."""
    return [f"{k}={','.join(map(str, v)) if isinstance(v, tuple) else v}" for k, v in {**TINY_TRAIN, **kw}.items()]


class Counted(gymnasium.Wrapper):
    """Counts the learner's steps, the illegal ones and the episodes that end (class-wide, since the
    libraries build their envs themselves)."""

    steps = illegal = episodes = 0

    @classmethod
    def clear(cls) -> None:
        cls.steps = cls.illegal = cls.episodes = 0

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        Counted.steps += 1
        Counted.illegal += bool(info.get("illegal_action"))
        Counted.episodes += terminated or truncated
        return obs, reward, terminated, truncated, info


def load_recipe(name: str):
    """``benchmarks/NAME.py`` as a module (its sibling ``library_recipes`` importable, as when run)."""
    import importlib.util
    import sys
    from pathlib import Path

    folder = Path(__file__).resolve().parent.parent / "benchmarks"
    if str(folder) not in sys.path:
        sys.path.append(str(folder))
    spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def check_weighed_labels(rules: Any, **weigh: Any) -> None:
    """Imitation labels from searches on weighed worlds (``infer=MODEL`` or ``belief=NET``): the same on
    one worker or two, and other card values than plain pimc's somewhere (the worlds are other worlds)."""
    import numpy as np

    from imperiale_train.imitate import SearchPool, label_deals

    runs = []
    for workers, weighed in ((1, True), (2, True), (1, False)):
        with SearchPool(workers) as pool:
            runs.append(label_deals(rules, 3, np.random.default_rng(1), pool, samples=2, **(weigh if weighed else {})))
    a, b, plain = runs
    assert len(a) > 30
    for name in ("obs", "mask", "action", "ret"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert np.array_equal(a.values, b.values, equal_nan=True)
    n = min(len(a), len(plain))
    assert not np.array_equal(a.values[:n], plain.values[:n], equal_nan=True)
