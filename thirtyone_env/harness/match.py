"""Play whole games between policies on the engine (no Gymnasium in the loop).

Each policy gets the observation it asks for (``obs_encoding``: ``"view"``, ``"flat"``
or ``"dict"``; default ``"view"``) and the int8 mask, exactly as inside the env.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from thirtyone_env.game.engine import RoundResult, new_game
from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.driver import NOBODY, Table, observe, policy_move, reset_players

__all__ = ["GameRecord", "observe", "play_game", "policy_move"]  # observe, policy_move: the driver's


class GameRecord(NamedTuple):
    """The outcome of one game: ``winners`` (seats), final ``lives``, every round's
    :class:`~thirtyone_env.game.engine.RoundResult` and the per-round event histories."""

    winners: tuple[int, ...]
    lives: tuple[int, ...]
    rounds: tuple[RoundResult, ...]
    histories: tuple[list, ...]


def play_game(
    policies: Sequence[Any],
    rng: np.random.Generator,
    rules: Rules | str | None = None,
    *,
    dealer: int | None = None,
    keep_history: bool = False,
) -> GameRecord:
    """Play one game; ``policies[seat]`` plays each seat. Policies with ``reset(rng)``
    are handed ``rng`` first, so the game depends on ``rng`` alone."""
    rules = Rules.resolve(rules)
    reset_players(policies, rng)
    state = new_game(rules, len(policies), rng, dealer=dealer)
    table = Table(state, policies, rng, keep_history=keep_history)
    table.advance(NOBODY)
    s = table.state
    return GameRecord(tuple(s.winners), tuple(s.lives), tuple(table.results), tuple(table.histories))
