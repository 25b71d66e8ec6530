"""Determinized Monte Carlo search: the strongest baseline.

The expert's weak spot is the knock: it knocks when the chance of being lowest at once
is small, but never weighs that against what waiting costs (someone else knocking
while this hand is still low, the hand it can still reach). Search answers that
question by simulation. At a decision it samples ``worlds`` deals of the cards it
cannot see, consistent with everything its view shows (its hand, the discard pile, the
cards known in each opponent's hand, the stock size), builds each world as an engine
state and plays each candidate action out to the end of the round with the
``rollout`` policy in every seat: ``"expert"`` (default; it reads only the view of the
sampled world, so no rollout peeks at a card) or ``"greedy"`` (a fast greedy player
with expert-like knock thresholds, about five times cheaper and a worse model of
real opponents).

Which decisions are searched (``moves``):

- ``"knock"`` (default): a turn on which knocking is legal and the expert would not
  knock: knock, or the expert's draw. Every other move is the expert's.
- ``"all"``: every legal action of every decision.

(Measured with a decision oracle: in expert games, each searched move that departed
from the expert was replayed on the true deal with experts playing on. Knock
departures gained about 0.4 lives each, 0.06 lives a round in all; draw and discard
departures lost slightly, their rollout differences being mostly noise.)

All candidates are scored on the same worlds (common random numbers), and search
departs from the expert's move only when the paired difference clears
``confidence`` standard errors. Worlds are sampled ``batch`` at a time, up to
``worlds`` per candidate, stopping early, after any batch, once every difference lies
``stop`` standard errors from zero; ``time_limit`` (seconds per decision, checked after
each batch) replaces that budget when given. Utility: minus the lives the round costs, and minus
``elimination_penalty`` more when the loss puts the player out (points or chips won
in the other scorings). A decision with a single legal action is played at once.

Randomness: every world is dealt from the searcher's generator (``reset(rng)``: the
game's), and the world's roll-outs (which draw only to reshuffle an empty stock) from a
generator of their own seeded by two raw draws of it, the same for every candidate.
Where the kernels play the table (the stock game with lives) and the expert rolls out,
``backend="auto"`` plays the worlds out on the compiled kernels
(:mod:`agents.search_batch`, about fifty times faster); ``"python"`` on the engine.
Both deal the same worlds and reach the same utilities, so the same seed gives the
same games on either.
"""

from __future__ import annotations

import time

import numpy as np

from agents.search_batch import CompiledRollouts, LazyWorldRng, world_rng_row
from thirtyone_env.envs import kernel_rules
from thirtyone_env.game.actions import DISCARD_BASE, DRAW_STOCK, KNOCK, STAND, TAKE_DISCARD
from thirtyone_env.game.cards import NUM_CARDS, PAIR_STRIDE, hand_table, value_with
from thirtyone_env.game.engine import (
    CONTINUE,
    DISCARD,
    DRAW,
    GameState,
    apply_action,
    from_position,
    legal_mask,
)
from thirtyone_env.game.play import may_take
from thirtyone_env.game.rules import Rules
from thirtyone_env.game.table_strategy import table_move
from thirtyone_env.game.views import PlayerView, as_view, player_view
from thirtyone_env.harness.driver import Move, rollout_value

#: Where the roll-outs run: ``"auto"`` on the compiled kernels where they play the table
#: (the stock game with lives, expert roll-outs), else the engine; ``"python"`` always
#: the engine; ``"compiled"`` the kernels or an error. The same decisions either way.
BACKENDS = ("auto", "python", "compiled")

#: Rollout knock thresholds by a player's own turn in the round (turn 1, 2, 3, 4+),
#: shaped like the expert's knocks: early on a fair hand, later only on a strong one.
EXPERT_LIKE_KNOCKS = (20.0, 23.0, 26.0, 27.0)


