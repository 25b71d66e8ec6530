"""Determinized Monte Carlo search: the strongest baseline.

For each decision the player samples ``worlds`` deals of the cards it cannot see,
consistent with everything its view shows (its hand, the discard pile, the cards
known to sit in each opponent's hand, the stock size), builds each world as an engine
state, and plays every legal action out to the end of the round with a fast greedy
rollout policy for all seats. It picks the action with the best mean utility over
the worlds, but departs from the baseline's choice (``baseline="expert"``: what the
expert player would do; ``"rollout"``: the rollout policy's) only when the paired
difference clears ``confidence`` standard errors: all actions are scored on the same
worlds (common random numbers), so differences are measured, not guessed.

Utility: minus the lives the round costs, and minus ``elimination_penalty`` more
when the loss would put the player out (so it plays safer on its last life).

The budget is ``worlds`` (rollouts per action), or ``time_limit`` seconds per
decision when given (at least one world per action is always played). A decision
with a single legal action is played at once.
"""

from __future__ import annotations

import time

import numpy as np

from thirtyone_env.actions import DISCARD_BASE, DRAW_STOCK, KNOCK, STAND, TAKE_DISCARD
from thirtyone_env.cards import hand_table, value_with
from thirtyone_env.engine import (
    CONTINUE,
    DISCARD,
    DRAW,
    ROUND_OVER,
    GameState,
    apply_action,
    clone_state,
    from_position,
    legal_mask,
)
from thirtyone_env.table_strategy import table_move
from thirtyone_env.views import PlayerView, player_view

#: Rollout knock thresholds by a player's own turn in the round (turn 1, 2, 3, 4+),
#: shaped like the expert's knocks: early on a fair hand, later only on a strong one.
EXPERT_LIKE_KNOCKS = (20.0, 23.0, 26.0, 27.0)


def rollout_action(s: GameState, table: tuple, knocks: tuple[float, ...]) -> int:
    """Greedy play on a full (sampled) state, knocking at ``knocks[turn - 1]`` (the last
    entry for later turns): the rollout policy of every seat."""
    p = s.current
    h = s.hands[p]
    if s.phase == DISCARD:
        a, b, c, d = h
        took = -1 if s.rules.allow_discard_return else s.took
        best, card = -1.0, -1
        for value, x in (
            (table[b * 2704 + c * 52 + d], a),
            (table[a * 2704 + c * 52 + d], b),
            (table[a * 2704 + b * 52 + d], c),
            (table[a * 2704 + b * 52 + c], d),
        ):
            if value > best and x != took:
                best, card = value, x
        return DISCARD_BASE + card
    a, b, c = h
    now = table[a * 2704 + b * 52 + c]
    turn = s.player_turns[p]
    if s.knocker < 0 and now >= knocks[min(turn, len(knocks)) - 1] and turn >= s.rules.knock_from_turn:
        return KNOCK
    top = s.discard[-1]
    with_top = value_with(h, top, table)
    if with_top > now or not s.stock:
        if s.stock or with_top > now or s.knocker < 0 or not s.rules.stand_after_knock:
            return TAKE_DISCARD
        return STAND
    return DRAW_STOCK


def variant_rollout_action(s: GameState, table: tuple, knocks: tuple[float, ...]) -> int:
    """The rollout policy on a variant's table: the shared table-move heuristic (from
    the acting seat's view), else the greedy stock play of :func:`rollout_action`."""
    turn = max(1, s.player_turns[s.current])
    move = table_move(player_view(s, s.current), legal_mask(s), knocks[min(turn, len(knocks)) - 1])
    return move if move is not None else rollout_action(s, table, knocks)


