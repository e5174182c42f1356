"""Game records (docs/records.md): writing, reading, replaying, the checks and their messages, files."""

from __future__ import annotations

import copy
import json
import random

import pytest

from imperiale_cli.cli import main
from imperiale_env import PRESET_NAMES, Game, make_rules
from imperiale_env.core.actions import action_to_record
from imperiale_env.core.cards import parse_card
from imperiale_env.core.declarations import honour_cards
from imperiale_env.records.game_records import (
    FORMAT,
    RecordError,
    game_from_record,
    load_records,
    record_from_game,
    replay_record,
    save_records,
)
from imperiale_env.reference.game import deal_cards


def play(game: Game, rng: random.Random, steps: int | None = None) -> Game:
    """Play uniformly random legal actions until the game stops (or for ``steps`` actions)."""
    while game.current_player is not None and steps != 0:
        game.step(rng.choice(game.legal_actions()))
        steps = None if steps is None else steps - 1
    return game


def random_game(rules, seed: int, **kwargs) -> Game:
    return play(Game(rules, seed, **kwargs), random.Random(seed))


def json_round_trip(record: dict) -> dict:
    return json.loads(json.dumps(record))


def assert_same_game(replayed: Game, game: Game) -> None:
    assert replayed.events == game.events
    assert replayed.imperiales == game.imperiales
    assert replayed.points == game.points
    assert replayed.winner == game.winner
    assert len(replayed.history) == len(game.history)
    assert replayed.current_player == game.current_player
    assert replayed.legal_actions() == game.legal_actions()


def record_form(action: int) -> str:
    rec = action_to_record(action)
    return " ".join(rec.values())


# ---------------------------------------------------------------------- round trips


@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("seed", range(4))
def test_round_trip_every_preset(preset, seed):
    game = random_game(preset, seed)
    assert game.winner is not None
    record = json_round_trip(record_from_game(game))
    replayed = game_from_record(record)
    assert_same_game(replayed, game)
    assert record_from_game(replayed) == record


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_record_shape(preset):
    game = random_game(preset, 11)
    record = record_from_game(game)
    players = game.players
    assert list(record) == ["format", "rules", "players", "start", "deals"]
    assert record["format"] == FORMAT == "imperiale-record/1"
    assert record["rules"] == {"preset": preset}
    assert record["players"] == players
    assert record["start"] == {"dealer": game.start_dealer, "imperiales": [0] * players, "points": [0] * players}
    for d, (entry, state) in enumerate(zip(record["deals"], game.history, strict=True)):
        assert list(entry) == ["dealer", "hands", "turned", "talon", "actions"]
        assert entry["dealer"] == (game.start_dealer + d) % players
        for seat, hand in enumerate(entry["hands"]):
            cards = [parse_card(code) for code in hand]
            assert cards == sorted(state.deal.hands[seat]) and len(cards) == 12
        if players == 2:
            assert len(entry["talon"]) == 7 and entry["turned"] not in sum(entry["hands"], [])
        else:
            assert entry["talon"] == [] and entry["turned"] in entry["hands"][entry["dealer"]]
        assert [a["player"] for a in entry["actions"]] == [p for p, _ in state.actions]
        assert all(list(a)[:2] == ["player", "act"] for a in entry["actions"])


