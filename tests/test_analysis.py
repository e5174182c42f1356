"""`imperiale analyse`: values checked against an independent brute force over the reference engine."""

from __future__ import annotations

import json

import numpy as np
import pytest

from imperiale_agents.analysis.record_analysis import analyse_record, report_text
from imperiale_agents.policies.heuristic import HeuristicAgent
from imperiale_cli.cli import main
from imperiale_env.core import actions as act
from imperiale_env.core.cards import card_code
from imperiale_env.records.game_records import game_from_record, record_from_game
from imperiale_env.reference.game import Game
from imperiale_env.reference.observed_game import ObservedGame


def heuristic_deal(preset: str, seed: int, stop_tricks_left: int | None = None) -> ObservedGame:
    """An observed game after the heuristic has played deal 0 (or up to ``stop_tricks_left`` tricks left)."""
    rules = Game(preset).rules
    observed = ObservedGame.new(rules, seed)
    agent, rng = HeuristicAgent(rules), np.random.default_rng(seed)
    while observed.game.decision is not None and len(observed.game.history) == 1:
        s = observed.game.state
        if stop_tricks_left is not None and observed.game.decision.kind == "play" and not s.trick \
                and 12 - s.tricks_played == stop_tricks_left:
            break
        obs, mask = observed.acting_view()
        observed.step(int(agent.act(obs, mask, rng)[0]))
    return observed


def one_deal_record(game: Game) -> dict:
    record = record_from_game(game)
    record["deals"] = record["deals"][:1]
    return record


def _after_play_score(game: Game, me: int) -> float:
    """Honours and tricks scored at the end of deal 0, ``me`` minus the mean of the others."""
    gained = [0.0] * game.players
    for e in game.history[0].events:
        if e["event"] in ("honours", "tricks", "capot"):
            gained[e["player"]] += e.get("points", 24 * e.get("imperiales", 0))
    others = [g for q, g in enumerate(gained) if q != me]
    return gained[me] - sum(others) / len(others)


def brute_force(record: dict, me: int) -> float:
    """Plain minimax (no pruning, no table, no shortcuts) over the reference engine: the
    after-play score of ``me`` when ``me`` maximises and the others minimise."""
    game = game_from_record(record)
    d = game.decision
    if d is None or len(game.history) > 1 or d.kind != "play":
        return _after_play_score(game, me)
    values = []
    for a in d.legal:
        child = json.loads(json.dumps(record))
        child["deals"][0]["actions"].append({"player": d.player, **act.action_to_record(a)})
        values.append(brute_force(child, me))
    return max(values) if d.player == me else min(values)


def test_blunder_is_flagged_with_the_loss_of_the_brute_force():
    observed = heuristic_deal("academie", 13, stop_tricks_left=3)
    record = one_deal_record(observed.game)
    me = observed.game.decision.player
    # Value every card of the position independently, then play the worst one.
    options = {}
    for a in observed.game.decision.legal:
        child = json.loads(json.dumps(record))
        child["deals"][0]["actions"].append({"player": me, **act.action_to_record(a)})
        options[a] = brute_force(child, me)
    worst = min(options, key=options.get)
    assert max(options.values()) > options[worst], "the position must offer a blunder"
    observed.step(worst)
    blundered = one_deal_record(observed.game)
    analysis = analyse_record(blundered, samples=2, seed=1, horizon=3)
    decision = analysis["deals"][0]["decisions"][-1]
    assert decision["action"] == act.action_to_record(worst) and decision["player"] == me
    expected_loss = max(options.values()) - options[worst]
    assert decision["solver"]["loss"] == pytest.approx(expected_loss)
    # Value differences (not the levels: the solver counts the future only) agree card by card.
    by_card = {v["action"]["card"]: v["solver"] for v in decision["values"]}
    for a, v in options.items():
        assert by_card[act.action_to_record(a)["card"]] - by_card[act.action_to_record(worst)["card"]] \
            == pytest.approx(v - options[worst])
    assert analysis["deals"][0]["loss"]["solver"][me] >= expected_loss
    assert analysis["loss"]["solver"][me] == pytest.approx(analysis["deals"][0]["loss"]["solver"][me])
    assert "??" in report_text(analysis)
    assert report_text(analysis).count("Deal 1 (") == 1 and "Deal 0 (" not in report_text(analysis)  # as play counts
    assert "'??' one that lost 4 points" in report_text(analysis)  # the marks are explained
    # at a terminal's width: no line longer, and the same words in the same order
    whole, narrow = report_text(analysis), report_text(analysis, width=70)
    assert max(map(len, whole.splitlines())) > 70 >= max(map(len, narrow.splitlines()))
    assert whole.split() == narrow.split()
    # a record that names its players is told with the names
    named = analyse_record({**blundered, "names": ["Ann", "heuristic"]}, samples=2, seed=1, horizon=3)
    text = report_text(named)
    assert "Players: Ann (seat 0), heuristic (seat 1)" in text and "player 0" not in text
    assert f"#{decision['index']:<3} {['Ann', 'heuristic'][me]} " in text