def _collector_hand(pool: list[int], known: tuple[int, ...], draws: int, table: tuple) -> list[int]:
    """Deal a hand from the end of ``pool`` as a greedy collector holds it after
    ``draws`` draw turns (see ``SearchPlayer._sample_world``); cards let go return to
    the front of the pool."""
    hand = list(known)
    while len(hand) < 3:
        hand.append(pool.pop())
    value = table[hand[0] * 2704 + hand[1] * 52 + hand[2]]
    for _ in range(draws):
        if not pool:
            break
        card = pool.pop()
        drop = -1
        for i in range(3):
            if hand[i] in known:
                continue
            trial = hand[:i] + [card] + hand[i + 1 :]
            trial_value = table[trial[0] * 2704 + trial[1] * 52 + trial[2]]
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
        worlds: int = 24,
        time_limit: float | None = None,
        rollout_knock_at: float | None = None,
        elimination_penalty: float = 2.0,
        max_improve: int = 15,
        confidence: float = 1.5,
        baseline: str = "expert",
    ) -> None:
        if worlds < 1:
            raise ValueError(f"worlds must be at least 1, got {worlds}")
        self.worlds = worlds
        self.time_limit = time_limit
        self.knocks = EXPERT_LIKE_KNOCKS if rollout_knock_at is None else (float(rollout_knock_at),)
        self.elimination_penalty = elimination_penalty
        self.max_improve = max_improve
        self.confidence = confidence
        if baseline not in ("expert", "rollout"):
            raise ValueError(f"baseline={baseline!r} is not allowed; allowed values: ['expert', 'rollout']")
        self.baseline = baseline
        self._expert = None
        if baseline == "expert":
            from agents.expert import ExpertPlayer

            self._expert = ExpertPlayer()
        self.rng = np.random.default_rng(0)

    def reset(self, rng: np.random.Generator) -> None:
        self.rng = rng

    @staticmethod
    def _policy(s: GameState, table: tuple, knocks: tuple[float, ...]) -> int:
        if s.rules.table == "stock":
            return rollout_action(s, table, knocks)
        return variant_rollout_action(s, table, knocks)

    def act(self, observation: PlayerView, action_mask: np.ndarray) -> int:
        legal = [int(a) for a in np.flatnonzero(action_mask)]
        if len(legal) == 1:
            return legal[0]
        v = observation
        if v.phase == "choose":  # the Switch dealer's choice is the heuristic's
            return table_move(v, action_mask) if self._expert is None else self._expert.act(v, action_mask)
        baseline = self._expert.act(v, action_mask) if self._expert is not None else -1
        scores: dict[int, list[float]] = {a: [] for a in legal}
        deadline = None if self.time_limit is None else time.perf_counter() + self.time_limit
        while True:
            world = self._sample_world(v)
            if baseline < 0:
                baseline = self._policy(world, hand_table(v.rules), self.knocks)
            for a in legal:
                scores[a].append(self._rollout(world, a, v))
            if deadline is None:
                if len(scores[legal[0]]) >= self.worlds:
                    break
            elif time.perf_counter() >= deadline:
                break
        return self._choose(scores, baseline)

    def _choose(self, scores: dict[int, list[float]], baseline: int) -> int:
        """The best-scoring action if it beats the baseline's choice by more than
        ``confidence`` standard errors of the paired difference, else the baseline's:
        search departs from the heuristic only on evidence, not on noise."""
        best = max(scores, key=lambda a: (sum(scores[a]), -a))
        if best == baseline:
            return best
        diff = np.asarray(scores[best]) - np.asarray(scores[baseline])
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
        table = hand_table(v.rules)
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
            hand = _collector_hand(pool, known[p], min(draws[p], self.max_improve), table)
            hands.append(hand)
        stock = pool[: v.stock_size]
        del pool[: v.stock_size]
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
            muck=v.muck,
            score=v.score or None,
            pot=v.pot,
        )

    def _rollout(self, world: GameState, action: int, v: PlayerView) -> float:
        s = clone_state(world)
        table = hand_table(v.rules)
        knocks = self.knocks
        policy = self._policy
        apply_action(s, action, self.rng)
        while s.phase < ROUND_OVER:
            apply_action(s, policy(s, table, knocks), self.rng)
        if v.rules.scoring != "lives":
            return float(s.result.gains[v.seat])
        loss = s.result.losses[v.seat]
        utility = -float(loss)
        if loss and v.seat in s.result.eliminated:
            utility -= self.elimination_penalty
        return utility
