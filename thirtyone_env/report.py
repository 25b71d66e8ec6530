"""Tournament output: the terminal table (rich) and the results folder.

The folder holds ``results.json`` (configuration, per-player statistics with 95%
intervals, paired differences in win rate and lives per round, OpenSkill leaderboard),
``games.csv`` (one row per round per player) and three PNG plots. It is written into a
temporary sibling folder and renamed into place, so a reader never sees half a result.

Needs the ``eval`` extra: rich, matplotlib, openskill.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from thirtyone_env.evaluation import (
    MAX_TURN_BIN,
    ROW_FIELDS,
    STATS,
    GameOutcome,
    TournamentConfig,
    player_labels,
)

PLOTS = ("knock_values.png", "knock_success.png", "suit_switches_by_turn.png")


def write_results(
    out_dir: Path,
    config: TournamentConfig,
    games: list[GameOutcome],
    summary: dict[str, Any],
    extra: dict[str, Any],
) -> Path:
    """Write the results folder atomically; returns its path. An existing ``out_dir``
    is replaced only if it is an earlier results folder (it holds results.json)."""
    out_dir = Path(out_dir)
    check_out_dir(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        payload = {"config": _config_dict(config), "players": summary, **extra}
        (tmp / "results.json").write_text(json.dumps(payload, indent=2, default=_json_default))
        with open(tmp / "games.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow((*ROW_FIELDS[:4], "player_spec", *ROW_FIELDS[4:]))
            for g in games:
                for row in g.rows:
                    w.writerow((*row[:4], config.players[row[4]], *row[4:]))
        write_plots(tmp, config, games)
        old = None
        if out_dir.exists():
            old = out_dir.with_name(f".{out_dir.name}.old.{os.getpid()}")
            out_dir.rename(old)
        tmp.rename(out_dir)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out_dir


def check_out_dir(out_dir: Path) -> None:
    """Raise ``ValueError`` unless ``out_dir`` is new or an earlier results folder."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not (out_dir.is_dir() and (out_dir / "results.json").is_file()):
        raise ValueError(
            f"--out {out_dir} exists and is not a results folder (no results.json): refusing to replace it"
        )


def _config_dict(config: TournamentConfig) -> dict[str, Any]:
    return {
        "players": list(config.players),
        "games": config.total_games,
        "deal_sets": config.deal_sets,
        "rules": config.rules,
        "seed": config.seed,
        "workers": config.workers,
    }


def _json_default(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"cannot write {type(x).__name__} to JSON")


def write_plots(folder: Path, config: TournamentConfig, games: list[GameOutcome]) -> None:
    """The three PNG plots of :data:`PLOTS`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = player_labels(config)
    n = config.num_players
    knock_vals: list[list[float]] = [[] for _ in range(n)]
    knock_ok: list[list[bool]] = [[] for _ in range(n)]
    draws = np.zeros((n, MAX_TURN_BIN))
    switches = np.zeros((n, MAX_TURN_BIN))
    for g in games:
        for row in g.rows:
            if row[12]:
                knock_vals[row[4]].append(row[13])
                knock_ok[row[4]].append(bool(row[15]))
        draws += np.asarray(g.draws_by_turn)
        switches += np.asarray(g.switches_by_turn)

    bins = np.arange(0, 33) - 0.5
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for i in range(n):
        if knock_vals[i]:
            ax.hist(knock_vals[i], bins=bins, histtype="step", density=True, linewidth=1.8, label=labels[i])
    ax.set(xlabel="hand value at the knock", ylabel="share of the player's knocks", title="Knock values")
    ax.legend()
    fig.tight_layout()
    fig.savefig(folder / PLOTS[0], dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for i in range(n):
        v = np.asarray(knock_vals[i])
        ok = np.asarray(knock_ok[i])
        xs, ys = [], []
        for value in range(0, 32):
            sel = (v >= value - 0.5) & (v < value + 0.5)
            if sel.sum() >= 20:
                xs.append(value)
                ys.append(ok[sel].mean())
        if xs:
            ax.plot(xs, ys, marker="o", label=labels[i])
    ax.set(
        xlabel="hand value at the knock",
        ylabel="knock success (lost no life)",
        title="Knock success by hand value (values with at least 20 knocks)",
        ylim=(0, 1.02),
    )
    ax.legend()
    fig.tight_layout()
    fig.savefig(folder / PLOTS[1], dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 4.5))
    turns = np.arange(1, MAX_TURN_BIN + 1)
    for i in range(n):
        keep = draws[i] >= 20
        if keep.any():
            ax.plot(turns[keep], switches[i][keep] / draws[i][keep], marker=".", label=labels[i])
    ax.set(
        xlabel="own turn number in the round",
        ylabel="suit switches per draw turn",
        title="Suit switches by turn (turns with at least 20 draws)",
    )
    ax.legend()
    fig.tight_layout()
    fig.savefig(folder / PLOTS[2], dpi=110)
    plt.close(fig)


def _fmt(stat: list[float], pct: bool) -> str:
    v, lo, hi = stat
    if np.isnan(v):
        return "-"
    if pct:
        return f"{v:.1%} ±{(hi - lo) / 2:.1%}" if not np.isnan(lo) else f"{v:.1%}"
    return f"{v:.3f} ±{(hi - lo) / 2:.3f}" if not np.isnan(lo) else f"{v:.3f}"


PERCENT_STATS = {"win_rate", "rounds_lost", "knock_success"}


def _star(low: float, high: float) -> str:
    """``*`` where a 95% interval excludes 0."""
    return "*" if low > 0 or high < 0 else ""


def print_report(
    config: TournamentConfig, summary: dict[str, Any], extra: dict[str, Any], console: Any = None
) -> None:
    """The per-player table, the paired differences and the leaderboard."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    labels = list(summary)
    table = Table(title=f"{config.total_games} games, rules={config.rules}, seed={config.seed} (±: 95% CI)")
    table.add_column("statistic")
    for label in labels:
        table.add_column(label, justify="right")
    for key, title in STATS.items():
        table.add_row(title, *(_fmt(summary[p][key], key in PERCENT_STATS) for p in labels))
    console.print(table)

    diffs = Table(title="Paired differences, row minus column player (same deals; * = 95% CI excludes 0)")
    for col in ("player", "vs"):
        diffs.add_column(col)
    for col in ("wins [95% CI, points]", "", "lives/round [95% CI]", ""):
        diffs.add_column(col, no_wrap=True)
    for d in extra.get("paired_differences", []):
        low, high = d["low"], d["high"]
        row = [d["a"], d["b"], f"{d['diff']:+.1%} [{100 * low:+.1f}, {100 * high:+.1f}]", _star(low, high)]
        if "lives_diff" in d:
            low, high = d["lives_low"], d["lives_high"]
            row += [f"{d['lives_diff']:+.3f} [{low:+.3f}, {high:+.3f}]", _star(low, high)]
        diffs.add_row(*row)
    console.print(diffs)

    board = Table(title="OpenSkill leaderboard (Plackett-Luce, by finishing place)")
    for col in ("rank", "player", "ordinal", "mu", "sigma"):
        board.add_column(col)
    for rank, r in enumerate(extra.get("ratings", []), 1):
        board.add_row(str(rank), r["label"], f"{r['ordinal']:.2f}", f"{r['mu']:.2f}", f"{r['sigma']:.2f}")
    console.print(board)