def test_forced_card_has_no_loss_and_is_the_best():
    observed = heuristic_deal("academie", 4)
    analysis = analyse_record(one_deal_record(observed.game), samples=2, seed=0, horizon=2)
    decisions = analysis["deals"][0]["decisions"]
    forced = [d for d in decisions if d["kind"] == "play" and len(d["values"]) == 1 and d["solver"] is not None]
    assert forced, "the last trick's cards are forced"
    for d in forced:
        for judge in ("solver", "pimc"):
            assert d[judge]["loss"] == 0.0
            assert d[judge]["best_actions"] == [d["action"]]
    # Cards outside the horizon are not valued, and say so.
    early = [d for d in decisions if d["kind"] == "play" and d["tricks_left"] > 2]
    assert early and all(d["solver"] is None and "horizon" in d["note"] for d in early)


def test_single_best_card_matches_the_brute_force():
    observed = heuristic_deal("academie", 7, stop_tricks_left=3)
    record = one_deal_record(observed.game)
    me = observed.game.decision.player
    values = {}
    for a in observed.game.decision.legal:
        child = json.loads(json.dumps(record))
        child["deals"][0]["actions"].append({"player": me, **act.action_to_record(a)})
        values[a] = brute_force(child, me)
    best = {act.action_to_record(a)["card"] for a, v in values.items() if v == max(values.values())}
    observed.step(min(values, key=lambda a: -values[a]))
    analysis = analyse_record(one_deal_record(observed.game), samples=2, seed=0, horizon=3)
    decision = analysis["deals"][0]["decisions"][-1]
    assert {b["card"] for b in decision["solver"]["best_actions"]} == best
    assert decision["solver"]["loss"] == 0.0


def test_declarations_are_valued_by_their_score():
    observed = heuristic_deal("academie", 5)
    analysis = analyse_record(one_deal_record(observed.game), samples=2, seed=0, horizon=1)
    points = [d for d in analysis["deals"][0]["decisions"] if d["kind"] == "point"]
    assert len(points) == 2
    first = points[0]
    # Sinking the point cannot be worth more than declaring the suit the record's winner used.
    values = {json.dumps(v["action"]): v["solver"] for v in first["values"]}
    assert values[json.dumps({"act": "sink"})] <= first["solver"]["best"]
    assert first["playout"] is False  # the play is beyond the horizon: declaration scores only
    assert all(v["pimc"] is not None for v in first["values"])


def test_same_seed_same_analysis():
    observed = heuristic_deal("academie", 6)
    record = one_deal_record(observed.game)
    a = analyse_record(record, samples=3, seed=9, horizon=2)
    b = analyse_record(record, samples=3, seed=9, horizon=2)
    assert a == b


def test_cli_validates_before_work_and_never_overwrites(tmp_path, capsys):
    observed = heuristic_deal("academie", 3)
    path = tmp_path / "deal.json"
    path.write_text(json.dumps(one_deal_record(observed.game)))
    out = tmp_path / "annotated.json"
    assert main(["analyse", str(path), "--samples", "2", "--horizon", "1", "--out", str(out)]) == 0
    written = json.loads(out.read_text())
    assert written["format"] == "imperiale-analysis/1" and written["settings"]["samples"] == 2
    before = out.read_text()
    assert main(["analyse", str(path), "--out", str(out)]) == 2
    assert "exists already" in capsys.readouterr().err and out.read_text() == before
    assert main(["analyse", str(path), "--samples", "0"]) == 2
    assert "--samples must be from 1" in capsys.readouterr().err
    assert main(["analyse", str(tmp_path / "missing.json")]) == 2
    assert "no such record file" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "imperiale-record/1"}')
    assert main(["analyse", str(bad)]) == 2
    assert "lacks" in capsys.readouterr().err


