"""Drawn heads-up endgames: the standing of a game's heads-up end, for the heads-up
experiments (``headsup.py`` here).

The heads-up end of a game is the part a learner meets least (one game in ten rounds
at four seats) and where a lost life decides the game. The env once drew these starts
for a share of training episodes (``ThirtyOneEnv(endgame=...)``, ``train.py
--endgame``); that option is gone from the package, and a game starts at a standing
through ``new_game(lives=...)`` or the env's ``lives`` reset option. This module draws
the standings exactly as the option did, so the games of the logged experiments
(``lab/cards/ppo_standard_4p-log.md``) are the same for the same seeds.
"""

from __future__ import annotations

import numpy as np

from thirtyone_env.game.rules import Rules

#: An endgame share is drawn as ``rng.integers(ENDGAME_SCALE) < round(share * ENDGAME_SCALE)``:
#: an integer draw (the env's kernels once repeated it exactly).
ENDGAME_SCALE = 1_000_000


def endgame_standing(
    rng: np.random.Generator, rules: Rules, num_players: int, seat: int, share: float
) -> list[int | None] | None:
    """With chance ``share``, the standing of a game's heads-up end: ``seat`` and one
    other seat (drawn) in, each with lives drawn from ``1..rules.lives``, the rest out;
    else ``None`` (a full game). Draws nothing when ``share`` is 0."""
    if share <= 0.0 or rng.integers(ENDGAME_SCALE) >= round(share * ENDGAME_SCALE):
        return None
    n = num_players
    other = (seat + 1 + int(rng.integers(n - 1))) % n
    return [int(1 + rng.integers(rules.lives)) if p in (seat, other) else None for p in range(n)]
