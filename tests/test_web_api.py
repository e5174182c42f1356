"""The web table's JSON API through Flask's test client: honest games and 4xx answers for bad input."""

from __future__ import annotations

import json

import pytest
from helpers import drive

from imperiale_env.records.game_records import game_from_record, record_from_game, replay_record
from imperiale_env.reference.game import Game
from imperiale_web.app import create_app


@pytest.fixture
def client(tmp_path):
    return create_app(tmp_path).test_client()


def _finish(client, game_id: str, state: dict) -> dict:
    """Play the person's side with the first legal action until the game ends."""
    for _ in range(5000):
        if state["over"]:
            return state
        action = state["decision"]["legal"][0]
        answer = client.post(f"/api/games/{game_id}/move", json={"action": action})
        assert answer.status_code == 200, answer.json
        state = answer.json["state"]
    raise AssertionError("the game did not end")


def test_a_whole_game_and_its_record(client):
    answer = client.post("/api/games", json={"preset": "academie", "opponent": "heuristic", "seed": 5})
    assert answer.status_code == 201
    game_id, state = answer.json["id"], answer.json["state"]
    assert state["hands"][1 - state["seat"]] is None  # the bot's hand is never sent
    state = _finish(client, game_id, state)
    assert state["winner"] in (0, 1) and state["imperiales"][state["winner"]] >= state["target"]
    download = client.get(f"/api/games/{game_id}/record")
    assert download.status_code == 200 and "attachment" in download.headers["Content-Disposition"]
    record = json.loads(download.data)
    summary = replay_record(record)
    assert summary["winner"] == state["winner"] and summary["final"]["imperiales"] == state["imperiales"]
    me = state["seat"]
    assert record["seed"] == 5 and record["names"][me] == "You" and record["names"][1 - me] == "heuristic"
    assert summary["names"] == record["names"] and summary["seed"] == 5  # the replay says who played
    frames = client.post("/api/replay", json=record).json["frames"]
    assert frames[0]["names"] == record["names"]  # the web replay names the players as the record does


def test_the_person_never_sees_a_bot_hand(client):
    state = client.post("/api/games", json={"preset": "academie3", "opponent": "random", "seed": 2, "seat": 1}).json
    hands = state["state"]["hands"]
    assert hands[0] is None and hands[2] is None and len(hands[1]) == 12


@pytest.mark.parametrize("body, text", [
    ({"preset": "bridge"}, "unknown preset"),
    ({"opponent": "grandmaster"}, "is not offered by this server"),
    ({"opponent": "human"}, "is not offered by this server"),
    ({"opponent": "pimc:0"}, "is not offered by this server"),
    ({"opponent": "neural:/etc/passwd"}, "choose one of: heuristic, random, pimc:16, champion"),
    ({"seed": -1}, "seed"),
    ({"seat": 2}, "seat must be"),
    ([1, 2], "new game is an object"),
])
def test_bad_new_games_are_refused(client, body, text):
    answer = client.post("/api/games", json=body)
    assert answer.status_code == 400 and text in answer.json["error"]


@pytest.mark.parametrize("specs, text", [
    (["grandmaster"], "unknown agent"), (["human"], "'human' is the person"), (["pimc:0"], "pimc:N"),
    ([""], "none empty"),
])
def test_the_servers_opponents_are_checked_at_start(specs, text):
    from imperiale_web.app import ServeError, check_agents

    with pytest.raises(ServeError, match=text):
        check_agents(specs)


def test_illegal_and_malformed_moves_are_refused(client):
    game = client.post("/api/games", json={"preset": "academie", "opponent": "heuristic", "seed": 3}).json
    game_id, state = game["id"], game["state"]
    legal = state["decision"]["legal"]
    illegal = next(a for a in ({"act": "show"}, {"act": "play", "card": "KH"}) if a not in legal)
    answer = client.post(f"/api/games/{game_id}/move", json={"action": illegal})
    assert answer.status_code == 422 and "not legal now" in answer.json["error"]
    assert client.get(f"/api/games/{game_id}").json["state"] == state  # nothing changed
    for bad in ({"action": {"act": "fly"}}, {"action": "KH"}, {"move": 1}):
        assert client.post(f"/api/games/{game_id}/move", json=bad).status_code == 400
    assert client.post(f"/api/games/{game_id}/move", data="{", content_type="application/json").status_code == 400
    assert client.post("/api/games/nope/move", json={"action": legal[0]}).status_code == 404