def test_the_analysis_tells_its_progress_from_the_start(tmp_path, capsys):
    """Progress is told before the first decision is valued (the first seconds of a long analysis
    are never silent), then after each one, up to every decision of the record."""
    record = one_deal_record(heuristic_deal("academie", 3).game)
    calls = []
    analysis = analyse_record(record, samples=1, horizon=1, progress=lambda *a: calls.append(a))
    total = sum(len(d["decisions"]) for d in analysis["deals"])
    assert calls[0] == (0, total, 0) and calls[-1][:2] == (total, total)
    assert [c[0] for c in calls] == list(range(total + 1))
    path = tmp_path / "deal.json"
    path.write_text(json.dumps(record))
    assert main(["analyse", str(path), "--samples", "1", "--horizon", "1"]) == 0
    err = capsys.readouterr().err
    assert "analysing" in err and f"{total}/{total}" in err and "decision" in err, err
    assert main(["analyse", str(path), "--samples", "1", "--horizon", "1", "--no-progress"]) == 0
    assert "analysing" not in capsys.readouterr().err


# ---------------------------------------------------------------------- the belief model's view (issue 23)


def _unseen_by_decision(record: dict) -> list[tuple[int, set[str], set[str]]]:
    """For each decision of deal 0: the acting player, the cards he holds and those played before it."""
    played_game = game_from_record(record)
    deal = played_game.history[0].deal
    game = Game(played_game.rules, dealer=deal.dealer, deals=lambda i, _d: deal if i == 0 else None, single_deal=True)
    out, played = [], set()
    for player, action in played_game.history[0].actions:
        assert game.decision.player == player
        out.append((player, {card_code(c) for c in game.state.hands[player]}, set(played)))
        if act.is_play(action):
            played.add(card_code(action))
        game.step(action)
    return out


