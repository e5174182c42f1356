"""The compiled stage machine of the batched engine: the numbers its kernels are written with, the
seeded deal ported bit for bit, and the score event buffers (full buffers, threads, history)."""

from __future__ import annotations

import dataclasses
import inspect

import numba
import numpy as np
import pytest

from imperiale_cli.devtools.rule_variants import rule_variants
from imperiale_env.batch import BatchGame, state, tables
from imperiale_env.batch import card_play_kernels as batch_play
from imperiale_env.batch import score_kernels as batch_score
from imperiale_env.batch import stages as machine
from imperiale_env.batch import stages_kernels as batch_stages
from imperiale_env.batch.stages_kernels import StageKind
from imperiale_env.core import actions as act
from imperiale_env.core import events, shuffle
from imperiale_env.core.rules import CHOICES, FALLEN_IMPERIALES, POINT_TIES, RANK_FIELDS, Rules, make_rules, rule_record
from imperiale_env.kernels import seeds
from imperiale_env.kernels.random_policy import random_legal_actions

THREADS = min(2, numba.config.NUMBA_NUM_THREADS)


def test_the_kernels_read_every_rules_field_by_name_from_one_record():
    """The schema is generated from Rules: a new field is in the record with nothing else to edit."""
    names = [f.name for f in dataclasses.fields(Rules)]
    for _, rules in rule_variants():
        record = rule_record(rules)
        assert record.dtype.names == tuple(names) and record.shape == (1,) and not record.flags.writeable
        for name in names:
            value, got = getattr(rules, name), int(record[0][name])
            if name in CHOICES:
                assert CHOICES[name][got] == value, name
            elif name in RANK_FIELDS:
                assert bin(got).count("1") == len(value), name
            else:
                assert got == int(value), name
    assert BatchGame(make_rules("foster"), 1).tables.arrays.rules[0]["point_tie"] == 0


def test_the_kernels_numbers_are_those_of_the_engine():
    assert [getattr(batch_score, "E_" + name.upper()) for name in events.EVENT_KINDS] == list(
        range(len(events.EVENT_KINDS)))
    fallen = (batch_score.FALLEN_OFF, batch_score.FALLEN_TRICKS, batch_score.FALLEN_TOMBEE, batch_score.FALLEN_CAPTURE)
    assert [FALLEN_IMPERIALES.index(x) for x in ("off", "tricks", "tombee", "capture")] == list(fallen)
    assert [POINT_TIES.index(x) for x in ("priority", "split")] == [batch_score.POINT_PRIORITY, batch_score.POINT_SPLIT]
    items = (batch_score.CB_ITEM, batch_score.FIRST_SEQUENCE_ITEM, batch_score.FIRST_FOUR_ITEM, batch_score.NUM_ITEMS)
    assert items == (tables.CB_ITEM, tables.SEQUENCE_ITEMS[0], tables.FOUR_ITEMS_START, tables.NUM_ITEMS)
    assert batch_score.POINTS_PER_IMPERIALE == events.POINTS_PER_IMPERIALE
    for kernel in (batch_play, batch_stages):
        assert (kernel.QUESTION, kernel.POINT, kernel.PLAY, kernel.NONE) == (
            state.QUESTION, state.POINT, state.PLAY, state.NONE)
    assert batch_play._QUESTION_BITS == (1 << act.SHOW) | (1 << act.HIDE)


def stage_kinds_left_out(kinds) -> tuple[set, set]:
    """The kinds of ``kinds`` that no rule variant builds, and those the stage machine never compares
    with (``DEAL_END`` is its last branch, ``else``)."""
    built = set()
    for _, rules in rule_variants():
        built |= {st.kind.name for st in tables.Tables(rules).stages}
    machine = inspect.getsource(batch_stages.advance.py_func)
    run = {k.name for k in kinds
           if f"sk == StageKind.{k.name}:" in machine or f"sk == StageKind.{k.name} or" in machine}
    run |= {"DEAL_END"} if "else:  # StageKind.DEAL_END" in machine else set()
    names = {k.name for k in kinds}
    return names - built, names - run


def test_every_variant_builds_stages_the_kernels_know_ending_with_the_deal_end():
    for _, rules in rule_variants():
        t = tables.Tables(rules)
        assert t.stage_kind[0] == StageKind.DEAL_START and t.stage_kind[-1] == StageKind.DEAL_END
        assert list(t.stage_kind) == [int(st.kind) for st in t.stages]
    assert stage_kinds_left_out(StageKind) == (set(), set())


def test_a_stage_kind_declared_and_not_built_nor_run_is_found():
    """A kind added to the declaration alone: no variant builds it, the machine never runs it."""
    from enum import IntEnum

    more = IntEnum("StageKind", [k.name for k in StageKind] + ["LAST_TRICK"], start=0)
    assert stage_kinds_left_out(more) == ({"LAST_TRICK"}, {"LAST_TRICK"})