def test_rules_overrides_round_trip():
    rules = make_rules("academie", target_imperiales=2, turned_imperiale=True, fallen_imperiale="tricks")
    game = random_game(rules, 3)
    record = json_round_trip(record_from_game(game))
    assert record["rules"] == {
        "preset": "academie",
        "target_imperiales": 2,
        "turned_imperiale": True,
        "fallen_imperiale": "tricks",
    }
    replayed = game_from_record(record)
    assert replayed.rules == rules
    assert_same_game(replayed, game)


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_single_deal_from_a_non_zero_score(preset):
    rules = make_rules(preset)
    start_imp, start_pts = [2, 3, 1][: rules.players], [8, 20, 12][: rules.players]
    for seed in range(6):
        game = random_game(rules, seed, single_deal=True, imperiales=start_imp, points=start_pts, dealer=1)
        assert len(game.history) == 1 and game.is_over
        record = json_round_trip(record_from_game(game))
        assert record["start"] == {"dealer": 1, "imperiales": start_imp, "points": start_pts}
        assert len(record["deals"]) == 1 and record["deals"][0]["dealer"] == 1
        replayed = game_from_record(record)
        assert replayed.events == game.events
        assert (replayed.imperiales, replayed.points, replayed.winner) == (game.imperiales, game.points, game.winner)
        summary = replay_record(record)
        assert (
            summary["deals"][0]["score"] == summary["final"] == {"imperiales": game.imperiales, "points": game.points}
        )


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_unfinished_game(preset):
    rng = random.Random(5)
    game = play(Game(preset, 5), rng, steps=70)  # in the middle of the second or third deal
    assert game.current_player is not None and len(game.history) >= 2
    record = json_round_trip(record_from_game(game))
    replayed = game_from_record(record)
    assert_same_game(replayed, game)
    assert replay_record(record)["winner"] is None
    deals = len(game.history)
    while len(game.history) == deals and game.current_player is not None:  # both finish the deal alike
        action = rng.choice(game.legal_actions())
        game.step(action)
        replayed.step(action)
    assert replayed.events == [e for e in game.events if e["deal"] < deals]
    assert replayed.current_player is None


def test_a_record_may_end_between_deals():
    game = random_game("academie", 2)
    record = record_from_game(game)
    record["deals"] = record["deals"][:2]
    replayed = game_from_record(record)
    assert len(replayed.history) == 2 and replayed.current_player is None and not replayed.is_over
    assert replayed.events == [e for e in game.events if e["deal"] < 2]
    summary = replay_record(record)
    assert summary["winner"] is None and summary["final"] == summary["deals"][1]["score"]


@pytest.mark.parametrize("preset", ["academie", "academie3", "foster"])
def test_replay_scores_after_each_deal(preset):
    """The score after deal d is what a single-deal record of deal d, started from the score
    after deal d - 1, ends with."""
    record = record_from_game(random_game(preset, 8))
    summary = replay_record(record)
    assert len(summary["deals"]) == len(record["deals"]) > 1
    before = record["start"]
    for entry, deal in zip(record["deals"], summary["deals"], strict=True):
        alone = dict(record, start={"dealer": entry["dealer"], **before}, deals=[entry])
        game = game_from_record(alone)
        assert deal["score"] == {"imperiales": game.imperiales, "points": game.points}
        assert deal["events"] == game.history[0].events
        before = deal["score"]
    assert summary["final"] == summary["deals"][-1]["score"]
    assert summary["winner"] is not None


def turned_honour_seed(rules, dealer: int) -> int:
    return next(s for s in range(100) if (d := deal_cards(rules, s, 0, dealer)).turned in honour_cards(rules, d.trump))


def test_game_ending_at_the_start_of_a_deal():
    """The dealer reaches the target with the turned honour: a deal with no action."""
    rules = make_rules("academie")
    seed = turned_honour_seed(rules, 0)
    game = Game(rules, seed, dealer=0, imperiales=[4, 1], points=[20, 8])
    assert game.is_over and game.winner == 0 and game.history[0].actions == []
    record = json_round_trip(record_from_game(game))
    assert record["deals"][0]["actions"] == []
    assert_same_game(game_from_record(record), game)
    summary = replay_record(record)
    assert [e["event"] for e in summary["deals"][0]["events"]] == ["turned_honour", "imperiale", "wipe", "game_over"]
    record["deals"][0]["actions"].append({"player": 1, "act": "sink"})
    with pytest.raises(RecordError, match=r"deal 0, action 0 .*ended at the start of deal 0, before its first action"):
        game_from_record(record)


def test_game_ending_at_the_start_of_a_later_deal():
    """The game ends with the turned honour of deal 1: deal 1 is in the record, without actions."""
    rules = make_rules("academie", target_imperiales=2)
    games = (random_game(rules, seed, dealer=0, imperiales=[1, 1]) for seed in range(500))
    game = next(g for g in games if len(g.history) == 2 and g.history[1].actions == [])
    record = json_round_trip(record_from_game(game))
    assert_same_game(game_from_record(record), game)
    assert replay_record(record)["deals"][1]["events"][-1] == {"event": "game_over", "player": 1}
    record["deals"][1]["actions"].append({"player": 0, "act": "sink"})
    raises(record, "deal 1, action 0 ", "the game ended at the start of deal 1, before its first action")
    record["deals"][1]["actions"] = []
    record["deals"].append(record_from_game(Game(rules, 1, dealer=0, single_deal=True))["deals"][0])
    raises(record, "deal 2: the game ended at the start of deal 1", "no deal may follow; remove deals 2..2")


