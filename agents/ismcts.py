"""OpenSpiel's ISMCTS against one of our agents, on ``python_imperiale`` (:mod:`imperiale_env.openspiel`).

ISMCTS needs the whole history of the deal to resample worlds, which the observation-only
:class:`~imperiale_agents.base.Agent` interface of ``imperiale eval`` does not give, so it is
measured here, in OpenSpiel states, against any agent spec that acts from our observation:

    python -m imperiale_agents.ismcts --simulations 100 --opponent pimc:16 --deals 100 --seed 2040

Duplicate deals, as the ladder: each pair of deals has the same cards, the seats swapped.  The
figure is ISMCTS's deal win rate (a tie counts half; Wilson 95% interval over the deals), its mean
margin in impériales a deal (normal 95% interval) and its milliseconds a decision.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

from imperiale_agents.base import make_agent
from imperiale_agents.tournament import wilson
from imperiale_env import openspiel as ios
from imperiale_env.reference.observe import observe

#: Exploration constant of the UCT child selection (returns are a few impériales wide).
UCT_C = 2.0


@dataclass
class MatchResult:
    margins: list[float]
    ismcts_seconds: float = 0.0
    ismcts_decisions: int = 0

    def summary(self) -> str:
        r = np.array(self.margins)
        wins = float(np.sum(r > 0) + 0.5 * np.sum(r == 0))
        low, high = wilson(wins, len(r))
        half = 1.96 * r.std(ddof=1) / np.sqrt(len(r)) if len(r) > 1 else float("nan")
        ms = 1e3 * self.ismcts_seconds / max(self.ismcts_decisions, 1)
        return (f"{len(r)} deals: ISMCTS won {wins / len(r):.1%} [{low:.1%}, {high:.1%}], margin "
                f"{r.mean():+.3f} ± {half:.3f} impériales a deal, {ms:.0f} ms a decision")


def make_bot(game, simulations: int, seed: int) -> ismcts.ISMCTSBot:
    """OpenSpiel's Python ISMCTS bot with random rollouts (it calls our resampler)."""
    if simulations < 1:
        raise ValueError(f"ISMCTS needs at least 1 simulation a decision, got {simulations}")
    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(seed))
    return ismcts.ISMCTSBot(game, evaluator, UCT_C, simulations, random_state=np.random.RandomState(seed))


def play_deal(game, bot, opponent, seat: int, cards: np.random.Generator, rng: np.random.Generator,
              result: MatchResult) -> None:
    """One deal with the bot at ``seat``; the opponent acts from our observation and legal mask."""
    state = game.new_initial_state()
    if hasattr(opponent, "reset"):
        opponent.reset()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(cards.choice(outcomes, p=probs)))
            continue
        player = state.current_player()
        if player == seat:
            start = time.perf_counter()
            action = bot.step(state)
            result.ismcts_seconds += time.perf_counter() - start
            result.ismcts_decisions += 1
        else:
            obs, mask = observe(state.engine, player)[None], state.engine.legal_mask()[None]
            action = int(np.asarray(opponent.act(obs, mask, rng)).reshape(-1)[0])
        state.apply_action(action)
    result.margins.append(state.returns()[seat])


def play_match(simulations: int, opponent_spec: str, deals: int, seed: int, rules: str = "academie") -> MatchResult:
    """``deals`` deals (pairs of the same cards, seats swapped) of ISMCTS against ``opponent_spec``."""
    game = pyspiel.load_game(ios.SHORT_NAME, {"rules": rules})
    if game.num_players() != 2:
        raise ValueError(f"the ISMCTS match is for two players; {rules} has {game.num_players()}")
    opponent = make_agent(opponent_spec, rules)
    bot = make_bot(game, simulations, seed)
    rng = np.random.default_rng(seed)
    result = MatchResult([])
    for d in range(deals):
        play_deal(game, bot, opponent, d % 2, np.random.default_rng([seed, d // 2]), rng, result)
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--simulations", type=int, default=100, help="ISMCTS simulations a decision")
    parser.add_argument("--opponent", default="pimc:16", help="an agent spec of imperiale eval")
    parser.add_argument("--deals", type=int, default=100)
    parser.add_argument("--seed", type=int, default=2040)
    parser.add_argument("--rules", default="academie", help="a two-player preset")
    args = parser.parse_args(argv)
    print(play_match(args.simulations, args.opponent, args.deals, args.seed, args.rules).summary())


if __name__ == "__main__":
    main()