def test_the_compiled_deal_is_the_numpy_deal_bit_for_bit():
    rng = np.random.default_rng(4)
    edges = np.array([0, 1, 2**63 - 1, 2**64 - 1], dtype=np.uint64)
    game_seeds = np.concatenate([rng.integers(0, 2**63, 200, dtype=np.uint64), edges])
    deal_index = rng.integers(0, 300, len(game_seeds))
    with np.errstate(over="ignore"):  # NUMBA_DISABLE_JIT: the hashes wrap around on numpy scalars
        for pack in (np.array(tables.Tables(make_rules("academie")).pack), np.arange(36)):
            want = shuffle.shuffled(game_seeds, deal_index, pack)
            keys, out = np.zeros(len(pack), np.int32), np.zeros(len(pack), np.int64)
            for k, (seed, index) in enumerate(zip(game_seeds, deal_index, strict=True)):
                seeds.deal_order(seed, int(index), pack, keys, out)
                assert np.array_equal(out, want[k])
        for players in (2, 3):
            dealers = [seeds.first_dealer(s, players) for s in game_seeds]
            assert np.array_equal(dealers, shuffle.first_dealer(game_seeds, players))
        assert [seeds.next_game_seed(s) for s in game_seeds] == list(shuffle.next_game_seed(game_seeds))


def test_a_deal_whose_keys_share_their_top_bits_is_still_the_numpy_deal():
    """The compiled deal ranks the cards on their keys' top 32 bits; seed 8551204 (found by a
    search) gives two cards of the 32-card pack the same top bits, so its deal takes the exact path."""
    pack = np.array(tables.Tables(make_rules("academie")).pack)
    seed, index = np.uint64(8551204), 0
    with np.errstate(over="ignore"):
        deal_key = shuffle.splitmix64(seed ^ shuffle.splitmix64(np.uint64(index + 1)))
        top = shuffle.splitmix64(deal_key + np.arange(len(pack), dtype=np.uint64) * shuffle.GOLDEN) >> np.uint64(32)
        assert len(set(top.tolist())) == len(pack) - 1  # two cards share their top bits
        want = shuffle.shuffled(np.array([seed]), np.array([index]), pack)[0]
        out = np.zeros(len(pack), np.int64)
        seeds.deal_order(seed, index, pack, np.zeros(len(pack), np.int32), out)
    assert np.array_equal(out, want)


def _play(rules: str, threads: int, steps: int, **options) -> tuple[BatchGame, np.ndarray]:
    game = BatchGame(rules, 41, record_events=True, threads=threads, **options)
    game.reset(3)
    rows = [game.pop_events()]
    for step in range(steps):
        game.step(random_legal_actions(game.action_bits(), 2, step, threads=threads))
        if step % 50 == 0:
            rows.append(game.pop_events())
    rows.append(game.pop_events())
    assert all((np.diff(r[:, 0]) >= 0).all() for r in rows)  # each pop is ordered by game
    return game, np.concatenate(rows)


@pytest.mark.parametrize("rules", ["academie", "foster", "imperijal", "academie3"])
def test_the_events_are_the_same_on_one_and_two_threads_and_with_a_buffer_that_fills(rules, monkeypatch):
    assert THREADS == 2, "the machine gives numba a single thread: nothing to compare"
    _, one = _play(rules, 1, 400, auto_next_game=True)
    _, two = _play(rules, THREADS, 400, auto_next_game=True)
    # A buffer of one game's bound: the slices flush and go on before almost every game that scores.
    monkeypatch.setattr(machine, "_EVENT_ROWS", -int(tables.event_bound(make_rules(rules))))
    _, small = _play(rules, THREADS, 400, auto_next_game=True)
    assert len(one) > 400 and set(one[:, 2]) >= {events.CODE["point"], events.CODE["imperiale"]}
    assert np.array_equal(one, two) and np.array_equal(one, small)


def test_the_history_is_the_same_on_one_and_two_threads():
    assert THREADS == 2, "the machine gives numba a single thread: nothing to compare"
    logs = []
    for threads in (1, THREADS):
        game, rows = _play("academie", threads, 300, keep_history=True)
        deals = {name: np.concatenate([log[name] for log in game.deal_log]) for name in game.deal_log[0]}
        order = np.lexsort((deals["deal_index"], deals["game_id"]))
        logs.append((rows, {name: value[order] for name, value in deals.items()}))
    (rows_one, deals_one), (rows_two, deals_two) = logs
    assert np.array_equal(rows_one, rows_two)
    assert len(deals_one["game_id"]) > 41  # every game has finished deals in the log
    for name in deals_one:
        assert np.array_equal(deals_one[name], deals_two[name]), name


def test_given_deals_must_be_cards_of_the_pack():
    game = BatchGame("academie", 2)
    with pytest.raises(ValueError, match=r"deals must be \(2, deals, 32\) cards of the pack"):
        game.reset(0, deals=np.full((2, 1, 32), 35))  # a six: not in the two-player pack
    with pytest.raises(ValueError, match="deals must be"):
        game.reset(0, deals=np.zeros((2, 32)))


def test_an_event_buffer_too_small_is_an_error_not_memory_written_over(monkeypatch):
    """``tables.event_bound`` is a proven bound on the score events one game logs in one call; were it
    ever too small, the compiled kernels (which check no index) count the rows past the buffer
    instead of writing them, and the engine stops with an error that says so."""
    monkeypatch.setattr(machine, "_EVENT_ROWS", 0)
    monkeypatch.setattr(tables, "event_bound", lambda rules: 1)  # a buffer of 2 rows
    game = BatchGame("academie", 4, record_events=True)
    game.reset(0)
    with pytest.raises(RuntimeError, match=r"logged \d+ score events in one call, more than its buffer's 2 rows"):
        for step in range(400):  # a deal's end logs honours, tricks and more at once
            game.step(random_legal_actions(game.action_bits(), 2, step))
