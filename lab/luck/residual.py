"""Where the variance the luck correction leaves comes from, per seat and round.

    python lab/luck/residual.py expert,expert,expert,expert --games 100

Plays games at one table with the packaged luck model watching, and prints per seat and
round: the variance of the lives lost, of the lives lost less the round's luck (what the
corrected estimate keeps), and the value's squared jumps at each kind of move summed per
seat-round. A move by a player whose policy is fixed is not luck, so its jump stays in
the estimate: those sums say which moves a sharper value function would have to foresee.
"""

from __future__ import annotations

import argparse
import collections

import numpy as np

import agents
from thirtyone_env.game.actions import DRAW_STOCK, KNOCK
from thirtyone_env.game.encoding import ObsLayout
from thirtyone_env.game.engine import new_game
from thirtyone_env.game.rules import Rules
from thirtyone_env.game.state import DRAW, ROUND_OVER
from thirtyone_env.harness.driver import NOBODY, Table, reset_players
from thirtyone_env.harness.luck import LuckObserver, _lives, default_model, state_features


class Watch:
    """One game's moves and rounds: the value's jump at each move, each round's luck."""

    def __init__(self, value, jumps, lost, kept) -> None:
        self.value, self.jumps, self.lost, self.kept = value, jumps, lost, kept
        self.luck: LuckObserver | None = None
        self.before_move: np.ndarray | None = None
        self.kind = ""
        self.start = None

    def before(self, s, seat, action) -> bool:
        if action == DRAW_STOCK:
            return False  # a chance event: its jump is the luck taken out
        self.before_move = self.value(s)
        self.kind = "knock" if action == KNOCK else "take" if s.phase == DRAW else "discard"
        return True

    def after(self, s, seat, action) -> None:
        if s.phase >= ROUND_OVER:
            after, kind = np.array(s.result.losses, float), f"{self.kind} ending the round"
        else:
            after, kind = self.value(s), self.kind
        self.jumps[kind] += float(((after - self.before_move) ** 2).sum())

    def dealt(self, s) -> None:
        self.luck.dealt(s)
        self.start = self.luck.lost.copy()

    def settled(self, s) -> None:
        y = np.array(s.result.losses, float)
        round_luck = self.luck.lost - self.start
        for p in range(len(y)):
            if s.hands[p]:
                self.lost.append(y[p])
                self.kept.append(y[p] - round_luck[p])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("players", help="one spec a seat, comma-separated")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    specs = args.players.split(",")
    rules = Rules.preset(args.rules)
    n = len(specs)
    model = default_model()
    weights = model.arrays()

    def value(s) -> np.ndarray:
        f, active, knocker = state_features(s)
        out = np.zeros(n)
        _lives(f, active, knocker, weights, out)
        return out

    jumps: dict[str, float] = collections.defaultdict(float)
    lost: list[float] = []
    kept: list[float] = []
    for g in range(args.games):
        rng = np.random.default_rng(np.random.SeedSequence(args.seed, spawn_key=(g,)))
        players = [agents.from_spec(spec) for spec in specs]
        reset_players(players, rng)
        state = new_game(rules, n, rng)
        watch = Watch(value, jumps, lost, kept)
        watch.luck = LuckObserver(model, state, watch)
        table = Table(
            state,
            players,
            rng,
            layout=ObsLayout(n, rules),
            observer=watch.luck,
            on_settle=watch.settled,
            on_deal=watch.dealt,
        )
        watch.dealt(state)
        table.advance(NOBODY)
    y, k = np.array(lost), np.array(kept)
    print(f"{len(y):,} seat-rounds: variance of the lives lost {y.var():.4f}, less the luck {k.var():.4f}")
    for kind in sorted(jumps, key=lambda kind: -jumps[kind]):
        print(f"  squared jumps of the value at {kind}: {jumps[kind] / len(y):.4f} a seat-round")


if __name__ == "__main__":
    main()
