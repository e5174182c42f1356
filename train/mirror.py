"""Mirrored deals: every deal of self-play played twice, and each seat rewarded against itself.

Most of a single deal's return is the luck of the cards (who holds the honours and the trumps),
which says nothing about how they were played.  With ``mirrored_deals`` every deal (a seed: the
dealer, the hands, the turned card and the talon) is played in two slots, the second with the
learner's seat moved to the next seat and the same kind of opponent, and a seat's reward becomes
its return minus the return of the same seat (the same cards) in the other play.  That baseline
is drawn independently of this play's actions, so the policy gradient stays unbiased, but it
takes away what the cards alone decided; the critic then learns what a position is worth beyond
the deal's par.

**Timing.**  The two plays start within a step or two of each other: a slot whose game ends takes
the oldest deal waiting for its second play, else deals a fresh one, and fresh deals dealt at the
same step are paired among those slots at once.  They end when their play ends.  The play that
ends first keeps its return here until the other ends: if that happens in the same rollout, both
are credited; if the rollout ends between the two, the first play's transitions of this rollout
are not trained (``rollout/mirror_dropped`` counts them) and the second play is credited when it
ends, in a later rollout.  Everything here is arrays over the ended games, no loop over the batch.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

#: Slots of the result ring per game slot: a deal's result waits only for its twin's end (a single
#: deal), so far fewer deals than this are ever waiting at once; an overflow is refused, not lost.
RING_PER_SLOT = 4
#: The arrays a checkpoint keeps; with ``next_id`` they are the whole state between rollouts.
ARRAY_KEYS = ("deal", "second", "queue_id", "queue_seed", "queue_seat", "queue_opponent", "result_id", "result",
              "result_second")
STATE_KEYS = ("next_id", *ARRAY_KEYS)


class MirroredDeals:
    """The pairing of deals to slots, the deals waiting for their second play, and the returns of
    the plays that ended before their twin."""

    def __init__(self, num_envs: int, players: int):
        self.n, self.P = num_envs, players
        cap = RING_PER_SLOT * num_envs + 64
        self.next_id = 0
        self.deal = np.full(num_envs, -1, dtype=np.int64)  # the deal each slot plays
        self.second = np.zeros(num_envs, dtype=bool)  # whether it is that deal's second play
        # Deals whose first play has started and whose second has not, oldest first.
        self.queue_id = np.zeros(0, dtype=np.int64)
        self.queue_seed = np.zeros(0, dtype=np.int64)
        self.queue_seat = np.zeros(0, dtype=np.int64)
        self.queue_opponent = np.zeros(0, dtype=np.int64)
        # The ring of returns of the plays that ended first, at deal id % cap (-1: free).
        self.result_id = np.full(cap, -1, dtype=np.int64)
        self.result = np.zeros((cap, players), dtype=np.float32)
        self.result_second = np.zeros(cap, dtype=bool)
        # Their terminal transitions in the current rollout (flat indices, -1: none or earlier).
        self.result_last = np.full((cap, players), -1, dtype=np.int64)

    # ------------------------------------------------------------------ dealing

    def start(self, rows: np.ndarray, rng: np.random.Generator, learner_seat: np.ndarray, opponent: np.ndarray,
              draw: Callable[[np.ndarray], None]) -> np.ndarray:
        """The seeds of the next games of slots ``rows``: first the deals waiting for a second play,
        then fresh deals, half of what is left, each paired with one of the other half (an odd one
        waits).  ``draw(fresh_rows)`` seats the first plays (``learner_seat`` and ``opponent``, which
        it writes); a second play gets the next learner seat and the same opponent."""
        k = min(len(rows), len(self.queue_id))
        rest = rows[k:]
        fresh, twins = rest[:(len(rest) + 1) // 2], rest[(len(rest) + 1) // 2:]
        ids = self.next_id + np.arange(len(fresh), dtype=np.int64)
        self.next_id += len(fresh)
        seeds = rng.integers(2**63, size=len(fresh), dtype=np.int64)
        draw(fresh)
        q_id = np.concatenate([self.queue_id, ids])
        q_seed = np.concatenate([self.queue_seed, seeds])
        q_seat = np.concatenate([self.queue_seat, learner_seat[fresh]])
        q_opponent = np.concatenate([self.queue_opponent, opponent[fresh]])
        take = np.concatenate([np.arange(k), len(self.queue_id) + np.arange(len(twins))])
        seconds = np.concatenate([rows[:k], twins])
        learner_seat[seconds] = (q_seat[take] + 1) % self.P
        opponent[seconds] = q_opponent[take]
        self.deal[fresh], self.second[fresh] = ids, False
        self.deal[seconds], self.second[seconds] = q_id[take], True
        keep = np.ones(len(q_id), dtype=bool)
        keep[take] = False
        self.queue_id, self.queue_seed, self.queue_seat, self.queue_opponent = (
            q_id[keep], q_seed[keep], q_seat[keep], q_opponent[keep])
        slot_seed = np.zeros(self.n, dtype=np.int64)
        slot_seed[fresh] = seeds
        slot_seed[seconds] = q_seed[take]
        return slot_seed[rows]

    def refresh_pool(self, pool_ids: np.ndarray, current: int) -> None:
        """A waiting deal whose first play's opponent (a pool entry id, >= 0) left the pool is played
        by ``current`` (the current policy's code) the second time."""
        self.queue_opponent[(self.queue_opponent >= 0) & ~np.isin(self.queue_opponent, pool_ids)] = current

    # ------------------------------------------------------------------ rewards

    def begin_rollout(self) -> None:
        """A new rollout: the transitions of earlier ones are trained already."""
        self.result_last[:] = -1

    def play_keys(self) -> np.ndarray:
        """Each slot's current play, as one number: the deal's id, twice, plus 1 for the second play."""
        return self.deal * 2 + self.second

    def settle(self, ended: np.ndarray, rewards: np.ndarray, last: np.ndarray, credited: np.ndarray) -> np.ndarray:
        """The rewards to credit to the games ``ended`` (``rewards (E, P)``, their seats' terminal
        transitions ``last (E, P)``, -1 where a seat has none in this rollout): a play whose twin
        ended already gets its return minus the twin's, and the twin's terminal transitions in
        this rollout (in ``credited``, the rollout's rewards) lose this play's return; a play whose
        twin has not ended is credited its return and kept until then."""
        ids = self.deal[ended]
        out = rewards.astype(np.float32, copy=True)
        # Both plays of a deal ending at this very step: each against the other.
        order = np.argsort(ids, kind="stable")
        pair = np.flatnonzero(ids[order][1:] == ids[order][:-1])
        a, b = order[pair], order[pair + 1]
        out[a] -= rewards[b]
        out[b] -= rewards[a]
        alone = np.ones(len(ended), dtype=bool)
        alone[a] = alone[b] = False
        cap = len(self.result_id)
        slot = ids % cap
        known = alone & (self.result_id[slot] == ids)
        ks = slot[known]
        out[known] -= self.result[ks]
        twin_last = self.result_last[ks]
        has = twin_last >= 0
        credited[twin_last[has]] -= rewards[known][has]  # distinct transitions: one per seat and game
        self.result_id[ks] = -1
        self.result_last[ks] = -1
        first = alone & ~known
        fs = slot[first]
        if (self.result_id[fs] >= 0).any() or len(np.unique(fs)) != len(fs):
            raise RuntimeError("mirrored deals: more deals wait for their second play than the ring holds "
                               f"({cap}); this is a bug, please report it")
        self.result_id[fs] = ids[first]
        self.result[fs] = rewards[first]
        self.result_second[fs] = self.second[ended][first]
        self.result_last[fs] = last[first]
        return out

    def unmatched(self) -> np.ndarray:
        """The play keys (:meth:`play_keys`) of the plays that ended in this rollout before their
        twin: their transitions here have no reward to train on."""
        waiting = (self.result_id >= 0) & (self.result_last >= 0).any(axis=1)
        return self.result_id[waiting] * 2 + self.result_second[waiting]

    # ------------------------------------------------------------------ checkpoints

    def state(self) -> dict[str, np.ndarray]:
        """Everything a resumed run needs, as arrays (between rollouts: no transition is open)."""
        return {key: np.asarray(getattr(self, key)).copy() for key in STATE_KEYS}

    def load_state(self, state: dict) -> None:
        """Restore :meth:`state`; ``ValueError`` if it does not fit this batch."""
        if not isinstance(state, dict) or set(state) != set(STATE_KEYS):
            raise ValueError(f"the mirrored deals' state must hold {', '.join(STATE_KEYS)}")
        cap = len(self.result_id)
        shapes = {"deal": (self.n,), "second": (self.n,), "result_id": (cap,), "result": (cap, self.P),
                  "result_second": (cap,)}
        for key, shape in shapes.items():
            if np.shape(state[key]) != shape:
                raise ValueError(f"the mirrored deals' {key} must have shape {shape}, got {np.shape(state[key])}")
        queue = {len(np.atleast_1d(state[key])) for key in STATE_KEYS if key.startswith("queue_")}
        if len(queue) != 1:
            raise ValueError("the mirrored deals' queue arrays must have one length")
        self.next_id = int(state["next_id"])
        for key in ARRAY_KEYS:  # each in the dtype this object was built with
            setattr(self, key, np.array(state[key], dtype=getattr(self, key).dtype))
        self.result_last[:] = -1
