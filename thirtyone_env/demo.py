"""``make demo``: a few hundred games between the built-in players, as a table.

Usage: ``python -m thirtyone_env.demo [--games 400] [--seed 0] [--rules standard]``.
Seats rotate every game so each player sits in each seat equally often. Needs tqdm
(installed with the ``train`` extra, as ``make demo`` does).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from tqdm import tqdm

from thirtyone_env.match import play_game
from thirtyone_env.policies import GreedyPolicy, RandomPolicy
from thirtyone_env.rules import PRESETS, Rules


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Games between the built-in players.")
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rules", default="standard", choices=sorted(PRESETS))
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")
    rules = Rules.preset(args.rules)
    players = {
        "greedy-25": GreedyPolicy(knock_at=25),
        "greedy-21": GreedyPolicy(knock_at=21),
        "greedy-28": GreedyPolicy(knock_at=28),
        "random": RandomPolicy(),
    }
    names = list(players)
    n = len(names)
    wins = dict.fromkeys(names, 0.0)
    lost = dict.fromkeys(names, 0)
    rounds_played = dict.fromkeys(names, 0)
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    for g in tqdm(range(args.games), desc="games", unit="game", mininterval=0.2):
        order = names[g % n :] + names[: g % n]  # rotate seats
        record = play_game([players[k] for k in order], rng, rules)
        for w in record.winners:
            wins[order[w]] += 1 / len(record.winners)
        for result in record.rounds:
            for seat, name in enumerate(order):
                if result.values[seat] is not None:
                    rounds_played[name] += 1
                    lost[name] += result.losses[seat]
    elapsed = time.perf_counter() - start
    print(f"\n{args.games} games, {n} players, rules={args.rules}, seed={args.seed} ({elapsed:.1f}s)\n")
    print(f"{'player':<10} {'win rate':>9} {'95% CI':>15} {'lives lost/round':>17}")
    for name in sorted(names, key=lambda k: -wins[k]):
        p = wins[name] / args.games
        half = 1.96 * np.sqrt(p * (1 - p) / args.games)
        per_round = lost[name] / max(1, rounds_played[name])
        print(f"{name:<10} {p:>9.1%} {f'[{p - half:.1%}, {p + half:.1%}]':>15} {per_round:>17.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
