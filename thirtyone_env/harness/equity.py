"""Win equity in the lives games: a seat's chance to win the game from a standing.

A measured knock (``training.imitation``) values a round by the lives it costs, which
treats the first life lost like the last and an opponent's elimination like nothing.
The game is won by being the last player in, so the ``"win"`` objective values a
settled round by the chance of winning the game from the standing it leaves, under a
simple model of the rounds to come: each round one player still in, drawn uniformly,
loses one life (the tournament-poker "independent chip model", for a game of
elimination). A settlement that ends the game is worth 1 to a winner (shared when
several share first place) and 0 to the rest.

Equity is given in *lives at the start*: losing one life from the opening standing
costs exactly 1, so a knock's gain in equity and its gain in lives are on one scale
(the fit weighs measured knocks by the size of their gain, and pooled demonstrations
may mix the two).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from thirtyone_env.game.rules import Rules
from thirtyone_env.game.state import GameState

#: The model's largest standing: a seat's losses left before going out (lives, plus the
#: free ride), times the seats; the exact table grows with both (well under a second here).
MAX_LOSSES_LEFT = 12


def check_win_objective(rules: Rules, players: int) -> None:
    """Raise ``ValueError`` naming the reason where the ``"win"`` objective has no
    meaning (the scored games) or its model would be too large."""
    if rules.scoring != "lives":
        raise ValueError(
            f"the 'win' objective values lives games; these rules score {rules.scoring!r} "
            "(use the 'lives' objective: the change of standing)"
        )
    left = losses_left_at_start(rules)
    if left > MAX_LOSSES_LEFT:
        raise ValueError(
            f"the 'win' objective's model covers at most {MAX_LOSSES_LEFT} losses a seat before "
            f"going out; these rules give {left} (lives={rules.lives}, free_ride={rules.free_ride})"
        )
    if players < 2:
        raise ValueError(f"the 'win' objective needs at least 2 players, got {players}")


def losses_left_at_start(rules: Rules) -> int:
    """Losses a seat can take before it is out, at the start of a game."""
    return rules.lives + (1 if rules.free_ride else 0)


@cache
def _chances(left: tuple[int, ...]) -> tuple[float, ...]:
    """Each seat's chance to win from ``left`` (losses left per seat still in, all at
    least 1, ascending), when each round a uniformly drawn seat loses one."""
    n = len(left)
    if n == 1:
        return (1.0,)
    acc = [0.0] * n
    for i in range(n):
        after = list(left)
        after[i] -= 1
        if after[i] == 0:
            stay = [k for k in range(n) if k != i]  # still ascending
            sub = _chances(tuple(after[k] for k in stay))
            for pos, k in enumerate(stay):
                acc[k] += sub[pos] / n
        else:
            order = sorted(range(n), key=after.__getitem__)
            sub = _chances(tuple(after[k] for k in order))
            for pos, k in enumerate(order):
                acc[k] += sub[pos] / n
    return tuple(acc)


def win_chance(left: Sequence[int], seat: int) -> float:
    """``seat``'s chance to win from ``left`` (losses left before going out, per seat;
    0 for a seat that is out) under the model of the module doc."""
    if left[seat] <= 0:
        return 0.0
    seats = [p for p in range(len(left)) if left[p] > 0]
    order = sorted(seats, key=lambda p: left[p])
    chances = _chances(tuple(left[p] for p in order))
    return chances[order.index(seat)]


@cache
def life_at_start(players: int, start: int) -> float:
    """The equity one life is worth at the opening standing of ``players`` seats with
    ``start`` losses left each: the unit that makes equity read as lives."""
    left = [start] * players
    left[0] -= 1
    return 1.0 / players - win_chance(left, 0)


def standing_equity(s: GameState, seat: int) -> float:
    """``seat``'s equity, in lives at the start, after the settled round in ``s``."""
    return equity_of(s.rules, s.lives, s.active, s.winners, seat)


def equity_of(
    rules: Rules, lives: Sequence[int], active: Sequence[bool], winners: Sequence[int], seat: int
) -> float:
    """``seat``'s equity, in lives at the start, at a standing of ``lives`` and
    ``active`` flags after a settled round (``winners``: the game's, when it ended)."""
    n = len(lives)
    unit = life_at_start(n, losses_left_at_start(rules))
    if winners:
        return (1.0 / len(winners) if seat in winners else 0.0) / unit
    bonus = 1 if rules.free_ride else 0
    left = [lives[p] + bonus if active[p] else 0 for p in range(n)]
    return win_chance(left, seat) / unit
