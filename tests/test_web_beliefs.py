"""The belief model's view on the web table: the replay's heat map at each decision (from the acting
seat's observation only), and in a running game the person's own belief and nobody else's."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from imperiale_agents.analysis.belief_report import decision_belief
from imperiale_env.reference.observe import observe
from imperiale_web.app import create_app
from imperiale_web.screenshots import served_page
from imperiale_web.table import Table


def _finished(client, seed: int, preset: str = "academie") -> dict:
    game = client.post("/api/games", json={"preset": preset, "opponent": "heuristic", "seed": seed}).json
    state = game["state"]
    while not state["over"]:
        move = {"action": state["decision"]["legal"][0]}
        state = client.post(f"/api/games/{game['id']}/move", json=move).json["state"]
    record = json.loads(client.get(f"/api/games/{game['id']}/record").data)
    record["deals"] = record["deals"][:1]
    return record


def _replay_to(page, url: str, record: dict, tmp_path, steps: int) -> None:
    """Open ``record`` on the replay tab and step ``steps`` actions forward, each step waiting for
    the heat map's answer, so that the page shows the belief of the player acting next."""
    path = tmp_path / "replayed.json"
    path.write_text(json.dumps(record))
    page.goto(url)
    page.click("#tab-replay")
    page.set_input_files("#record-file", str(path))
    expect(page.locator("#belief-map")).to_be_visible()
    for _ in range(steps):
        with page.expect_response(re.compile(r"/api/beliefs$")):
            page.click("#forward")


@pytest.fixture
def client(tmp_path):
    return create_app(tmp_path).test_client()


def test_a_replays_belief_is_the_acting_players_and_bad_requests_say_why(client):
    record = _finished(client, 5)
    actions = record["deals"][0]["actions"]
    answer = client.post("/api/beliefs", json={"record": record, "deal": 0, "index": 4})
    assert answer.status_code == 200
    b = answer.json
    assert b["player"] == actions[4]["player"] and [p["seat"] for p in b["places"]] == [1 - b["player"], None]
    assert set(record["deals"][0]["hands"][b["player"]]) <= set(b["known"])  # his own hand: known, no belief
    for probs in b["cards"].values():
        assert all(0 <= p <= 1 for p in probs) and sum(probs) == pytest.approx(1, abs=1e-3)
    for body, status, words in [
        ({"record": record, "deal": 0, "index": len(actions)}, 400, f"decisions 0 to {len(actions) - 1}"),
        ({"record": record, "deal": 3, "index": 0}, 400, "deals 0 to 0"),
        ({"record": record, "deal": "0", "index": 0}, 400, "deal must be an integer"),
        ({"deal": 0, "index": 0}, 400, "a belief request is {record, deal, index}"),
    ]:
        refused = client.post("/api/beliefs", json=body)
        assert refused.status_code == status and words in refused.json["error"]


def test_a_preset_without_a_shipped_belief_is_a_404_that_says_so(client, tmp_path, monkeypatch):
    """Every preset ships a belief now; an installation without one (here: an empty champions folder)
    is told so instead of a heat map."""
    from imperiale_agents import champions
    from imperiale_web import beliefs

    record = _finished(client, 5, "academie3")
    monkeypatch.setattr(champions, "CHAMPIONS_DIR", tmp_path)
    monkeypatch.setattr(beliefs, "_nets", {})
    refused = client.post("/api/beliefs", json={"record": record, "deal": 0, "index": 0})
    assert refused.status_code == 404 and "no belief model is shipped for academie3" in refused.json["error"]


def test_a_running_game_gives_only_the_persons_own_belief(client):
    """At every point of a whole game: the belief is the person's seat's, read from his observation,
    and no card of the bot is ever marked as known (a belief from the bot's view would know them)."""
    from imperiale_web.beliefs import belief_model

    answer = client.post("/api/games", json={"preset": "academie", "opponent": "heuristic", "seed": 17})
    game_id, state = answer.json["id"], answer.json["state"]
    same = Table("academie", "heuristic", 17, 0)  # the same seed: the same game, held here
    expected = decision_belief(belief_model(same.rules), observe(same.game, 0), 0)
    assert client.get(f"/api/games/{game_id}/beliefs").json == {"player": 0, **expected}
    refused = client.get(f"/api/games/{game_id}/beliefs?seat=1")
    assert refused.status_code == 403 and "only your own belief (seat 0)" in refused.json["error"]
    checked = 0
    while not state["over"]:
        b = client.get(f"/api/games/{game_id}/beliefs").json
        assert b["player"] == 0 and [p["seat"] for p in b["places"]] == [1, None]
        mine = set(state["hands"][0])
        public = mine | {c for cs in state["played"].values() for c in cs} | {c for cs in state["shown"] for c in cs}
        public |= {state["turned"]}
        assert {c for c, why in b["known"].items() if why != "not in the deck"} == public
        assert all(b["known"][c] == "in the hand" for c in mine)
        # the heat map adds up: the bot's unseen cards are his hand less what he showed, the talon the rest
        played = {c for cs in state["played"].values() for c in cs}
        bot_unseen = state["counts"][1] - len(set(state["shown"][1]) - played)
        in_bot, in_talon = (sum(p[k] for p in b["cards"].values()) for k in (0, 1))
        assert in_bot == pytest.approx(bot_unseen, abs=1e-3) and in_talon == pytest.approx(7, abs=1e-3)
        checked += 1
        state = client.post(f"/api/games/{game_id}/move", json={"action": state["decision"]["legal"][0]}).json["state"]
    assert checked > 12


