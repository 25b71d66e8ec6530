"""Common random numbers for the stock: each seat draws by its own stream of chances.

    python lab/luck/coupled_draws.py --candidate greedy:knock_at=27 --games 4000 \\
        --seed 2 --out /tmp/coupled

``benchmarks/variance.py`` (same options) with one change to the games: before each
draw from the stock, the card drawn is picked from the stock's cards (in card order)
by a number of the drawing seat's own stream for that round (its first draw, its
second, ...), shared by the candidate's and the expert's games of a deal, and moved to
the stock's top. A draw stays uniform over the stock, so every player's chances are
the game's own; but a candidate that takes the discard where the expert drew no longer
shifts every later card of the stock onto other seats: the two games of a deal stay
alike for longer.

Measured (2026-12-07, the command above against ``benchmarks/variance.py`` with the
same options, one core each): plain variance of the uncoupled games over each
estimate's, wins / lives a round.

| table | coupled, plain | uncoupled, corrected | coupled, corrected |
|---|---|---|---|
| expert | 0.91 / 1.06 | 1.68 / 1.43 | 1.68 / 1.60 |
| greedy | 1.17 / 1.11 | 2.15 / 2.00 | 2.53 / 2.29 |
| mixed | 1.09 / 1.14 | 1.73 / 1.75 | 1.67 / 1.96 |

Up to a sixth fewer games, none at the expert table's wins: not worth changing every
tournament's games (and every published figure) for. Two more ideas measured the same
day, on 600 games a table (seed 1), did no better: taking out the luck in the *rounds*
a seat is dealt in too (the lives-a-round estimate is a ratio; its denominator's luck
through the equity model's expected rounds) made the lives ratio worse at every table
(1.46 to 0.71 at the expert table), whatever multiple of it was taken; and a luck model
fitted to the gauntlet's own tables (on other seeds) moved the ratios by under a tenth.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import variance  # noqa: E402

from thirtyone_env.game.actions import DRAW_STOCK  # noqa: E402
from thirtyone_env.game.state import DRAW  # noqa: E402
from thirtyone_env.harness import evaluation  # noqa: E402

_MASK = (1 << 64) - 1


def _mix(x: int) -> int:
    """splitmix64's finaliser: a well-spread 64-bit number from a counter."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


class CoupledDraws(evaluation.LuckObserver):
    """The tournament's luck observer, picking each draw's card first."""

    def __init__(self, model, state, inner=None, sampled=None) -> None:
        super().__init__(model, state, inner, sampled)
        dealt = bytes(state.stock) + bytes(sum(state.hands, []))  # the same in both games of a deal
        self.key = int.from_bytes(hashlib.blake2b(dealt, digest_size=8).digest(), "little")
        self.count: dict[tuple[int, int], int] = {}

    def before(self, s, seat: int, action: int) -> bool:
        if action == DRAW_STOCK and s.phase == DRAW and s.stock:
            k = self.count.get((s.round_no, seat), 0)
            self.count[s.round_no, seat] = k + 1
            x = _mix(self.key ^ _mix(s.round_no * 1000003 + seat * 7919 + k * 31 + 1))
            card = sorted(s.stock)[((x >> 11) * len(s.stock)) >> 53]
            i = s.stock.index(card)
            s.stock[i], s.stock[-1] = s.stock[-1], s.stock[i]
        return super().before(s, seat, action)


if __name__ == "__main__":
    evaluation.LuckObserver = CoupledDraws
    sys.exit(variance.main())