def test_replay_frames_end_on_the_replayed_score(client):
    game = client.post("/api/games", json={"preset": "foster", "opponent": "heuristic", "seed": 8}).json
    state = _finish(client, game["id"], game["state"])
    record = json.loads(client.get(f"/api/games/{game['id']}/record").data)
    answer = client.post("/api/replay", json=record)
    assert answer.status_code == 200
    frames = answer.json["frames"]
    total = sum(len(d["actions"]) for d in record["deals"])
    assert len(frames) == total + 1
    assert all(all(h is not None for h in f["hands"]) for f in frames)  # a replay shows every hand
    assert frames[-1]["imperiales"] == state["imperiales"] == answer.json["summary"]["final"]["imperiales"]
    assert game_from_record(record).winner == state["winner"]


@pytest.mark.parametrize("record, text", [
    ({"format": "imperiale-record/1"}, "lacks"),
    ([], "JSON object"),
    ({"format": "other", "rules": {}, "players": 2, "start": {}, "deals": []}, "format must be"),
])
def test_malformed_records_get_400(client, record, text):
    answer = client.post("/api/replay", json=record)
    assert answer.status_code == 400 and text in answer.json["error"]
    answer = client.post("/api/analyse", json={"record": record} if isinstance(record, dict) else record)
    assert answer.status_code == 400


def test_analysis_and_its_bounds(client):
    game = client.post("/api/games", json={"preset": "academie", "opponent": "heuristic", "seed": 4}).json
    assert client.post(f"/api/games/{game['id']}/resign").status_code == 200
    record = json.loads(client.get(f"/api/games/{game['id']}/record").data)
    record["deals"] = record["deals"][:1]
    record["deals"][0]["actions"] = record["deals"][0]["actions"][:3]
    answer = client.post("/api/analyse", json={"record": record, "samples": 2, "horizon": 1})
    assert answer.status_code == 200 and answer.mimetype == "application/x-ndjson"
    *progress, analysis = [json.loads(line) for line in answer.get_data(as_text=True).splitlines()]
    assert analysis["format"] == "imperiale-analysis/1"
    # told from the start: a progress line first, counting the decisions of the record
    assert progress and progress[0]["progress"]["done"] == 0
    counted = [p["progress"] for p in progress if p["progress"]["total"] is not None]
    assert all(0 <= p["done"] <= p["total"] for p in counted)
    for bad in ({"samples": 0}, {"samples": 10_000}, {"horizon": 13}, {"seed": "x"}):
        answer = client.post("/api/analyse", json={"record": record, **bad})
        assert answer.status_code == 400, bad


def _record() -> dict:
    game = drive(Game("academie", seed=4, single_deal=True))
    return record_from_game(game)


def test_records_folder_is_the_only_place_read(tmp_path):
    (tmp_path / "one.json").write_text(json.dumps(_record()))
    (tmp_path / "notes.txt").write_text("not a record")
    (tmp_path / "other.json").write_text(json.dumps({"format": "x", "secret": "not a record"}))
    client = create_app(tmp_path).test_client()
    assert client.get("/api/records").json["records"] == ["one.json", "other.json"]
    assert client.get("/api/records/notes.txt").status_code == 404
    assert client.get("/api/records/..%2F..%2Fetc%2Fpasswd").status_code == 404
    assert client.get("/api/records/one.json").status_code == 200
    refused = client.get("/api/records/other.json")  # a JSON file that is not a record is not served
    assert refused.status_code == 400 and "secret" not in refused.get_data(as_text=True)
    assert client.get("/api/nothing").status_code == 404
    assert client.get("/").status_code == 200 and b"app.js" in client.get("/").data
    assert b'rel="icon" href="data:image/svg+xml' in client.get("/").data  # no request for /favicon.ico


