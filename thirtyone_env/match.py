"""Play whole games between policies on the engine (no Gymnasium in the loop).

Each policy gets the observation it asks for (``obs_encoding``: ``"view"``, ``"flat"``
or ``"dict"``; default ``"view"``) and the int8 mask, exactly as inside the env.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from thirtyone_env.encoding import ObsLayout, encode_dict, encode_flat
from thirtyone_env.engine import (
    GAME_OVER,
    ROUND_OVER,
    IllegalActionError,
    RoundResult,
    apply_action,
    legal_mask,
    new_game,
    start_round,
)
from thirtyone_env.rules import Rules
from thirtyone_env.views import player_view


class GameRecord(NamedTuple):
    """The outcome of one game: ``winners`` (seats), final ``lives``, every round's
    :class:`~thirtyone_env.engine.RoundResult` and the per-round event histories."""

    winners: tuple[int, ...]
    lives: tuple[int, ...]
    rounds: tuple[RoundResult, ...]
    histories: tuple[list, ...]


def observe(state: Any, seat: int, encoding: str, layout: ObsLayout) -> Any:
    """The observation of ``seat`` in the named encoding."""
    if encoding == "view":
        return player_view(state, seat)
    if encoding == "flat":
        return encode_flat(state, seat, layout)
    if encoding == "dict":
        return encode_dict(state, seat, layout)
    raise ValueError(f"unknown obs_encoding {encoding!r}; allowed: ['view', 'flat', 'dict']")


def policy_move(
    state: Any, policy: Any, encoding: str, layout: ObsLayout, rng: np.random.Generator, who: str
) -> None:
    """Let ``policy`` play the seat to act. An illegal or malformed choice raises
    :class:`IllegalActionError` that names ``who`` chose it and what was legal."""
    seat = state.current
    obs = player_view(state, seat) if encoding == "view" else observe(state, seat, encoding, layout)
    action = policy.act(obs, legal_mask(state))
    try:
        apply_action(state, int(action), rng)
    except (IllegalActionError, TypeError, ValueError) as e:
        raise IllegalActionError(
            f"{who} in seat {seat} ({type(policy).__name__}) chose {action!r}: {e}"
        ) from e


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
    n = len(policies)
    layout = ObsLayout(n, rules)
    for p in policies:
        reset = getattr(p, "reset", None)
        if callable(reset):
            reset(rng)
    encodings = [getattr(p, "obs_encoding", "view") for p in policies]
    s = new_game(rules, n, rng, dealer=dealer)
    rounds: list[RoundResult] = []
    histories: list[list] = []
    while True:
        if s.phase >= ROUND_OVER:
            rounds.append(s.result)
            if keep_history:
                histories.append(s.history)
            if s.phase == GAME_OVER:
                return GameRecord(tuple(s.winners), tuple(s.lives), tuple(rounds), tuple(histories))
            start_round(s, rng)
            continue
        seat = s.current
        policy_move(s, policies[seat], encodings[seat], layout, rng, "player")