def test_the_replay_shows_the_heat_map_with_its_legend(tmp_path):
    record = _finished(create_app(tmp_path).test_client(), 31)
    with served_page(tmp_path) as (page, url):
        _replay_to(page, url, record, tmp_path, 8)
        acting = record["deals"][0]["actions"][8]["player"]
        expect(page.locator("#belief-map")).to_have_attribute("data-player", str(acting))
        assert page.locator(".belief-grid").count() == 2  # the other hand and the talon
        other = record["names"][1 - acting]  # the record names the seats: the replay calls them so
        assert page.locator(".belief-grid caption").all_inner_texts() == [
            "your hand" if other == "You" else f"{other}'s hand", "the talon"]
        assert page.locator(".belief-grid .belief-cell").count() == 2 * 36
        legend = page.locator("#belief-legend")
        expect(legend).to_be_visible()
        words = legend.inner_text()
        assert "0%" in words and "100%" in words and "in the hand" in words
        hand = record["deals"][0]["hands"][acting]
        for code in hand:  # his own cards are grey, saying why
            cell = page.locator(f'.belief-grid[data-place="talon"] [data-card="{code}"]')
            assert cell.get_attribute("data-known") in ("in the hand", "played", "shown")
        unseen = page.locator('.belief-grid[data-place="talon"] .belief-cell:not(.known)')
        assert unseen.count() > 0
        colours = {unseen.nth(i).evaluate("e => getComputedStyle(e).backgroundColor")
                   for i in range(unseen.count())}
        assert len(colours) > 1  # coloured by probability
        assert not page.locator("#message").is_visible()
        # At the table, the person may show his own belief: the bot's hand and the talon.
        page.click("#tab-play")
        page.fill("#opponent", "heuristic")
        page.click("#start")
        with page.expect_response(re.compile(r"/beliefs$")):
            page.check("#my-beliefs")
        expect(page.locator("#play-beliefs #belief-map")).to_have_attribute("data-player", "0")
        assert page.locator("#play-beliefs .belief-grid caption").all_inner_texts() == ["heuristic's hand",
                                                                                        "the talon"]
        expect(page.locator("#play-beliefs #belief-legend")).to_be_visible()


def test_three_players_replay_shows_both_other_hands_each_adding_up(tmp_path):
    """academie3 ships a belief now: the replay's heat map has one grid for each other hand (no talon),
    every unseen card's two probabilities add up to 1, and each grid's to the cards that hand holds."""
    record = _finished(create_app(tmp_path).test_client(), 7, "academie3")
    with served_page(tmp_path) as (page, url):
        _replay_to(page, url, record, tmp_path, 12)  # into the play, past the declarations
        acting = record["deals"][0]["actions"][12]["player"]
        expect(page.locator("#belief-map")).to_have_attribute("data-player", str(acting))
        grids = page.locator(".belief-grid")
        assert grids.count() == 2
        assert [grids.nth(k).get_attribute("data-place") for k in range(2)] == [str((acting + 1) % 3),
                                                                                 str((acting + 2) % 3)]
        cells = [{c.get_attribute("data-card"): float(c.get_attribute("data-p"))
                  for c in grids.nth(k).locator(".belief-cell:not(.known)").all()} for k in range(2)]
        assert cells[0].keys() == cells[1].keys() and len(cells[0]) > 8
        assert all(cells[0][c] + cells[1][c] == pytest.approx(1, abs=1e-6) for c in cells[0])
        played = [a for a in record["deals"][0]["actions"][:12] if a.get("card")]
        for k, grid in enumerate(cells):
            seat = (acting + 1 + k) % 3
            holds = 12 - sum(1 for a in played if a["player"] == seat)
            assert sum(grid.values()) <= holds + 1e-6
            assert sum(grid.values()) == pytest.approx(round(sum(grid.values())), abs=1e-3)
