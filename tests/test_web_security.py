"""The web table keeps its secrets and its bounds: the page never receives a bot's card, the
seed or the record while the game runs, and hostile requests get a clear 4xx answer."""

from __future__ import annotations

import json

import pytest

from imperiale_web.app import create_app
from imperiale_web.games import Games
from imperiale_web.table import TableError


@pytest.fixture
def client(tmp_path):
    return create_app(tmp_path).test_client()


def test_a_live_game_shows_no_bot_card_no_seed_and_no_record(client):
    answer = client.post("/api/games", json={"preset": "academie", "opponent": "heuristic"})
    game_id, state = answer.json["id"], answer.json["state"]
    assert state["seed"] is None and state["hands"][1] is None
    assert client.get(f"/api/games/{game_id}/record").status_code == 409
    assert "yours once the game is over" in client.get(f"/api/games/{game_id}/record").json["error"]
    assert client.post(f"/api/games/{game_id}/resign").status_code == 200
    over = client.get(f"/api/games/{game_id}").json["state"]
    assert isinstance(over["seed"], int) and over["resigned"]
    assert client.get(f"/api/games/{game_id}/record").status_code == 200
    move = client.post(f"/api/games/{game_id}/move", json={"action": {"act": "show"}})
    assert move.status_code == 409


def test_no_answer_during_a_game_holds_a_bot_card(client):
    """Every answer of a whole game, searched for any card of the bot's hand that it has not played."""
    answer = client.post("/api/games", json={"preset": "academie", "opponent": "heuristic", "seed": 11})
    game_id = answer.json["id"]
    bodies = [answer.data.decode()]
    state = answer.json["state"]
    while not state["over"]:
        legal = state["decision"]["legal"]
        answer = client.post(f"/api/games/{game_id}/move", json={"action": legal[0]})
        bodies.append(answer.data.decode())
        state = answer.json["state"]
        hidden = [h for p, h in enumerate(state["hands"]) if p != state["seat"]]
        assert hidden == [None] * len(hidden)
        if not state["over"]:
            assert state["seed"] is None
    assert all('"seed": null' in b.replace('"seed":null', '"seed": null') for b in bodies[:-1])


@pytest.mark.parametrize("host, status", [("evil.example:8000", 421), ("localhost:8000", 200),
                                          ("127.0.0.1:8000", 200), ("[::1]:8000", 200)])
def test_only_its_own_host_name_is_answered(client, host, status):
    assert client.get("/api/options", headers={"Host": host}).status_code == status


def test_cross_origin_requests_that_change_state_are_refused(client):
    body = {"preset": "academie", "opponent": "heuristic"}
    assert client.post("/api/games", json=body, headers={"Origin": "http://evil.example"}).status_code == 403
    same = client.post("/api/games", json=body, headers={"Origin": "http://localhost", "Host": "localhost"})
    assert same.status_code == 201


def test_the_page_chooses_only_the_servers_opponents(tmp_path):
    client = create_app(tmp_path, agents=("random",)).test_client()
    assert client.get("/api/options").json["agents"] == ["random"]
    refused = client.post("/api/games", json={"opponent": "heuristic"})
    assert refused.status_code == 400 and "choose one of: random" in refused.json["error"]
    for spec in ("neural:/etc/passwd", "os:system", "/tmp/x.py:Bot"):
        assert client.post("/api/games", json={"opponent": spec}).status_code == 400


@pytest.mark.parametrize("body, text", [
    ("[" * 100 + "]" * 100, "nests deeper than 64"),
    ('{"seed": ' + "9" * 5000 + "}", "digits (at most 40)"),
    ('{"seed": NaN}', "not a JSON number"),
    ("", "got nothing"),
])
def test_hostile_json_gets_a_clear_400(client, body, text):
    answer = client.post("/api/games", data=body, content_type="application/json")
    assert answer.status_code == 400 and text in answer.json["error"]


def test_a_body_over_the_limit_is_refused(client):
    """(A chunked body, whose length nobody declares, is sent to the real server in test_web_api.py.)"""
    big = b'{"x": "' + b"a" * (5 * 1024 * 1024) + b'"}'
    assert client.post("/api/replay", data=big, content_type="application/json").status_code == 413


def test_nul_bytes_and_a_vanished_records_folder_are_4xx(tmp_path):
    folder = tmp_path / "records"
    folder.mkdir()
    client = create_app(folder).test_client()
    assert client.get("/api/records/a%00.json").status_code == 400
    folder.rmdir()
    gone = client.get("/api/records")
    assert gone.status_code == 404 and "cannot be read any more" in gone.json["error"]


def test_live_games_are_bounded_and_idle_ones_expire(monkeypatch):
    import imperiale_web.games as games_module

    games = Games(max_games=2, idle_seconds=60)
    clock = [1000.0]
    monkeypatch.setattr(games_module.time, "monotonic", lambda: clock[0])
    first, _ = games.add("table-1"), games.add("table-2")
    with pytest.raises(TableError, match="the table is full: 2 games") as full:
        games.add("table-3")
    assert full.value.status == 503 and games.get(first) == "table-1"  # the games in progress are kept
    clock[0] += 61
    with pytest.raises(TableError, match="was dropped after 1 minutes") as gone:
        games.get(first)
    assert gone.value.status == 410
    games.add("table-4")


def test_server_analysis_is_bounded_before_it_starts(client):
    game = client.post("/api/games", json={"preset": "academie", "opponent": "random", "seed": 2}).json
    client.post(f"/api/games/{game['id']}/resign")
    record = json.loads(client.get(f"/api/games/{game['id']}/record").data)
    record["deals"] = record["deals"] * 100
    answer = client.post("/api/analyse", json={"record": record, "samples": 64})
    assert answer.status_code in (400, 413) and "analyses at most 320" in answer.json["error"] or \
        "bad record" in answer.json["error"]


def test_an_analysis_stops_when_its_time_is_up():
    from imperiale_agents.analysis.record_analysis import AnalysisStopped, analyse_record
    from imperiale_web.analysis_job import stream_analysis

    client = create_app().test_client()
    game = client.post("/api/games", json={"preset": "academie", "opponent": "random", "seed": 2}).json
    for _ in range(6):
        game = client.post(f"/api/games/{game['id']}/move", json={"action": game["state"]["decision"]["legal"][0]}).json
    client.post(f"/api/games/{game['id']}/resign")
    record = json.loads(client.get(f"/api/games/{game['id']}/record").data)
    with pytest.raises(AnalysisStopped):
        analyse_record(record, samples=1, stop=lambda: True)
    lines = list(stream_analysis(record, 1, 0, None, time_limit=0.0))
    answer = json.loads(lines[-1])
    assert "longer than the server's limit of 0 s" in answer["error"]
