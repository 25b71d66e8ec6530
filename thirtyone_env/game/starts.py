"""Where a game starts: at full lives (the default), at a given standing, or at a
drawn endgame.

A *standing* is one entry per seat: a seat's lives (``0`` with ``Rules.free_ride``:
on the bike), or ``None`` for a seat already out of the game. :func:`check_standing`
holds the rules a standing must keep; :func:`endgame_standing` draws the heads-up end
of a game, the part of a game a learner meets least (one game in ten rounds at four
seats) and where a lost life decides the game. The compiled kernels draw the same
endgames, draw for draw (:func:`thirtyone_env.envs.batch_kernels.start_game`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from thirtyone_env.game.rules import Rules

#: An endgame share is drawn as ``rng.integers(ENDGAME_SCALE) < round(share * ENDGAME_SCALE)``:
#: an integer draw the kernels repeat exactly.
ENDGAME_SCALE = 1_000_000


def check_standing(rules: Rules, num_players: int, lives: Sequence) -> list[int | None]:
    """``lives`` as a standing of ``num_players`` seats under ``rules`` (``ValueError``
    naming the problem): lives games only; each seat's lives an int in
    ``1..rules.lives`` (``0`` too with a free ride) or ``None`` (out); two seats in at least."""
    if rules.scoring != "lives":
        raise ValueError(
            f"a starting standing (lives=) is for lives games; these rules score {rules.scoring}"
        )
    if isinstance(lives, str | bytes) or not isinstance(lives, Sequence | np.ndarray):
        raise ValueError(f"lives={lives!r}: give one entry per seat (lives, or None for a seat out)")
    if len(lives) != num_players:
        raise ValueError(f"lives: {len(lives)} entries for {num_players} seats")
    low = 0 if rules.free_ride else 1
    out: list[int | None] = []
    for p, x in enumerate(lives):
        if x is None:
            out.append(None)
            continue
        if (
            isinstance(x, bool | np.bool_)
            or not isinstance(x, int | np.integer)
            or not low <= x <= rules.lives
        ):
            raise ValueError(
                f"lives: seat {p} has {x!r}; a seat in the game has {low}..{rules.lives} lives "
                "(an int), a seat out has None"
            )
        out.append(int(x))
    if sum(x is not None for x in out) < 2:
        raise ValueError("lives: a game needs two seats in at least (the others None)")
    return out


def check_endgame_share(share: object) -> float:
    """The share of episodes that start at a drawn endgame: a number in [0, 1]."""
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0.0 <= share <= 1.0:
        raise ValueError(f"endgame={share!r} must be a share in [0, 1]")
    return float(share)


def endgame_standing(
    rng: np.random.Generator, rules: Rules, num_players: int, seat: int, share: float
) -> list[int | None] | None:
    """With chance ``share``, the standing of a game's heads-up end: ``seat`` and one
    other seat (drawn) in, each with lives drawn from ``1..rules.lives``, the rest out;
    else ``None`` (a full game). Draws nothing when ``share`` is 0, so a run without
    endgames deals the games it always dealt."""
    if share <= 0.0 or rng.integers(ENDGAME_SCALE) >= round(share * ENDGAME_SCALE):
        return None
    n = num_players
    other = (seat + 1 + int(rng.integers(n - 1))) % n
    return [int(1 + rng.integers(rules.lives)) if p in (seat, other) else None for p in range(n)]
