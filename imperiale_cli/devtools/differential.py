"""Differential check: the batched engine against the reference engine, game by game.

Both engines play the same seeded games with the same random legal actions; at every
decision the acting player, the legal mask and the observation of every seat (the batched
encoder against :func:`~imperiale_env.reference.observe.observe`) must agree, after every
trick the trick counts, and at the end every score event (in order), the scores and the
winner.  :func:`compare_variants` runs it over :func:`~imperiale_cli.devtools.rule_variants.rule_variants`.  Used by
the test suite (thousands of games) and by ``benchmarks/differential.py`` (millions).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from imperiale_cli.devtools.rule_variants import rule_variants
from imperiale_env.batch import BatchGame
from imperiale_env.core.events import CODE, EVENT_KINDS, amount_of
from imperiale_env.core.observation import LAYOUT, OFFSETS
from imperiale_env.core.rules import PRESET_NAMES, Rules, resolve_rules
from imperiale_env.reference.game import Game
from imperiale_env.reference.observe import observe


class Disagreement(AssertionError):
    """The two engines differ; the message names the game seed, the step and what differs."""


def event_rows(game: Game) -> list[tuple[int, int, int, int]]:
    """The reference game's events as the batched engine logs them: (deal, kind, player, amount)."""
    return [(e["deal"], CODE[e["event"]], e["player"], amount_of(e, game.rules)) for e in game.events]


def _compare_observations(batch: BatchGame, refs: list[Game], rules: Rules, step: int) -> None:
    """Every seat's observation in every running game, batched encoder against the reference."""
    rows = np.flatnonzero(~batch.done)
    for seat in range(rules.players):
        mine = batch.observe(rows=rows, players=np.full(len(rows), seat))
        for k, i in enumerate(rows):
            theirs = observe(refs[i], seat)
            if not np.array_equal(mine[k], theirs):
                at = int(np.flatnonzero(mine[k] != theirs)[0])
                block = next(b.name for b in LAYOUT if OFFSETS[b.name].start <= at < OFFSETS[b.name].stop)
                raise Disagreement(
                    f"game seed {int(batch.seed[i])} ({rules.preset}), step {step}: observation of seat {seat} "
                    f"differs in block {block!r} at index {at - OFFSETS[block].start}: batch {mine[k][OFFSETS[block]]}"
                    f", reference {theirs[OFFSETS[block]]}"
                )


def compare_variants(games: int, seed: int = 0, presets: tuple[str, ...] = PRESET_NAMES) -> tuple[int, int, int]:
    """:func:`compare` on ``games`` games of every rule variant (observations included);
    returns ``(variants, games, decisions)`` checked."""
    variants = decisions = 0
    for label, rules in rule_variants(presets):
        try:
            decisions += compare(rules, games, seed=seed + variants)
        except Disagreement as exc:
            raise Disagreement(f"variant {label}: {exc}") from None
        variants += 1
    return variants, variants * games, decisions


def random_legal(rng: np.random.Generator, mask: np.ndarray) -> np.ndarray:
    """One uniformly random legal action per row of a bool mask."""
    return np.argmax(rng.random(mask.shape) * mask, axis=1)


def compare(
    rules: Rules | str,
    num_games: int,
    seed: int,
    *,
    single_deal: bool = False,
    start: tuple[Iterable[int], Iterable[int], int] | None = None,
    observations: bool = True,
) -> int:
    """Play ``num_games`` games in both engines; raise :class:`Disagreement` on any
    difference.  ``start = (imperiales, points, dealer)`` starts every game from that score;
    ``observations``: compare every seat's observation at every decision too (the slow part).
    Returns the number of decisions checked."""
    rules = resolve_rules(rules)
    batch = BatchGame(rules, num_games, single_deal=single_deal, record_events=True)
    kwargs = {}
    if start is not None:
        imp, pts, dealer = start
        kwargs = {"imperiales": list(imp), "points": list(pts), "dealer": dealer}
        batch.reset(seed, imperiales=np.array(kwargs["imperiales"]), points=np.array(kwargs["points"]), dealer=dealer)
    else:
        batch.reset(seed)
    refs = [Game(rules, seed=int(s), single_deal=single_deal, **kwargs) for s in batch.seed]
    rng = np.random.default_rng(seed)
    decisions = 0
    step = 0
    while not batch.done.all():
        mask = batch.legal_action_mask()
        for i, ref in enumerate(refs):
            where = f"game seed {int(batch.seed[i])} ({rules.preset}), step {step}"
            if batch.done[i]:
                if ref.current_player is not None:
                    raise Disagreement(f"{where}: batch ended, reference still waits on player {ref.current_player}")
                continue
            if ref.current_player != batch.current_player[i]:
                raise Disagreement(f"{where}: player {batch.current_player[i]} to act, reference {ref.current_player}")
            if not np.array_equal(ref.legal_mask(), mask[i]):
                raise Disagreement(
                    f"{where}: legal {np.flatnonzero(mask[i]).tolist()}, reference {ref.legal_actions()}"
                )
            if ref.state is not None and list(ref.state.tricks) != batch.tricks[i].tolist():
                raise Disagreement(f"{where}: tricks {batch.tricks[i].tolist()}, reference {ref.state.tricks}")
        if observations:
            _compare_observations(batch, refs, rules, step)
        actions = random_legal(rng, mask)
        decisions += int((~batch.done).sum())
        batch.step(actions)
        for i, ref in enumerate(refs):
            if ref.current_player is not None:
                ref.step(int(actions[i]))
        step += 1
    events = batch.pop_events()
    for i, ref in enumerate(refs):
        where = f"game seed {int(batch.seed[i])} ({rules.preset})"
        mine = [tuple(int(x) for x in row[1:]) for row in events[events[:, 0] == i]]
        theirs = event_rows(ref)
        if mine != theirs:
            first = next(k for k in range(min(len(mine), len(theirs)) + 1)
                         if k >= min(len(mine), len(theirs)) or mine[k] != theirs[k])
            raise Disagreement(
                f"{where}: score events differ from event {first}: batch {mine[first:first + 4]}, "
                f"reference {theirs[first:first + 4]} (rows are deal, kind, player, amount; kinds {EVENT_KINDS})"
            )
        if batch.imperiales[i].tolist() != ref.imperiales or batch.points[i].tolist() != ref.points:
            raise Disagreement(f"{where}: final score differs")
        if (batch.winner[i] if batch.winner[i] >= 0 else None) != ref.winner:
            raise Disagreement(f"{where}: winner {batch.winner[i]}, reference {ref.winner}")
    return decisions
