"""The luck correction with a value that foresees the known players' moves.

    python lab/luck/foresight.py --candidate greedy:knock_at=27 --tables expert greedy \\
        --games 300 --seed 1 --out /tmp/foresight

``benchmarks/variance.py`` (same options) with one change to the value function: a
state is valued where the game next meets chance. From the state a draw leaves, every
player whose moves are fixed plays on (on a copy) until a seat would draw from the
stock, a sampled move comes or the round ends; the value there is the packaged round-loss
model's mean over the cards that draw could bring (the exact lives at the round's end).
It stays a fixed function of the state, so every correction still has mean zero; it
takes the value's jumps at deterministic moves (taking the discard, discarding,
knocking) out of what the correction leaves.

Measured (2026-12-07, the command above, one core; the same games as
``benchmarks/variance.py`` with the same options; plain variance over corrected,
wins / lives a round):

| table | packaged model | with foresight |
|---|---|---|
| expert | 1.66 / 1.78 | 2.29 / 2.15 |
| greedy | 2.11 / 2.00 | 3.59 / 4.16 |

Both tables took 318 s with foresight, 15 s with the packaged model alone.

Again on all three gauntlet tables (2026-12-07, ``--tables expert greedy mixed --games 600
--seed 2``, one core, niced beside other work: 1,196 s with foresight, 42 s without):

| table | packaged model | with foresight |
|---|---|---|
| expert | 1.79 / 1.28 | 2.09 / 1.28 |
| greedy | 2.01 / 1.82 | 3.59 / 3.08 |
| mixed | 1.53 / 1.71 | 2.54 / 2.65 |

The lives a round at the expert table stay at 1.28 either way: there most of that
estimate's variance lies in how many rounds the candidate is dealt in (the ratio's
denominator), which no value of a round's lives takes out.

It is not in the product: the foresight asks each player about every card the stock
could hold, about 25 times the work of the game itself (the expert's ``act`` is half
of it), so at heuristic tables an estimate takes longer to resolve than with the plain
luck correction, and the expert table stays far from four times fewer games. Other
things tried that day, each on the same games: a model four and eight times wider
(held-out error 0.2023 to 0.2008), a feature for what a draw from the actual stock adds
(error 0.2048 to 0.2025, ratios 1.64 / 1.79 and 2.20 / 2.14), and the best multiple of the
luck fitted on the games themselves (expert wins 1.61 to 1.73): none moves the ratio
much. What the correction leaves is the model's error between one draw and the next,
which no feature of one state seen so far predicts.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import variance  # noqa: E402

from thirtyone_env.game.actions import DRAW_STOCK  # noqa: E402
from thirtyone_env.game.engine import apply_action, legal_mask  # noqa: E402
from thirtyone_env.game.positions import clone_state  # noqa: E402
from thirtyone_env.game.state import DRAW, ROUND_OVER  # noqa: E402
from thirtyone_env.harness import evaluation  # noqa: E402
from thirtyone_env.harness import luck as L  # noqa: E402
from thirtyone_env.harness.driver import observe  # noqa: E402

#: The seats' players of the game being set up (the tournament hands them to
#: ``sampled_moves`` just before it builds the luck observer).
SEATED: dict[str, object] = {}
_sampled_moves = evaluation.sampled_moves


def remember(policies, layout):
    SEATED["policies"], SEATED["layout"] = policies, layout
    return _sampled_moves(policies, layout)


class ForesightObserver(L.LuckObserver):
    """:class:`~thirtyone_env.harness.luck.LuckObserver` whose value plays the fixed
    players forward to the next chance event."""

    #: the most moves played forward (a round never needs as many between two draws)
    LONGEST = 40

    def __init__(self, model, state, inner=None, sampled=None) -> None:
        super().__init__(model, state, inner, sampled)
        self.policies, self.layout = SEATED["policies"], SEATED["layout"]
        self.encodings = [getattr(p, "obs_encoding", "view") for p in self.policies]

    def _model_value(self, t, seat: int = -1) -> np.ndarray:
        mean, last = np.zeros(self.n), np.zeros(self.n)
        if seat >= 0:  # seat draws next: the mean over the cards it could draw
            arrays, cards = L.state_arrays(t, drawn=True), np.array(t.stock, dtype=np.int64)
        else:
            arrays, cards = L.state_arrays(t), L._NO_CARDS
        L._mean_and_last(arrays, seat, cards, self.weights, mean, last)
        return mean

    def foreseen(self, t) -> np.ndarray:
        """Expected lives lost from ``t`` (changed in place): played forward first."""
        for _ in range(self.LONGEST):
            if t.phase >= ROUND_OVER:
                return np.array(t.result.losses, dtype=float)
            seat = t.current
            if seat in self._sampled:
                break
            obs = observe(t, seat, self.encodings[seat], self.layout)
            action = int(self.policies[seat].act(obs, legal_mask(t)))
            if action == DRAW_STOCK and t.phase == DRAW:
                return self._model_value(t, seat if t.stock else -1)
            apply_action(t, action, L._NO_RNG)
        return self._model_value(t)

    def _add(self, s, seat: int = -1, cards: np.ndarray = L._NO_CARDS) -> None:
        starts, actual = outcomes(s, cards)
        v = np.array([self.foreseen(t) for t in starts])
        L._accumulate(v[actual], v.mean(0), self._win_delta, self.lost, self.wins)


def outcomes(s, cards: np.ndarray) -> tuple[list, int]:
    """Every outcome of the chance event at ``s``, each as likely, and which one the
    game had: with ``cards`` (the stock, its top card last) each card drawn in turn,
    else the deal's hands handed round the seats dealt in in every rotation."""
    starts = []
    if cards.size:  # a draw: every card of the stock in turn on its top
        for r in range(cards.size):
            t = clone_state(s)
            t.stock[r], t.stock[-1] = t.stock[-1], t.stock[r]
            apply_action(t, DRAW_STOCK, L._NO_RNG)
            starts.append(t)
        return starts, cards.size - 1
    seats = [p for p in range(len(s.hands)) if s.active[p]]
    for r in range(len(seats)):
        t = clone_state(s)
        for i, p in enumerate(seats):
            t.hands[p] = list(s.hands[seats[(i + r) % len(seats)]])
        starts.append(t)
    return starts, 0


if __name__ == "__main__":
    evaluation.sampled_moves = remember
    evaluation.LuckObserver = ForesightObserver
    sys.exit(variance.main())
