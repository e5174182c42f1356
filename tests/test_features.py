"""The network's features (version 2) against a slow direct computation from the reference engine.

:func:`policy_features` reads only the observation's bytes; here the same quantities are computed
from the reference :class:`Game`'s own state (its hands, the trick on the table, the plays in
order, the cards shown), written plainly and independently of the kernel, for every seat at every
decision of random games of every preset and of the rule variants.  The declarations' blocks are
copies of the observation's (checked against the reference there), and the proofs of absence come
from the reference observer (``not_held``, checked by the differential tests)."""

from __future__ import annotations

import numpy as np
import pytest

from imperiale_cli.devtools.rule_variants import COMBINATIONS, SMALL_TARGET
from imperiale_env.core import actions as act
from imperiale_env.core.cards import NUM_RANKS, TRICK_STRENGTH, deck, rank_of, suit_of
from imperiale_env.core.observation import OBS_SIZE, read
from imperiale_env.core.rules import PRESET_NAMES, RulesError, make_rules
from imperiale_env.kernels.features import (
    FEATURE_LAYOUT,
    FEATURE_SIZE,
    feature_table,
    policy_features,
    read_feature,
)
from imperiale_env.reference.game import Game, trick_winner_card
from imperiale_env.reference.observe import observe


def _variants():
    out = [make_rules(preset) for preset in PRESET_NAMES]
    for preset in PRESET_NAMES:
        for change in COMBINATIONS:
            try:
                out.append(make_rules(preset, target_imperiales=SMALL_TARGET, **change))
            except RulesError:
                continue
    return out


VARIANTS = _variants()


def _stronger(a: int, b: int) -> bool:
    return TRICK_STRENGTH[rank_of(a)] > TRICK_STRENGTH[rank_of(b)]


