"""Tournament harness speed: rounds per second with greedy players, per worker count.

Usage: ``python benchmarks/harness_speed.py [--games 2000] [--workers 1 2] [--plain]``.
Runs the same tournament (duplicate deals, full per-round statistics, each game's luck
measured unless ``--plain``) with each worker count and prints rounds/s and the
speed-up.
"""

from __future__ import annotations

import os
import platform
import time

import agents
from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.command import CommandParser, count_arg
from thirtyone_env.harness.driver import check_table
from thirtyone_env.harness.evaluation import TournamentConfig, run_tournament
from thirtyone_env.harness.parallel import available_cpus


def main() -> None:
    parser = CommandParser(prog="benchmarks/harness_speed.py", description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=count_arg, default=2000, help="games a tournament (default 2000)")
    parser.add_argument(
        "--workers", type=count_arg, nargs="+", default=[1, 2], help="worker counts measured (default 1 2)"
    )
    parser.add_argument(
        "--players", nargs="+", default=["greedy"] * 4, help="player specs (default greedy x4)"
    )
    parser.add_argument("--plain", action="store_true", help="do not measure the games' luck")
    args = parser.parse_args()
    if max(args.workers) > available_cpus():
        parser.error(
            f"--workers: at most the {available_cpus()} CPUs this process may use, got {max(args.workers)}"
        )
    try:  # the table and its players are checked before any game
        for spec in args.players:
            agents.check_spec(spec)
        Rules().check_num_players(len(args.players))
        for spec in args.players:
            check_table(agents.from_spec(spec), len(args.players), Rules(), spec)
    except (ValueError, OSError) as e:
        parser.error(str(e))
    luck = "plain" if args.plain else "luck measured"
    print(
        f"harness: {' '.join(args.players)}, {args.games} games ({luck}), python {platform.python_version()}, "
        f"{os.cpu_count()} cpus"
    )
    base = None
    for w in args.workers:
        config = TournamentConfig(tuple(args.players), args.games, seed=0, workers=w, luck=not args.plain)
        start = time.perf_counter()
        games = run_tournament(config, agents.from_spec)
        elapsed = time.perf_counter() - start
        rounds = sum(g.rounds for g in games)
        rate = rounds / elapsed
        base = base or rate
        print(
            f"workers={w}: {rounds} rounds in {elapsed:.2f}s  {rate:>9,.0f} rounds/s  ({rate / w:,.0f} per worker, x{rate / base:.2f})"
        )


if __name__ == "__main__":
    main()
