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
    lost, kept = [], []
    for g in range(args.games):
        rng = np.random.default_rng(np.random.SeedSequence(args.seed, spawn_key=(g,)))
        players = [agents.from_spec(spec) for spec in specs]
        reset_players(players, rng)
        state = new_game(rules, n, rng)
        now: dict[str, object] = {}

        class Moves:
            def before(self, s, seat, action) -> bool:
                if action == DRAW_STOCK:
                    return False  # a chance event: its jump is the luck taken out
                now["value"] = value(s)
                now["kind"] = "knock" if action == KNOCK else "take" if s.phase == DRAW else "discard"
                return True

            def after(self, s, seat, action) -> None:
                if s.phase >= ROUND_OVER:
                    after, kind = np.array(s.result.losses, float), f"{now['kind']} ending the round"
                else:
                    after, kind = value(s), now["kind"]
                jumps[kind] += float(((after - now["value"]) ** 2).sum())

        luck = LuckObserver(model, state, Moves())

        def dealt(s) -> None:
            luck.dealt(s)
            now["start"] = luck.lost.copy()

        def settled(s) -> None:
            y = np.array(s.result.losses, float)
            round_luck = luck.lost - now["start"]
            for p in range(n):
                if s.hands[p]:
                    lost.append(y[p])
                    kept.append(y[p] - round_luck[p])

        table = Table(
            state, players, rng, layout=ObsLayout(n, rules), observer=luck, on_settle=settled, on_deal=dealt
        )
        dealt(state)
        table.advance(NOBODY)
    y, k = np.array(lost), np.array(kept)
    print(f"{len(y):,} seat-rounds: variance of the lives lost {y.var():.4f}, less the luck {k.var():.4f}")
    for kind in sorted(jumps, key=lambda kind: -jumps[kind]):
        print(f"  squared jumps of the value at {kind}: {jumps[kind] / len(y):.4f} a seat-round")


if __name__ == "__main__":
    main()
