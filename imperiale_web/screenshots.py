"""``python -m imperiale_web.screenshots [DOCS]``: the pictures of the web table in docs/, regenerated.

The table is served on a free localhost port and driven by the system's Chromium (Playwright), with
fixed seeds, so the same pictures come back: ``web_hint.png`` (the first visit), ``web_question.png``
(the person's first question, with the rule behind it), ``web_table.png`` (a game in progress, the
last trick with its reason), ``web_news.png`` (the first deal's scores told as its last trick ends), ``web_end.png``
(the game over), ``web_analysis.png`` (a deal analysed at full
depth, its value chart) and ``web_beliefs.png`` (the belief model's heat map at a decision of the replay).
"""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from werkzeug.serving import make_server

from imperiale_web.app import create_app

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
DOCS = Path(__file__).resolve().parent.parent / "docs"
SHOTS = ("web_hint.png", "web_question.png", "web_table.png", "web_news.png", "web_end.png", "web_analysis.png",
         "web_beliefs.png")


def _record(records: Path, seed: int) -> Path:
    """One deal of a game played by the first legal move against the heuristic, as a file."""
    client = create_app(records).test_client()
    game = client.post("/api/games", json={"preset": "academie", "opponent": "heuristic", "seed": seed}).json
    state = game["state"]
    while not state["over"]:
        action = {"action": state["decision"]["legal"][0]}
        state = client.post(f"/api/games/{game['id']}/move", json=action).json["state"]
    record = json.loads(client.get(f"/api/games/{game['id']}/record").data)
    record["deals"] = record["deals"][:1]
    path = records / "deal.json"
    path.write_text(json.dumps(record))
    return path


def take_turn(page) -> bool:
    """Answer the pending question or play the first highlighted card, as a person clicks them;
    False once the game is over (the end-to-end tests drive whole games with it)."""
    if page.locator("#game-over").count():
        return False
    with page.expect_response(lambda r: r.url.endswith("/move")):
        if page.locator("#answer-show").count():
            page.click("#answer-show")
        elif page.locator(".answer-point").count():
            page.locator(".answer-point").first.click()
        else:
            page.locator("#my-hand .card.legal").first.click()
    wait_until_drawn(page)
    return True


def wait_until_drawn(page) -> None:
    """Wait until the page has drawn the answer to its move (the table drops ``data-moving``): the
    answer's arrival is not enough, or the next look sees the old table."""
    page.locator("#play-table:not([data-moving])").wait_for()


def _shots(page, url: str, records: Path, docs: Path) -> None:
    page.goto(url)
    page.screenshot(path=str(docs / "web_hint.png"))
    page.click("#hint-close")
    page.fill("#opponent", "heuristic")
    page.fill("#seed", "21")
    page.click("#start")
    page.locator("#my-hand .card").first.wait_for()
    while not page.locator("#question").count():
        assert take_turn(page), "the game ended before the person was asked a question"
    page.screenshot(path=str(docs / "web_question.png"), full_page=True)
    for _ in range(8):
        take_turn(page)
    page.screenshot(path=str(docs / "web_table.png"), full_page=True)
    while not page.locator('#news .news-line[data-deal="0"]').count():  # the first deal's end, told at once
        assert take_turn(page), "the game ended before the first deal's end was told"
    page.screenshot(path=str(docs / "web_news.png"), full_page=True)
    while take_turn(page):
        pass
    page.screenshot(path=str(docs / "web_end.png"), full_page=True)
    page.click("#tab-replay")
    page.set_input_files("#record-file", str(_record(records, 31)))
    page.fill("#samples", "2")
    page.click("#analyse")
    page.locator("#value-chart").wait_for(timeout=120_000)
    for _ in range(10):
        page.click("#forward")
    page.screenshot(path=str(docs / "web_analysis.png"), full_page=True)
    for _ in range(6):
        page.click("#forward")
    page.locator("#belief-map[data-player]").wait_for()
    page.locator("#beliefs").screenshot(path=str(docs / "web_beliefs.png"))


@contextlib.contextmanager
def served_page(records: str | Path) -> Iterator[tuple[Any, str]]:
    """A page of the system's Chromium (1280 x 900) and the address of a table serving ``records``
    on a free localhost port; both stopped on the way out."""
    from playwright.sync_api import sync_playwright

    httpd = make_server("127.0.0.1", 0, create_app(records), threaded=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(20_000)
            try:
                yield page, f"http://127.0.0.1:{httpd.server_port}"
            finally:
                browser.close()
    finally:
        httpd.shutdown()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    docs = Path(args[0]) if args else DOCS
    docs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="imperiale-shots-") as tmp, served_page(tmp) as (page, url):
        _shots(page, url, Path(tmp), docs)
    print(f"imperiale: {', '.join(SHOTS)} written to {docs}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
