"""``imperiale play``: the save file is checked before the first deal and nothing a user wrote is
overwritten; seeds are checked; the end-of-deal score is the score after that deal."""

from __future__ import annotations

import itertools
import json
import random
import re

import pytest

from imperiale_cli.cli import main
from imperiale_cli.play import PlayError, check_save_path, play_game, save_game, seat_names
from imperiale_env.core.rules import make_rules
from imperiale_env.envs.render_text import score_line
from imperiale_env.records.game_records import load_records, record_from_game, save_records
from imperiale_env.reference.game import Game, deal_cards


def answers(lines):
    """An ``input()`` replacement answering ``lines`` in turn."""
    it = iter(lines)
    return lambda prompt="": next(it)


def no_input(prompt: str = "") -> str:
    raise AssertionError("the game started although the save file was refused")


def finished_record(seed: int) -> dict:
    game = Game("academie", seed)
    rng = random.Random(seed)
    while not game.is_over:
        game.step(rng.choice(game.legal_actions()))
    return record_from_game(game)


def refused_before_any_deal(argv, monkeypatch, capsys) -> str:
    monkeypatch.setattr("builtins.input", no_input)
    assert main(["play", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # not even the greeting: no deal was dealt
    assert captured.err.startswith("imperiale play: error: ") and "Traceback" not in captured.err
    return captured.err


# ---------------------------------------------------------------------- --save


def test_existing_json_is_refused_and_left_byte_identical(tmp_path, monkeypatch, capsys):
    path = tmp_path / "game.json"
    save_records(path, [finished_record(1)])
    before = path.read_bytes()
    err = refused_before_any_deal(["--save", str(path), "--seed", "3"], monkeypatch, capsys)
    assert "exists already" in err and "choose another name" in err and ".jsonl" in err
    assert path.read_bytes() == before


def test_quit_with_existing_json_leaves_it_byte_identical(tmp_path, monkeypatch, capsys):
    """The issue's data loss: ``play --save existing.json`` then ``quit`` replaced an 8-deal record."""
    path = tmp_path / "game.json"
    save_records(path, [finished_record(2)])
    before = path.read_bytes()
    monkeypatch.setattr("builtins.input", answers(["quit", ""]))
    assert main(["play", "--save", str(path), "--seed", "3"]) == 2
    assert path.read_bytes() == before


@pytest.mark.parametrize("content, message", [
    ("{not json\n", "invalid JSON"),
    ('{"format": "imperiale-record/1"}\n', "lacks"),
    (b"\xff\xfe{".decode("latin-1"), "not UTF-8 text"),
])
def test_jsonl_that_does_not_validate_is_refused_before_the_game(content, message, tmp_path, monkeypatch, capsys):
    path = tmp_path / "games.jsonl"
    path.write_bytes(json.dumps(finished_record(4)).encode() + b"\n" + content.encode("latin-1"))
    before = path.read_bytes()
    err = refused_before_any_deal(["--save", str(path)], monkeypatch, capsys)
    assert message in err and "appended" in err
    assert path.read_bytes() == before


def test_jsonl_record_that_does_not_replay_is_named(tmp_path, monkeypatch, capsys):
    bad = finished_record(5)
    bad["deals"][0]["actions"][0]["player"] = 1 - bad["deals"][0]["actions"][0]["player"]
    path = tmp_path / "games.jsonl"
    save_records(path, [finished_record(4), bad])
    err = refused_before_any_deal(["--save", str(path)], monkeypatch, capsys)
    assert "record 2" in err and "deal 0, action 0" in err


@pytest.mark.parametrize("case, message", [
    ("no_folder", "no such folder"),
    ("directory", "is a directory"),
    ("under_a_file", "no such folder"),
    ("suffix", "ends in .json or .jsonl"),
    ("empty", "the record file path is empty"),
])
def test_bad_save_paths(case, message, tmp_path, monkeypatch, capsys):
    path = {"no_folder": tmp_path / "nowhere" / "g.json", "directory": tmp_path / "d.json",
            "under_a_file": tmp_path / "f.txt" / "g.json", "suffix": tmp_path / "g.txt", "empty": ""}[case]
    (tmp_path / "d.json").mkdir()
    (tmp_path / "f.txt").write_text("x")
    assert message in refused_before_any_deal(["--save", str(path)], monkeypatch, capsys)


def test_jsonl_appends_and_keeps_what_was_there(tmp_path, monkeypatch, capsys):
    path = tmp_path / "games.jsonl"
    old = json.dumps(finished_record(6))
    path.write_text(old)  # no final newline: the appended record must still start a line of its own
    monkeypatch.setattr("builtins.input", answers(["1", "1", "quit"]))
    assert main(["play", "--save", str(path), "--seed", "8", "--opponent", "random"]) == 0
    assert path.read_text().startswith(old + "\n")
    records = load_records(path)
    assert len(records) == 2 and records[0] == json.loads(old)


def test_a_json_file_that_appears_during_the_game_is_not_overwritten(tmp_path):
    path = tmp_path / "g.json"
    check_save_path(path)
    path.write_text("mine")  # written by someone else while the game was played
    game = Game("academie", 1)
    saved = save_game(game, path)
    assert path.read_text() == "mine"
    assert saved == tmp_path / "g-2.json" and load_records(saved) == [record_from_game(game)]


def test_save_failure_offers_another_name(tmp_path):
    folder = tmp_path / "gone"
    folder.mkdir()
    path = folder / "g.json"
    answers = iter(["quit", str(tmp_path / "second.json")])
    lines: list[str] = []

    def remove_folder_then_answer(prompt: str = "") -> str:
        if folder.exists():
            folder.rmdir()  # the folder disappears while the game is played
        return next(answers)

    play_game(make_rules("academie"), "random", seed=1, save=path, input_fn=remove_folder_then_answer,
              print_fn=lines.append)
    assert any(line.startswith(f"Could not save the record to {path}") for line in lines)
    assert len(load_records(tmp_path / "second.json")) == 1


# ---------------------------------------------------------------------- seeds


@pytest.mark.parametrize("seed", ["-1", str(2**63), str(2**64), "abc", "1.5", ""])
def test_play_seed_range(seed, capsys):
    with pytest.raises(SystemExit) as info:
        main(["play", f"--seed={seed}"])
    assert info.value.code == 2
    assert "[0, 2**63)" in capsys.readouterr().err


def test_play_game_checks_the_seed():
    for seed in (-1, 2**63, 1.5, True):
        with pytest.raises(PlayError, match=r"\[0, 2\*\*63\)"):
            play_game(make_rules("academie"), "random", seed=seed, input_fn=no_input, print_fn=print)
    assert main_accepts_largest_seed()


def main_accepts_largest_seed() -> bool:
    lines: list[str] = []
    play_game(make_rules("academie"), "random", seed=2**63 - 1, input_fn=lambda p="": "quit",
              print_fn=lines.append, offer_save=False)
    return any(f"game seed {2**63 - 1}" in line for line in lines)


# ---------------------------------------------------------------------- the end-of-deal score


def test_issue_reproduction_foster_seed_11(monkeypatch, capsys):
    moves = "s 9s 9d kh kd qs jh 10s as 10d ah 7h 7d quit".split() + [""]
    monkeypatch.setattr("builtins.input", answers(moves))
    assert main(["play", "--rules", "foster", "--seed", "11"]) == 0
    out = capsys.readouterr().out
    block = out[out.index("--- End of deal 1 ---"):]
    assert "heuristic's 4 points are wiped" in block  # the bot named by its spec
    score = next(line for line in block.splitlines() if line.strip().startswith("Score:"))
    assert score.strip() == "Score: You: 1 impériale, 4 counters (16 points); heuristic: 0 impériales, 0 counters"


def score_after_deal(rules, seed: int, game: Game, d: int) -> dict[str, list[int]]:
    """The reference engine's score after deal ``d``'s last event: the game replayed with no deal
    after ``d`` (so nothing of deal ``d + 1`` is scored)."""
    replay = Game(rules, seed, deals=lambda i, dealer: deal_cards(rules, seed, i, dealer) if i <= d else None)
    for state in game.history[: d + 1]:
        for _, action in state.actions:
            replay.step(action)
    assert replay.decision is None and len(replay.history) == d + 1
    return {"imperiales": replay.imperiales, "points": replay.points}


@pytest.mark.parametrize("preset", ["academie", "academie3", "foster", "imperijal"])
def test_end_of_deal_score_is_the_score_after_that_deal(preset):
    rules = make_rules(preset)
    seed = 17
    lines: list[str] = []
    result = play_game(rules, "random", seed=seed, input_fn=answers(itertools.repeat("1")), print_fn=lines.append,
                       offer_save=False)
    assert result.status == "finished"
    names = seat_names(rules.players, 0, "random")
    printed = {}
    for i, line in enumerate(lines):
        m = re.fullmatch(r"--- End of deal (\d+) ---", line)
        if m:
            printed[int(m.group(1)) - 1] = next(x for x in lines[i + 1:] if x.startswith("  Score: "))
    game = result.game
    assert sorted(printed) == list(range(len(game.history)))
    shown_differs = False
    for d, line in printed.items():
        expected = score_line(game, names, score_after_deal(rules, seed, game, d))
        assert line == "  Score: " + expected, f"deal {d}"
        shown_differs |= d + 1 < len(game.history) and any(e["event"] == "turned_honour"
                                                           for e in game.history[d + 1].events)
    if preset != "academie3":  # two players: some next deal opens with a turned honour, the case of the bug
        assert shown_differs


def test_a_saved_game_names_its_players_and_seed_and_replay_says_them(tmp_path, monkeypatch, capsys):
    path = tmp_path / "g.json"
    monkeypatch.setattr("builtins.input", answers(["quit"]))
    assert main(["play", "--save", str(path), "--seed", "8", "--opponent", "random", "--seat", "1"]) == 0
    record = json.loads(path.read_text())
    assert record["names"] == ["random", "You"] and record["seed"] == 8
    capsys.readouterr()
    assert main(["replay", str(path)]) == 0
    text = capsys.readouterr().out
    assert "Deal 1: random deals" in text and "Your hand:" in text and "Player 0" not in text
    assert main(["replay", "--json", str(path)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["names"] == ["random", "You"] and summary["seed"] == 8


def test_records_of_earlier_releases_and_bad_names_are_read_as_they_should(tmp_path):
    from imperiale_env.records.game_records import RecordError, game_from_record, replay_record

    old = finished_record(6)  # no names, no seed: as earlier releases wrote them
    assert "names" not in old and "names" not in replay_record(old)
    for bad, text in ((["You"], "a list of 2 names"), (["You", ""], "1 to 1000 printable"),
                      (["You", "a\nb"], "printable"), ("You", "a list of 2 names")):
        with pytest.raises(RecordError, match=text):
            game_from_record({**old, "names": bad})
    with pytest.raises(RecordError, match="seed must be an integer from 0 to"):
        game_from_record({**old, "seed": -1})
