"""The shipped champion through every entry point, and ``imperiale export``, which makes such files."""

from __future__ import annotations

import itertools
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import imperiale_agents  # noqa: E402
import imperiale_agents.champions as champions  # noqa: E402
from imperiale_agents.base import AgentError, make_agent  # noqa: E402
from imperiale_agents.policies.policy_file import FORMAT, read_policy  # noqa: E402
from imperiale_agents.tournament.match import run_tournament  # noqa: E402
from imperiale_cli.cli import main  # noqa: E402
from imperiale_env.batch import BatchGame  # noqa: E402
from imperiale_env.core.input_checks import InputError  # noqa: E402
from imperiale_env.core.rules import PRESET_NAMES  # noqa: E402
from imperiale_env.kernels.features import FEATURE_SIZE  # noqa: E402
from imperiale_env.records.game_records import game_from_record, load_records  # noqa: E402
from imperiale_train.checkpoint import CheckpointError, load_checkpoint  # noqa: E402
from imperiale_train.export import export_policy, train_seconds  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = champions.champion_presets()
MAX_BYTES = 5_000_000
"""A shipped champion is a few MB at most: it travels inside the package."""


def test_the_default_preset_has_a_small_champion_file_that_loads_without_pickle():
    assert "academie" in SHIPPED
    for preset in SHIPPED:
        path = champions.champion_path(preset)
        assert path.stat().st_size < MAX_BYTES
        with np.load(path, allow_pickle=False) as arrays:  # plain arrays and JSON text: no code runs
            data = json.loads(arrays["metadata"].tobytes())
        assert data["format"] == FORMAT and data["rules"]["preset"] == preset
        made = data["provenance"]
        trained = made["global_step"] > 0 or any(e.get("imitation_round", 0) > 0 for e in made["history"])
        assert trained and isinstance(made["seed"], int)  # PPO iterations, or rounds of imitation
        assert made["train_seconds"] > 0, "the training time of a shipped champion is known"
        assert data["config"]["rules"] == preset and data["config"]["iterations"] >= made["iteration"]
        assert "optimizer" not in data and "rollout" not in data and "pool" not in data


def _play_batch(agent, preset: str, games: int = 16, decisions: int = 400) -> int:
    """Let ``agent`` take every decision of ``games`` games; each action must be legal."""
    bg = BatchGame(preset, games, auto_next_game=True)
    bg.reset(11)
    rng = np.random.default_rng(0)
    for _ in range(decisions):
        mask = bg.legal_action_mask()
        actions = agent.act(bg.observe(), mask, rng)
        assert mask[np.arange(games), actions].all()
        bg.step(actions)
    return decisions * games


@pytest.mark.parametrize("preset", SHIPPED)
def test_make_agent_and_the_python_api_build_the_same_greedy_policy(preset):
    bot = make_agent("champion", preset)
    assert bot.name == "champion" and bot.train_rules["preset"] == preset and bot.greedy
    _play_batch(bot, preset)
    again = imperiale_agents.champion(preset)
    bg = BatchGame(preset, 8)
    bg.reset(5)
    obs, mask = bg.observe(), bg.legal_action_mask()
    assert (again.act(obs, mask, None) == bot.act(obs, mask, None)).all()


