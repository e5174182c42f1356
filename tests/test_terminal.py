"""The terminal game as a person plays it: a real pseudo-terminal driven by pexpect, reading the
lines a player reads (the trick lines with who won and why, the bot's name, the final score)."""

from __future__ import annotations

import sys

import pytest

pexpect = pytest.importorskip("pexpect")


def test_a_whole_game_in_a_terminal_tells_each_trick():
    child = pexpect.spawn(sys.executable, ["-m", "imperiale_cli", "play", "--seed", "3", "--rules", "academie"],
                          encoding="utf-8", timeout=120, dimensions=(50, 200))
    tricks = []
    while True:
        index = child.expect([r"\n> ", r"Trick (\d+): ([^\r\n]+)\r\n", r"Final score: ([^\r\n]+)\r\n",
                              pexpect.EOF])
        if index == 0:
            child.sendline("1")
        elif index == 1:
            tricks.append(child.match.group(2))
        elif index == 2:
            break
        else:
            raise AssertionError("the game ended without its final score")
    assert len(tricks) >= 12
    assert all(" the trick (" in t and t.rstrip(".").endswith(("trumped)", "the highest trump)",
                                                               "the highest of the suit led)")) for t in tricks)
    child.expect(["Save the record", pexpect.EOF])
    child.sendline("")
    child.expect(pexpect.EOF)


def test_score_events_are_announced_in_the_deal_where_they_happen():
    """The point won, an impériale shown, the turned honour: each told ("  * ...") as it happens,
    before the deal's first trick when it comes before the play, not only at the deal's end."""
    import io
    import re

    child = pexpect.spawn(sys.executable, ["-m", "imperiale_cli", "play", "--seed", "3", "--rules", "academie"],
                          encoding="utf-8", timeout=120, dimensions=(50, 200))
    child.logfile_read = transcript = io.StringIO()
    while child.expect([r"\n> ", r"Final score: [^\r\n]+\r\n", pexpect.EOF]) == 0:
        child.sendline("1")
    child.sendline("")
    child.expect(pexpect.EOF)
    deals = re.split(r"\*\*\* Deal \d+:", transcript.getvalue().replace("\r", ""))[1:]
    assert len(deals) >= 2
    told_before_play = 0
    for deal in deals:
        before_play = deal.split("Trick 1:")[0]
        point = [line for line in deal.splitlines() if "wins the point" in line]
        if point:  # the point is decided before the first trick in academie: told then
            assert point[0].startswith("  * ") and point[0] in before_play, deal[:2000]
            told_before_play += 1
        end = deal.split("--- End of deal")[1] if "--- End of deal" in deal else ""
        assert "wins the point" not in end  # told once, when it happened
    assert told_before_play >= 1


def test_analyse_in_a_terminal_shows_progress_first_and_wraps_at_its_width(tmp_path):
    """A whole game analysed in an 80-column pseudo-terminal: the progress bar comes before any of the
    report, the report's lines fit the terminal, and the players are named as the record names them."""
    import json

    from imperiale_web.table import Table

    table = Table("academie", "heuristic", seed=5)
    while not table.finished:
        table.play(table.view()["decision"]["legal"][0])
    path = tmp_path / "game.json"
    path.write_text(json.dumps(table.record()))
    child = pexpect.spawn(sys.executable, ["-m", "imperiale_cli", "analyse", str(path), "--samples", "1",
                                           "--horizon", "2"], encoding="utf-8", timeout=300, dimensions=(40, 80))
    child.expect(r"analysing")
    assert "Analysis (" not in child.before  # told before the report starts
    child.expect(pexpect.EOF)
    report = child.before[child.before.index("Analysis ("):]
    lines = [line for line in report.replace("\r", "").splitlines() if not line.startswith("\x1b")]
    assert len(lines) > 100 and max(len(line) for line in lines) <= 80
    assert "Players: You (seat 0), heuristic (seat 1)" in lines