def test_beliefs_printed_and_written_are_probabilities_of_the_unseen_cards_only(tmp_path, capsys):
    record = one_deal_record(heuristic_deal("academie", 3).game)
    path, out = tmp_path / "deal.json", tmp_path / "annotated.json"
    path.write_text(json.dumps(record))
    assert main(["analyse", str(path), "--beliefs", "--samples", "1", "--horizon", "1", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    decisions = json.loads(out.read_text())["deals"][0]["decisions"]
    facts = _unseen_by_decision(record)
    assert len(decisions) == len(facts) == len(record["deals"][0]["actions"])
    turned = record["deals"][0]["turned"]
    for dec, (me, hand, played) in zip(decisions, facts, strict=True):
        belief = dec["belief"]
        assert dec["player"] == me and [p["seat"] for p in belief["places"]] == [1 - me, None]
        cards = belief["cards"]
        assert not (set(cards) & (hand | played | {turned}))  # known cards have no belief ...
        assert {belief["known"][c] for c in hand} == {"in the hand"} and belief["known"][turned] == "turned"
        assert all(belief["known"][c] == "played" for c in played)
        assert set(cards) | set(belief["known"]) == {card_code(c) for c in range(36)}  # ... every other card has
        for probs in cards.values():
            assert len(probs) == 2 and all(0.0 <= p <= 1.0 for p in probs)
            assert sum(probs) == pytest.approx(1.0, abs=1e-3)
    # The text: one belief block a decision, each unseen card once with its two probabilities.
    blocks = text.split("belief (")[1:]
    assert len(blocks) == len(decisions)
    for block, dec in zip(blocks, decisions, strict=True):
        suits = [line.strip() for line in block.splitlines()[1:5]]
        assert [s[:2] for s in suits] == ["S:", "H:", "D:", "C:"]
        listed = {}
        for s in suits:
            for item in s[3:].split(", "):
                if item != "-":
                    rank, probs = item.split(" ")
                    listed[rank + s[0]] = [float(x) for x in probs.split("/")]
        assert listed.keys() == dec["belief"]["cards"].keys()
        for code, probs in listed.items():
            assert probs == pytest.approx(dec["belief"]["cards"][code], abs=0.006)


def test_a_belief_reads_only_the_acting_seats_observation():
    """Two deals that differ only in cards the acting player has not seen give him the same belief."""
    from imperiale_agents.analysis.belief_report import belief_at, load_belief

    record = one_deal_record(heuristic_deal("academie", 3).game)
    record["deals"][0]["actions"] = record["deals"][0]["actions"][:1]  # player 1 declares: he saw his hand only
    assert record["deals"][0]["actions"][0]["player"] == 1
    swapped = json.loads(json.dumps(record))
    deal = swapped["deals"][0]
    a, b = deal["hands"][0][0], deal["talon"][0]
    deal["hands"][0][0], deal["talon"][0] = b, a  # the other hand and the talon trade a card
    net = load_belief(game_from_record(record).rules)
    one, two = belief_at(net, record, 0, 0), belief_at(net, swapped, 0, 0)
    assert one == two and one["player"] == 1 and a in one["cards"] and b in one["cards"]
    analysed = [analyse_record(r, samples=1, horizon=1, belief=net)["deals"][0]["decisions"][0]["belief"]
                for r in (record, swapped)]
    assert analysed[0] == analysed[1] == {k: one[k] for k in ("places", "cards", "known")}
    with pytest.raises(ValueError, match="decisions 0 to 0, not 1"):
        belief_at(net, record, 0, 1)


def test_beliefs_without_a_model_for_the_rules_say_what_to_pass(tmp_path, capsys, monkeypatch):
    from imperiale_agents import champions
    from imperiale_agents.search.belief_model import belief_archive_bytes
    from imperiale_env.core.observation import FEATURES

    record = one_deal_record(heuristic_deal("academie3", 2).game)
    path = tmp_path / "academie3.json"
    path.write_text(json.dumps(record))
    assert main(["analyse", str(path), "--beliefs", "--samples", "1", "--horizon", "1"]) == 0  # shipped
    assert "belief (player" in capsys.readouterr().out
    monkeypatch.setattr(champions, "CHAMPIONS_DIR", tmp_path / "empty")  # an installation without one
    assert main(["analyse", str(path), "--beliefs"]) == 2
    assert "no belief model is shipped for academie3; pass --belief FILE" in capsys.readouterr().err
    academie = tmp_path / "academie-belief.npz"
    layers = [(np.zeros((108, FEATURES.size)), np.zeros(108))]
    academie.write_bytes(belief_archive_bytes(layers, "relu", Game("academie").rules.to_dict(), {}))
    assert main(["analyse", str(path), "--belief", str(academie)]) == 2
    assert "trained under the 'academie' rules" in capsys.readouterr().err
    assert main(["analyse", str(path), "--belief", str(tmp_path / "none.npz")]) == 2
    assert "no such belief file" in capsys.readouterr().err
    # A file made for academie3 is used (zero weights: the sampler's own marginal).
    made = tmp_path / "academie3-belief.npz"
    made.write_bytes(belief_archive_bytes(layers, "relu", Game("academie3").rules.to_dict(), {}))
    assert main(["analyse", str(path), "--belief", str(made), "--samples", "1", "--horizon", "1"]) == 0
    assert "belief (player" in capsys.readouterr().out


def test_three_players_believe_over_both_other_hands(tmp_path):
    from imperiale_agents.search.belief_model import belief_archive_bytes, read_belief
    from imperiale_env.core.observation import FEATURES

    rules = Game("academie3").rules
    rng = np.random.default_rng(0)
    layers = [(rng.normal(0, 0.2, (16, FEATURES.size)), rng.normal(0, 0.2, 16)),
              (rng.normal(0, 0.5, (108, 16)), np.zeros(108))]
    path = tmp_path / "academie3-belief.npz"
    path.write_bytes(belief_archive_bytes(layers, "relu", rules.to_dict(), {}))
    record = one_deal_record(heuristic_deal("academie3", 5, stop_tricks_left=10).game)
    analysis = analyse_record(record, samples=1, horizon=1, belief=read_belief(path))
    decisions = analysis["deals"][0]["decisions"]
    for dec in decisions:
        belief, me = dec["belief"], dec["player"]
        assert [p["seat"] for p in belief["places"]] == [(me + 1) % 3, (me + 2) % 3]  # no talon with three
        assert len(belief["cards"]) + len(belief["known"]) == 36
        assert all(sum(p) == pytest.approx(1.0, abs=1e-3) and len(p) == 2 for p in belief["cards"].values())
    assert f"belief (player {(decisions[0]['player'] + 1) % 3} / player" in report_text(analysis)