@pytest.mark.parametrize("preset", SHIPPED)
def test_whole_games_through_the_tournament_and_the_eval_command(preset, capsys):
    # The tournament checks every action against the legal mask: a finished one played legally.
    result = run_tournament(["champion", "random"], preset, groups=2, seed=3)
    assert result.names[0] == "champion" and sum(p.games for p in result.pairs) > 0
    assert main(["eval", "--agents", "champion,heuristic", "--deals", "2", "--rules", preset, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "| champion | heuristic |" in out and "| champion |" in out.split("Elo (Bradley-Terry)")[1]


@pytest.mark.parametrize("preset", SHIPPED)
def test_the_play_command_against_the_champion(preset, monkeypatch, capsys, tmp_path):
    answers = itertools.cycle(["1"])  # the first legal move, every time
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    record = tmp_path / "game.json"
    assert main(["play", "--opponent", "champion", "--rules", preset, "--seed", "4", "--save", str(record)]) == 0
    out = capsys.readouterr().out
    assert "against champion" in out and ("wins the game" in out or "You win the game" in out)
    assert game_from_record(load_records(record)[0]).is_over


@pytest.mark.parametrize("preset", SHIPPED)
def test_the_champion_as_the_gymnasium_opponent(preset):
    import gymnasium

    import imperiale_env  # noqa: F401  (registers Imperiale-v1)

    env = gymnasium.make("Imperiale-v1", rules=preset, opponent=imperiale_agents.champion(preset))
    rng = np.random.default_rng(1)
    for seed in (0, 1):
        _, info = env.reset(seed=seed)
        over = False
        while not over:  # an illegal opponent action would raise inside step
            legal = np.flatnonzero(info["action_mask"])
            _, reward, terminated, truncated, info = env.step(int(rng.choice(legal)))
            over = terminated or truncated
        assert reward != 0 and not info.get("illegal_action")


@pytest.mark.parametrize("preset", SHIPPED)
def test_a_whole_game_at_the_web_table(preset, tmp_path):
    pytest.importorskip("flask")
    from imperiale_web.app import create_app

    client = create_app(tmp_path).test_client()
    assert "champion" in client.get("/api/options").json["agents"]
    answer = client.post("/api/games", json={"preset": preset, "opponent": "champion", "seed": 6})
    assert answer.status_code == 201, answer.json
    game_id, state = answer.json["id"], answer.json["state"]
    for _ in range(5000):
        if state["over"]:
            break
        answer = client.post(f"/api/games/{game_id}/move", json={"action": state["decision"]["legal"][0]})
        assert answer.status_code == 200, answer.json
        state = answer.json["state"]
    assert state["over"] and state["opponent"] == "champion"


# ---------------------------------------------------------------------- presets without a champion


@pytest.fixture
def only_academie(tmp_path, monkeypatch):
    """A champions folder holding the academie champion only."""
    shutil.copy(champions.champion_path("academie"), tmp_path / "academie.npz")
    monkeypatch.setattr(champions, "CHAMPIONS_DIR", tmp_path)
    return tmp_path


def test_a_preset_without_a_champion_names_those_with_one(only_academie, capsys):
    assert champions.champion_presets() == ("academie",)
    for preset in set(PRESET_NAMES) - {"academie"}:
        with pytest.raises(AgentError, match=f"'{preset}' has no champion \\(presets with one: academie\\)"):
            make_agent("champion", preset)
    assert main(["eval", "--agents", "champion,heuristic", "--rules", "foster", "--deals", "2", "--no-progress"]) == 2
    assert main(["play", "--opponent", "champion", "--rules", "academie3"]) == 2
    err = capsys.readouterr().err
    assert err.count("has no champion (presets with one: academie)") == 2
    (only_academie / "academie.npz").unlink()
    with pytest.raises(AgentError, match="presets with one: none"):
        make_agent("champion", "academie")


def test_a_champion_file_under_another_presets_name_is_refused(only_academie):
    shutil.copy(only_academie / "academie.npz", only_academie / "foster.npz")
    with pytest.raises(AgentError, match="trained under the 'academie' rules, not 'foster'"):
        make_agent("champion", "foster")


@pytest.mark.parametrize("spec", ["champion:academie", "champion:", "champion:3", "champion:search:64"])
def test_the_champion_spec_takes_only_search(spec):
    with pytest.raises(AgentError, match="champion is the shipped network, champion:search the shipped search"):
        make_agent(spec)


# ---------------------------------------------------------------------- the search champion


@pytest.mark.parametrize("preset", ["academie", "foster", "imperijal"])
def test_the_search_champion_is_its_presets_spec_under_its_own_name(preset):
    bot = make_agent("champion:search", preset)
    plain = make_agent(champions.SEARCH_CHAMPIONS[preset], preset)
    assert bot.name == "champion:search" and type(bot) is type(plain)
    bg = BatchGame(preset, 4, single_deal=True)
    bg.reset(2)
    while not bg.legal_action_mask()[:, :36].any():  # on to the cards
        bg.step(make_agent("heuristic", preset).act(bg.observe(), bg.legal_action_mask()))
    obs, mask = bg.observe(), bg.legal_action_mask()
    chosen = bot.act(obs, mask, np.random.default_rng(0))
    assert mask[np.arange(4), chosen].all()
    assert (chosen == plain.act(obs, mask, np.random.default_rng(0))).all()


def test_a_preset_without_a_search_champion_is_refused_with_those_that_have_one():
    with pytest.raises(AgentError, match="'academie3' has no search champion \\(presets with one: academie, "
                                         "foster, imperijal\\)"):
        make_agent("champion:search", "academie3")


def test_the_search_champion_through_eval_play_the_env_and_the_web_table(monkeypatch, capsys, tmp_path):
    import gymnasium

    import imperiale_env  # noqa: F401  (registers Imperiale-v1)

    assert main(["eval", "--agents", "champion:search,heuristic", "--deals", "2", "--no-progress"]) == 0
    assert "| champion:search | heuristic |" in capsys.readouterr().out
    answers = itertools.cycle(["1"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    assert main(["play", "--opponent", "champion:search", "--seed", "4"]) == 0
    assert "against champion:search" in capsys.readouterr().out
    env = gymnasium.make("Imperiale-v1", opponent=make_agent("champion:search", "academie"))
    _, info = env.reset(seed=3)
    over = False
    while not over:  # an illegal opponent action would raise inside step
        _, _, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        over = terminated or truncated
    pytest.importorskip("flask")
    from imperiale_web.app import create_app

    client = create_app(tmp_path).test_client()
    assert "champion:search" in client.get("/api/options").json["agents"]
    answer = client.post("/api/games", json={"preset": "academie", "opponent": "champion:search", "seed": 6})
    assert answer.status_code == 201, answer.json
    state = answer.json["state"]
    for _ in range(40):  # a deal's worth of moves, each answered by the search
        if state["over"]:
            break
        answer = client.post(f"/api/games/{answer.json['id']}/move", json={"action": state["decision"]["legal"][0]})
        assert answer.status_code == 200, answer.json
        state = answer.json["state"]
    assert state["opponent"] == "champion:search"


# ---------------------------------------------------------------------- imperiale export


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A real (tiny) training run: its checkpoint and metrics."""
    from imperiale_train.config import make_config
    from imperiale_train.run import train

    path = tmp_path_factory.mktemp("export") / "run"
    train(make_config(None, {"num_envs": 16, "num_steps": 8, "hidden": (32,), "update_epochs": 1,
                             "num_minibatches": 2, "eval_groups": 2, "eval_single_deal": True, "plot": False,
                             "eval_every": 0, "progress": False, "tensorboard": False, "threads": 1,
                             "iterations": 3, "seed": 7, "rules": "academie3", "run_dir": str(path)}))
    return path


def test_export_keeps_the_policy_and_how_it_was_made(run_dir, tmp_path, capsys):
    ckpt = run_dir / "checkpoint.pt"
    out = tmp_path / "policy.npz"
    assert main(["export", str(ckpt), str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    assert out.stat().st_size < ckpt.stat().st_size / 3  # no optimiser, pool, game batch or critic
    data = read_policy(out)
    source = load_checkpoint(ckpt)
    assert data.config == json.loads(json.dumps(source["config"])) and data.rules == source["rules"]
    made = data.provenance
    assert (made["seed"], made["iteration"], made["global_step"]) == (7, 3, source["global_step"])
    metrics = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    batch = 16 * 8
    expected = sum(batch / m["perf/steps_per_s"] + (m.get("perf/eval_s") or 0) for m in metrics)
    assert made["train_seconds"] == pytest.approx(expected, abs=0.06)
    # The exported policy plays exactly as the checkpoint's, as neural:PATH too.
    exported, original = make_agent(f"neural:{out}", "academie3"), make_agent(f"neural:{ckpt}", "academie3")
    assert exported.provenance["iteration"] == 3 and exported.train_rules["preset"] == "academie3"
    bg = BatchGame("academie3", 64)
    bg.reset(2)
    rng = np.random.default_rng(0)
    for _ in range(60):
        obs, mask = bg.observe(), bg.legal_action_mask()
        actions = exported.act(obs, mask, rng)
        assert (actions == original.act(obs, mask, rng)).all()
        bg.step(actions)


def test_export_refuses_bad_inputs_and_never_overwrites(run_dir, tmp_path, capsys):
    ckpt = run_dir / "checkpoint.pt"
    taken = tmp_path / "taken.pt"
    taken.write_bytes(b"mine")
    with pytest.raises(InputError, match="exists already; it is not overwritten"):
        export_policy(ckpt, taken)
    assert taken.read_bytes() == b"mine"
    with pytest.raises(InputError, match="no such folder"):
        export_policy(ckpt, tmp_path / "missing" / "p.pt")
    with pytest.raises(InputError, match="no such checkpoint"):
        export_policy(tmp_path / "nothing.pt", tmp_path / "p.pt")
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="corrupt or not a training checkpoint"):
        export_policy(junk, tmp_path / "p.pt")
    export_policy(ckpt, tmp_path / "once.npz")
    with pytest.raises(CheckpointError, match="already an exported policy"):
        export_policy(tmp_path / "once.npz", tmp_path / "twice.npz")
    assert not (tmp_path / "p.pt").exists() and not (tmp_path / "twice.npz").exists()
    assert main(["export", str(ckpt), str(taken)]) == 2
    assert main(["export", str(junk), str(tmp_path / "p.pt")]) == 2
    err = capsys.readouterr().err
    assert err.count("imperiale export: error:") == 2 and "taken.pt" in err and "junk.pt" in err


def _rewrite(good: Path, out: Path, meta_edit=None, arrays_edit=None) -> Path:
    """A copy of the policy file ``good`` with its metadata or arrays changed."""
    with np.load(good, allow_pickle=False) as arrays:
        arrays = dict(arrays)
    meta = json.loads(arrays.pop("metadata").tobytes())
    meta = meta_edit(meta) if meta_edit else meta
    arrays = arrays_edit(arrays) if arrays_edit else arrays
    text = meta if isinstance(meta, str) else json.dumps(meta)
    np.savez(out, metadata=np.frombuffer(text.encode(), dtype=np.uint8), **arrays)
    return out


def test_a_damaged_policy_file_is_refused_clearly(run_dir, tmp_path, monkeypatch):
    good = export_policy(run_dir / "checkpoint.pt", tmp_path / "good.npz")
    nan = {"layer0.bias": lambda a: {**a, "layer0.bias": np.full_like(a["layer0.bias"], np.nan)}}
    cases = {
        "version": ({"meta_edit": lambda m: {**m, "version": 99}}, "version 99"),
        "layer": ({"arrays_edit": lambda a: {k: v for k, v in a.items() if k != "layer1.bias"}}, "holds layer0"),
        "shape": ({"arrays_edit": lambda a: {**a, "layer0.weight": a["layer0.weight"][:, :7]}},
                  f"must take {FEATURE_SIZE} inputs"),
        "features": ({"meta_edit": lambda m: {**m, "feature_version": 9}}, "read feature version 9; .*version 2"),
        "features_v1": ({"meta_edit": lambda m: {k: v for k, v in {**m, "version": 3}.items()
                                                 if k != "feature_version"}},
                        "read feature version 1 \\(the one-hot bytes\\).*imperiale train"),
        "obs": ({"meta_edit": lambda m: {**m, "obs_size": 7}}, "observations of 7"),
        "obs_version": ({"meta_edit": lambda m: {**m, "obs_version": 2}}, "trained for observation version 2"),
        "nan": ({"arrays_edit": nan["layer0.bias"]}, "NaN or infinite weights"),
        "types": ({"meta_edit": lambda m: {**m, "provenance": ["not", "an", "object"]}},
                  "'provenance' must be a JSON object, got list"),
        "activation": ({"meta_edit": lambda m: {**m, "activation": "gelu"}}, "'gelu' is not one of relu, tanh"),
        "iteration": ({"meta_edit": lambda m: {**m, "provenance": {**m["provenance"], "iteration": "abc"}}},
                      "provenance 'iteration' must be a JSON integer, got str 'abc'"),
        "seconds": ({"meta_edit": lambda m: {**m, "provenance": {**m["provenance"], "train_seconds": [1]}}},
                    "provenance 'train_seconds' must be a JSON integer or number or null, got list"),
        "json": ({"meta_edit": lambda m: '{"format": NaN}'}, "not JSON text"),
        "objects": ({"arrays_edit": lambda a: {**a, "code": np.array([{"x": 1}], dtype=object)}}, "Python objects"),
    }
    for name, (edit, message) in cases.items():
        if name == "objects":  # np.savez pickles object arrays: the reader refuses them before anything runs
            with np.load(good, allow_pickle=False) as arrays:
                kept = dict(arrays)
            np.savez(tmp_path / "objects.npz", **kept, code=np.array([{"x": 1}], dtype=object))
            path = tmp_path / "objects.npz"
        else:
            path = _rewrite(good, tmp_path / f"{name}.npz", **edit)
        with pytest.raises(CheckpointError, match=message):
            read_policy(path)
        with pytest.raises(AgentError, match=message):
            make_agent(f"neural:{path}")
    import imperiale_agents.policies.policy_file as policy_file

    monkeypatch.setattr(policy_file, "MAX_PARAMETERS", 1000)
    with pytest.raises(CheckpointError, match="parameters; the limit is 1,000"):
        read_policy(good)


def test_unknown_metadata_keys_are_warned_about_not_refused(run_dir, tmp_path):
    good = export_policy(run_dir / "checkpoint.pt", tmp_path / "good.npz")
    newer = _rewrite(good, tmp_path / "newer.npz", meta_edit=lambda m: {**m, "made_by_release": "9.0"})
    with pytest.warns(UserWarning, match="does not know are ignored: made_by_release"):
        agent = make_agent(f"neural:{newer}", "academie3")
    assert agent.provenance == read_policy(good).provenance


def test_files_of_observation_version_0_are_refused_in_one_line(run_dir, tmp_path, capsys):
    """A checkpoint, an exported policy (.npz, policy version 2) and a torch-format exported
    policy of the releases before observation version 1: each refused with one line that says
    why and how to train one for this version."""
    source = load_checkpoint(run_dir / "checkpoint.pt")
    old_checkpoint = {k: v for k, v in source.items() if k != "obs_version"}
    old_checkpoint.update(version=2, obs_size=485)
    torch.save(old_checkpoint, tmp_path / "old_checkpoint.pt")
    actor = {k[len("actor."):]: v for k, v in source["model"].items() if k.startswith("actor.")}
    torch.save({"format": FORMAT, "version": 1, "obs_size": 485, "num_actions": 43, "config": source["config"],
                "rules": source["rules"], "actor": actor, "provenance": {}}, tmp_path / "old_export.pt")
    good = export_policy(run_dir / "checkpoint.pt", tmp_path / "good.npz")
    _rewrite(good, tmp_path / "old_policy.npz",
             meta_edit=lambda m: {k: v for k, v in {**m, "version": 2, "obs_size": 485}.items() if k != "obs_version"})
    for name in ("old_checkpoint.pt", "old_export.pt", "old_policy.npz"):
        path = tmp_path / name
        with pytest.raises(CheckpointError, match="trained for observation version 0; this release observes "
                                                  "version 1 .* imperiale train --config configs/champion.yaml"):
            read_policy(path)
        assert main(["eval", "--agents", f"neural:{path},heuristic", "--deals", "2"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "observation version 0" in err, err
    resumed = tmp_path / "old_run"
    resumed.mkdir()
    shutil.copy(tmp_path / "old_checkpoint.pt", resumed / "checkpoint.pt")
    assert main(["train", "--resume", f"run_dir={resumed}", "iterations=1"]) == 2
    assert "trained for observation version 0" in capsys.readouterr().err


def test_the_training_time_needs_every_iteration_once(tmp_path):
    lines = [{"iteration": i, "perf/steps_per_s": 100.0, "perf/eval_s": 0.5 * (i == 2)} for i in (1, 2)]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert train_seconds(tmp_path, 2, batch_size=200) == pytest.approx(4.5)
    assert train_seconds(tmp_path, 3, batch_size=200) is None  # iteration 3 is not in the file
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines + lines[:1]))
    assert train_seconds(tmp_path, 2, batch_size=200) is None  # iteration 1 twice
    assert train_seconds(tmp_path / "elsewhere", 2, batch_size=200) is None


def test_training_evaluates_against_the_champion(tmp_path, capsys):
    """``eval_opponents=champion`` is accepted by the training config and played at the end."""
    code = main(["train", "iterations=1", "num_envs=8", "num_steps=4", "eval_groups=2", "eval_opponents=champion",
                 f"run_dir={tmp_path / 'run'}", "progress=false", "tensorboard=false"])
    out = capsys.readouterr().out
    assert code == 0 and "vs champion" in out, out


def test_a_run_can_start_from_an_exported_policy(run_dir, tmp_path):
    """``init_from`` takes an exported policy, the shipped champion too: fine-tuning starts from its policy."""
    from imperiale_agents.policies.neural import NeuralAgent, PolicyAgent
    from imperiale_train.config import ConfigError, make_config
    from imperiale_train.model import ActorCritic
    from imperiale_train.run import _start_from

    path = str(export_policy(run_dir / "checkpoint.pt", tmp_path / "start.npz"))
    exported = NeuralAgent(path)
    cfg = make_config(None, {"init_from": path, "hidden": exported.net.hidden})
    model = ActorCritic(cfg.hidden, cfg.activation, cfg.critic)
    _start_from(cfg, model)
    bg = BatchGame("academie3", 64)
    bg.reset(3)
    for _ in range(30):
        obs, mask = bg.observe(), bg.legal_action_mask()
        actions = exported.act(obs, mask)
        assert (PolicyAgent(model.actor).act(obs, mask) == actions).all()
        bg.step(actions)
    with pytest.raises(ConfigError, match="its network is hidden=.*give the same"):
        _start_from(make_config(None, {"init_from": path, "hidden": (8,)}), ActorCritic((8,)))
    champion = str(champions.champion_path("academie"))
    started = ActorCritic((256, 256))
    _start_from(make_config(None, {"init_from": champion, "hidden": (256, 256)}), started)
    obs, mask = bg.observe(), bg.legal_action_mask()
    assert (PolicyAgent(started.actor).act(obs, mask) == NeuralAgent(champion).act(obs, mask)).all()


def _damaged_checkpoint(run_dir: Path, out: Path, edit) -> Path:
    from imperiale_train.checkpoint import save_checkpoint

    data = load_checkpoint(run_dir / "checkpoint.pt")
    edit(data)
    return save_checkpoint(out, {k: v for k, v in data.items() if k not in ("format", "version", "obs_version",
                                                                              "obs_size")})


@pytest.mark.parametrize("damage, text", [
    (lambda d: d["model"]["actor.net.2.weight"].fill_(float("nan")), "bad.pt: .*NaN or infinite"),
    (lambda d: d["model"].__setitem__("actor.net.2.weight", d["model"]["actor.net.2.weight"][:, :5]),
     r"bad.pt: .*(actor.net.2.weight has shape \(43, 5\)|layer 1 of the policy has weight)"),
])
def test_a_checkpoint_whose_policy_cannot_play_is_refused_on_every_path(run_dir, tmp_path, capsys, damage, text):
    bad = _damaged_checkpoint(run_dir, tmp_path / "bad.pt", damage)
    with pytest.raises(AgentError, match=text):
        make_agent(f"neural:{bad}", "academie3")
    assert main(["eval", "--agents", f"neural:{bad},random", "--deals", "2", "--rules", "academie3",
                 "--no-progress"]) == 2
    assert main(["export", str(bad), str(tmp_path / "bad.npz")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(re.search(text, line) for line in err), "\n".join(err)
    assert not (tmp_path / "bad.npz").exists()
    with pytest.raises(CheckpointError, match=text):  # what init_from reads
        from imperiale_train.checkpoint import build_model

        build_model(load_checkpoint(bad), bad)
    resumed = tmp_path / "resumed"
    shutil.copytree(run_dir, resumed)
    shutil.copy(bad, resumed / "checkpoint.pt")
    assert main(["train", "--resume", f"run_dir={resumed}", "iterations=5"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and re.search(text.replace("bad.pt", "checkpoint.pt"), err[0]), err


def test_a_checkpoint_declaring_a_huge_network_is_refused_before_building_it(run_dir, tmp_path):
    from imperiale_train.checkpoint import build_model

    def huge(data):
        data["config"] = {**data["config"], "hidden": [16384, 16384]}

    bad = _damaged_checkpoint(run_dir, tmp_path / "huge.pt", huge)
    with pytest.raises(CheckpointError, match="huge.pt: .*hidden.*at most 67,108,864 weights.*make 282,"):
        build_model(load_checkpoint(bad), bad)


def test_a_checkpoint_that_is_text_or_has_a_flipped_bit_is_refused_in_one_line(run_dir, tmp_path, capsys):
    import zipfile

    text = tmp_path / "notes.pt"
    text.write_text("my notes, not a checkpoint\n")
    flipped = tmp_path / "flipped.pt"
    shutil.copy(run_dir / "checkpoint.pt", flipped)
    with zipfile.ZipFile(flipped) as archive:  # a bit of a tensor's bytes: torch alone would load it
        part = next(i for i in archive.infolist() if "/data/" in i.filename and i.file_size > 1000)
    with open(flipped, "r+b") as f:
        f.seek(part.header_offset + 26)
        skip = int.from_bytes(f.read(2), "little") + int.from_bytes(f.read(2), "little")
        f.seek(part.header_offset + 30 + skip + 100)
        byte = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([byte[0] ^ 1]))
    for path, text_ in ((text, "this file is text .* starts with b'my notes"), (flipped, "fails its CRC-32 check")):
        with pytest.raises(CheckpointError, match=text_):
            load_checkpoint(path)
        assert main(["eval", "--agents", f"neural:{path},random", "--deals", "2", "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and re.search(text_, err) and "weights_only" not in err, err


def test_an_export_that_would_not_load_writes_nothing(run_dir, tmp_path):
    """A policy file the reader refuses (here a NaN in the run's history, as a one-group evaluation
    of an older release wrote) is refused before it is written, never left on disk."""
    def nan_history(data):
        data["history"] = [{**data["history"][-1], "eval/ci_low_random": float("nan")}] if data.get("history") \
            else [{"iteration": 3, "eval/ci_low_random": float("nan")}]

    bad = _damaged_checkpoint(run_dir, tmp_path / "nan_history.pt", nan_history)
    with pytest.raises(CheckpointError, match="cannot be exported: the file would not load"):
        export_policy(bad, tmp_path / "p.npz")
    assert list(tmp_path.iterdir()) == [bad]
