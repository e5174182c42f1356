"""Analysis of a game record: the value of every legal action at every decision, and the loss of the move made.

Two judges value each legal action of each decision, in **points** (a counter is 4, an
impériale 24) for the acting player, as a difference: his gain minus the mean gain of the
others over the rest of the deal.

* ``solver`` (double dummy): every hand is known.  A card's value is the exact alpha-beta
  value of the rest of the play (the compiled :class:`imperiale_agents.search.compiled_solver.CompiledSolver`,
  equal to the pure-Python :class:`imperiale_agents.search.solver.Solver` that values the declarations'
  playouts: honours captured and the trick score; wipes, the target and the fallen impériale
  are not part of it).
* ``pimc``: only what the acting player knows.  Deals of the hidden cards are sampled from his
  observation (:func:`imperiale_agents.search.pimc.sample_worlds`, which never sees the engine) and each is
  solved as above; the value is the mean over the samples.

A declaration (show or hide, the point or sink) is valued by playing it in the deal (the
real one for ``solver``, each sampled one for ``pimc``) and letting every later declaration
of the deal be answered as in the record (a question the record did not ask, in a sampled
deal, is answered ``hide``; a point no longer legal is sunk).  Its value is the change of
score (24 x impériales + points, wipes included) from the decision to the first card of
the play, plus the open-hand value of the play from there.  Under open hands a declaration
never changes the cards, so the play's value is the same for every option unless an option
ends the deal or the game.  With the Foster timing the elder's first lead (the record's
card) comes between the declarations.

Each decision gets, per judge, the best value, the value of the action taken and the
``loss`` (best minus taken, never negative).  Losses are summed per player over each deal
and over the record.

With a belief model (``belief``) each decision also carries the belief of the acting player
(:func:`imperiale_agents.analysis.belief_report.decision_belief`): each card he has not seen with its
probability of lying in each other hand or the talon, computed from his observation alone.

``horizon``: a card is valued only when at most ``horizon`` tricks are left in the deal (the
current one included), and a declaration's play value only then too (it is otherwise left
out: ``"playout": false``, the values being the declaration scores alone).  An early
three-player position costs the pure-Python solver of the declaration playouts minutes,
hence the defaults (12 tricks with two players, 6 with three).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from imperiale_agents.analysis.belief_report import belief_text, decision_belief
from imperiale_agents.observation_view import decode
from imperiale_agents.search.belief_model import BeliefNet
from imperiale_agents.search.compiled_solver import CompiledSolver
from imperiale_agents.search.pimc import position, sample_worlds, world_values
from imperiale_agents.search.solver import INF, Solver
from imperiale_env.core import actions as act
from imperiale_env.core.actions import action_to_record
from imperiale_env.core.cards import card_code
from imperiale_env.core.rules import Rules
from imperiale_env.records.game_records import game_from_record, replay_record
from imperiale_env.reference.game import Deal, Decision, Game
from imperiale_env.reference.observed_game import ObservedGame

FORMAT = "imperiale-analysis/1"
DEFAULT_SAMPLES = 8
MAX_SAMPLES = 1000
JUDGES = ("solver", "pimc")


def default_horizon(players: int) -> int:
    """Tricks left from which cards are valued by default (see the module docstring)."""
    return 12 if players == 2 else 6


# ---------------------------------------------------------------------- the open-hand value


def card_mask(cards) -> int:
    """The cards as the solvers' bitmask (bit ``c`` = card ``c``)."""
    out = 0
    for c in cards:
        out |= 1 << int(c)
    return out


def playout_value(rules: Rules, trump: int, hands: tuple[int, ...], leader: int, trick: tuple[int, ...],
                  tricks: tuple[int, ...], played: int, me: int) -> float:
    """Exact value for ``me`` of the rest of the play with every hand known, whoever is to play
    (seats absolute; ``hands`` bitmasks; ``trick`` the cards of the current trick in play order)."""
    if played >= 12:
        return 0.0
    solver = Solver(rules, trump, me=me)
    seat = (leader + len(trick)) % rules.players
    if seat == me:
        return max(solver.move_values(hands, leader, trick, tricks, played).values())
    win, win_seat = 0, 0
    for k, c in enumerate(trick):
        if k == 0 or solver.beats(c, win):
            win, win_seat = c, (leader + k) % rules.players
    value = solver.search(hands, leader, trick, win, win_seat, tricks, played, -INF, INF)
    if solver.linear:  # the constant the linear scoring leaves out (as in Solver.move_values)
        value += solver.per_trick * (tricks[me] - 6)
    return float(value)


