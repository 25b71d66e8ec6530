"""Where a game starts: at full lives (the default) or at a given standing.

A *standing* is one entry per seat: a seat's lives (``0`` with ``Rules.free_ride``:
on the bike), or ``None`` for a seat already out of the game. :func:`check_standing`
holds the rules a standing must keep.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from thirtyone_env.game.rules import Rules


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