# ---------------------------------------------------------------------- malformed records


@pytest.fixture(scope="module")
def finished() -> tuple[Game, dict]:
    """A finished two-player game of several deals, ended in the middle of its last deal."""
    game = random_game("academie", 4)
    assert game.winner is not None and len(game.history) >= 3
    return game, record_from_game(game)


@pytest.fixture
def record(finished) -> dict:
    return copy.deepcopy(finished[1])


def raises(record: dict, *fragments: str) -> str:
    with pytest.raises(RecordError) as info:
        game_from_record(record)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_wrong_format(record):
    record["format"] = "imperiale-record/2"
    raises(record, "format must be 'imperiale-record/1'", "imperiale-record/2")


def test_unknown_rules_field(record):
    record["rules"]["colour"] = "red"
    raises(record, "rules:", "'colour'", "allowed:")


def test_bad_rules(record):
    record["rules"] = {"preset": "whist"}
    raises(record, "rules:", "'whist'", "academie")
    record["rules"] = {"preset": "academie", "target_imperiales": 0}
    raises(record, "rules:", "target_imperiales")
    for rules in ({"target_imperiales": 3}, {"preset": ["academie"]}, "academie"):
        record["rules"] = rules
        raises(record, "rules must be an object with a 'preset' name")


def test_players_must_match_rules(record):
    record["players"] = 3
    raises(record, "players is 3", "are for 2")


def test_unknown_and_missing_keys(record):
    record["comment"] = "hello"
    raises(record, "unknown key(s) 'comment'")
    del record["comment"]
    del record["deals"][1]["turned"]
    raises(record, "deal 1 lacks 'turned'")


@pytest.mark.parametrize(
    "field, value, fragment",
    [
        ("dealer", 2, "start.dealer must be an integer from 0 to 1"),
        ("points", [24, 0], "start.points[0] must be an integer from 0 to 23"),
        ("imperiales", [0, 5], "start.imperiales[1] must be an integer from 0 to 4"),
        ("imperiales", [0], "start.imperiales must be a list of 2 integers"),
        ("dealer", True, "start.dealer must be an integer"),
    ],
)
def test_bad_start(record, field, value, fragment):
    record["start"][field] = value
    raises(record, fragment)


def test_duplicate_card(record):
    hands = record["deals"][1]["hands"]
    hands[1][0] = hands[0][0]
    raises(record, "deal 1:", f"{hands[0][0]} is dealt twice (hands[0] and hands[1])", "missing from the deal")


def test_missing_card(record):
    gone = record["deals"][0]["hands"][0].pop()
    raises(record, "deal 0:", "hands[0] has 11 cards (expected 12)", f"missing from the deal: {gone}")


def test_talon_checks(record):
    deal = record["deals"][0]
    deal["talon"].append(deal["hands"][1][0])
    raises(
        record,
        "deal 0:",
        "talon has 8 cards (expected 7)",
        f"{deal['hands'][1][0]} is dealt twice (hands[1] and talon)",
    )
    deal["talon"] = deal["talon"][:6]
    raises(record, "deal 0:", "talon has 6 cards (expected 7)", "missing from the deal: ")


def test_six_in_a_two_player_deal(record):
    record["deals"][0]["talon"][0] = "6H"
    raises(record, "deal 0:", "6H in talon is not in the 32-card pack of 2 players")


def test_card_codes_are_not_corrected(record):
    hand = record["deals"][0]["hands"][0]
    hand[0] = hand[0].lower()
    raises(record, "deal 0: hands[0][0]", f"as {hand[0].upper()!r}")
    hand[0] = "1H"
    raises(record, "deal 0: hands[0][0]", "not a card code")