def rollout_action(s: GameState, values: tuple, knocks: tuple[float, ...]) -> int:
    """Greedy play on a full (sampled) state, knocking at ``knocks[turn - 1]`` (the last
    entry for later turns): the rollout policy of every seat."""
    p = s.current
    h = s.hands[p]
    if s.phase == DISCARD:
        a, b, c, d = h
        took = -1 if s.rules.allow_discard_return else s.took
        best, card = -1.0, -1
        for value, x in (
            (values[b * PAIR_STRIDE + c * NUM_CARDS + d], a),
            (values[a * PAIR_STRIDE + c * NUM_CARDS + d], b),
            (values[a * PAIR_STRIDE + b * NUM_CARDS + d], c),
            (values[a * PAIR_STRIDE + b * NUM_CARDS + c], d),
        ):
            if value > best and x != took:
                best, card = value, x
        return DISCARD_BASE + card
    a, b, c = h
    now = values[a * PAIR_STRIDE + b * NUM_CARDS + c]
    turn = s.player_turns[p]
    if s.knocker < 0 and now >= knocks[min(turn, len(knocks)) - 1] and turn >= s.rules.knock_from_turn:
        return KNOCK
    top = s.discard[-1]
    with_top = value_with(h, top, values)
    if (with_top > now or not s.stock) and may_take(s):
        if s.stock or with_top > now or s.knocker < 0 or not s.rules.stand_after_knock:
            return TAKE_DISCARD
        return STAND
    if s.stock:
        return DRAW_STOCK
    return STAND if s.knocker >= 0 else KNOCK  # (the only moves left)


def variant_rollout_action(s: GameState, values: tuple, knocks: tuple[float, ...]) -> int:
    """The rollout policy on a variant's table: the shared table-move heuristic (from
    the acting seat's view), else the greedy stock play of :func:`rollout_action`."""
    turn = max(1, s.player_turns[s.current])
    move = table_move(player_view(s, s.current), legal_mask(s), knocks[min(turn, len(knocks)) - 1])
    return move if move is not None else rollout_action(s, values, knocks)


def _collector_hand(pool: list[int], known: tuple[int, ...], draws: int, values: tuple) -> list[int]:
    """Deal a hand from the end of ``pool`` as a greedy collector holds it after
    ``draws`` draw turns (see ``SearchPlayer._sample_world``); cards let go return to
    the front of the pool."""
    hand = list(known)
    while len(hand) < 3:
        hand.append(pool.pop())
    value = values[hand[0] * PAIR_STRIDE + hand[1] * NUM_CARDS + hand[2]]
    for _ in range(draws):
        if not pool:
            break
        card = pool.pop()
        drop = -1
        for i in range(3):
            if hand[i] in known:
                continue
            trial = hand[:i] + [card] + hand[i + 1 :]
            trial_value = values[trial[0] * PAIR_STRIDE + trial[1] * NUM_CARDS + trial[2]]
            if trial_value > value:
                value, drop = trial_value, i
        if drop >= 0:
            pool.insert(0, hand[drop])
            hand[drop] = card
        else:
            pool.insert(0, card)
    return hand