def test_a_link_in_the_records_folder_reads_nothing_outside_it(tmp_path):
    folder, outside = tmp_path / "records", tmp_path / "outside"
    folder.mkdir()
    outside.mkdir()
    (outside / "theirs.json").write_text(json.dumps(_record()))
    (folder / "mine.json").write_text(json.dumps(_record()))
    (folder / "link.json").symlink_to(outside / "theirs.json")
    (folder / "dir.json").symlink_to(outside, target_is_directory=True)
    (folder / "inner.json").symlink_to(folder / "mine.json")  # even a link that stays inside
    client = create_app(folder).test_client()
    assert client.get("/api/records").json["records"] == ["mine.json"]  # the names served, nothing else
    for name in ("link.json", "dir.json", "inner.json", "theirs.json", "dir.json%2Ftheirs.json"):
        assert client.get(f"/api/records/{name}").status_code == 404, name
    assert client.get("/api/records/mine.json").status_code == 200


def test_a_file_swapped_for_a_link_after_the_listing_is_refused(tmp_path):
    """The file is opened without following links: a link put in place of a listed file is refused."""
    from imperiale_env.records.game_records import RecordError, load_records

    (tmp_path / "theirs.json").write_text(json.dumps(_record()))
    (tmp_path / "swapped.json").symlink_to(tmp_path / "theirs.json")
    assert load_records(tmp_path / "swapped.json")  # what the command line does: the user's own link
    with pytest.raises(RecordError, match="symbolic link"):
        load_records(tmp_path / "swapped.json", follow_links=False)


def test_serve_command_binds_localhost_and_refuses_a_busy_port(tmp_path):
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "imperiale_cli", "serve", "--port", str(port)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "127.0.0.1" in server.stdout.readline()
        for _ in range(50):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/options", timeout=5) as answer:
                    assert json.loads(answer.read())["presets"]
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError("the server did not answer")
        import http.client

        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        chunks = (b"a" * (1024 * 1024) for _ in range(6))  # 6 MiB with no Content-Length
        try:
            connection.request("POST", "/api/replay", body=chunks, encode_chunked=True,
                               headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
            chunked = connection.getresponse()
            assert chunked.status == 413, chunked.read()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server closed the connection once the limit was passed: refused as well
        finally:
            connection.close()
        busy = subprocess.run([sys.executable, "-m", "imperiale_cli", "serve", "--port", str(port)],
                              capture_output=True, text=True, timeout=60)
        assert busy.returncode == 2 and "cannot serve on 127.0.0.1" in busy.stderr
    finally:
        server.terminate()
        server.wait(timeout=10)
    bad = subprocess.run([sys.executable, "-m", "imperiale_cli", "serve", "--port", "70000"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--port must be from 1 to 65535" in bad.stderr


@pytest.mark.parametrize("preset, seed", [("academie", 0), ("academie3", 1), ("foster", 2), ("imperijal", 3)])
def test_each_score_event_is_told_once_when_it_happens(preset, seed):
    """The answers' ``news`` over a whole game are every deal's score events in words, in order, each
    told once, in the answer to the move that made it; the person's decisions carry the rule behind them."""
    from imperiale_env.records.narrate import decision_rule_text
    from imperiale_web.table import Table, words_of_events

    table = Table(preset, "heuristic", seed=seed)
    told = list(table.view()["news"])
    while not table.finished:
        view = table.view()
        assert view["decision"]["why"] == decision_rule_text(table.game, table.seat)
        before = sum(len(st.events) for st in table.game.history)
        table.play(view["decision"]["legal"][0])
        after = sum(len(st.events) for st in table.game.history)
        news = table.view()["news"]
        assert bool(news) == (after > before)  # told at once, and only when something was scored
        told += news
    game = table.game
    every = [{"deal": st.index, "text": text} for st in game.history
             for text in words_of_events(st.events, game, table.names, table.seat, st.deal.trump)]
    assert told == every and every