def test_three_player_deal_checks():
    record = record_from_game(random_game("academie3", 1))
    deal = record["deals"][0]
    dealer = deal["dealer"]
    other = (dealer + 1) % 3
    deal["turned"] = deal["hands"][other][0]
    raises(record, "deal 0:", f"turned card {deal['turned']} is not in the dealer's hand (hands[{dealer}])")
    record = record_from_game(random_game("academie3", 1))
    record["deals"][0]["talon"] = ["6H"]
    raises(record, "talon must be empty with three players")
    record["deals"][0]["talon"] = []
    game_from_record(record)
    del record["deals"][0]["talon"]  # no talon key is the same as []
    assert record_from_game(game_from_record(record))["deals"][0]["talon"] == []


def test_wrong_dealer_rotation(finished, record):
    game, _ = finished
    record["deals"][1]["dealer"] = record["deals"][0]["dealer"]
    raises(record, "deal 1: dealer is", f"the rotation expects {(game.start_dealer + 1) % 2}")
    record["deals"][1]["dealer"] = (game.start_dealer + 1) % 2
    record["deals"][0]["dealer"] = (game.start_dealer + 1) % 2
    raises(record, "deal 0: dealer is", "(the start dealer)")


def first_play(record: dict, d: int) -> int:
    return next(i for i, a in enumerate(record["deals"][d]["actions"]) if a["act"] == "play")


def legal_before(record: dict, d: int, i: int) -> list[int]:
    """The legal actions before action ``i`` of deal ``d`` (replaying the record up to there)."""
    head = copy.deepcopy(record)
    head["deals"] = head["deals"][: d + 1]
    head["deals"][d]["actions"] = head["deals"][d]["actions"][:i]
    return game_from_record(head).legal_actions()


def test_illegal_play(record):
    i = first_play(record, 1) + 1  # the first follower
    entry = record["deals"][1]["actions"][i]
    player = entry["player"]
    entry["card"] = record["deals"][1]["hands"][1 - player][0]  # the other player's card
    legal = legal_before(record, 1, i)
    message = raises(
        record,
        "deal 1, action ",
        f"action {i} ",
        json.dumps(entry),
        "the action is not legal",
        f"player {player} is to play a card",
    )
    alternatives = message.split("; legal: ")[1]
    assert alternatives == ", ".join(record_form(a) for a in legal)
    assert all(alt.startswith("play ") for alt in alternatives.split(", "))


def test_illegal_declaration(record):
    i = next(i for i, a in enumerate(record["deals"][0]["actions"]) if a["act"] in ("point", "sink"))
    entry = record["deals"][0]["actions"][i]
    record["deals"][0]["actions"][i] = {"player": entry["player"], "act": "show"}
    message = raises(record, f"deal 0, action {i} ", json.dumps(record["deals"][0]["actions"][i]))
    assert "to declare the point; legal: " in message and message.endswith("sink")
    assert "point " in message.split("; legal: ")[1]


def test_action_by_the_wrong_player(record):
    entry = record["deals"][2]["actions"][3]
    entry["player"] = 1 - entry["player"]
    raises(record, "deal 2, action 3 ", f"the action is by player {entry['player']} but player {1 - entry['player']}")


def test_malformed_actions(record):
    actions = record["deals"][0]["actions"]
    actions[0] = {"player": actions[0]["player"], "act": "pass"}
    raises(record, "deal 0, action 0", "one of play, show, hide, point, sink")
    actions[0] = {"player": 0, "act": "play"}
    raises(record, "deal 0, action 0", "lacks 'card'")
    actions[0] = {"player": 0, "act": "sink", "suit": "H"}
    raises(record, "deal 0, action 0", "unknown key(s) 'suit'")
    actions[0] = {"player": 2, "act": "sink"}
    raises(record, "deal 0, action 0", "player must be an integer from 0 to 1")
    actions[0] = {"player": 0, "act": "point", "suit": "X"}
    raises(record, "deal 0, action 0", "not a suit")


def test_action_after_game_over(record):
    last = len(record["deals"]) - 1
    n = len(record["deals"][last]["actions"])
    record["deals"][last]["actions"].append({"player": 0, "act": "play", "card": "KH"})
    raises(
        record,
        f"deal {last}, action {n} ",
        f"the game ended at action {n - 1} of deal {last}",
        "remove the remaining 1 action(s)",
    )


