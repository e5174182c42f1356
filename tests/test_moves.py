"""The one reader of typed moves, shared by the terminal game and the human agent."""

from __future__ import annotations

import pytest

from imperiale_agents.policies.human import parse
from imperiale_env.core import actions as act
from imperiale_env.core.cards import parse_card
from imperiale_env.core.typed_moves import read_move


@pytest.mark.parametrize(("text", "meant"), [
    ("  KH ", parse_card("KH")), ("10s", parse_card("10S")), ("show", act.SHOW), ("Y", act.SHOW), ("no", act.HIDE),
    ("pass", act.SINK), ("point h", act.point_action(1)), ("p clubs", act.point_action(3)),
    ("diamond", act.point_action(2)),
    ("2", act.HIDE), ("", None), ("9", None), ("point x", None), ("zz", None),
])
def test_what_a_line_means(text, meant):
    assert read_move(text, [act.SHOW, act.HIDE]) == meant


def test_the_human_agent_takes_only_legal_meanings():
    assert parse("kh", [parse_card("KH")]) == parse_card("KH")
    assert parse("kh", [parse_card("QH")]) is None
    assert parse("point s", [act.point_action(0), act.SINK]) == act.point_action(0)
