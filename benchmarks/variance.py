"""How many games the luck correction saves: plain and corrected gauntlet estimates side by side.

    python benchmarks/variance.py --candidate ppo --tables expert greedy mixed \\
        --games 4000 --seed 1 --workers 2 --out results/variance

Plays the named gauntlet tables of ``--candidate`` (candidate and expert in seat 0 on
the same deals, ``agents.gauntlet``) once, with each game's luck measured, and reports
per table both estimates of the paired differences (wins and lives a round), the ratio
of their variances (the factor fewer games the corrected estimate needs for the same
interval width, measured on these games, not assumed) and whether the two estimates
agree (each inside the other's 95% interval: the correction is unbiased, so they differ
by chance alone). Writes ``variance.json``, ``variance.md`` and ``variance.png``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from agents import gauntlet as gl
from thirtyone_env.harness.files import atomic_write, make_dir
from thirtyone_env.harness.report import check_out_dir


def ratio(row: dict, key: str) -> float:
    """Variance of the plain estimate over the corrected one's (from the intervals)."""
    prefix = "" if key == "wins" else "lives_"
    worth = row[f"{prefix}effective_games"]
    return float("nan") if worth is None else worth / row["games"]


def agree(row: dict, key: str) -> bool:
    """Each estimate inside the other's 95% interval."""
    d, lo, hi = row[f"{key}_diff"], row[f"{key}_low"], row[f"{key}_high"]
    p, plo, phi = row[f"plain_{key}_diff"], row[f"plain_{key}_low"], row[f"plain_{key}_high"]
    return bool(plo <= d <= phi and lo <= p <= hi)


def table(rows: list[dict]) -> str:
    lines = [
        "| table | games | wins: plain [95% CI], points | wins: corrected | variance ratio "
        "| lives: plain [95% CI] | lives: corrected | variance ratio | agree |",
        "|---|---:|---|---|---:|---|---|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['table']} | {r['games']:,} "
            f"| {100 * r['plain_wins_diff']:+.2f} [{100 * r['plain_wins_low']:+.2f}, {100 * r['plain_wins_high']:+.2f}] "
            f"| {100 * r['wins_diff']:+.2f} [{100 * r['wins_low']:+.2f}, {100 * r['wins_high']:+.2f}] "
            f"| {ratio(r, 'wins'):.2f} "
            f"| {r['plain_lives_diff']:+.4f} [{r['plain_lives_low']:+.4f}, {r['plain_lives_high']:+.4f}] "
            f"| {r['lives_diff']:+.4f} [{r['lives_low']:+.4f}, {r['lives_high']:+.4f}] "
            f"| {ratio(r, 'lives'):.2f} | {'yes' if agree(r, 'wins') and agree(r, 'lives') else 'NO'} |"
        )
    return "\n".join(lines) + "\n"


def plot(rows: list[dict], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from thirtyone_env.harness.report import _save_png

    names = [r["table"] for r in rows]
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(1.2 * len(rows) + 3, 3.6))
    ax.bar(x - 0.2, [ratio(r, "wins") for r in rows], 0.4, label="wins")
    ax.bar(x + 0.2, [ratio(r, "lives") for r in rows], 0.4, label="lives a round")
    ax.axhline(1, color="black", linewidth=0.8)
    ax.set_xticks(x, names)
    ax.set_ylabel("plain variance / corrected variance")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    _save_png(fig, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--candidate", default="ppo", help="the player whose gauntlet tables are played")
    parser.add_argument("--seats", type=int, default=4, help="seats at each table")
    parser.add_argument("--rules", default="standard", help="rules preset")
    parser.add_argument("--tables", nargs="+", default=["expert", "greedy", "mixed"], help="gauntlet tables")
    parser.add_argument("--games", type=int, default=4000, help="games a side of each table")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True, help="a new results folder")
    args = parser.parse_args(argv)
    try:
        gl.check_gauntlet(args.candidate, args.seats, args.rules, args.games, args.seed, args.tables)
        check_out_dir(args.out)
        if (args.out / "variance.json").exists():
            raise ValueError(f"--out {args.out} holds an earlier measurement: give a new folder")
    except (ValueError, OSError) as e:
        parser.error(str(e))
    from rich.console import Console

    from thirtyone_env.harness.progress import RateBar

    start = time.perf_counter()
    total = gl.planned_games(args.seats, args.games, args.tables)
    with RateBar("games", "games", total, Console(stderr=True)) as advance:
        rows = gl.run_gauntlet(
            args.candidate, args.seats, args.rules, args.games, args.seed, args.workers, args.tables,
            progress=advance,
        )  # fmt: skip
    elapsed = time.perf_counter() - start
    command = "python benchmarks/variance.py " + " ".join(sys.argv[1:] if argv is None else argv)
    title = f"{args.candidate} minus expert, {args.seats} seats, {args.rules}, seed {args.seed}"
    text = table(rows)
    print(f"{title}\n\n{text}\n{elapsed:.0f}s")
    make_dir(args.out)
    plot(rows, args.out / "variance.png", title)
    atomic_write(args.out / "variance.md", f"# {title}\n\n`{command}` ({elapsed:.0f} s)\n\n{text}")
    payload = {"command": command, "elapsed_s": elapsed, "tables": rows}
    atomic_write(
        args.out / "variance.json", json.dumps(payload, indent=1, allow_nan=False, default=str) + "\n"
    )
    return 0 if all(math.isfinite(r["wins_diff"]) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