def test_deal_after_game_over(record):
    last = len(record["deals"]) - 1
    dealer = (record["deals"][last]["dealer"] + 1) % 2
    record["deals"].append(record_from_game(Game("academie", 99, dealer=dealer, single_deal=True))["deals"][0])
    raises(
        record,
        f"deal {last + 1}:",
        f"the game ended at action {len(record['deals'][last]['actions']) - 1} of deal {last}",
        "no deal may follow",
    )


def test_unfinished_deal_before_the_last(record):
    record["deals"][0]["actions"] = record["deals"][0]["actions"][:5]
    raises(record, "deal 0: its 5 action(s) stop before the deal is over", "only the last deal", "legal: ")


def test_too_many_actions_in_a_deal(record):
    n = len(record["deals"][0]["actions"])
    record["deals"][0]["actions"].append(record["deals"][1]["actions"][0])
    raises(record, f"deal 0, action {n} ", f"deal 0 is over after action {n - 1}", "remove the remaining 1")


def test_not_an_object():
    with pytest.raises(RecordError, match="the record must be a JSON object"):
        game_from_record([])  # type: ignore[arg-type]


# ---------------------------------------------------------------------- files and the command line


def test_save_and_load_json(tmp_path, record):
    path = tmp_path / "game.json"
    save_records(path, [record])
    assert load_records(path) == [record]
    assert json.loads(path.read_text()) == record
    assert [p.name for p in tmp_path.iterdir()] == ["game.json"]  # no temporary file left
    with pytest.raises(RecordError, match="exactly one record"):
        save_records(path, [record, record])
    assert load_records(path) == [record]


def test_save_and_load_jsonl(tmp_path, record):
    other = record_from_game(random_game("foster", 1))
    path = tmp_path / "games.jsonl"
    save_records(path, [record, other])
    assert load_records(path) == [record, other]
    assert len(path.read_text().splitlines()) == 2
    save_records(path, [other])  # replaces the file
    assert load_records(path) == [other]
    assert [p.name for p in tmp_path.iterdir()] == ["games.jsonl"]


def test_bad_jsonl_line(tmp_path, record):
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps(record) + "\n\n" + '{"format": "imperiale-record/1",\n' + json.dumps(record) + "\n")
    with pytest.raises(RecordError) as info:
        load_records(path)
    assert str(path) in str(info.value) and "line 3" in str(info.value) and "invalid JSON" in str(info.value)
    path.write_text(json.dumps(record) + "\n[1, 2]\n")
    with pytest.raises(RecordError, match=r"line 2: a record is a JSON object, got list"):
        load_records(path)


def test_bad_json_file(tmp_path):
    path = tmp_path / "game.json"
    path.write_text('{\n  "format": "imperiale-record/1",\n  "rules": }\n')
    with pytest.raises(RecordError, match=r"game\.json, line 3, column 12: invalid JSON"):
        load_records(path)
    (tmp_path / "game.txt").write_text("{}")
    with pytest.raises(RecordError, match=r"\.json or \.jsonl"):
        load_records(tmp_path / "game.txt")


def test_cli_replay(tmp_path, capsys, finished):
    game, record = finished
    path = tmp_path / "game.json"
    save_records(path, [record])
    assert main(["replay", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == replay_record(record)
    assert [deal["events"] for deal in out["deals"]] == [state.events for state in game.history]
    assert out["final"] == {"imperiales": game.imperiales, "points": game.points}
    assert out["winner"] == game.winner
    for deal, state in zip(out["deals"], game.history, strict=True):
        assert deal["dealer"] == state.deal.dealer


def test_cli_replay_jsonl(tmp_path, capsys, record):
    unfinished = record_from_game(play(Game("academie3", 2), random.Random(2), steps=50))
    path = tmp_path / "games.jsonl"
    save_records(path, [record, unfinished])
    assert main(["replay", str(path), "--json", "--indent", "0"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == [replay_record(record), replay_record(unfinished)]
    assert out[1]["winner"] is None


def test_cli_replay_reports_record_errors(tmp_path, capsys, record):
    record["deals"][1]["actions"][0]["player"] = 1 - record["deals"][1]["actions"][0]["player"]
    path = tmp_path / "bad.json"
    save_records(path, [record])
    assert main(["replay", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("imperiale replay: error:") and "deal 1, action 0" in captured.err