def _game_playout(game: Game, me: int) -> float:
    s = game.state
    assert s is not None
    hands = tuple(card_mask(h) for h in s.hands)
    return playout_value(game.rules, s.deal.trump, hands, s.leader,
                         tuple(c for _, c in s.trick), tuple(s.tricks), s.tricks_played, me)


# ---------------------------------------------------------------------- one deal, replayed with a policy


@dataclass
class DealPlan:
    """What the record says of one deal, for replaying it in the real or a sampled deal."""

    rules: Rules
    start_imperiales: list[int]
    start_points: list[int]
    answers: dict[tuple[int, str, frozenset[int]], int] = field(default_factory=dict)
    points: dict[int, int] = field(default_factory=dict)
    first_lead: int | None = None

    def answer(self, decision: Decision) -> int | None:
        """The record's answer to a declaration decision (a default when it has none); for a
        card, the record's first lead where declarations follow it (Foster), else ``None``: stop."""
        if decision.kind == "question":
            q = decision.question
            assert q is not None
            return self.answers.get((decision.player, q.kind, q.cards), act.HIDE)
        if decision.kind == "point":
            a = self.points.get(decision.player, act.SINK)
            return a if a in decision.legal else act.SINK
        return None

    def start(self, deal: Deal) -> Game:
        return Game(self.rules, dealer=deal.dealer, imperiales=self.start_imperiales, points=self.start_points,
                    deals=lambda i, _d: deal if i == 0 else None, single_deal=True)


def _score_vector(game: Game) -> np.ndarray:
    return 24.0 * np.asarray(game.imperiales, dtype=float) + np.asarray(game.points, dtype=float)


def _difference(delta: np.ndarray, me: int) -> float:
    others = np.delete(delta, me)
    return float(delta[me] - others.mean())


def _is_first_lead_with_declarations_after(game: Game) -> bool:
    s = game.state
    return (game.rules.declaration_timing == "dealer_after_first_lead" and s is not None
            and s.tricks_played == 0 and not s.trick)


def declaration_values(plan: DealPlan, deal: Deal, prefix_turn: int, me: int, legal: list[int],
                       horizon: int) -> tuple[dict[int, float], bool]:
    """Values for ``me`` of each option of his ``prefix_turn``-th decision of ``deal`` (0-based),
    the deal being replayed with ``plan``; and whether the play's value is included."""
    values: dict[int, float] = {}
    with_play = True
    for option in legal:
        game = plan.start(deal)
        turns = 0
        while True:  # up to the decision
            d = game.decision
            if d is None:
                raise ValueError("the deal ended before the decision being analysed")
            if d.player == me:
                if turns == prefix_turn:
                    break
                turns += 1
            game.step(_replay_action(plan, game, d))
        before = _score_vector(game)
        game.step(option)
        while game.decision is not None:
            d = game.decision
            if d.kind == "play" and not _is_first_lead_with_declarations_after(game):
                break
            game.step(_replay_action(plan, game, d))
        value = _difference(_score_vector(game) - before, me)
        if game.decision is not None:
            if 12 - game.state.tricks_played <= horizon:
                value += _game_playout(game, me)
            else:
                with_play = False
        values[option] = value
    return values, with_play


def _replay_action(plan: DealPlan, game: Game, d: Decision) -> int:
    a = plan.answer(d)
    if a is None:  # the Foster first lead before the dealer's declarations
        a = plan.first_lead if plan.first_lead in d.legal else d.legal[0]
    return a


# ---------------------------------------------------------------------- sampled deals (pimc)


