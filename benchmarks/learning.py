"""The learning benchmark: does the default recipe learn, at every table?

    python benchmarks/learning.py                       # every table, with and without a teacher
    python benchmarks/learning.py --tables standard_4p,cut_throat_3p --minutes 30 --teacher expert

For each table it runs ``train.py --rules R --players N [--teacher T] --time-limit``
(the default recipe, a fixed budget of wall time; with the table's own teacher unless
``--teacher`` names ``expert`` or ``none``) and then measures the recipe's final
model on seeds no run used, each a paired comparison on the same deals in the same seat
against ``players - 1`` copies of the table's opponent (:func:`agents.gauntlet.compare`):

- minus its start (the fresh network the recipe began from);
- minus the best built-in player (each of ``greedy``, ``expert``, ``blitz31`` in the
  same seat; the row kept is the one the model beats by least);
- minus ``search`` (fewer games: it thinks for a while at every move).

Wins are in points, lives are lives lost a round (lower is better; at a points or chips
table what a round scored, negative), each with its 95% interval. A banking game runs
100 rounds: its comparisons play a tenth of ``--games``. It writes ``learning.json`` (after every table: a run that stops goes on with
the same command), ``learning.md`` and ``learning.png`` into ``--out``; this is a
benchmark, not a test: a table takes its budget of minutes plus the comparisons.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from thirtyone_env.harness.command import CommandParser, seconds_arg  # noqa: E402 (the repository first)
from thirtyone_env.harness.files import check_writable_dir  # noqa: E402

#: the benchmark's tables: id -> (rules preset, players)
TABLES = {
    "standard_2p": ("standard", 2),
    "standard_3p": ("standard", 3),
    "standard_4p": ("standard", 4),
    "cut_throat_3p": ("cut_throat", 3),
    "pagat_4p": ("pagat", 4),
    "dutch_4p": ("dutch", 4),
    "blitz31_4p": ("blitz31", 4),
    "no_elimination_4p": ("no_elimination", 4),
    "banking_4p": ("banking", 4),
    "switch_4p": ("switch", 4),
    "stop_the_bus_4p": ("stop_the_bus", 4),
}
#: tables whose games are many rounds long, with the share of ``--games`` a comparison
#: there plays: a banking game runs its 100 rounds (at the other tables a game is a few
#: rounds), and its chips a round resolve a difference in fewer games
FEWER_GAMES = {"banking_4p": 10}
BUILT_IN = ("greedy", "expert", "blitz31")
#: the table's opponent in every comparison
OPPONENT = "expert"
SEARCH = "search:time_limit=0.05"


#: What this benchmark writes in its --out folder (a folder holding anything else is not its).
OURS = ("learning.json", "learning.md", "learning.png", "runs")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = CommandParser(prog="benchmarks/learning.py", description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--tables", default=",".join(TABLES), help=f"comma-separated table ids of {', '.join(TABLES)}"
    )
    p.add_argument(
        "--teacher",
        default="both",
        choices=("both", "default", "expert", "none"),
        help="the table's default teacher, the expert, none, or both default and none (default: both)",
    )
    p.add_argument(
        "--minutes", type=seconds_arg, default=30.0, help="the recipe's time limit a table (default 30)"
    )
    p.add_argument("--games", type=int, default=2000, help="games a comparison (default 2000)")
    p.add_argument("--search-games", type=int, default=200, help="games of the comparison with search")
    p.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    p.add_argument("--seed", type=int, default=20261206, help="the runs' and comparisons' seed")
    p.add_argument("--out", default="results/learning", help="the results folder (goes on where it stopped)")
    args = p.parse_args(argv)
    tables = [t.strip() for t in args.tables.split(",") if t.strip()]
    unknown = [t for t in tables if t not in TABLES]
    if unknown or not tables:
        p.error(f"--tables: unknown {unknown}; tables: {', '.join(TABLES)}")
    if args.games < 1 or args.search_games < 0 or args.workers < 1:
        p.error("--games must be positive, --search-games 0 or more, --workers at least 1")
    out = Path(args.out)
    try:
        check_writable_dir(out, "--out")
        if out.exists() and not out.is_dir():
            raise ValueError(f"--out {out} is a file, not a folder")
        theirs = sorted(x.name for x in out.iterdir() if x.name not in OURS) if out.is_dir() else []
        if theirs:
            raise ValueError(
                f"--out {out} holds files this benchmark did not write ({theirs[0]!r}): give a new folder"
            )
    except (ValueError, OSError) as e:
        p.error(str(e))
    args.table_ids = tables
    return args


def run_recipe(
    rules: str, players: int, teacher: str, args: argparse.Namespace, runs: Path, name: str
) -> float:
    """The default recipe for the table; its wall time in seconds."""
    cmd = [
        sys.executable,
        str(ROOT / "train.py"),
        "--rules",
        rules,
        "--players",
        str(players),
        *(("--teacher", teacher) if teacher != "default" else ()),
        "--time-limit",
        str(args.minutes * 60),
        "--runs-dir",
        str(runs),
        "--run-name",
        name,
        "--seed",
        str(args.seed % 100_000),
        "--workers",
        str(args.workers),
        "--no-progress",
    ]
    if (runs / name / "recipe.toml").exists():  # a run this benchmark began: go on with it
        cmd = [sys.executable, str(ROOT / "train.py"), "--resume", str(runs / name), "--no-progress"]
        cmd += ["--time-limit", str(args.minutes * 60), "--workers", str(args.workers)]
    t0 = time.perf_counter()
    print("$", " ".join(cmd[1:]), flush=True)
    done = subprocess.run(cmd, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"benchmarks/learning.py: train.py failed with exit code {done.returncode}")
    return time.perf_counter() - t0


def measure(
    model: str, start: str, rules: str, players: int, args: argparse.Namespace, fewer: int = 1
) -> dict[str, Any]:
    """The model minus its start, minus the best built-in player, minus search; each
    comparison plays ``1/fewer`` of the games asked for."""
    from agents.gauntlet import pair_rows, play_with

    opponents = [OPPONENT] * (players - 1)
    seed = args.seed + 7
    keys = ("games", "wins_diff", "wins_low", "wins_high", "lives_diff", "lives_low", "lives_high")

    def diffs(others: list[str], games: int) -> list[dict[str, Any]]:
        games = max(1, games // fewer)
        start = time.perf_counter()
        played = play_with(f"ppo:path={model}", others, opponents, games, rules, seed, args.workers)
        rows = pair_rows(played, time.perf_counter() - start)
        return [{k: row[k] for k in keys} | {"other": other} for other, row in zip(others, rows, strict=True)]

    first, *built = diffs([f"ppo:path={start}", *BUILT_IN], args.games)
    out = {"start": first, "built_in": min(built, key=lambda r: r["wins_diff"]), "built_in_all": built}
    if args.search_games:
        out["search"] = diffs([SEARCH], args.search_games)[0]
    return out


def cell(row: dict[str, Any] | None) -> str:
    if row is None:
        return ""
    star = "*" if row["wins_low"] > 0 or row["wins_high"] < 0 else ""
    return (
        f"{100 * row['wins_diff']:+.1f} [{100 * row['wins_low']:+.1f}, {100 * row['wins_high']:+.1f}]{star}"
    )


def lives(row: dict[str, Any]) -> str:
    star = "*" if row["lives_low"] > 0 or row["lives_high"] < 0 else ""
    return f"{row['lives_diff']:+.3f} [{row['lives_low']:+.3f}, {row['lives_high']:+.3f}]{star}"


def write_outputs(results: dict[str, Any], out: Path, args: argparse.Namespace) -> None:
    from thirtyone_env.harness.evaluation import lost_label
    from thirtyone_env.harness.files import atomic_write

    atomic_write(out / "learning.json", json.dumps(results, indent=1))
    lines = [
        "# Learning benchmark: the default recipe",
        "",
        f"`python benchmarks/learning.py --minutes {args.minutes:g} --games {args.games}` "
        f"(seed {args.seed}; each comparison against {OPPONENT} x(players-1), same seat, same deals).",
        "Wins in points with 95% intervals (`*`: excludes 0); for the start also what a round",
        "costs: lives lost, or at a points or chips table what it scored, negative (lower is better).",
        "",
        "| table | teacher | minutes | games | minus start (wins) | minus start (a round's cost) | "
        "minus best built-in | best built-in | minus search |",
        "|---|---|---:|---:|---|---|---|---|---|",
    ]
    for r in results.values():
        m = r["measured"]
        unit = lost_label(TABLES[r["table"]][0]).split()[0]
        lines.append(
            f"| {r['table']} | {r['teacher']} | {r['seconds'] / 60:.1f} | {m['start']['games']:,} | "
            f"{cell(m['start'])} | {lives(m['start'])} {unit} | "
            f"{cell(m['built_in'])} | {m['built_in']['other']} | {cell(m.get('search'))} |"
        )
    atomic_write(out / "learning.md", "\n".join(lines) + "\n")
    plot(results, out / "learning.png")


def plot(results: dict[str, Any], path: Path) -> None:

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = list(results)
    fig, axes = plt.subplots(1, 3, figsize=(13, 1.5 + 0.45 * len(keys)), sharey=True, squeeze=False)
    for ax, part, title in zip(
        axes[0],
        ("start", "built_in", "search"),
        ("minus its start", "minus best built-in", "minus search"),
        strict=True,
    ):
        for y, key in enumerate(keys):
            row = results[key]["measured"].get(part)
            if row is None:
                continue
            v, lo, hi = (100 * row[k] for k in ("wins_diff", "wins_low", "wins_high"))
            ax.errorbar(
                v, y, xerr=[[v - lo], [hi - v]], fmt="o", color="C0" if lo > 0 else "C3" if hi < 0 else "C7"
            )
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_title(f"wins {title} (points)", fontsize=10)
    axes[0][0].set_yticks(range(len(keys)), keys)
    axes[0][0].invert_yaxis()
    fig.tight_layout()
    save_png(fig, path)


def save_png(fig: Any, path: Path) -> None:
    """``fig`` as a PNG written atomically at ``path``, then closed."""
    import io

    import matplotlib.pyplot as plt

    from thirtyone_env.harness.files import atomic_write

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    atomic_write(path, buf.getvalue())


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "learning.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    teachers = ("default", "none") if args.teacher == "both" else (args.teacher,)
    for table in args.table_ids:
        rules, players = TABLES[table]
        for teacher in teachers:
            key = f"{table}/{teacher}"
            if key in results:
                continue
            name = f"{table}-{'teacher' if teacher != 'none' else 'no_teacher'}"
            seconds = run_recipe(rules, players, teacher, args, out / "runs", name)
            run = out / "runs" / name
            measured = measure(
                str(run / "best_model.zip"),
                str(run / "steps" / "0_start" / "best_model.zip"),
                rules,
                players,
                args,
                FEWER_GAMES.get(table, 1),
            )
            results[key] = {"table": table, "teacher": teacher, "seconds": seconds, "measured": measured}
            write_outputs(results, out, args)
            print(
                f"{key}: minus start {cell(measured['start'])}, minus best built-in {cell(measured['built_in'])}"
            )
    write_outputs(results, out, args)
    print(f"learning benchmark: {out / 'learning.md'}, {out / 'learning.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
