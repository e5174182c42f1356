"""The belief model's view for the page: the heat map's numbers, computed on the server.

Two questions are answered, each from one seat's observation only
(:func:`imperiale_agents.analysis.belief_report.decision_belief`):

* in a replay, the belief of the player to act at one decision of a record the page holds
  (:func:`record_belief`): the record is the page's own, and the network still reads only the
  acting seat's observation of it, never the other hands it holds;
* in a running game, the person's own belief now (:func:`seat_belief`): his seat's observation,
  whoever is to act.  No other seat's belief is given while the game runs: a bot's observation
  holds its hand.

The networks are read once per preset and kept (a file is a megabyte; a replay asks at every step).
"""

from __future__ import annotations

import threading
from typing import Any

from imperiale_agents.analysis.belief_report import belief_at, decision_belief, load_belief
from imperiale_agents.search.belief_model import BeliefFileError, BeliefNet, shipped_belief_path
from imperiale_env.core.rules import Rules
from imperiale_env.records.game_records import game_from_record
from imperiale_env.reference.observe import observe
from imperiale_web.table import Table, TableError

_nets: dict[str, BeliefNet] = {}
_lock = threading.Lock()


def belief_model(rules: Rules) -> BeliefNet:
    """The belief shipped for ``rules``' preset (read once); a 404 saying what to do where there is none."""
    with _lock:
        net = _nets.get(rules.preset)
        if net is None:
            if not shipped_belief_path(rules.preset).is_file():
                raise TableError(f"no belief model is shipped for {rules.preset}; in the terminal, imperiale analyse "
                                 f"RECORD --belief FILE shows the beliefs of one you trained (python -m "
                                 f"imperiale_train.belief_training --rules {rules.preset})", 404)
            try:
                net = load_belief(rules)
            except BeliefFileError as exc:  # a damaged shipped file: the server's fault, said as it is
                raise TableError(str(exc), 500) from None
            _nets[rules.preset] = net
        return net


def record_belief(data: Any) -> dict[str, Any]:
    """``{record, deal, index}``: the belief of the player to act at that decision (0-based)."""
    if not isinstance(data, dict) or not isinstance(data.get("record"), dict):
        raise TableError("a belief request is {record, deal, index} (deal and index from 0)")
    where = []
    for name in ("deal", "index"):
        value = data.get(name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise TableError(f"{name} must be an integer from 0, got {value!r}")
        where.append(value)
    net = belief_model(game_from_record(data["record"]).rules)  # a bad record is a 400 first
    try:
        return belief_at(net, data["record"], *where)
    except ValueError as exc:
        raise TableError(str(exc)) from None


def seat_belief(table: Table) -> dict[str, Any]:
    """The person's belief at the table now, from his own seat's observation."""
    game = table.game
    if game.state is None:
        raise TableError("the game has no deal to believe about", 409)
    net = belief_model(table.rules)
    return {"player": table.seat, **decision_belief(net, observe(game, table.seat), table.seat)}
