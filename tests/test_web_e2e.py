"""End-to-end tests of the web table in a real browser: the operating system's Chromium driven by Playwright.

The server runs in a thread on a free localhost port; the browser never reaches anything else.
Every answer of the server to the page is kept (``answers``), so that a whole game can be
searched for what the page must never receive: a card of the bot's hand it has not played, or the seed.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright
from werkzeug.serving import make_server

from imperiale_env.core.rules import PRESET_NAMES
from imperiale_web.app import create_app
from imperiale_web.screenshots import take_turn, wait_until_drawn

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]


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
    pg.answers = []  # every API answer: (url, response)
    pg.on("response", lambda r: pg.answers.append((r.url, r)) if "/api/games" in r.url else None)
    yield pg
    context.close()


def start_game(page, server, preset="academie", seed="12", opponent="random"):
    page.goto(server)
    page.select_option("#preset", preset)
    page.fill("#opponent", opponent)
    page.fill("#seed", seed)
    with page.expect_response(re.compile(r"/api/games$")):
        page.click("#start")
    expect(page.locator("#my-hand .card").first).to_be_visible()


def play_to_the_end(page) -> int:
    turns = 0
    while take_turn(page):
        turns += 1
        assert turns < 3000
    return turns


def unplayed_bot_cards(record: dict, state: dict) -> set[str]:
    """The bot's cards in the deal of ``state`` that the page may not know at that point: not played,
    not shown, not the turned card."""
    deal = record["deals"][state["deal"]]
    public = {c for cards in state["played"].values() for c in cards} | {deal["turned"]}
    public |= {c for shown in state["shown"] for c in shown}
    return {c for p, hand in enumerate(deal["hands"]) if p != state["seat"] for c in hand} - public


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_a_whole_game_in_every_preset_leaks_nothing(page, server, records, preset):
    start_game(page, server, preset=preset, seed="7000000000017")  # long: never in an answer by chance
    assert page.locator("#download").is_hidden()  # no record while the game runs
    turns = play_to_the_end(page)
    assert "win" in page.locator("#game-over").inner_text()
    score = page.locator("#score .score-line")
    players = score.count()
    assert max(int(score.nth(p).get_attribute("data-imperiales")) for p in range(players)) >= 1
    assert not page.locator("#message").is_visible()
    posted = [r for _, r in page.answers if r.request.method == "POST"]
    # a click that lands as the game ends is refused (409, the game is over): nothing else may fail
    refused = [json.loads(r.text()) for r in posted if not r.ok]
    assert all(r.status == 409 for r in posted if not r.ok) and all("over" in a["error"] for a in refused)
    answers = [json.loads(r.text()) for r in posted if r.ok]
    with page.expect_download() as info:
        page.click("#download")
    saved = records / f"played-{preset}.json"
    info.value.save_as(saved)
    record = json.loads(saved.read_text())
    assert sum(len(d["actions"]) for d in record["deals"]) > turns  # the bot's moves too
    *live, final = answers
    seed = str(final["state"]["seed"])
    assert final["state"]["over"] and len(live) == turns and not any(a["state"]["over"] for a in live)
    for answer in live:
        text = json.dumps(answer)
        assert seed not in text and answer["state"]["seed"] is None
        state = dict(answer["state"], last_deal_events=None, deals_history=None,
                     news=[n for n in answer["state"]["news"] if n["deal"] == answer["state"]["deal"]])
        if state["tricks_played"] == 0:  # the last trick shown is of the deal before: the same deck, other hands
            state["last_trick"] = None
        text = json.dumps(state)
        leaked = {c for c in unplayed_bot_cards(record, answer["state"]) if f'"{c}"' in text}
        assert not leaked, f"the page received the bot's cards {leaked}"


def test_the_page_explains_the_rules_and_each_decision(page, server):
    page.goto(server)
    expect(page.locator("#hint")).to_be_visible()  # a first visit
    page.click("#rules-open")
    rules = page.locator("#rules")
    expect(rules).to_be_visible()
    assert "the Ace ranks below the Jack" in page.locator("#rules-ranks").inner_text()
    assert "show or hide" in rules.inner_text() and "sink" in rules.inner_text()
    page.click("#rules-close")
    expect(rules).to_be_hidden()
    start_game(page, server, seed="21", opponent="heuristic")
    expect(page.locator("#hint")).to_be_hidden()  # play has started: the welcome closed itself
    kinds = set()
    for _ in range(60):  # the point, and cards that must follow suit
        why = page.locator("#why").inner_text()
        state = json.loads([r for url, r in page.answers if r.request.method == "POST"][-1].text())["state"]
        kind = state["decision"]["kind"]
        kinds.add(kind)
        assert why.startswith("Now: ") and why[5:] == state["decision"]["why"]
        if kind == "point":
            assert "longest suit wins" in why
        elif kind == "question":
            assert "hide it to keep your hand secret" in why
        else:
            assert re.search(r"You lead|follow suit|You have no", why)
        take_turn(page)
        if {"point", "play"} <= kinds and page.locator("#news").count():
            break
    assert {"point", "play"} <= kinds
    # the score events of the last move are told as they happen, in the words of the deal's events
    news = page.locator("#news .news-line")
    assert news.count() >= 1
    state = json.loads([r for url, r in page.answers if r.request.method == "POST"][-1].text())["state"]
    events = page.locator("#events").inner_text()
    for i in range(news.count()):
        line = news.nth(i)
        if int(line.get_attribute("data-deal")) == state["deal"]:
            assert line.inner_text() in events


def test_a_double_click_sends_one_move(page, server):
    start_game(page, server, seed="21", opponent="heuristic")
    while not page.locator("#my-hand .card.legal").count():
        assert take_turn(page), "the game ended before the player had a card to play"
    before = sum(1 for url, r in page.answers if url.endswith("/move"))
    with page.expect_response(lambda r: r.url.endswith("/move")):
        page.locator("#my-hand .card.legal").first.dblclick()
    wait_until_drawn(page)
    page.wait_for_timeout(300)  # a second request, if one had been sent, has had time to answer
    moves = [r for url, r in page.answers if url.endswith("/move")][before:]
    assert len(moves) == 1 and moves[0].ok
    assert not page.locator("#message").is_visible()


def test_a_trick_won_by_the_bot_stays_until_the_next_move(page, server):
    start_game(page, server, seed="21", opponent="heuristic")
    for _ in range(400):
        reason = page.locator("#last-trick-reason")
        mine = page.locator("#trick figure").count()
        if reason.count() and "You" not in reason.inner_text() and mine == 1:
            break  # the bot won the last trick and has led the next one
        assert take_turn(page), "the game ended before the bot won a trick and led"
    shown = page.locator("#last-trick figure").count()
    assert shown == 2 and page.locator("#trick figure").count() == 1
    assert re.search(r"won the trick with \w+: (trumped|the highest of the suit led|the highest trump)",
                     page.locator("#last-trick-reason").inner_text())
    before = page.locator("#last-trick").inner_html()
    page.wait_for_timeout(300)
    assert page.locator("#last-trick").inner_html() == before  # it stays while the player thinks
    assert sum(page.locator(".played-suit").nth(i).inner_text().count(" ") for i in range(4)) >= 3
    take_turn(page)
    assert page.locator("#last-trick").inner_html() != before


def _finished_record(records: Path, seed: int, preset: str = "academie") -> dict:
    client = create_app(records).test_client()
    game = client.post("/api/games", json={"preset": preset, "opponent": "heuristic", "seed": seed}).json
    state = game["state"]
    while not state["over"]:
        action = {"action": state["decision"]["legal"][0]}
        state = client.post(f"/api/games/{game['id']}/move", json=action).json["state"]
    return json.loads(client.get(f"/api/games/{game['id']}/record").data)


def test_a_multi_record_jsonl_is_picked_from(page, server, records):
    chosen = [_finished_record(records, s) for s in (3, 4)]
    (records / "two.jsonl").write_text("".join(json.dumps(r) + "\n" for r in chosen))
    for source in ("upload", "folder"):
        page.goto(server)
        page.click("#tab-replay")
        if source == "upload":
            page.set_input_files("#record-file", str(records / "two.jsonl"))
        else:
            page.select_option("#record-list", "two.jsonl")
        expect(page.locator("#position")).to_contain_text("step 0 of")
        expect(page.locator("#pick-label")).to_be_visible()
        assert page.locator("#record-pick option").count() == 2
        page.select_option("#record-pick", "1")
        total = sum(len(d["actions"]) for d in chosen[1]["deals"])
        expect(page.locator("#position")).to_have_text(f"step 0 of {total}")
        page.click("#last")
        final = json.loads(page.locator("#final-score").get_attribute("data-final"))
        assert final["imperiales"] == [int(x) for x in final["imperiales"]]
        assert not page.locator("#message").is_visible()


def test_a_record_is_analysed_at_full_depth(page, server, records, tmp_path):
    record = _finished_record(records, 31)
    record["deals"] = record["deals"][:1]
    path = tmp_path / "deal.json"
    path.write_text(json.dumps(record))
    page.goto(server)
    page.click("#tab-replay")
    page.set_input_files("#record-file", str(path))
    assert page.locator("#horizon").input_value() == ""  # full depth unless asked
    page.fill("#samples", "2")
    with page.expect_response(re.compile(r"/api/analyse$"), timeout=120_000) as info:
        page.click("#analyse")
        # the analysis tells how far along it is from its start (a progress line every half second)
        expect(page.locator("#analysis-status")).to_contain_text("decisions valued", timeout=2_000)
    analysis = json.loads(info.value.text().strip().splitlines()[-1])
    expect(page.locator("#analysis-progress")).to_be_hidden()
    expect(page.locator("#value-chart")).to_be_visible()
    plays = [d for d in analysis["deals"][0]["decisions"] if d["kind"] == "play"]
    assert plays and all(d["solver"] is not None for d in plays)  # every card valued, the first trick too
    assert page.locator("#chart-legend text").count() == 3
    target = plays[0]
    for _ in range(target["index"]):
        page.click("#forward")
    expect(page.locator("#values")).to_be_visible()
    assert page.locator("#values tr").count() == len(target["values"]) + 1
