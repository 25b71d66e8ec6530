"""Rounds per second of an expert tournament on 1 and 2 local processes and 1 and 2 Ray
workers (a local Ray on 127.0.0.1), and the overhead of one Ray task: the README table.

    python benchmarks/ray_scaling.py --games 2000
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def rate(backend, workers: int, games: int) -> tuple[float, float]:
    """Rounds a second of four experts' tournament of ``games`` games, and its seconds."""
    import agents
    from thirtyone_env.harness.evaluation import TournamentConfig, run_tournament

    cfg = TournamentConfig(("expert",) * 4, games, "standard", 1, workers)
    t = time.perf_counter()
    played = run_tournament(cfg, agents.from_spec, backend=backend)
    dt = time.perf_counter() - t
    return sum(g.rounds for g in played) / dt, dt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2000, help="games of each tournament")
    parser.add_argument("--tasks", type=int, default=400, help="empty Ray tasks timed for the overhead")
    args = parser.parse_args(argv)
    if args.games < 4 or args.tasks < 1:
        parser.error("--games must be at least 4 (one deal set) and --tasks at least 1")
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    from thirtyone_env.harness.parallel import Backend, connect, ordered_map

    for w in (1, 2):
        r, dt = rate(Backend("local", w), w, args.games)
        print(f"local {w}: {r:,.0f} rounds/s ({dt:.1f}s)", flush=True)
    connect()  # local Ray, 127.0.0.1
    for w in (1, 2):
        rate(Backend("ray", w), w, args.games)  # warm the workers
        r, dt = rate(Backend("ray", w), w, args.games)
        print(f"ray {w}: {r:,.0f} rounds/s ({dt:.1f}s)", flush=True)
    t = time.perf_counter()
    list(ordered_map(abs, range(args.tasks), Backend("ray", 2)))
    dt = time.perf_counter() - t
    print(f"ray task overhead: {dt / args.tasks * 1000:.2f} ms a task (empty tasks, 2 in flight)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