def sampled_deals(obs: np.ndarray, rules: Rules, me: int, deal: Deal, samples: int,
                  rng: np.random.Generator) -> list[tuple[Deal, tuple[int, ...]]]:
    """Deals consistent with ``me``'s observation ``obs`` (one row): each as the dealt cards
    (for replaying declarations) and the current hands (bitmasks by absolute seat)."""
    P = rules.players
    v = decode(obs)
    worlds = sample_worlds(obs, rules, samples, rng)
    out = []
    for w in worlds:
        now = [0] * P
        dealt: list[frozenset[int]] = [frozenset()] * P
        for rel in range(P):
            seat = (me + rel) % P
            held = np.flatnonzero(w[rel])
            now[seat] = card_mask(held)
            dealt[seat] = frozenset(int(c) for c in held) | frozenset(int(c) for c in np.flatnonzero(v.played[0, rel]))
        talon: tuple[int, ...] = ()
        if P == 2:
            used = set().union(*dealt) | {deal.turned}
            talon = tuple(c for c in sorted(set(deal.talon) | set().union(*deal.hands)) if c not in used)
        out.append((Deal(deal.dealer, tuple(dealt), deal.turned, talon), tuple(now)))
    return out


def pimc_card_values(obs: np.ndarray, rules: Rules, samples: int, rng: np.random.Generator) -> dict[int, float]:
    """Mean open-hand value of each legal card over deals sampled from the observation alone."""
    v = decode(obs)
    worlds = sample_worlds(obs, rules, samples, rng)
    leader, trick, tricks, played = position(v, 0, rules)
    values = world_values(worlds, rules, int(v.trump[0]), (leader, trick, tricks, played))
    mean = values.mean(axis=0)  # every world gives the same legal cards (the acting hand is known)
    return {int(c): float(mean[c]) for c in np.flatnonzero(~np.isnan(mean))}


# ---------------------------------------------------------------------- the record


@dataclass
class _Point:
    """One decision of the record, as the analysis needs it."""

    deal: int
    index: int
    decision: Decision
    action: int
    obs: np.ndarray
    turn: int  # how many decisions the player took before this one in the deal
    hands: tuple[int, ...]
    leader: int
    trick: tuple[int, ...]
    tricks: tuple[int, ...]
    played: int


def _walk(record: dict[str, Any]) -> tuple[Game, list[list[_Point]], list[DealPlan]]:
    """Replay ``record`` (checked first: a bad record raises RecordError before any work)."""
    played = game_from_record(record)
    summary = replay_record(record)
    observed = ObservedGame.from_game(played)
    rules = played.rules
    points_by_deal: list[list[_Point]] = []
    plans: list[DealPlan] = []
    start_imp, start_pts = list(played.start_imperiales), list(played.start_points)
    for d in range(len(record["deals"])):
        if d > 0:
            start_imp = summary["deals"][d - 1]["score"]["imperiales"]
            start_pts = summary["deals"][d - 1]["score"]["points"]
        plan = DealPlan(rules, list(start_imp), list(start_pts))
        points: list[_Point] = []
        turns = [0] * rules.players
        state = observed.game.history[d]
        for i, (player, action) in enumerate(played.history[d].actions):
            game = observed.game
            dec = game.decision
            assert dec is not None and dec.player == player
            s = game.state
            obs, _mask_row = observed.acting_view()
            if dec.kind == "question":
                assert dec.question is not None
                plan.answers[(player, dec.question.kind, dec.question.cards)] = action
            elif dec.kind == "point":
                plan.points[player] = action
            elif s.tricks_played == 0 and not s.trick and plan.first_lead is None:
                plan.first_lead = action
            points.append(_Point(d, i, dec, action, obs.copy(), turns[player], tuple(card_mask(h) for h in s.hands),
                                 s.leader, tuple(c for _, c in s.trick),
                                 tuple(s.tricks), s.tricks_played))
            turns[player] += 1
            observed.step(action)
        assert observed.game.history[d] is state
        points_by_deal.append(points)
        plans.append(plan)
    return played, points_by_deal, plans


def _judge(values: dict[int, float] | None, action: int) -> dict[str, Any] | None:
    if values is None:
        return None
    best = max(values.values())
    chosen = values[action]
    return {"best": best, "chosen": chosen, "loss": max(0.0, best - chosen),
            "best_actions": [action_to_record(a) for a in sorted(values) if values[a] == best]}


