"""The decision oracle: what a move is worth, measured by playing it out.

At a decision of one seat the oracle plays each option a question names
(:mod:`~thirtyone_env.research.questions`) on copies of the true position, with the
table's real players continuing to the end of the round, ``rollouts`` times. The
hands, the discard pile and everything played so far are the game's own; the order of
the stock, which nobody at the table knows, is shuffled afresh for each play-out (on
the game's own order every play-out of deterministic players would be one and the
same). Play-out ``r`` of every option runs on one generator (the stock's order, the
engine's draws and every player's randomness), so the options meet the same cards
where their moves leave them the same (common random numbers) and each gain is a
paired difference. A gain is in the
table's utility: lives (minus those lost), points or chips, or with the ``"win"``
objective the chance to win the game (:func:`~thirtyone_env.harness.driver.round_value`).

Players must be functions of what they are shown (and of the generator handed to them
with ``reset(rng)``), as every built-in player is: the oracle asks them moves in
positions copied off the game, and hands them each play-out's generator. The play-outs
see the true hands and stock, so the players that play them are stand-ins built apart
from the game's own (:func:`~thirtyone_env.research.labelling.label_job`): no player of
the game is shown a card a play-out turns up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from thirtyone_env.game.engine import ROUND_OVER, GameState
from thirtyone_env.harness.driver import Move, round_value, start_playout


def measure(
    state: GameState,
    actions: Sequence[int],
    move: Move,
    seed: np.random.SeedSequence,
    rollouts: int,
    on_rollout: Callable[[np.random.Generator], None] | None = None,
    elimination_penalty: float = 0.0,
    shuffle_stock: bool = True,
    objective: str = "lives",
) -> np.ndarray:
    """The value for the seat to act of each of ``actions`` (rows) in each of
    ``rollouts`` play-outs (columns): the action on a copy of ``state``, then ``move``
    to the end of the round. Play-out ``r`` of every action draws from one generator,
    child ``r`` of ``seed``; ``on_rollout(rng)`` is called with it before each play-out
    (to hand it to the players). The copy's stock is shuffled with that generator first
    unless ``shuffle_stock`` is false. ``objective``: what a settled round is worth
    (:func:`~thirtyone_env.harness.driver.round_value`). ``state`` is not changed."""
    if rollouts < 1:
        raise ValueError(f"rollouts must be at least 1, got {rollouts}")
    seat = state.current
    out = np.empty((len(actions), rollouts))
    for r, child in enumerate(seed.spawn(rollouts)):
        entropy = child.generate_state(4)
        for i, action in enumerate(actions):
            rng = np.random.default_rng(entropy)
            if on_rollout is not None:
                on_rollout(rng)
            s = start_playout(state, action, rng, shuffle_stock)
            while s.phase < ROUND_OVER:
                move(s, rng)
            out[i, r] = round_value(s, seat, elimination_penalty, objective)
    return out


def gains(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each alternative's gain over the baseline (row 0 of ``values``, from
    :func:`measure`) and its standard error: the mean and the standard error of the
    paired play-out differences (``nan`` with one play-out)."""
    diff = values[1:] - values[:1]
    k = values.shape[1]
    se = diff.std(axis=1, ddof=1) / np.sqrt(k) if k > 1 else np.full(len(diff), np.nan)
    return diff.mean(axis=1), se


def hand_rng(players: Sequence[Any]) -> Callable[[np.random.Generator], None]:
    """``on_rollout`` for :func:`measure`: hand each play-out's generator to every player
    that takes one (``reset(rng)``)."""
    resets = [r for r in (getattr(p, "reset", None) for p in players) if callable(r)]

    def hand(rng: np.random.Generator) -> None:
        for reset in resets:
            reset(rng)

    return hand
