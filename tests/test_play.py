"""``imperiale play``: whole games in the terminal driven by scripted input, records, EOF, bad input."""

from __future__ import annotations

import io
import itertools
import json

import pytest

from imperiale_cli.cli import main
from imperiale_cli.play import PlayError, parse_move, play_game, seat_names
from imperiale_env.core import actions as act
from imperiale_env.core.cards import parse_card
from imperiale_env.core.rules import make_rules
from imperiale_env.envs.render_text import score_line, table_text
from imperiale_env.records.game_records import game_from_record, load_records, replay_record
from imperiale_env.records.narrate import explain_events, play_rule_text, question_text
from imperiale_env.reference.game import Deal, Game, Question

#: Wrong inputs mixed in before the move that is taken ("1": the first legal move).
NOISE = ["zz", "", "help", "7x", "score", "table", "99"]


def cycling_input(lines):
    """An ``input()`` replacement that answers ``lines`` over and over."""
    it = itertools.cycle(lines)

    def fake_input(prompt: str = "") -> str:
        return next(it)

    return fake_input


def cards(*codes: str) -> frozenset[int]:
    return frozenset(parse_card(c) for c in codes)


def human_actions(game: Game, seat: int) -> list[int]:
    return [a for state in game.history for p, a in state.actions if p == seat]


# ---------------------------------------------------------------------- whole games through the CLI


