"""Tournament between named players with duplicate deals and rotated seats.

    python evaluate.py --players search expert greedy random --games 20000 \\
        --rules standard --workers 2 --seed 0

Prints per-player statistics with 95% confidence intervals, paired differences in
win rate and in lives lost per round, and an OpenSkill leaderboard, and writes
``results.json``, ``games.csv`` and PNG plots to the results folder (``--out``). A
player is a registry name with optional options: ``greedy:knock_at=27``,
``search:worlds=64``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import agents
from thirtyone_env.evaluation import (
    TournamentConfig,
    paired_differences,
    ratings,
    run_tournament,
    summarize,
)
from thirtyone_env.report import check_out_dir
from thirtyone_env.rules import PRESETS, Rules


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="evaluate.py",
        description="Tournament with duplicate deals and rotated seats.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument(
        "--players", nargs="+", required=True, help=f"one player per seat; players: {agents.names()}"
    )
    p.add_argument(
        "--games", type=int, default=2000, help="games (rounded up to a multiple of the table size)"
    )
    p.add_argument("--rules", default="standard", help=f"rules preset: {sorted(PRESETS)}")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=1, help="worker processes")
    p.add_argument(
        "--out", type=Path, default=None, help="results folder (default: results/<rules>-<players>-s<seed>)"
    )
    p.add_argument(
        "--record",
        type=Path,
        default=None,
        metavar="DIR",
        help="also write every game as JSON Lines into DIR (one file per deal set; "
        "replay with python -m thirtyone_env.replay FILE)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> TournamentConfig:
    """Validate everything before any game is played; errors exit with code 2."""
    if args.rules not in PRESETS:
        parser.error(f"unknown rules preset {args.rules!r}; presets are {sorted(PRESETS)}")
    rules = Rules.preset(args.rules)
    try:
        rules.check_num_players(len(args.players))
    except ValueError as e:
        parser.error(f"{len(args.players)} players given: {e}")
    for spec in args.players:
        try:
            player = agents.from_spec(spec)
            check = getattr(player, "check_table", None)
            if callable(check):
                check(len(args.players), rules)
        except ValueError as e:
            parser.error(str(e))
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    if args.workers < 1:
        parser.error(f"--workers must be at least 1, got {args.workers}")
    if args.seed < 0:
        parser.error(f"--seed must be a non-negative integer, got {args.seed}")
    record = None
    if args.record is not None:
        if args.record.exists() and not args.record.is_dir():
            parser.error(f"--record {args.record} exists and is not a folder")
        if args.record.is_dir() and any(args.record.glob("deal_*.jsonl")):
            parser.error(f"--record {args.record} already holds game records: pick an empty folder")
        record = str(args.record)
    return TournamentConfig(tuple(args.players), args.games, args.rules, args.seed, args.workers, record)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    config = check_args(parser, args)
    out = (
        args.out
        or Path("results") / f"{config.rules}-{'_'.join(config.players).replace(':', '-')}-s{config.seed}"
    )
    try:
        check_out_dir(out)
    except ValueError as e:
        parser.error(str(e))

    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from thirtyone_env.report import PLOTS, print_report, write_results

    console = Console()
    command = "python evaluate.py " + " ".join(
        ["--players", *config.players, "--games", str(config.total_games), "--rules", config.rules]
        + ["--seed", str(config.seed), "--workers", str(config.workers)]
    )
    console.print(f"[bold]{command}[/bold]")
    start = time.perf_counter()
    progress = Progress(
        TextColumn("games"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]:>8} games/s"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        disable=args.no_progress,
    )
    try:
        with progress:
            task = progress.add_task("games", total=config.total_games, rate="-")

            def advance(k: int) -> None:
                progress.advance(task, k)
                done = progress.tasks[0].completed
                progress.update(task, rate=f"{done / (time.perf_counter() - start):,.1f}")

            games = run_tournament(config, agents.from_spec, progress=advance)
    except KeyboardInterrupt:
        console.print("[red]interrupted: no results written[/red]")
        return 130
    elapsed = time.perf_counter() - start
    rounds = sum(g.rounds for g in games)
    summary = summarize(config, games)
    extra = {
        "command": command,
        "elapsed_s": elapsed,
        "rounds": rounds,
        "rounds_per_s": rounds / elapsed,
        "paired_differences": paired_differences(config, games),
        "ratings": ratings(config, games),
    }
    print_report(config, summary, extra, console)
    path = write_results(out, config, games, summary, extra)
    console.print(
        f"{config.total_games} games, {rounds} rounds in {elapsed:.1f}s ({rounds / elapsed:,.0f} rounds/s)\n"
        f"results: {path}/results.json, {path}/games.csv\nplots: " + ", ".join(str(path / p) for p in PLOTS)
    )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (ValueError, OSError) as e:  # e.g. a player that makes an illegal move, an unwritable folder
        print(f"evaluate.py: error: {e}", file=sys.stderr)
        sys.exit(2)
