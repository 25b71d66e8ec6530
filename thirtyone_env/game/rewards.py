"""The reward of a settled round for one seat, written once.

:func:`settled_reward` is plain arithmetic on numbers, so the numba kernels compile
this same function (``numba.njit(settled_reward)``) that the single-agent and the
PettingZoo envs call through :func:`seat_reward`. The reward kinds are the indexes of
:data:`thirtyone_env.envs.env_options.REWARDS`.
"""

from __future__ import annotations

from typing import Any

LIVES, WIN, RATE = 0, 1, 2  #: reward kinds: "lives", "win", "rate" (their index in ``env_options.REWARDS``)


def settled_reward(kind: int, gain: float, eliminated: bool, won: bool, share: float) -> float:
    """The reward of one settlement for one seat (dealt into the round settled).

    ``kind`` LIVES: ``gain``, the seat's change of standing (minus the lives lost; the
    points or chips of the scored games). ``kind`` RATE: ``gain + share``, ``share``
    being the seat's fair share of a round's cost (1 / the table's seats): a round
    played is worth that much, so a game's return is ``share * rounds - lives lost``,
    the linear form of *lives lost a round* (the tournament's and the gauntlet's
    measure, a ratio that a seat also lowers by surviving more rounds). ``kind`` WIN:
    -1 when this settlement eliminates the seat, +1 when it ends the game with the seat
    among the winners (``won``), else 0 (the engine never makes an eliminated seat a
    winner)."""
    if kind == LIVES:
        return gain
    if kind == RATE:
        return gain + share
    if eliminated:
        return -1.0
    if won:
        return 1.0
    return 0.0


def forfeit_reward(kind: int, standing: float, round_cost: float, round_episode: bool) -> float:
    """The reward of an illegal action, which ends the seat's episode: the worst the
    rest of the episode could have brought, so that no illegal move scores better than
    playing on (a learner without masks is not paid to forfeit).

    ``kind`` WIN: -1, an elimination. LIVES and RATE (a round played adds nothing
    negative to RATE): ``standing``, the seat's lives (chips at banking), plus
    ``round_cost`` (:func:`round_cost`: the most one settlement can charge it, which
    may already be in the pot), or ``round_cost`` alone in one-round episodes; in the
    points games, whose rounds score 0 or more (``round_cost`` 0), nothing. Never
    less than 1 either: -1 at most."""
    worst = (
        1.0 if kind == WIN else (round_cost if round_episode or round_cost == 0.0 else standing + round_cost)
    )
    return -max(1.0, worst)


def round_cost(rules: Any) -> float:
    """The most one settlement can cost a seat under ``rules``: in the lives games 1 or
    the knocker's penalty, in the chip games the ante (paid at the deal) and a blitz
    payment, in the points games nothing (a round scores 0 or more)."""
    if rules.scoring == "lives":
        return float(max(1, rules.knocker_penalty))
    if rules.scoring == "chips":
        return float(rules.ante + rules.blitz_chips)
    return 0.0


def seat_reward(kind: int, result: Any, seat: int, winners: tuple[int, ...]) -> float:
    """:func:`settled_reward` of a :class:`~thirtyone_env.game.engine.RoundResult` for
    ``seat``; ``winners`` are the game's winners when this settlement ended the game,
    else ``()``."""
    gain = float(result.gains[seat]) if result.gains else -float(result.losses[seat])
    return settled_reward(kind, gain, seat in result.eliminated, seat in winners, 1.0 / len(result.losses))