class AnalysisStopped(RuntimeError):
    """The analysis was asked to stop (its time was up, or its client left)."""


def analyse_record(record: dict[str, Any], samples: int = DEFAULT_SAMPLES, seed: int = 0,
                   horizon: int | None = None, stop: Callable[[], bool] | None = None,
                   belief: BeliefNet | None = None,
                   progress: Callable[[int, int, int], None] | None = None) -> dict[str, Any]:
    """The annotated record of ``record`` (see docs/records.md#annotated for every field).
    ``stop``: asked before each decision is valued; when it answers true the analysis ends with
    :class:`AnalysisStopped` (a server's time limit, a client gone).  ``belief``: a belief model;
    each decision then carries ``"belief"``, the acting player's (from his observation only).
    ``progress(done, total, deal)``: told before the first decision is valued and after each one
    (decisions valued so far, of how many, in which deal), for a progress bar."""
    played, points_by_deal, plans = _walk(record)
    total, done = sum(len(points) for points in points_by_deal), 0
    if progress is not None:
        progress(0, total, 0)
    rules = played.rules
    P = rules.players
    horizon = default_horizon(P) if horizon is None else horizon
    deals_out = []
    game_loss = {j: [0.0] * P for j in JUDGES}
    for d, points in enumerate(points_by_deal):
        deal = played.history[d].deal
        plan = plans[d]
        deal_loss = {j: [0.0] * P for j in JUDGES}
        decisions = []
        for pt in points:
            if stop is not None and stop():
                raise AnalysisStopped(f"stopped at deal {d + 1}, decision {pt.index}")
            dec, p = pt.decision, pt.decision.player
            rng = np.random.default_rng([seed, d, pt.index])
            tricks_left = 12 - pt.played
            note = None
            playout = True
            if dec.kind == "play":
                if tricks_left <= horizon:
                    solver = CompiledSolver(rules, deal.trump, me=p).move_values(pt.hands, pt.leader, pt.trick,
                                                                                 pt.tricks, pt.played)
                    pimc = pimc_card_values(pt.obs, rules, samples, rng)
                else:
                    solver = pimc = None
                    note = f"not valued: {tricks_left} tricks left, more than the horizon {horizon}"
            else:
                solver, playout = declaration_values(plan, deal, pt.turn, p, dec.legal, horizon)
                pimc = _pimc_declaration(pt, plan, deal, rules, samples, rng, horizon)
            judged = {"solver": _judge(solver, pt.action), "pimc": _judge(pimc, pt.action)}
            for j in JUDGES:
                if judged[j] is not None:
                    deal_loss[j][p] += judged[j]["loss"]
            decisions.append({
                "index": pt.index,
                "player": p,
                "kind": dec.kind,
                "question": None if dec.question is None else {
                    "kind": dec.question.kind, "cards": [card_code(c) for c in sorted(dec.question.cards)]},
                "action": action_to_record(pt.action),
                "tricks_left": tricks_left,
                "trick": [card_code(c) for c in pt.trick],
                "playout": playout if solver is not None else None,
                "note": note,
                "values": [{"action": action_to_record(a),
                            "solver": None if solver is None else solver[a],
                            "pimc": None if pimc is None else pimc[a]} for a in dec.legal],
                **judged,
                **({} if belief is None else {"belief": decision_belief(belief, pt.obs, p)}),
            })
            done += 1
            if progress is not None:
                progress(done, total, d)
        for j in JUDGES:
            for q in range(P):
                game_loss[j][q] += deal_loss[j][q]
        deals_out.append({"deal": d, "dealer": deal.dealer, "trump": "SHDC"[deal.trump],
                          "decisions": decisions, "loss": deal_loss})
    return {
        "format": FORMAT,
        "settings": {"samples": samples, "seed": seed, "horizon": horizon, "unit": "points"},
        "record": record,
        "replay": replay_record(record),
        "deals": deals_out,
        "loss": game_loss,
    }