def direct(game: Game, seat: int) -> dict[str, np.ndarray]:
    """The card features of ``seat`` computed from the game's state (not from the bytes)."""
    s, P = game.state, game.players
    obs = observe(game, seat)
    rel = lambda p: (p - seat) % P  # noqa: E731
    trump, turned = s.deal.trump, s.deal.turned
    pack = set(deck(P))
    plays = [(p, a) for p, a in s.actions if act.is_play(a)]
    played = {c: (p, k // P) for k, (p, c) in enumerate(plays)}
    out_of_play = set(played) | ({turned} if P == 2 else set())
    shown = {c: p for p in range(P) for c in s.revealed[p]}
    if P == 3:
        shown[turned] = s.deal.dealer
    hand = s.hands[seat]
    unseen = {c for c in pack if c not in hand and c not in out_of_play and c not in shown}
    f = {b.name: np.zeros(b.shape, np.float32) for b in FEATURE_LAYOUT}
    f["hand"][sorted(hand)] = 1
    f["unseen"][sorted(unseen)] = 1
    not_held = read(obs, "not_held")
    for p in range(P):
        r = rel(p)
        if r == 0:
            continue
        known = {c for c, q in shown.items() if q == p and c not in played}
        f["known_held"][r - 1, sorted(known)] = 1
        may = known | {c for c in unseen if not not_held[r - 1, c]}
        f["may_hold"][r - 1, sorted(may)] = 1
        f["played"][r - 1, [c for c, (q, _) in played.items() if q == p]] = 1
        for c in may:
            f["suit_counts"][1 + r, suit_of(c)] += 1 / NUM_RANKS
    for c in hand:
        f["suit_counts"][0, suit_of(c)] += 1 / NUM_RANKS
    for c in unseen:
        f["suit_counts"][1, suit_of(c)] += 1 / NUM_RANKS
    for p in range(P):
        f["cards_left"][rel(p)] = (12 - sum(1 for q, _ in played.values() if q == p)) / 12
    tp = s.tricks_played
    for c, (_, k) in played.items():
        f["recency"][c] = (13 - (tp - k)) / 13
    if s.trick:
        for p, c in s.trick:
            f["trick"][rel(p), c] = 1
        win = trick_winner_card(s.trick, trump)
        f["winning"][win] = 1
        f["trick_leader"][rel(s.trick[0][0])] = 1
        f["led_suit"][suit_of(s.trick[0][1])] = 1
        f["winning_seat"][rel(next(p for p, c in s.trick if c == win))] = 1
        f["winning_trump"][0] = suit_of(win) == trump
        for c in hand:
            if (suit_of(c) == suit_of(win) and _stronger(c, win)) or (suit_of(c) == trump != suit_of(win)):
                f["beats_winning"][c] = 1
    f["trick_size"][len(s.trick)] = 1
    if tp < 12:
        f["next_player"][rel((s.trick[-1][0] + 1) % P if s.trick else s.leader)] = 1
    if tp > 0:
        last = plays[(tp - 1) * P : tp * P]
        f["last_trick"][[c for _, c in last]] = 1
        win = trick_winner_card(last, trump)
        f["last_winner"][rel(next(p for p, c in last if c == win))] = 1
    for suit in range(4):
        live = [c for c in sorted(pack) if suit_of(c) == suit and c not in out_of_play]
        if live:
            f["masters"][max(live, key=lambda c: TRICK_STRENGTH[rank_of(c)])] = 1
    f["trump_cards"][[c for c in pack if suit_of(c) == trump]] = 1
    f["turned"][turned] = 1
    f["trump"][trump] = 1
    f["tricks_played"][tp] = 1
    f["players"][P - 2] = 1
    f["dealer"][rel(s.deal.dealer)] = 1
    decision = game.decision
    f["phase"][0 if decision is None or decision.player != seat else 1 + ("question", "point", "play").index(
        decision.kind)] = 1
    return f


def _games(rules, seeds):
    for seed in seeds:
        game = Game(rules, seed=seed)
        rng = np.random.default_rng(seed)
        while game.decision is not None:
            yield game
            game.step(int(rng.choice(game.legal_actions())))
        yield game


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: f"{r.preset}-{hash(r) % 10**6}")
def test_the_features_are_the_direct_computation_from_the_reference_engine(rules):
    checked = 0
    for game in _games(rules, range(2)):
        for seat in range(game.players):
            got = policy_features(observe(game, seat))
            assert got.shape == (FEATURE_SIZE,) and got.dtype == np.float32
            assert ((got >= 0) & (got <= 1)).all()
            for name, want in direct(game, seat).items():
                if name not in _COPIED:
                    assert np.allclose(read_feature(got, name), want, atol=1e-6), (name, seat, game.actions_so_far())
            checked += 1
    assert checked > 100


#: The blocks copied from the observation's bytes, compared with it in the next test.
_COPIED = {"question_cards", "question_kind", "shown_items", "point", "point_count", "point_value", "imperiales",
           "points", "tricks", "voids"}


def test_the_copied_blocks_follow_the_bytes():
    rules = make_rules("academie3")
    for game in _games(rules, [5]):
        seat = game.current_player if game.decision is not None else 0
        obs = observe(game, seat)
        got = policy_features(obs)
        assert np.array_equal(read_feature(got, "shown_items"), read(obs, "shown_items").astype(np.float32))
        assert np.array_equal(read_feature(got, "voids"), read(obs, "voids").astype(np.float32))
        assert np.array_equal(read_feature(got, "question_cards"), read(obs, "question_cards").astype(np.float32))
        assert read_feature(got, "question_kind")[int(read(obs, "question_kind")[0])] == 1
        for s in range(3):
            assert read_feature(got, "point")[s, int(read(obs, "point")[s])] == 1
        assert np.allclose(read_feature(got, "tricks"), read(obs, "tricks") / 12)


def test_a_batch_is_its_rows_and_bad_input_is_refused():
    rules = make_rules("academie")
    rows = np.stack([observe(g, p) for g in _games(rules, [3]) for p in range(2)])
    batch = policy_features(rows)
    assert np.array_equal(batch, np.stack([policy_features(r) for r in rows]))
    with pytest.raises(ValueError, match="uint8"):
        policy_features(rows.astype(np.float32))
    with pytest.raises(ValueError, match=str(OBS_SIZE)):
        policy_features(rows[:, :-1])


def test_the_feature_table_of_the_docs_is_the_layout():
    from pathlib import Path

    text = (Path(__file__).parent.parent / "docs" / "training.md").read_text(encoding="utf-8")
    assert feature_table() in text


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_the_batched_engine_gives_the_reference_features(preset):
    """The features the trainer makes from the batched engine's bytes are the reference engine's,
    for every seat, at every decision of random games played side by side in both engines."""
    from imperiale_env.batch import BatchGame

    rules = make_rules(preset)
    games = 6
    bg = BatchGame(rules, games, single_deal=True)
    bg.reset(np.arange(100, 100 + games))
    refs = [Game(rules, seed=100 + g, single_deal=True) for g in range(games)]
    rng = np.random.default_rng(0)
    compared = 0
    while not bg.done.all():
        for p in range(rules.players):
            seats = np.full(games, p)
            got = policy_features(bg.observe(players=seats))
            for g, ref in enumerate(refs):
                assert np.array_equal(got[g], policy_features(observe(ref, p))), (preset, g, p)
                compared += 1
        mask = bg.legal_action_mask()
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in mask])
        for g, ref in enumerate(refs):
            if ref.decision is not None:
                ref.step(int(actions[g]))
        bg.step(actions)
    assert compared > 200


def test_the_all_zero_observation_is_in_the_space_and_has_all_zero_features():
    """Libraries pad with zeros (an ended agent, TorchRL's spec check): that observation lies in
    every preset's space, and its features are defined (all zero) rather than a division by zero."""
    import gymnasium

    import imperiale_env  # noqa: F401

    zero = np.zeros(OBS_SIZE, dtype=np.uint8)
    for preset in PRESET_NAMES:
        assert zero in gymnasium.make("Imperiale-v1", rules=preset).observation_space
    assert not policy_features(zero).any() and not policy_features(np.zeros((3, OBS_SIZE), np.uint8)).any()
