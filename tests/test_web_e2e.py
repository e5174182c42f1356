"""End-to-end tests of the web table in a real browser: the operating system's Chromium driven by Playwright.

The server runs in a thread on a free localhost port; the browser never reaches anything else.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright
from werkzeug.serving import make_server

from imperiale_web.app import create_app

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
DOCS = Path(__file__).resolve().parent.parent / "docs"
# The screenshots in docs/ are refreshed only when asked (IMPERIALE_SCREENSHOTS=1), so that a
# test run never changes the repository; otherwise they go to a scratch folder.
SHOTS = DOCS if os.environ.get("IMPERIALE_SCREENSHOTS") == "1" else Path(tempfile.mkdtemp(prefix="imperiale-shots-"))


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    return tmp_path_factory.mktemp("records")


@pytest.fixture(scope="module")
def server(records):
    httpd = make_server("127.0.0.1", 0, create_app(records), threaded=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser():
    assert Path(CHROMIUM).is_file(), f"{CHROMIUM} is missing: apt-get install chromium (.ci/run does it)"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    yield pg
    context.close()


def start_game(page, server, preset="academie", seed="12"):
    page.goto(server)
    page.select_option("#preset", preset)
    page.fill("#opponent", "heuristic")
    page.fill("#seed", seed)
    page.click("#start")
    expect(page.locator("#my-hand .card").first).to_be_visible()


def take_turn(page) -> bool:
    """Answer the pending question or play the first highlighted card; False once the game is over."""
    if page.locator("#game-over").count():
        return False
    before = page.locator("#play-table").inner_html()
    if page.locator("#answer-show").count():
        page.click("#answer-show")
    elif page.locator(".answer-point").count():
        page.locator(".answer-point").first.click()
    else:
        page.locator("#my-hand .card.legal").first.click()
    page.wait_for_function("before => document.getElementById('play-table').innerHTML !== before", arg=before)
    return True


def test_a_whole_game_against_the_heuristic(page, server, records):
    start_game(page, server)
    turns = 0
    while take_turn(page):
        turns += 1
        if turns == 30:
            page.screenshot(path=str(SHOTS / "web_table.png"))
        assert turns < 3000
    over = page.locator("#game-over").inner_text()
    assert "win" in over
    score = page.locator("#score .score-line")
    imperiales = [int(score.nth(p).get_attribute("data-imperiales")) for p in range(2)]
    assert max(imperiales) >= 5
    assert not page.locator("#message").is_visible()
    with page.expect_download() as info:
        page.click("#download")
    saved = records / "played.json"
    info.value.save_as(saved)
    record = json.loads(saved.read_text())
    assert record["format"] == "imperiale-record/1"
    assert sum(len(d["actions"]) for d in record["deals"]) > turns  # the bot's moves too


def test_an_illegal_move_is_refused_with_a_message(page, server):
    start_game(page, server, seed="21")
    while not page.locator("#my-hand .card.legal").count() or page.locator("#my-hand .card:not(.legal)").count() == 0:
        assert take_turn(page), "the game ended before an illegal card was possible"
    hand_before = page.locator("#my-hand").inner_html()
    page.locator("#my-hand .card:not(.legal)").first.click()
    message = page.locator("#message")
    expect(message).to_be_visible()
    expect(message).to_contain_text("not legal now")
    assert page.locator("#my-hand").inner_html() == hand_before


def test_a_record_replayed_to_its_end_shows_the_replayed_score(page, server, records, tmp_path):
    saved = records / "played.json"
    if not saved.exists():  # this test may run alone
        client = create_app(records).test_client()
        game = client.post("/api/games", json={"preset": "academie", "opponent": "heuristic", "seed": 12}).json
        state = game["state"]
        while not state["over"]:
            state = client.post(f"/api/games/{game['id']}/move",
                                json={"action": state["decision"]["legal"][0]}).json["state"]
        saved.write_bytes(client.get(f"/api/games/{game['id']}/record").data)
    cli = subprocess.run([sys.executable, "-m", "imperiale_cli", "replay", str(saved)], capture_output=True,
                         text=True, check=True, cwd=Path(__file__).resolve().parent.parent)
    expected = json.loads(cli.stdout)
    page.goto(server)
    page.click("#tab-replay")
    page.set_input_files("#record-file", str(saved))
    expect(page.locator("#position")).to_contain_text("step 0 of")
    total = int(page.locator("#position").inner_text().split(" of ")[1])
    for _ in range(5):
        page.click("#forward")
    page.click("#back")
    expect(page.locator("#position")).to_have_text(f"step 4 of {total}")
    page.click("#last")
    final = page.locator("#final-score")
    expect(final).to_be_visible()
    assert json.loads(final.get_attribute("data-final")) == expected["final"]
    score = page.locator("#score .score-line")
    for p in range(2):
        assert int(score.nth(p).get_attribute("data-imperiales")) == expected["final"]["imperiales"][p]
        assert int(score.nth(p).get_attribute("data-points")) == expected["final"]["points"][p]


def test_the_analysis_view(page, server, tmp_path):
    client = create_app(tmp_path).test_client()
    game = client.post("/api/games", json={"preset": "academie", "opponent": "heuristic", "seed": 31}).json
    state = game["state"]
    while state["deal"] == 0 and not state["over"]:
        legal = state["decision"]["legal"]
        state = client.post(f"/api/games/{game['id']}/move", json={"action": legal[-1]}).json["state"]
    record = json.loads(client.get(f"/api/games/{game['id']}/record").data)
    record["deals"] = record["deals"][:1]
    path = tmp_path / "deal.json"
    path.write_text(json.dumps(record))
    page.goto(server)
    page.click("#tab-replay")
    page.set_input_files("#record-file", str(path))
    page.fill("#samples", "2")
    page.fill("#horizon", "5")
    page.click("#analyse")
    expect(page.locator("#value-chart")).to_be_visible(timeout=120_000)
    # Step to a valued card whose move lost value, if any, else to the first valued card.
    frames = len(record["deals"][0]["actions"])
    target = None
    analysis = client.post("/api/analyse", json={"record": record, "samples": 2, "horizon": 5}).json
    decisions = analysis["deals"][0]["decisions"]
    valued = [d for d in decisions if d["solver"] is not None and d["kind"] == "play"]
    lossy = [d for d in valued if d["solver"]["loss"] > 0]
    target = (lossy or valued)[0]
    assert target["index"] < frames
    for _ in range(target["index"]):
        page.click("#forward")
    expect(page.locator("#values")).to_be_visible()
    assert page.locator("#values tr").count() == len(target["values"]) + 1
    expect(page.locator("#move-loss")).to_contain_text(f"solver {target['solver']['loss']:+.1f}".replace("+0.0", "0.0"))
    page.screenshot(path=str(SHOTS / "web_analysis.png"))
