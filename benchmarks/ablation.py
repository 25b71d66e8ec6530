"""Ablation: one player minus another in the same seat on the same deals.

    python benchmarks/ablation.py ppo:path=runs/W4/best_model.zip ppo:path=runs/W4/anchor_policy.npz \\
        --opponents expert expert expert --games 4000 --workers 2

Both play seat 0 of a duplicate-deal tournament (seats rotated) against the same
opponents with the same seed, so every deal is met by both: the paired difference in
wins and in lives lost a round with 95% intervals (``agents.gauntlet.compare``). This is
how a training recipe shows what its RL phase adds over its warm start.

``--by-players-in`` also splits the lives lost a round by how many players each round
was dealt to (four, three, then the heads-up end of a game), each with its paired
difference: where one player loses the lives the other keeps.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import agents
from agents.gauntlet import by_players_in, pair_row, play_with
from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.command import add_game_options


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", help="the player measured (a player spec)")
    parser.add_argument("b", help="the player it is measured against, in the same seat")
    parser.add_argument("--opponents", nargs="+", default=["expert"] * 3, help="the other seats' specs")
    add_game_options(parser, games=4000, seed=1, players=None)
    parser.add_argument(
        "--by-players-in", action="store_true", help="also split lives a round by the players dealt in"
    )
    parser.add_argument("--json", action="store_true", help="print the row (and the split) as JSON")
    args = parser.parse_args(argv)
    try:
        rules = Rules.preset(args.rules)
        if args.games < 1 or args.workers < 1:
            raise ValueError("--games and --workers must be at least 1")
        agents.check_at_table((args.a, args.b, *args.opponents), 1 + len(args.opponents), rules)
    except ValueError as e:
        parser.error(str(e))
    from tqdm import tqdm

    start = time.perf_counter()
    with tqdm(total=2 * args.games, unit="game", desc="ablation", file=sys.stderr) as bar:
        played = play_with(
            args.a, [args.b], args.opponents, args.games, args.rules, args.seed, args.workers, bar.update
        )
    row = pair_row(played, time.perf_counter() - start)
    split = by_players_in(played) if args.by_players_in else None
    if args.json:
        print(json.dumps(row if split is None else {**row, "by_players_in": split}, indent=1))
        return 0
    print(f"{args.a} minus {args.b}, seat 0 against {', '.join(args.opponents)}: {row['games']} games each")
    print(
        f"wins: {100 * row['candidate_win_rate']:.1f}% vs {100 * row['expert_win_rate']:.1f}%, "
        f"difference {100 * row['wins_diff']:+.1f} points [{100 * row['wins_low']:+.1f}, {100 * row['wins_high']:+.1f}]"
    )
    print(
        f"lives lost a round: {row['candidate_lives']:.4f} vs {row['expert_lives']:.4f}, "
        f"difference {row['lives_diff']:+.4f} [{row['lives_low']:+.4f}, {row['lives_high']:+.4f}]"
    )
    if split is not None:
        print("\n| players in | share of rounds (a / b) | lives lost a round (a / b) | difference [95% CI] |")
        print("|---:|---:|---:|---:|")
        for r in split:
            print(
                f"| {r['players_in']} | {r['a_share']:.3f} / {r['b_share']:.3f} "
                f"| {r['a_lives']:.4f} / {r['b_lives']:.4f} "
                f"| {r['lives_diff']:+.4f} [{r['lives_low']:+.4f}, {r['lives_high']:+.4f}] |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
