"""The luck correction with a value played out by the known players, on the kernels.

    python lab/luck/playouts.py --candidate greedy:knock_at=27 --tables expert greedy \\
        --games 300 --seed 1 --out /tmp/playouts

``benchmarks/variance.py`` (same options) with one change to the value function: a
state's value is the mean of ``PLAYOUTS`` play-outs of its round by the seated players
themselves (on the compiled kernels), each with the stock in an order of its own. The
orders are fixed before the round is played, from keys drawn once per deal set
(independent of the cards the game draws), so the value is a fixed function of the
state and every correction keeps mean zero. The same keys order the stock from every
state of the round: a play-out from before a draw and the play-out from after it, with
the card that play-out drew, are the same game, so what is left between two draws is the
play-outs' own error at one draw, not the whole round's.

Measured (2026-12-07, the command below against ``benchmarks/variance.py`` with the same
options, one core; plain variance over corrected, wins / lives a round):

    python lab/luck/playouts.py --candidate greedy:knock_at=27 --tables greedy \\
        --games 120 --seed 1 --out /tmp/playouts

| value | greedy table | time |
|---|---|---|
| packaged round-loss model | 1.99 / 2.14 | 3 s |
| eight play-outs a state | 2.56 / 1.75 | 1,373 s |

Not worth it, and not because the play-outs misjudge the players (on the kernels they
play the engine's moves exactly): that error at one draw is a single play-out's result,
a coin toss, and the value's jump between two draws is the mean of eight of them. Over
the thirty-odd draws of a round those jumps add about as much noise as the play-outs
take out. The noise shrinks only as one over the play-outs, at a cost that grows with
them; the exact mean over the next draw (``lab/luck/foresight.py``) does better for
less.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import variance  # noqa: E402
from foresight import SEATED, outcomes, remember  # noqa: E402

from thirtyone_env.envs import batch_kernels as K  # noqa: E402
from thirtyone_env.envs.kernel_games import KernelGames  # noqa: E402
from thirtyone_env.game.cards import NUM_CARDS  # noqa: E402
from thirtyone_env.game.encoding import ObsLayout  # noqa: E402
from thirtyone_env.game.positions import clone_state  # noqa: E402
from thirtyone_env.game.state import ROUND_OVER  # noqa: E402
from thirtyone_env.harness import evaluation  # noqa: E402
from thirtyone_env.harness import luck as L  # noqa: E402

PLAYOUTS = 8


class PlayoutObserver(L.LuckObserver):
    """:class:`~thirtyone_env.harness.luck.LuckObserver` whose value plays the round out."""

    def __init__(self, model, state, inner=None, sampled=None) -> None:
        super().__init__(model, state, inner, sampled)
        self.policies = SEATED["policies"]
        hands = sorted(tuple(sorted(h)) for h in state.hands)
        entropy = [c + 1 for h in hands for c in h]
        self.seed = np.random.SeedSequence(entropy, spawn_key=(7,))

    def _keys(self, round_no: int) -> tuple[np.ndarray, list[int]]:
        """The round's stock orders: ``keys[m, card]`` and each play-out's reshuffle seed."""
        ss = np.random.SeedSequence(self.seed.entropy, spawn_key=(7, round_no))
        rng = np.random.default_rng(ss)
        return rng.random((PLAYOUTS, NUM_CARDS)), [int(x) for x in rng.integers(0, 2**62, PLAYOUTS)]

    def values(self, starts: list) -> np.ndarray:
        """Expected lives lost by seat from each of ``starts`` (``(len, n)``)."""
        n = self.n
        out = np.zeros((len(starts), n))
        keys, seeds = self._keys(starts[0].round_no)
        rows = []
        for k, t in enumerate(starts):
            if t.phase >= ROUND_OVER:
                out[k] = t.result.losses
                continue
            for m in range(PLAYOUTS):
                c = clone_state(t)
                c.stock.sort(key=lambda card, m=m: -keys[m, card])  # the smallest key on top
                rows.append((k, c, np.random.default_rng(seeds[m])))
        if not rows:
            return out
        t0 = starts[0]
        seats = [c.current for _, c, _ in rows]
        players = [[self.policies[(seats[i] + j) % n] for j in range(1, n)] for i in range(len(rows))]
        agents = [self.policies[s] for s in seats]
        games = KernelGames(len(rows), ObsLayout(n, t0.rules), t0.rules, players, 0, "round", "lives", agents)
        for i, (_, c, rng) in enumerate(rows):
            games.load_state(i, c, seats[i], rng)
        games.advance(games.all)
        games.play_to_end()
        lost = games.seat_i[:, :, K.S_LOST].astype(float)
        for i, (k, _, _) in enumerate(rows):
            out[k] += lost[i] / PLAYOUTS
        return out

    def _add(self, s, seat: int = -1, cards: np.ndarray = L._NO_CARDS) -> None:
        starts, actual = outcomes(s, cards)
        v = self.values(starts)
        L._accumulate(v[actual], v.mean(0), self._win_delta, self.lost, self.wins)


if __name__ == "__main__":
    evaluation.sampled_moves = remember
    evaluation.LuckObserver = PlayoutObserver
    sys.exit(variance.main())
