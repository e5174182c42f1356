"""Imitation of pimc before PPO: the labels are pimc's, cloning lowers its loss, the champion config
runs, and a run resumes exactly in the imitation phase (labels.pt included)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers import check_weighed_labels

torch = pytest.importorskip("torch")

from imperiale_agents.search.pimc import PIMCAgent, search_job, search_row, solve_row  # noqa: E402
from imperiale_env.batch import BatchGame  # noqa: E402
from imperiale_env.core.cards import NUM_CARDS  # noqa: E402
from imperiale_env.core.observation import OBS_SIZE  # noqa: E402
from imperiale_env.core.rules import make_rules  # noqa: E402
from imperiale_env.kernels.features import policy_features  # noqa: E402
from imperiale_train.checkpoint import CheckpointError, load_checkpoint  # noqa: E402
from imperiale_train.config import ConfigError, make_config  # noqa: E402
from imperiale_train.imitate import (  # noqa: E402
    Labels,
    SearchPool,
    imitation_losses,
    imitation_update,
    label_deals,
    targets,
)
from imperiale_train.model import ActorCritic  # noqa: E402
from imperiale_train.run import LABELS_NAME, train  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TINY = dict(num_envs=16, num_steps=8, hidden=(32,), update_epochs=1, num_minibatches=2, eval_groups=2,
            eval_single_deal=True, plot=False, eval_every=0, progress=False, tensorboard=False, threads=1,
            pool_every=1, pool_size=2, p_pool=0.5, eval_opponents=("random",), imitation_rounds=2,
            imitation_games=2, imitation_samples=2, imitation_epochs=2, imitation_batch=16, imitation_workers=1,
            iterations=2, checkpoint_every=1)


def first_card_position(seed: int = 5):
    """The first card to play with a choice in a deal of seed ``seed`` (the heuristic declares)."""
    from imperiale_agents.policies.heuristic import HeuristicAgent

    rules = make_rules("academie")
    bg = BatchGame(rules, 1, single_deal=True)
    bg.reset(seed)
    heuristic = HeuristicAgent(rules)
    while True:
        obs, mask = bg.observe(), bg.legal_action_mask()
        if mask[0, :NUM_CARDS].sum() > 1:
            return rules, obs, mask[0]
        bg.step(heuristic.act(obs, mask))


def test_the_label_of_a_position_is_pimcs_card_with_its_values():
    rules, obs, mask = first_card_position()
    rng_seed = 7
    seed = int(np.random.default_rng(rng_seed).integers(0, 2**63, size=1)[0])  # what PIMCAgent.act draws
    job = search_job(obs, mask, rules, 8, seed)
    card, values = search_row(job)
    assert card == solve_row(job)
    assert card == PIMCAgent(rules, samples=8).act(obs, mask[None], np.random.default_rng(rng_seed))[0]
    legal = mask[:NUM_CARDS]
    assert np.isnan(values[~legal]).all() and not np.isnan(values[legal]).any()
    assert values[card] == values[legal].max()
    with SearchPool(1) as pool:
        assert pool.map([job])[0][0] == card


def test_labels_are_the_same_whatever_the_worker_count():
    rules = make_rules("academie")
    runs = []
    for workers in (1, 2):
        with SearchPool(workers) as pool:
            runs.append(label_deals(rules, 3, np.random.default_rng(1), pool, samples=2, perfect=True))
    a, b = runs
    assert len(a) > 30
    for name in ("obs", "mask", "hidden", "action", "ret"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert np.array_equal(a.values, b.values, equal_nan=True)
    searched = ~np.isnan(a.values).all(axis=1)
    assert searched.any() and (~searched).any()  # cards searched, declarations the heuristic's
    assert (a.values[searched, a.action[searched]] == np.nanmax(a.values[searched], axis=1)).all()
    assert a.mask[np.arange(len(a)), a.action].all() and (a.mask.sum(axis=1) > 1).all()
    assert Labels.from_dict(a.to_dict()).action.tolist() == a.action.tolist()


def test_targets_weigh_the_legal_cards_by_value():
    labels = Labels.empty(False).concat(Labels(
        obs=np.zeros((2, OBS_SIZE), np.uint8), mask=np.zeros((2, 43), bool), hidden=np.zeros((2, 0), np.float32),
        values=np.full((2, NUM_CARDS), np.nan, np.float32), action=np.array([3, 40]), ret=np.zeros(2, np.float32)))
    labels.mask[0, [1, 2, 3]] = True
    labels.values[0, [1, 2, 3]] = [2.0, 3.0, 3.0]
    labels.mask[1, [39, 40]] = True
    soft = targets(labels, 1.0)
    assert soft[0, 2] == soft[0, 3] and soft[0, 1] == pytest.approx(soft[0, 2] / np.e)
    assert soft[0].sum() == pytest.approx(1.0) and soft[0, ~labels.mask[0]].sum() == 0
    assert soft[1].tolist() == np.eye(43)[40].tolist()  # a declaration: the heuristic's choice
    hard = targets(labels, 0.0)
    assert hard[0].tolist() == np.eye(43)[3].tolist()


def test_cloning_lowers_its_loss_on_a_fixed_dataset():
    rules = make_rules("academie")
    with SearchPool(1) as pool:
        labels = label_deals(rules, 2, np.random.default_rng(0), pool, samples=2)
    cfg = make_config(None, {**TINY, "run_dir": "unused", "imitation_epochs": 30, "imitation_lr": 3e-3,
                             "imitation_temperature": 0.0})  # pimc's card alone: a loss that can reach 0
    torch.manual_seed(0)
    model = ActorCritic((32,))
    tensors = [torch.from_numpy(policy_features(labels.obs)), torch.from_numpy(labels.mask), None,
               torch.from_numpy(targets(labels, cfg.imitation_temperature)), torch.from_numpy(labels.ret)]
    with torch.no_grad():
        before = [float(x) for x in imitation_losses(model, *tensors)]
    stats = imitation_update(model, torch.optim.Adam(model.parameters(), lr=cfg.imitation_lr), labels, cfg,
                             np.random.default_rng(0), torch.device("cpu"))
    with torch.no_grad():
        after = [float(x) for x in imitation_losses(model, *tensors)]
    assert after[0] < 0.5 * before[0] and after[1] < before[1]
    assert stats["imitation/agreement"] > 0.5 and stats["imitation/labels"] == len(labels)


def test_the_champion_config_runs_both_phases(tmp_path):
    from imperiale_agents.policies.neural import NeuralAgent

    overrides = {**TINY, "run_dir": str(tmp_path / "champion"), "eval_every": 1}
    result = train(make_config(ROOT / "configs" / "champion.yaml", overrides))
    assert result["iteration"] == 2
    lines = [json.loads(x) for x in (tmp_path / "champion" / "metrics.jsonl").read_text().splitlines()]
    assert [x.get("imitation_round") for x in lines] == [1, 2, None, None]
    assert lines[1]["imitation/labels"] > lines[0]["imitation/labels"] > 0
    # every imitation round is evaluated (the learning curve of the imitation), then PPO as configured
    assert all("eval/win_rate_random" in line for line in lines)
    data = load_checkpoint(result["checkpoint"])
    assert data["imitation_round"] == 2 and data["imitation_labels"] == lines[1]["imitation/labels"]
    assert result["iterations_run"] == 2 and result["imitation_rounds_run"] == 2
    imitated = load_checkpoint(tmp_path / "champion" / "imitated.pt")  # the policy before PPO, kept
    assert imitated["iteration"] == 0 and imitated["imitation_round"] == 2
    assert not torch.equal(imitated["model"]["actor.net.0.weight"], data["model"]["actor.net.0.weight"])
    rules, obs, mask = first_card_position()
    for path in (result["checkpoint"], tmp_path / "champion" / "imitated.pt"):
        assert mask[NeuralAgent(path).act(obs, mask[None])[0]]


def _same_run(a: Path, b: Path) -> None:
    pa, pb = load_checkpoint(a / "checkpoint.pt")["model"], load_checkpoint(b / "checkpoint.pt")["model"]
    assert all(torch.equal(pa[k], pb[k]) for k in pa)
    strip = lambda run: [{k: v for k, v in json.loads(x).items() if not k.startswith("perf/")}  # noqa: E731
                         for x in (run / "metrics.jsonl").read_text().splitlines()]
    assert strip(a) == strip(b)


def test_resume_in_the_imitation_phase_matches_a_straight_run(tmp_path):
    cfg = lambda name: make_config(None, {**TINY, "run_dir": str(tmp_path / name)})  # noqa: E731
    train(cfg("straight"))
    killed = cfg("killed")
    train(killed, stop_after=1)  # after imitation round 1
    assert load_checkpoint(tmp_path / "killed" / "checkpoint.pt")["imitation_round"] == 1
    shutil.copy(tmp_path / "killed" / "checkpoint.pt", tmp_path / "round1.pt")
    train(killed, resume=True, stop_after=1)  # round 2: labels.pt grows
    # Killed between the labels and the checkpoint of round 2: labels.pt is ahead of the checkpoint.
    shutil.copy(tmp_path / "round1.pt", tmp_path / "killed" / "checkpoint.pt")
    metrics = tmp_path / "killed" / "metrics.jsonl"
    metrics.write_text(metrics.read_text() + metrics.read_text().splitlines()[-1] + "\n")
    train(killed, resume=True)
    _same_run(tmp_path / "straight", tmp_path / "killed")


def test_resume_needs_the_labels_and_a_new_run_keeps_old_ones(tmp_path):
    cfg = make_config(None, {**TINY, "run_dir": str(tmp_path / "run")})
    train(cfg, stop_after=1)
    (tmp_path / "run" / LABELS_NAME).unlink()
    with pytest.raises(CheckpointError, match="labels.pt is missing"):
        train(cfg, resume=True)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / LABELS_NAME).write_bytes(b"old")
    with pytest.raises(ConfigError, match="not overwritten"):
        train(make_config(None, {**TINY, "run_dir": str(fresh)}))
    with pytest.raises(ConfigError, match="imitation_temperature"):
        make_config(None, ["imitation_temperature=-1"])


def test_double_dummy_labels_are_the_true_deals_values_on_pimcs_deals():
    """``double_dummy``: the same deals and choices as pimc's labels (pimc still plays), each card
    valued in the true deal; checked against the pure-Python solver on the hands the perfect critic
    keeps (another path to the same deal), late in the deal where that solver is quick."""
    from imperiale_agents.observation_view import decode
    from imperiale_agents.search.pimc import position, world_values

    rules = make_rules("academie")
    with SearchPool(1) as pool:
        pimc = label_deals(rules, 2, np.random.default_rng(4), pool, samples=2, perfect=True)
        dd = label_deals(rules, 2, np.random.default_rng(4), pool, samples=2, perfect=True, double_dummy=True)
    for name in ("obs", "mask", "hidden", "action", "ret"):
        assert np.array_equal(getattr(pimc, name), getattr(dd, name)), name
    searched = ~np.isnan(dd.values).all(axis=1)
    assert np.array_equal(searched, ~np.isnan(pimc.values).all(axis=1))
    assert not np.allclose(dd.values[searched], pimc.values[searched], equal_nan=True)
    v = decode(dd.obs)
    late = np.flatnonzero(searched & (v.tricks_played >= 8))
    assert len(late) >= 4
    for r in late:
        world = np.zeros((1, 3, NUM_CARDS), dtype=bool)
        world[0, 0] = v.hand[r]
        world[0, 1:] = dd.hidden[r].reshape(2, NUM_CARDS) > 0
        row = decode(dd.obs[r : r + 1])
        exact = world_values(world, rules, int(row.trump[0]), position(row, 0, rules), solver="python")[0]
        assert np.array_equal(exact, dd.values[r], equal_nan=True)


def test_an_unknown_label_kind_is_refused_with_the_allowed_ones():
    with pytest.raises(ConfigError, match="imitation_labels.*pimc, dd"):
        make_config(None, ["imitation_labels=exact"])


def test_another_player_at_the_cards_is_labelled_with_the_true_deals_values():
    """``player``: the champion plays the cards, each card valued by one exact solve of the true deal
    (the best of which is not always the champion's card)."""
    from imperiale_agents.base import make_agent

    rules = make_rules("academie")
    champion = make_agent("champion", rules)
    with SearchPool(1) as pool:
        a = label_deals(rules, 3, np.random.default_rng(6), pool, samples=2, player=champion, double_dummy=True)
        b = label_deals(rules, 3, np.random.default_rng(6), pool, samples=2, player=champion, double_dummy=True)
    searched = ~np.isnan(a.values).all(axis=1)
    assert searched.sum() > 20
    assert np.array_equal(a.values, b.values, equal_nan=True) and np.array_equal(a.action, b.action)
    assert np.array_equal(champion.act(a.obs[searched], a.mask[searched]), a.action[searched])
    best = a.values[searched, a.action[searched]] == np.nanmax(a.values[searched], axis=1)
    assert best.any() and not best.all()


def test_another_player_at_the_cards_is_labelled_with_pimcs_values_there():
    """DAgger: the champion plays the cards and pimc searches every position it reaches; the labels
    are pimc's means over its sampled worlds, on the very deals the champion plays."""
    from imperiale_agents.base import make_agent

    rules = make_rules("academie")
    champion = make_agent("champion", rules)
    with SearchPool(1) as pool:
        a = label_deals(rules, 3, np.random.default_rng(6), pool, samples=4, player=champion)
        b = label_deals(rules, 3, np.random.default_rng(6), pool, samples=4, player=champion)
        dd = label_deals(rules, 3, np.random.default_rng(6), pool, samples=4, player=champion, double_dummy=True)
    searched = ~np.isnan(a.values).all(axis=1)
    assert searched.sum() > 20
    assert np.array_equal(a.values, b.values, equal_nan=True) and np.array_equal(a.action, b.action)
    assert np.array_equal(champion.act(a.obs[searched], a.mask[searched]), a.action[searched])
    # The same deals as the champion's with the true deal's values (the generator's first draw deals
    # them, the greedy champion plays them): only the labels differ, pimc's means against one solve.
    assert np.array_equal(a.obs, dd.obs) and np.array_equal(a.action, dd.action)
    assert np.array_equal(np.isnan(a.values), np.isnan(dd.values))
    assert not np.allclose(a.values[searched], dd.values[searched], equal_nan=True)
    best = a.values[searched, a.action[searched]] == np.nanmax(a.values[searched], axis=1)
    assert best.any() and not best.all()


def test_an_imitation_player_must_be_an_agent_that_plays():
    with pytest.raises(ConfigError, match="imitation_player"):
        make_config(None, ["imitation_player=human", "imitation_labels=dd"])
    assert make_config(None, ["imitation_player=champion", "imitation_labels=dd"]).imitation_player == "champion"
    assert make_config(None, ["imitation_player=champion"]).imitation_player == "champion"


def test_a_missing_imitation_player_is_refused_before_the_run_folder_is_made(tmp_path):
    run_dir = tmp_path / "run"
    cfg = make_config(None, {**TINY, "run_dir": str(run_dir), "imitation_player": "neural:/no/such.pt",
                             "imitation_labels": "dd"})
    with pytest.raises(ConfigError, match="imitation_player: neural:/no/such.pt: no such checkpoint"):
        train(cfg)
    assert not run_dir.exists()


def test_belief_labels_are_pimc_belief_searches_the_same_whatever_the_worker_count(tmp_path, monkeypatch):
    """``imitation_belief``: the searches solve the worlds the shipped belief resamples (so the labels
    differ from plain pimc's), the same labels on one worker or two; the key runs through ``train`` and
    is refused, before any work, for rules without a shipped belief or beside ``imitation_infer``."""
    from imperiale_agents import champions
    from imperiale_agents.search.belief_model import shipped_belief

    check_weighed_labels(make_rules("academie"), belief=shipped_belief("academie"))
    result = train(make_config(None, {**TINY, "run_dir": str(tmp_path / "run"), "imitation_belief": True,
                                      "imitation_rounds": 1, "iterations": 1}))
    assert load_checkpoint(result["checkpoint"])["imitation_round"] == 1
    with pytest.raises(ConfigError, match="imitation_belief.*one way to weigh"):
        make_config(None, {"imitation_rounds": 1, "imitation_belief": True, "imitation_infer": True})
    monkeypatch.setattr(champions, "CHAMPIONS_DIR", tmp_path)  # an installation without a belief
    with pytest.raises(ConfigError, match="imitation_belief=True .*false for academie: no belief model is shipped"):
        make_config(None, {"imitation_rounds": 1, "imitation_belief": True})
