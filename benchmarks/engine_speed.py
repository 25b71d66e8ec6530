"""Engine speed: random legal play on one core, printed as decisions/s and rounds/s.

Usage: ``python benchmarks/engine_speed.py [--seconds 5] [--players 4] [--rules standard]``;
``--rules all`` measures every preset and prints a table (each preset's speed against
the standard game's, so none lags by an order of magnitude unnoticed).
Random choices come from a block of pre-drawn uniforms so the figure measures the
engine, not the generator's per-call overhead.
"""

from __future__ import annotations

import platform
import time

import numpy as np

from thirtyone_env.game.engine import (
    GAME_OVER,
    ROUND_OVER,
    apply_action,
    legal_actions,
    new_game,
    start_round,
)
from thirtyone_env.game.rules import PRESETS, Rules
from thirtyone_env.harness.command import CommandParser, count_arg, seconds_arg


def run(seconds: float, players: int, rules: str, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    rules_obj = Rules.resolve(rules)
    state = new_game(rules_obj, players, rng)
    decisions = rounds = games = 0
    uniforms = rng.random(1 << 16).tolist()
    u = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(2000):
            if state.phase >= ROUND_OVER:
                rounds += 1
                if state.phase == GAME_OVER:
                    games += 1
                    state = new_game(rules_obj, players, rng)
                else:
                    start_round(state, rng)
                continue
            acts = legal_actions(state)
            apply_action(state, acts[int(uniforms[u] * len(acts))], rng)
            u = (u + 1) & 0xFFFF
            decisions += 1
        if time.perf_counter() >= deadline:
            break
    elapsed = time.perf_counter() - start
    return {
        "decisions_per_s": decisions / elapsed,
        "rounds_per_s": rounds / elapsed,
        "games_per_s": games / elapsed,
        "decisions_per_round": decisions / max(rounds, 1),
    }


def main() -> None:
    parser = CommandParser(prog="benchmarks/engine_speed.py", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=seconds_arg, default=5.0, help="seconds a measurement (default 5)")
    parser.add_argument("--players", type=count_arg, default=4, help="seats (default 4)")
    parser.add_argument("--rules", default="standard", help="a preset, house rules, or 'all' (every preset)")
    args = parser.parse_args()
    try:  # the table is checked before any measurement
        for name in PRESETS if args.rules == "all" else [args.rules]:
            rules = Rules.resolve(name)
            players = rules.seats or args.players if args.rules == "all" else args.players  # as measured
            new_game(rules, players, np.random.default_rng(0))
    except ValueError as e:
        parser.error(str(e))
    print(f"python {platform.python_version()} on {platform.machine()} ({platform.processor() or 'cpu'})")
    if args.rules == "all":
        print(f"engine, {args.players} players, random legal play, one core, {args.seconds:g}s per preset")
        print(f"{'preset':<16}{'decisions/s':>14}{'rounds/s':>12}{'decisions/round':>17}{'vs standard':>13}")
        base = None
        for name in PRESETS:
            players = Rules.preset(name).seats or args.players
            r = run(args.seconds, players, name)
            base = base or r["decisions_per_s"]
            print(
                f"{name:<16}{r['decisions_per_s']:>14,.0f}{r['rounds_per_s']:>12,.0f}"
                f"{r['decisions_per_round']:>17.1f}{r['decisions_per_s'] / base:>12.2f}x"
            )
        return
    r = run(args.seconds, args.players, args.rules)
    print(f"engine, {args.players} players, rules={args.rules}, random legal play, one core")
    print(f"decisions/s      {r['decisions_per_s']:>12,.0f}")
    print(f"rounds/s         {r['rounds_per_s']:>12,.0f}")
    print(f"games/s          {r['games_per_s']:>12,.0f}")
    print(f"decisions/round  {r['decisions_per_round']:>12.1f}")


if __name__ == "__main__":
    main()
