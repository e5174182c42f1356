"""Records to and from the batched engine: any batched game replays in the reference engine."""

from __future__ import annotations

import numpy as np
import pytest

from imperiale_cli.devtools.differential import random_legal
from imperiale_env.batch import BatchGame
from imperiale_env.core.rules import PRESET_NAMES
from imperiale_env.records.batch_records import batch_from_records, record_from_batch
from imperiale_env.records.game_records import RecordError, record_from_game, replay_record
from imperiale_env.reference.game import Game


def play_out(batch: BatchGame, seed: int) -> None:
    rng = np.random.default_rng(seed)
    while not batch.done.all():
        batch.step(random_legal(rng, batch.legal_action_mask()))


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_batched_games_become_records_the_reference_replays(preset):
    batch = BatchGame(preset, 12, keep_history=True)
    batch.reset(21)
    play_out(batch, 21)
    for i in range(12):
        summary = replay_record(record_from_batch(batch, i))
        assert summary["final"]["imperiales"] == batch.imperiales[i].tolist()
        assert summary["final"]["points"] == batch.points[i].tolist()
        assert summary["winner"] == int(batch.winner[i])


def test_records_of_restarted_slots_and_games_in_progress():
    batch = BatchGame("academie", 4, auto_next_game=True, keep_history=True)
    batch.reset(2)
    rng = np.random.default_rng(2)
    for _ in range(900):
        batch.step(random_legal(rng, batch.legal_action_mask()))
    assert batch.game_id.max() >= 4  # slots have restarted
    for game_id in [0, 1, int(batch.game_id[0])]:  # finished, finished, in progress
        record = record_from_batch(batch, game_id)
        assert replay_record(record)["deals"]
    live = replay_record(record_from_batch(batch, int(batch.game_id[0])))
    assert live["winner"] is None and live["final"]["imperiales"] == batch.imperiales[0].tolist()


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_records_load_into_the_batch_and_play_the_same(preset):
    records, refs = [], []
    for seed in range(6):
        game = Game(preset, seed=seed)
        rng = np.random.default_rng(seed)
        while not game.is_over:
            game.step(int(rng.choice(game.legal_actions())))
        records.append(record_from_game(game))
        refs.append(game)
    batch = batch_from_records(records)
    for i, ref in enumerate(refs):
        assert batch.imperiales[i].tolist() == ref.imperiales
        assert batch.points[i].tolist() == ref.points
        assert int(batch.winner[i]) == ref.winner
        assert batch.done[i]


def test_bad_input_is_refused():
    batch = BatchGame("academie", 2)
    batch.reset(0)
    with pytest.raises(ValueError, match="keep_history=True"):
        record_from_batch(batch, 0)
    kept = BatchGame("academie", 2, keep_history=True)
    kept.reset(0)
    with pytest.raises(ValueError, match="no game 7"):
        record_from_batch(kept, 7)
    with pytest.raises(RecordError):
        batch_from_records([])
