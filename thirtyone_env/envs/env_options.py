"""The options of the single-agent and vector envs, and their checks, in one place
(both envs import them from here; neither imports the other for them)."""

from __future__ import annotations

from typing import Any

import numpy as np

EPISODES = ("game", "round")
REWARDS = ("lives", "win", "rate")  #: index = the reward kind of :mod:`thirtyone_env.game.rewards`
ILLEGAL_ACTION_MODES = ("penalize", "raise")
BACKENDS = ("python", "compiled")
RESET_OPTIONS = ("deck", "dealer", "lives")


def choice(name: str, value: Any, allowed: tuple) -> Any:
    """``value`` if it is one of ``allowed``; ``ValueError`` naming the option otherwise."""
    if value not in allowed:
        raise ValueError(f"{name}={value!r} is not allowed; allowed values: {list(allowed)}")
    return value


def v1_reward(rules: Any) -> str:
    """``ThirtyOne-v1``'s default reward for ``rules`` (a ``Rules`` or preset name):
    ``"rate"`` in the lives games, ``"lives"`` where rounds settle points or chips."""
    from thirtyone_env.game.rules import Rules

    return "rate" if Rules.resolve(rules).scoring == "lives" else "lives"


def check_reward(reward: Any, scoring: str) -> str:
    """The reward option for a game scored by ``scoring``: one of :data:`REWARDS`;
    ``"rate"`` counts lives, so a lives game only (``ValueError`` naming the problem)."""
    choice("reward", reward, REWARDS)
    if reward == "rate" and scoring != "lives":
        raise ValueError(f"reward='rate' is for lives games; these rules score {scoring}")
    return reward


def check_seat(seat: Any, num_players: int) -> int | str:
    """The agent's seat option: a seat ``0..num_players - 1`` or ``"random"``."""
    if isinstance(seat, str) and seat == "random":
        return seat
    if (
        isinstance(seat, bool | np.bool_)
        or not isinstance(seat, int | np.integer)
        or not 0 <= seat < num_players
    ):
        raise ValueError(f"seat={seat!r} is not allowed; allowed values: 0..{num_players - 1} or 'random'")
    return int(seat)


def flag(name: str, value: Any) -> bool:
    """A true-or-false option: ``value`` if it is a bool; ``ValueError`` naming it otherwise."""
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name}={value!r} is not allowed; allowed values: True or False")
    return bool(value)
