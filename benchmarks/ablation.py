"""Ablation: one player minus another in the same seat on the same deals.

    python benchmarks/ablation.py ppo:path=runs/W4/best_model.zip ppo:path=runs/W4/anchor_policy.npz \\
        --opponents expert expert expert --games 4000 --workers 2

Both play seat 0 of a duplicate-deal tournament (seats rotated) against the same
opponents with the same seed, so every deal is met by both: the paired difference in
wins and in lives lost a round with 95% intervals (``agents.gauntlet.compare``). This is
how a training recipe shows what its RL phase adds over its warm start.
"""

from __future__ import annotations

import argparse
import json
import sys

import agents
from agents.gauntlet import compare
from thirtyone_env.game.rules import Rules


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", help="the player measured (a player spec)")
    parser.add_argument("b", help="the player it is measured against, in the same seat")
    parser.add_argument("--opponents", nargs="+", default=["expert"] * 3, help="the other seats' specs")
    parser.add_argument("--games", type=int, default=4000, help="games each player plays")
    parser.add_argument("--rules", default="standard", help="a rules preset")
    parser.add_argument("--seed", type=int, default=1, help="the deals' seed")
    parser.add_argument("--workers", type=int, default=1, help="worker processes")
    parser.add_argument("--json", action="store_true", help="print the row as JSON")
    args = parser.parse_args(argv)
    try:
        rules = Rules.preset(args.rules)
        if args.games < 1 or args.workers < 1:
            raise ValueError("--games and --workers must be at least 1")
        for spec in (args.a, args.b, *args.opponents):
            agents.check_spec(spec)
            player = agents.from_spec(spec)
            if hasattr(player, "check_table"):
                player.check_table(1 + len(args.opponents), rules)
    except ValueError as e:
        parser.error(str(e))
    from tqdm import tqdm

    with tqdm(total=2 * args.games, unit="game", desc="ablation", file=sys.stderr) as bar:
        row = compare(
            args.a, args.b, args.opponents, args.games, args.rules, args.seed, args.workers, bar.update
        )
    if args.json:
        print(json.dumps(row, indent=1))
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
