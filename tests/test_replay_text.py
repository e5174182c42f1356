"""``imperiale replay RECORD`` as text: the game told deal by deal and trick by trick, read line by line."""

from __future__ import annotations

import json
import random
import re

import pytest

from imperiale_cli.cli import main
from imperiale_env.core import actions as act
from imperiale_env.core.cards import card_code
from imperiale_env.records.game_records import (
    RecordError,
    game_from_record,
    record_from_game,
    replay_record,
    save_records,
)
from imperiale_env.records.narrate import Words, explain_events, why_trick_won
from imperiale_env.reference.game import Game


def played(preset: str, seed: int, steps: int | None = None) -> Game:
    """A game of uniformly random legal actions (``steps`` of them, or to its end)."""
    game, rng = Game(preset, seed), random.Random(seed)
    while game.current_player is not None and steps != 0:
        game.step(rng.choice(game.legal_actions()))
        steps = None if steps is None else steps - 1
    return game


def tricks_of(game: Game) -> list[list[list[tuple[int, int]]]]:
    """The complete tricks of each deal, ``(player, card)`` in play order, from the engine's history."""
    out = []
    for state in game.history:
        cards = [(p, a) for p, a in state.actions if act.is_play(a)]
        n = len(cards) // game.players * game.players
        out.append([cards[i:i + game.players] for i in range(0, n, game.players)])
    return out


def replay_out(path, capsys, *extra: str) -> str:
    assert main(["replay", str(path), *extra]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("preset", ["academie", "academie3", "foster", "imperijal"])
def test_the_text_tells_every_deal_trick_and_score_event(preset, tmp_path, capsys):
    game = played(preset, 11)
    path = tmp_path / "game.json"
    save_records(path, [record_from_game(game)])
    out = replay_out(path, capsys)
    names = [f"Player {p}" for p in range(game.players)]
    deals = out.split("\nDeal ")[1:]
    assert len(deals) == len(game.history) >= 1
    summary = replay_record(record_from_game(game))
    for d, (text, state, tricks) in enumerate(zip(deals, game.history, tricks_of(game), strict=True)):
        assert text.startswith(f"{d + 1}: Player {state.deal.dealer} deals; trump is ")
        for p in range(game.players):  # the record holds every hand: a replay shows them all
            hand_line = next(line for line in text.splitlines() if line.startswith(f"  Player {p}'s hand: "))
            assert sorted(re.findall(r"\b(?:10|[KQJA9876])[SHDC]\b", hand_line)) == sorted(
                card_code(c) for c in state.deal.hands[p])
        lines = re.findall(r"^  Trick (\d+): (.*)\.$", text, re.M)
        assert [int(n) for n, _ in lines] == list(range(1, len(tricks) + 1))
        for (_, line), trick in zip(lines, tricks, strict=True):
            winner, best, reason = why_trick_won(trick, state.deal.trump)
            assert line.startswith(", ".join(f"Player {p} {card_code(c)}" for p, c in trick))
            assert line.endswith(f": Player {winner} wins the trick ({card_code(best)}, {reason})")
        told = [line.strip() for line in text.splitlines()]
        for sentence in explain_events(state.events, game.rules, names, -1, state.deal.trump):
            assert sentence in told  # every score event, in the engine's words
        score = summary["deals"][d]["score"]
        assert f"Score after deal {d + 1}: " in text
        assert all(f"Player {p}: {score['imperiales'][p]} impériale" in text.split(f"Score after deal {d + 1}: ")[1]
                   for p in range(game.players))
    w = game.winner
    assert w is not None
    assert f"\nPlayer {w} wins the game, {game.imperiales[w]} to " in out
    assert out.rstrip().splitlines()[-1].startswith("Final score: Player 0: ")


SHOW_EVENTS = ("quart_major", "four_of_a_kind", "carte_blanche", "turned_imperiale")


def test_declarations_are_told_in_their_place(tmp_path, capsys):
    """A point declared or sunk is told before the first trick; a show scored at once is told once."""
    game = played("academie", 3)
    path = tmp_path / "game.json"
    save_records(path, [record_from_game(game)])
    out = replay_out(path, capsys)
    words = Words([f"Player {p}" for p in range(2)], -1)
    for d, state in enumerate(game.history):
        text = out.split(f"\nDeal {d + 1}: ")[1].split("\nDeal ")[0]
        points = [(p, a) for p, a in state.actions if a == act.SINK or act.is_point(a)]
        for p, a in points:
            said = f"{words.verb(p, 'sink')} the point." if a == act.SINK else f"{words.verb(p, 'declare')} a point of "
            assert said in text
            if "Trick 1:" in text:
                assert text.index(said) < text.index("Trick 1:")
        shows = [e for e in state.events if e["event"] in SHOW_EVENTS]
        assert text.count(" shows ") == len(shows)
        for e in shows:
            assert f"Player {e['player']} shows " in text


def test_a_record_of_a_jsonl_is_picked_with_record(tmp_path, capsys):
    finished, unfinished = played("academie", 4), played("academie3", 2, steps=50)
    path = tmp_path / "games.jsonl"
    save_records(path, [record_from_game(finished), record_from_game(unfinished)])
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert "holds 2 records" in err and "--record N (1 to 2)" in err and "--json" in err
    text = replay_out(path, capsys, "--record", "2")
    assert "3 players" in text and "wins the game" not in text
    stop = len(unfinished.history)
    assert f"The record stops here, in deal {stop}: Player {unfinished.current_player} to " in text
    assert replay_out(path, capsys, "--record", "1").count("\nDeal ") == len(finished.history)
    assert json.loads(replay_out(path, capsys, "--record", "2", "--json")) == replay_record(
        record_from_game(unfinished))
    for bad in ("0", "3"):
        assert main(["replay", str(path), "--record", bad]) == 2
        assert f"--record must be from 1 to 2 ({path} holds 2 records), got {bad}" in capsys.readouterr().err


def test_json_is_todays_output_and_indent_needs_it(tmp_path, capsys):
    game = played("foster", 6)
    path = tmp_path / "game.json"
    record = record_from_game(game)
    save_records(path, [record])
    assert json.loads(replay_out(path, capsys, "--json")) == replay_record(record)
    assert "\n  \"deals\"" in replay_out(path, capsys, "--json")  # indented by 2 by default
    assert not re.search(r"^ ", replay_out(path, capsys, "--json", "--indent", "0"), re.M)
    assert main(["replay", str(path), "--indent", "4"]) == 2
    assert "--indent sets the indentation of the JSON output: add --json" in capsys.readouterr().err


def test_a_bad_record_is_refused_before_any_text(tmp_path, capsys):
    record = record_from_game(played("academie", 5))
    record["deals"][0]["actions"][0]["player"] = 1 - record["deals"][0]["actions"][0]["player"]
    path = tmp_path / "bad.json"
    save_records(path, [record])
    with pytest.raises(RecordError, match="deal 0, action 0"):  # the check the text is built on
        game_from_record(record)
    assert main(["replay", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "deal 0, action 0" in captured.err