def _pimc_declaration(pt: _Point, plan: DealPlan, deal: Deal, rules: Rules, samples: int,
                      rng: np.random.Generator, horizon: int) -> dict[int, float]:
    p = pt.decision.player
    total: dict[int, float] = {}
    worlds = sampled_deals(pt.obs, rules, p, deal, samples, rng)
    for world, _now in worlds:
        values, _ = declaration_values(plan, world, pt.turn, p, pt.decision.legal, horizon)
        for a, v in values.items():
            total[a] = total.get(a, 0.0) + v
    return {a: t / len(worlds) for a, t in total.items()}


# ---------------------------------------------------------------------- the readable report


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:+.1f}"


def _act_text(a: dict[str, str]) -> str:
    return " ".join(a.values())


def _belief_lines(dec: dict[str, Any], names: list[str] | None) -> list[str]:
    return [f"       {x}" for x in belief_text(dec["belief"], names)] if "belief" in dec else []


LEGEND = ("A line a decision: '?' marks a move that lost value under the open-hand solver, '??' one that lost "
          "4 points (a counter) or more; then the value of the move made under each judge (the best option's, "
          "and the loss), and in [ ] every legal option valued solver/pimc, in points for the player to act.")


def report_text(analysis: dict[str, Any], width: int | None = None) -> str:
    """A readable report: each decision with the values of its options, the losses marked ``?``,
    the players by the names the record gives (``player N`` otherwise); with ``width``, long lines
    wrap at that many characters, their continuation indented under the move."""
    s = analysis["settings"]
    record = analysis["record"]
    players = record["players"]
    names = record.get("names") or [f"player {p}" for p in range(players)]
    lines = [f"Analysis ({s['unit']} for the acting player; pimc with {s['samples']} samples, seed {s['seed']}, "
             f"cards valued with at most {s['horizon']} tricks left)", LEGEND]
    if "names" in record:
        lines.append("Players: " + ", ".join(f"{name} (seat {p})" for p, name in enumerate(names)))
    for deal in analysis["deals"]:
        lines.append("")
        # deals counted from 1 in the text, as the terminal game tells them (the JSON keeps the index)
        lines.append(f"Deal {deal['deal'] + 1} (dealer {names[deal['dealer']]}, trump {deal['trump']})")
        for dec in deal["decisions"]:
            mark = "  "
            sv, pv = dec["solver"], dec["pimc"]
            if sv is not None and sv["loss"] > 1e-9:
                mark = "??" if sv["loss"] >= 4 else "? "
            head = f"{mark} #{dec['index']:<3} {names[dec['player']]} {_act_text(dec['action']):<9}"
            if dec["note"]:
                lines.append(f"{head} {dec['note']}")
                lines.extend(_belief_lines(dec, record.get("names")))
                continue
            judged = []
            for name, j in (("solver", sv), ("pimc", pv)):
                if j is not None:
                    judged.append(f"{name} {_fmt(j['chosen'])} (best {_fmt(j['best'])}, loss {j['loss']:.1f})")
            options = ", ".join(f"{_act_text(v['action'])} {_fmt(v['solver'])}/{_fmt(v['pimc'])}"
                                for v in dec["values"])
            lines.append(f"{head} {'; '.join(judged)}  [{options}]")
            lines.extend(_belief_lines(dec, record.get("names")))
        lines.append("Loss in the deal: " + "; ".join(
            f"{j} " + " ".join(f"{names[q]} {deal['loss'][j][q]:.1f}" for q in range(players)) for j in JUDGES))
    lines.append("")
    lines.append("Loss in the record: " + "; ".join(
        f"{j} " + " ".join(f"{names[q]} {analysis['loss'][j][q]:.1f}" for q in range(players)) for j in JUDGES))
    if width is None:
        return "\n".join(lines)
    return "\n".join(wrapped for line in lines for wrapped in _wrap(line, width))


def _wrap(line: str, width: int) -> list[str]:
    """``line`` cut at spaces to ``width`` characters, the continuation indented as far as its text starts."""
    if len(line) <= width or not line.strip():
        return [line]
    indent = " " * min(len(line) - len(line.lstrip(" ?#")) + 6, width // 3)
    return textwrap.wrap(line, width, subsequent_indent=indent, break_on_hyphens=False) or [line]

__all__ = ["FORMAT", "analyse_record", "declaration_values", "playout_value", "report_text"]
