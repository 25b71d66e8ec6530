"""The learning curve of one run: the models a run saved along the way, each measured
against the players it should pass.

    python benchmarks/learning_curve.py --rules standard --players 4 \\
        15=runs/x/m15.zip 30=runs/x/m30.zip 60=runs/x/m60.zip

Each ``MINUTES=PATH`` is a model the run had after that many minutes of wall time (a
PPO step's checkpoints, copied as the run goes: the step keeps only its newest few).
Every model is measured as the learning benchmark (``benchmarks/learning.py``)
measures its final one: paired on the same deals, in the same seat against
``players - 1`` experts, minus each player of ``--against`` (``greedy`` and ``expert``
unless told otherwise) in that seat, on one seed for all (so the points of the curve
differ by the model only); each model's games are played once for all of them. One
point with many games measures one model more closely than the benchmark did:

    python benchmarks/learning_curve.py --rules switch --games 20000 --against expert,blitz31 34=model.zip
 It writes
``curve.json`` (after every point), ``curve.md`` and ``curve.png`` into ``--out``; the
same command on the same folder goes on where it stopped, and more points may be added
to it (a folder measured with other settings is refused).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from learning import cell, lives, save_png  # noqa: E402  (the learning benchmark's cells)

#: the players each model is measured against, in its seat, unless --against says
OTHERS = ("greedy", "expert")
#: the table's opponent in every comparison (the learning benchmark's)
OPPONENT = "expert"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="benchmarks/learning_curve.py", description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="+", metavar="MINUTES=PATH", help="a model and the minutes it had trained")
    p.add_argument("--rules", default="standard", help="the rules preset of the run's table")
    p.add_argument("--players", type=int, default=4, help="the run's table size")
    p.add_argument("--games", type=int, default=2000, help="games a comparison (default 2000)")
    p.add_argument("--seed", type=int, default=20261220, help="the comparisons' seed")
    p.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    p.add_argument(
        "--against",
        default=",".join(OTHERS),
        help="comma-separated player specs each model is measured against in its seat (default greedy,expert)",
    )
    p.add_argument(
        "--out", default="results/learning-curve", help="the results folder (not one with results)"
    )
    args = p.parse_args(argv)
    points = []
    for item in args.models:
        minutes, sep, path = item.partition("=")
        try:
            value = float(minutes)
        except ValueError:
            value = -1.0
        if not sep or not value >= 0:  # NaN too
            p.error(f"{item!r}: give MINUTES=PATH, minutes a number at least 0")
        if not Path(path).is_file():
            p.error(f"{item!r}: no model file {path}")
        points.append((value, path))
    if args.games < 1 or args.workers < 1 or args.players < 2:
        p.error("--games and --workers must be at least 1, --players at least 2")
    args.points = sorted(points)
    args.others = [o.strip() for o in args.against.split(",") if o.strip()]
    if not args.others or len(set(args.others)) < len(args.others):
        p.error(f"--against {args.against!r}: give one or more different player specs, separated by commas")
    try:
        import agents

        for spec in args.others:
            agents.check_spec(spec)
    except ValueError as e:
        p.error(f"--against: {e}")
    saved = Path(args.out) / "curve.json"
    if saved.exists():
        try:
            same = json.loads(saved.read_text())["settings"] == settings(args)
        except (ValueError, KeyError, TypeError):
            same = False
        if not same:
            p.error(f"--out {args.out} holds other results (another table, games or seed): give a new folder")
    elif Path(args.out).exists() and any(Path(args.out).iterdir()):
        p.error(f"--out {args.out} holds files this benchmark did not write: give a new folder")
    return args


def settings(args: argparse.Namespace) -> dict[str, Any]:
    """What makes the points of one curve comparable."""
    fixed = {"rules": args.rules, "players": args.players, "games": args.games, "seed": args.seed}
    return fixed if tuple(args.others) == OTHERS else fixed | {"against": args.others}


def measure(path: str, args: argparse.Namespace) -> dict[str, Any]:
    """The model minus each of ``--against`` in its seat against experts."""
    from agents.gauntlet import pair_rows, play_with

    keys = ("games", "wins_diff", "wins_low", "wins_high", "lives_diff", "lives_low", "lives_high")
    opponents = [OPPONENT] * (args.players - 1)
    model = f"ppo:path={path}"
    played = play_with(model, args.others, opponents, args.games, args.rules, args.seed, args.workers)
    rows = pair_rows(played, 0.0)
    return {other: {k: row[k] for k in keys} for other, row in zip(args.others, rows, strict=True)}


def write_outputs(rows: list[dict[str, Any]], out: Path, args: argparse.Namespace) -> None:
    from thirtyone_env.harness.files import atomic_write

    atomic_write(out / "curve.json", json.dumps({"settings": settings(args), "rows": rows}, indent=1))
    lines = [
        f"# Learning curve: {args.rules}, {args.players} players",
        "",
        f"Each model in its seat against {OPPONENT} x{args.players - 1}, minus another player in the same",
        f"seat on the same deals ({args.games} games, seed {args.seed}); wins in points with 95% intervals",
        "(`*`: excludes 0), lives lost a round (lower is better).",
        "",
        "| minutes | " + " | ".join(f"minus {o} (wins) | minus {o} (lives)" for o in args.others) + " |",
        "|---:|" + "---|---|" * len(args.others),
    ]
    for r in rows:
        cells = " | ".join(f"{cell(r[o])} | {lives(r[o])}" for o in args.others)
        lines.append(f"| {r['minutes']:g} | {cells} |")
    atomic_write(out / "curve.md", "\n".join(lines) + "\n")
    plot(rows, out / "curve.png", args)


def plot(rows: list[dict[str, Any]], path: Path, args: argparse.Namespace) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for i, other in enumerate(args.others):
        x = [r["minutes"] for r in rows]
        v = [100 * r[other]["wins_diff"] for r in rows]
        lo = [100 * r[other]["wins_low"] for r in rows]
        hi = [100 * r[other]["wins_high"] for r in rows]
        ax.plot(x, v, "o-", color=f"C{i}", label=f"minus {other}")
        ax.fill_between(x, lo, hi, color=f"C{i}", alpha=0.2)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel("minutes of training")
    ax.set_ylabel("wins, points (95% interval)")
    ax.set_title(f"{args.rules}, {args.players} players: the model minus a built-in player in its seat")
    ax.legend()
    fig.tight_layout()
    save_png(fig, path)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    saved = out / "curve.json"
    rows = json.loads(saved.read_text())["rows"] if saved.exists() else []
    for minutes, path in args.points:
        if any(r["minutes"] == minutes and r["model"] == path for r in rows):
            continue  # measured before this folder's run stopped
        rows.append({"minutes": minutes, "model": path, **measure(path, args)})
        rows.sort(key=lambda r: r["minutes"])
        write_outputs(rows, out, args)
        row = next(r for r in rows if r["minutes"] == minutes and r["model"] == path)
        print(f"{minutes:g} min: " + ", ".join(f"minus {o} {cell(row[o])}" for o in args.others), flush=True)
    print(f"learning curve: {out / 'curve.md'}, {out / 'curve.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
