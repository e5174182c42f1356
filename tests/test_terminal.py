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
