"""The player protocol and the two simple players the environment ships with.

A policy is any object with ``act(observation, action_mask) -> int``. Optional:

- ``obs_encoding``: the encoding it wants (``"flat"``, ``"dict"`` or ``"view"`` for a
  :class:`~thirtyone_env.game.views.PlayerView`); without it a policy gets the env's own.
- ``reset(rng)``: called at the start of every episode with the players'
  ``numpy.random.Generator``, seeded from the env's but not the one that deals
  (:mod:`~thirtyone_env.game.player_stream`); all of a policy's randomness must come
  from it.

The full ladder of players lives in ``agents/``; these two exist so the environment
has sensible default opponents without depending on it.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from thirtyone_env.game.actions import DISCARD_BASE, DRAW_STOCK, KNOCK, STAND, TAKE_DISCARD
from thirtyone_env.game.cards import NUM_CARDS, PAIR_STRIDE, hand_table, value_with
from thirtyone_env.game.table_strategy import table_move
from thirtyone_env.game.views import PlayerView, as_view


@runtime_checkable
class Policy(Protocol):
    def act(self, observation: Any, action_mask: np.ndarray) -> int: ...


class RandomPolicy:
    """Uniform over the legal actions."""

    obs_encoding = "view"

    def __init__(self, rng: np.random.Generator | None = None) -> None:
        self.rng = rng if rng is not None else np.random.default_rng()

    def reset(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def act(self, observation: Any, action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("no legal action in the mask")
        return int(legal[self.rng.integers(legal.size)])

    def move_probabilities(self, observation: Any, action_mask: np.ndarray) -> np.ndarray:
        """The chance of each action under :meth:`act` (uniform over the legal ones): an
        evaluator takes the luck of the sampled move out of a tournament's estimates."""
        mask = np.asarray(action_mask, dtype=np.float64)
        return mask / mask.sum()


class GreedyPolicy:
    """The greedy baseline, and the env's default opponent.

    Takes the top discard when that raises the best hand value it can keep, else draws
    from the stock (drawing never lowers the value: the drawn card may be discarded);
    discards the card that leaves the highest value; knocks when its hand is worth at
    least ``knock_at``. Deterministic: ties go to the lowest card id.
    """

    obs_encoding = "view"

    def __init__(self, knock_at: float = 25) -> None:
        self.knock_at = knock_at
        self._rules: Any = None  # the rules the cached hand table is for
        self._values: tuple = ()

    def act(self, observation: PlayerView, action_mask: np.ndarray) -> int:
        v = as_view(observation, self)
        if v.rules is not self._rules:
            self._rules, self._values = v.rules, hand_table(v.rules)
        if v.rules.table != "stock":  # the variants' table moves (and the carry-over offer)
            move = table_move(v, action_mask, self.knock_at)
            if move is not None:
                return move
        values = self._values
        hand = v.hand
        if len(hand) == 4:
            return best_discard(hand, values, action_mask)[1]
        a, b, c = hand
        now = values[a * PAIR_STRIDE + b * NUM_CARDS + c]
        if action_mask[KNOCK] and now >= self.knock_at:
            return KNOCK
        top = v.top_discard
        if top >= 0 and action_mask[TAKE_DISCARD]:
            with_top = value_with(hand, top, values)
            if with_top > now or not action_mask[DRAW_STOCK]:
                return TAKE_DISCARD
        if action_mask[DRAW_STOCK]:
            return DRAW_STOCK
        return STAND


def best_discard(hand: tuple[int, ...], values: tuple, action_mask: np.ndarray) -> tuple[float, int]:
    """(value kept, action) of the legal discard that leaves the best 3-card hand;
    ties go to the lowest card id."""
    a, b, c, d = hand
    options = (
        (values[b * PAIR_STRIDE + c * NUM_CARDS + d], a),
        (values[a * PAIR_STRIDE + c * NUM_CARDS + d], b),
        (values[a * PAIR_STRIDE + b * NUM_CARDS + d], c),
        (values[a * PAIR_STRIDE + b * NUM_CARDS + c], d),
    )
    best, best_card = -1.0, 99
    for value, card in options:
        if (value > best or (value == best and card < best_card)) and action_mask[DISCARD_BASE + card]:
            best, best_card = value, card
    return best, DISCARD_BASE + best_card