class SearchPlayer:
    """Determinized Monte Carlo search (see the module doc)."""

    obs_encoding = "view"

    def __init__(
        self,
        worlds: int = 32,
        time_limit: float | None = None,
        moves: str = "knock",
        rollout: str = "expert",
        rollout_knock_at: float | None = None,
        elimination_penalty: float = 2.0,
        max_improve: int = 15,
        confidence: float = 1.5,
        batch: int = 8,
        stop: float = 3.0,
        backend: str = "auto",
    ) -> None:
        if worlds < 1:
            raise ValueError(f"worlds must be at least 1, got {worlds}")
        if batch < 2:
            raise ValueError(f"batch must be at least 2, got {batch}")
        if time_limit is not None and not 0 < time_limit < float("inf"):
            raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit}")
        for name, value, allowed in (
            ("moves", moves, ("knock", "all")),
            ("rollout", rollout, ("expert", "greedy")),
            ("backend", backend, BACKENDS),
        ):
            if value not in allowed:
                raise ValueError(f"{name}={value!r} is not allowed; allowed values: {list(allowed)}")
        self.worlds = worlds
        self.time_limit = time_limit
        self.moves = moves
        self.rollout = rollout
        self.knocks = EXPERT_LIKE_KNOCKS if rollout_knock_at is None else (float(rollout_knock_at),)
        self.elimination_penalty = elimination_penalty
        self.max_improve = max_improve
        self.confidence = confidence
        self.batch = batch
        self.stop = stop
        self.backend = backend
        self._kernels: dict[tuple[Rules, int], CompiledRollouts] = {}
        from agents.expert import ExpertPlayer  # (agents.expert does not import search)

        self._expert = ExpertPlayer()
        self.rng = np.random.default_rng(0)

    def reset(self, rng: np.random.Generator) -> None:
        self.rng = rng

    @staticmethod
    def _policy(s: GameState, values: tuple, knocks: tuple[float, ...]) -> int:
        if s.rules.table == "stock":
            return rollout_action(s, values, knocks)
        return variant_rollout_action(s, values, knocks)

    def act(self, observation: PlayerView, action_mask: np.ndarray) -> int:
        observation = as_view(observation, self)
        legal = [int(a) for a in np.flatnonzero(action_mask)]
        if len(legal) == 1:
            return legal[0]
        v = observation
        baseline = self._expert.act(v, action_mask)
        if v.phase in ("choose", "carry"):  # the Switch dealer's choice and the carry-over are the expert's
            return baseline
        candidates = self._candidates(v, action_mask, legal, baseline)
        if len(candidates) < 2:
            return baseline
        return self._choose(self._evaluate(v, candidates, baseline), candidates, baseline)

    def _candidates(self, v: PlayerView, mask: np.ndarray, legal: list[int], baseline: int) -> list[int]:
        """The actions to compare (see ``moves`` in the module doc)."""
        if self.moves == "all":
            return legal
        if not mask[KNOCK] or baseline == KNOCK or v.knocker >= 0:
            return []
        return [KNOCK, baseline]

    def _evaluate(self, v: PlayerView, candidates: list[int], baseline: int) -> np.ndarray:
        """Rollout utilities ``(worlds, len(candidates))`` of every candidate on shared
        sampled worlds, ``batch`` worlds at a time."""
        base = candidates.index(baseline)
        chunks: list[np.ndarray] = []
        deadline = None if self.time_limit is None else time.perf_counter() + self.time_limit
        compiled = self._compiled(v)
        if compiled is not None:
            mine = [list(v.hand) if p == v.seat else [] for p in range(v.num_players)]
            compiled.set_position(v, self._position(v, mine, [], []), self.max_improve)
        n = 0
        while True:
            m = self.batch if deadline is not None else min(self.batch, self.worlds - n)
            if compiled is not None:
                chunks.append(compiled.chunk(self.rng, m, candidates, self.elimination_penalty))
            else:
                chunks.append(
                    np.array([self._world_utilities(v, candidates) for _ in range(m)], dtype=np.float64)
                )
            n += m
            scores = np.concatenate(chunks) if len(chunks) > 1 else chunks[0]
            if deadline is not None:
                if time.perf_counter() >= deadline:
                    return scores
            elif n >= self.worlds or self._settled(scores, base):
                return scores

    def _world_utilities(self, v: PlayerView, candidates: list[int]) -> list[float]:
        """One sampled world, each candidate played out in it on the engine; the
        roll-outs draw from the world's own generator (see :mod:`agents.search_batch`)."""
        world = self._sample_world(v)
        row = world_rng_row(self.rng.bit_generator.random_raw(2))
        return [self._rollout(world, a, v, LazyWorldRng(row)) for a in candidates]

    def _compiled(self, v: PlayerView) -> CompiledRollouts | None:
        """The compiled path for this decision, or None for the engine's (``backend``)."""
        if self.backend == "python":
            return None
        why = kernel_rules.refusals(v.rules)
        if self.rollout != "expert":
            why.append(f"rollout={self.rollout!r} (the kernels roll out the expert only)")
        if why:
            if self.backend == "compiled":
                raise ValueError(
                    f"SearchPlayer(backend='compiled') cannot roll out {'; '.join(why)}: use 'auto'"
                )
            return None
        key = (v.rules, v.num_players)
        found = self._kernels.get(key)
        if found is None:
            found = self._kernels[key] = CompiledRollouts(v.rules, v.num_players, self._expert, self.batch)
        return found

    def _settled(self, scores: np.ndarray, base: int) -> bool:
        """Whether every candidate's paired difference to the baseline (column
        ``base``) is already ``stop`` standard errors from zero. All-zero differences
        settle nothing (a rare outcome may simply not have come up yet)."""
        diff = scores - scores[:, base, None]
        mean = np.abs(diff.mean(axis=0))
        settled = (mean > 0) & (mean > self.stop * diff.std(axis=0, ddof=1) / np.sqrt(len(diff)))
        settled[base] = True
        return bool(settled.all())

    def _choose(self, scores: np.ndarray, candidates: list[int], baseline: int) -> int:
        """The best-scoring action if it beats the baseline's choice by more than
        ``confidence`` standard errors of the paired difference, else the baseline's:
        search departs from the heuristic only on evidence, not on noise."""
        totals = scores.sum(axis=0)
        j = max(range(len(candidates)), key=lambda k: (totals[k], -candidates[k]))
        best = candidates[j]
        if best == baseline:
            return best
        diff = scores[:, j] - scores[:, candidates.index(baseline)]
        m = diff.size
        se = float(diff.std(ddof=1)) / np.sqrt(m) if m > 1 else float("inf")
        return best if float(diff.mean()) > self.confidence * se else baseline

    def _sample_world(self, v: PlayerView) -> GameState:
        """One deal of the unseen cards consistent with the view.

        Uniform deals would give opponents the hands of a fresh deal, but a player who
        has drawn k times this round has had k chances to improve. So each opponent's
        unknown cards are dealt as a greedy collector would hold them: it starts from
        its known cards plus random ones, and for each of its draw turns so far
        (its discards, at most ``max_improve``) sees one more random card and keeps
        the best three. Against expert opponents this matches their true mean hand
        value within half a point on every turn (checked by simulation; rejecting
        deals in which an opponent "would have knocked" made it worse: experts often
        wait on 25+). What is not dealt forms the stock, in random order.
        """
        unseen = v.unseen()
        order = self.rng.permutation(len(unseen)).tolist()
        pool = [unseen[i] for i in order]
        values = hand_table(v.rules)
        known = v.known
        draws = [0] * v.num_players
        for seat, _card in v.discards:
            draws[seat] += 1
        hands: list[list[int]] = []
        in_play = v.phase in ("draw", "discard", "continue")
        for p in range(v.num_players):
            if p == v.seat:
                hands.append(list(v.hand))
                continue
            if not v.active[p] or not in_play:
                hands.append([])
                continue
            hand = _collector_hand(pool, known[p], min(draws[p], self.max_improve), values)
            hands.append(hand)
        stock = pool[: v.stock_size]
        del pool[: v.stock_size]
        return self._position(v, hands, stock, pool)

    @staticmethod
    def _position(v: PlayerView, hands: list[list[int]], stock: list[int], pool: list[int]) -> GameState:
        """The state of view ``v`` with the other seats' ``hands`` and the ``stock``
        dealt (``pool``: the unseen cards left, for a variant's face-down table cards,
        the rest mucked)."""
        tables = [[pool.pop() if c is None else c for c in cards] for cards in v.table]
        table_up = [[c is not None for c in cards] for cards in v.table]
        phase = {"draw": DRAW, "discard": DISCARD, "continue": CONTINUE}[v.phase]
        return from_position(
            v.rules,
            hands=hands,
            stock=stock,
            discard=v.discard_pile,
            current=v.seat,
            phase=phase,
            dealer=v.dealer,
            lives=v.lives,
            active=v.active,
            knocker=v.knocker,
            final_left=max(0, v.turns_left_after_knock()),
            turns_played=v.turns_played,
            known=v.known_masks,
            discards=v.discards,
            drawn=v.drawn,
            took=v.took,
            round_no=v.round_no,
            table=tables,
            table_up=table_up,
            muck=[*v.muck, *pool],  # what no hand, stock or table took was mucked face down
            muck_up=sum(1 << c for c in v.muck),
            score=v.score or None,
            pot=v.pot,
        )

    def _rollout(self, world: GameState, action: int, v: PlayerView, rng: np.random.Generator) -> float:
        """Play ``action`` in a copy of ``world``, then the rollout policy in every
        seat to the end of the round; the utility for this seat."""
        move = self._rollout_move(v.rules)
        return rollout_value(world, action, move, rng, v.seat, self.elimination_penalty)

    def _rollout_move(self, rules: Rules) -> Move:
        """The rollout policy's move for the seat to act."""
        if self.rollout == "expert":
            return self._expert_move
        values = hand_table(rules)
        knocks = self.knocks
        policy = self._policy

        def move(s: GameState, rng: np.random.Generator) -> None:
            apply_action(s, policy(s, values, knocks), rng)

        return move

    def _expert_move(self, s: GameState, rng: np.random.Generator) -> None:
        apply_action(s, self._expert.act(player_view(s, s.current), legal_mask(s)), rng)