@pytest.mark.parametrize("opponent", ["random", "heuristic"])
def test_cli_whole_game_with_noise_then_replay(opponent, monkeypatch, capsys, tmp_path):
    path = tmp_path / "game.json"
    monkeypatch.setattr("builtins.input", cycling_input([*NOISE, "kh", "10s", "1"]))
    rc = main(["play", "--opponent", opponent, "--seed", "7", "--save", str(path)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "wins the game" in out or "You win the game" in out
    assert "--- End of deal 1 ---" in out
    assert "is not a card" in out or "is not a point declaration" in out or "is not an answer" in out
    assert "Nothing typed." in out
    assert "There is no move 99" in out
    assert "Commands (case-insensitive)" in out
    assert "Trick order: K Q J A 10 9 8 7" in out
    assert f"Record saved to {path}" in out
    (record,) = load_records(path)
    game = game_from_record(record)
    assert game.is_over and game.winner is not None
    assert ("You win the game" in out) == (game.winner == 0)
    assert "Final score: " + score_line(game, seat_names(2, 0, opponent)) in out  # the game played is the game replayed
    summary = replay_record(record)
    assert main(["replay", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == summary
    final = summary["final"]
    assert max(final["imperiales"]) == 5


def test_cli_three_players_seat_two(monkeypatch, capsys, tmp_path):
    path = tmp_path / "games.jsonl"
    monkeypatch.setattr("builtins.input", cycling_input(["x", "1"]))
    assert main(["play", "--rules", "academie3", "--opponent", "random", "--seat", "2", "--seed", "3",
                 "--save", str(path)]) == 0
    out = capsys.readouterr().out
    assert "random (seat 0)" in out and "random (seat 1)" in out and "(seat 2)" not in out  # the bots by spec
    (record,) = load_records(path)
    assert record["players"] == 3
    assert game_from_record(record).is_over
    # A second game appended to the same .jsonl file.
    assert main(["play", "--rules", "academie3", "--opponent", "random", "--seat", "2", "--seed", "4",
                 "--save", str(path)]) == 0
    assert len(load_records(path)) == 2


def test_cli_eof_ends_politely_and_saves(monkeypatch, capsys, tmp_path):
    path = tmp_path / "partial.jsonl"
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n" * 15))
    assert main(["play", "--opponent", "heuristic", "--seed", "11", "--save", str(path), "--confirm-forced"]) == 0
    out = capsys.readouterr().out
    assert "The input ended: the game is stopped." in out
    assert "Final score:" in out
    (record,) = load_records(path)
    game = game_from_record(record)
    assert not game.is_over
    assert len(human_actions(game, 0)) == 15
    assert main(["replay", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["winner"] is None


def test_cli_quit_saves_and_offer_at_the_end(monkeypatch, capsys, tmp_path):
    path = tmp_path / "quit.json"
    monkeypatch.setattr("builtins.input", cycling_input(["1", "1", "QUIT"]))
    assert main(["play", "--opponent", "random", "--seed", "2", "--save", str(path)]) == 0
    out = capsys.readouterr().out
    assert "You stopped the game." in out
    assert not game_from_record(load_records(path)[0]).is_over
    # Without --save the record is offered when the game stops; a bad name is refused, then saved.
    offered = tmp_path / "offered.json"
    answers = iter(["1", "quit", "notes.txt", str(offered)])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    assert main(["play", "--opponent", "random", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "Not saved: a record file ends in .json or .jsonl" in out
    assert offered.is_file()
    assert len(human_actions(game_from_record(load_records(offered)[0]), 0)) == 1


def test_cli_against_a_neural_checkpoint(monkeypatch, capsys, tmp_path):
    pytest.importorskip("torch")
    from imperiale_train.checkpoint import save_checkpoint
    from imperiale_train.config import make_config
    from imperiale_train.model import ActorCritic

    cfg = make_config(None, {"hidden": (16,)})
    path = save_checkpoint(tmp_path / "tiny.pt", {"config": cfg.to_dict(), "iteration": 0,
                                                   "model": ActorCritic(cfg.hidden).state_dict()})
    monkeypatch.setattr("builtins.input", cycling_input(["1"]))
    assert main(["play", "--opponent", f"neural:{path}", "--seed", "9", "--save", str(tmp_path / "g.json")]) == 0
    out = capsys.readouterr().out
    assert f"against neural:{path}" in out
    assert "wins the game" in out or "You win the game" in out
    assert game_from_record(load_records(tmp_path / "g.json")[0]).is_over


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--seat", "2"], "--seat must be a seat from 0 to 1"),
        (["--opponent", "nobody"], "unknown agent 'nobody'"),
        (["--opponent", "neural:/no/such/checkpoint.pt"], "no such checkpoint"),
        (["--save", "game.txt"], "ends in .json or .jsonl"),
        (["--rules", "whist"], "unknown rules preset"),
        (["--opponent", "neural:{damaged}"], "damaged.pt"),  # AgentError or PlayError: a clear one-line error
    ],
)
def test_cli_bad_options(argv, message, capsys, tmp_path):
    if any("{damaged}" in a for a in argv):
        pytest.importorskip("torch")
        damaged = tmp_path / "damaged.pt"
        damaged.write_bytes(b"not a checkpoint")
        argv = [a.replace("{damaged}", str(damaged)) for a in argv]
    assert main(["play", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("imperiale play: error:")
    assert message in err


# ---------------------------------------------------------------------- the Python API, input by the game's state


def test_every_kind_of_input_against_heuristic(tmp_path):
    """Answer each decision with wrong inputs first (gibberish, empty, unknown card, a card not
    held, an illegal card, a bad move number, help), then with the first legal move typed in one
    of its accepted forms; the human's actions must be exactly those moves."""
    rules = make_rules("academie")
    state = {"game": None, "pending": [], "expected": [], "refusals": 0}
    forms = itertools.count()
    out: list[str] = []

    def fake_input(prompt: str = "") -> str:
        game = state["game"]
        if not state["pending"]:
            d = game.decision
            hand = game.state.hands[0]
            first = d.legal[0]
            wrong = ["", "gibberish", "help", "0", str(len(d.legal) + 1)]
            if d.kind == "play":
                wrong.append("xq")
                missing = next(c for c in range(32) if c % 9 != 8 and c not in hand)
                wrong.append(act.describe(missing).lower())
                illegal = [c for c in hand if c not in d.legal]
                if illegal:
                    wrong.append(act.describe(illegal[0]).lower())
                right = act.describe(first).lower() if next(forms) % 2 else "1"
            elif d.kind == "point":
                right = {0: "1", 1: "sink", 2: f"point {act.describe(first)[-1].lower()}"}[next(forms) % 3]
                first = {"1": first, "sink": act.SINK}.get(right, first)
            else:
                right = ["y", "show", "1"][next(forms) % 3]
                first = act.SHOW
            state["refusals"] += len(wrong)
            state["expected"].append(first)
            state["pending"] = [*wrong, right]
        return state["pending"].pop(0)

    path = tmp_path / "g.jsonl"
    result = play_game(rules, "heuristic", seed=21, input_fn=fake_input, print_fn=out.append, save=path,
                       on_start=lambda game: state.update(game=game), confirm_forced=True)
    assert result.status == "finished"
    assert human_actions(result.game, 0) == state["expected"]
    (record,) = load_records(path)
    assert record == result.record
    replayed = game_from_record(record)
    assert [st.actions for st in replayed.history] == [st.actions for st in result.game.history]
    assert (replayed.imperiales, replayed.points, replayed.winner) == (
        result.game.imperiales, result.game.points, result.game.winner)
    text = "\n".join(out)
    assert "You do not hold" in text
    assert "You may not play" in text
    assert "There is no move 0" in text
    assert text.count("Commands (case-insensitive)") == len(state["expected"])
    assert "--- End of deal" in text


@pytest.mark.parametrize("preset", ["foster", "imperijal"])
def test_other_presets_play_to_the_end(preset):
    lines: list[str] = []
    result = play_game(make_rules(preset), "random", seed=5, seat=1, input_fn=cycling_input(["?", "1"]),
                       print_fn=lines.append, offer_save=False)
    assert result.status == "finished" and result.game.is_over
    assert any(line.startswith("--- End of deal") for line in lines)
    record = result.record
    assert replay_record(record)["winner"] == result.game.winner


def test_eof_in_the_python_api(tmp_path):
    def no_input(prompt: str = "") -> str:
        raise EOFError

    result = play_game(make_rules(), "random", seed=1, input_fn=no_input, print_fn=lambda s: None,
                       save=tmp_path / "g.json")
    assert result.status == "eof"
    assert result.saved == [tmp_path / "g.json"]


def test_bad_seat_and_save_path():
    with pytest.raises(PlayError, match="seat from 0 to 2"):
        play_game(make_rules("academie3"), "random", seat=3, input_fn=lambda p: "1", print_fn=lambda s: None)
    with pytest.raises(PlayError, match="no such folder"):
        play_game(make_rules(), "random", save="/no/such/folder/g.json", input_fn=lambda p: "1",
                  print_fn=lambda s: None)


# ---------------------------------------------------------------------- words and rules


def worked_example_game() -> Game:
    """docs/rules.md example 2: clubs trump, the elder leads JH, the follower holds KH AH 8H."""
    hands = (
        cards("JH", "7H", "KS", "QS", "10S", "9S", "KD", "QD", "10D", "9D", "KC", "8C"),
        cards("KH", "AH", "8H", "JS", "AS", "8S", "JD", "AD", "8D", "QC", "JC", "10C"),
    )
    deal = Deal(1, hands, parse_card("9C"), tuple(cards("QH", "10H", "9H", "7S", "7D", "7C", "AC")))
    game = Game(make_rules(), dealer=1, deals=lambda i, d: deal if i == 0 else None)
    game.step(act.SINK)
    game.step(act.SINK)
    game.step(parse_card("JH"))
    return game


def test_must_beat_rule_and_card_input():
    game = worked_example_game()
    assert game.decision.player == 1 and game.legal_actions() == [parse_card("KH")]
    rule = play_rule_text(game, 1)
    assert "follow suit (hearts)" in rule and "beat JH" in rule and "KH" in rule
    assert parse_move("kh", game, 1).action == parse_card("KH")
    assert parse_move("  KH ", game, 1).action == parse_card("KH")
    assert parse_move("1", game, 1).action == parse_card("KH")
    refused = parse_move("ah", game, 1)
    assert refused.action is None and "You may not play AH now" in refused.error and "beat JH" in refused.error
    assert "You do not hold QH" in parse_move("qh", game, 1).error
    assert "no sixes" in parse_move("6h", game, 1).error
    assert "no move 2" in parse_move("2", game, 1).error
    assert "not a card" in parse_move("show", game, 1).error
    assert parse_move("help", game, 1).command == "help"
    table = table_text(game, 1, seat_names(2, 1))
    assert "KH*" in table and "AH" in table and "AH*" not in table
    assert "Trick:   Player 0 JH" in table
    assert "clubs (C); turned card 9C" in table


def test_question_text_and_events_in_words():
    rules = make_rules()
    q = Question("quart_major", cards("KH", "QH", "JH", "AH"), suit=1)
    assert question_text(q, 0, rules) == "Show your quart major in hearts (KH QH JH AH)? [show/hide]"
    assert "four Kings" in question_text(Question("four_of_a_kind", cards("KS", "KH", "KD", "KC")), 0, rules)
    events = [
        {"event": "quart_major", "player": 1, "imperiales": 1, "cards": ["AS", "KS", "QS", "JS"]},
        {"event": "imperiale", "player": 1, "count": 1, "total": 1},
        {"event": "wipe", "player": 0, "points": 12},
        {"event": "point", "player": 0, "points": 4, "suit": "H", "count": 5, "value": 48},
        {"event": "tricks", "player": 0, "points": 8, "tricks": 8},
        {"event": "imperiale", "player": 0, "count": 1, "total": 1},
        {"event": "wipe", "player": 1, "points": 4},
        {"event": "game_over", "player": 0},
    ]
    told = explain_events(events, rules, seat_names(2, 0), 0, trump=2)
    assert told[0] == "Player 1 shows a quart major in spades: 1 impériale (1 in all); your 12 points are wiped."
    assert told[1] == "You win the point with 5 cards of hearts worth 48 (+4 points)."
    assert told[2].startswith("You take 8 tricks (+8 points); 24 points make 1 impériale for you (1 in all); "
                              "Player 1's 4 points are wiped")
    assert told[2].endswith("and you win the game!")
    # A kind this module has no sentence for (a rule option's new event) is still told, by its name
    # and amount, with the impériale it makes.
    extra = [{"event": "last_trick", "player": 1, "points": 10}, {"event": "imperiale", "player": 1, "count": 1,
                                                                  "total": 2}]
    assert explain_events(extra, rules, seat_names(2, 0), 0) == [
        "Player 1 scores last trick (+10 points); 24 points make 1 impériale for Player 1 (2 in all)."]


def test_each_trick_line_says_why_it_was_won():
    """The terminal tells who won each trick and why: the card and the rule (trumped, the highest
    trump, the highest of the suit led)."""
    import subprocess
    import sys

    game = subprocess.run([sys.executable, "-m", "imperiale_cli", "play", "--seed", "3"], input="1\n" * 300,
                          capture_output=True, text=True, timeout=300)
    lines = [line for line in game.stdout.splitlines() if line.startswith("> Trick ")]
    assert lines and all(" the trick (" in line for line in lines)
    assert all(line.rstrip(".").endswith(("trumped)", "the highest trump)", "the highest of the suit led)"))
               for line in lines)


def test_a_forced_card_is_played_for_the_person():
    """The only legal card is played with a line saying so; ``confirm_forced`` asks for it instead."""
    rules = make_rules("academie")
    asked: list[int] = []
    state = {"game": None}

    def first_legal(prompt: str = "") -> str:
        d = state["game"].decision
        if d.kind == "play":
            asked.append(len(d.legal))
        return "1"

    out: list[str] = []
    result = play_game(rules, "heuristic", seed=21, input_fn=first_legal, print_fn=out.append, offer_save=False,
                       on_start=lambda game: state.update(game=game))
    forced = [line for line in out if line.startswith("Your only legal card")]
    assert result.status == "finished" and forced and 1 not in asked
    asked.clear()
    play_game(rules, "heuristic", seed=21, input_fn=first_legal, print_fn=out.append, offer_save=False,
              on_start=lambda game: state.update(game=game), confirm_forced=True)
    assert asked.count(1) == len(forced)


def test_the_table_is_printed_once_a_deal_then_what_changed():
    """The trump line, the score's rules and the point are printed with a deal's first table, not
    before every card; the hand, the moves and the question every time; ``table`` prints it all;
    a long bot spec keeps the score column straight."""
    out: list[str] = []
    answers = iter(["table"] + ["1"] * 2000)
    result = play_game(make_rules("academie"), "pimc:2:search", seed=3, input_fn=lambda prompt="": next(answers),
                       print_fn=out.append, offer_save=False)
    assert result.status == "finished"
    tables = [text for text in out if "Moves:" in text]
    deals = len(result.game.history)
    firsts = [t for t in tables if t.startswith("=== Deal")]
    # each deal's first table is whole (the first deal's a second time, asked for with `table`)
    assert deals <= len(firsts) <= deals + 1 and len(tables) > 4 * deals
    for text in tables:
        assert "Hand" in text and "Moves:" in text
        if not text.startswith("=== Deal"):
            assert "Trump:" not in text  # the score is reprinted only when it changed
    later = [t for t in tables if not t.startswith("=== Deal")]
    assert sum("Score:" in t for t in later) < len(later) / 2
    score = [line for line in firsts[0].splitlines() if "impériales," in line or "impériale," in line]
    columns = {line.index(" 0 impériale") for line in score}
    assert len(score) == 2 and len(columns) == 1, score  # "pimc:2:search" is longer than the old 9 columns
