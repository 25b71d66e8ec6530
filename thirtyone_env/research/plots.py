"""A study's pictures (PNG, matplotlib's Agg backend, written atomically)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from thirtyone_env.harness.files import atomic_write

MAX_TURN = 8  #: turns shown (later turns are few)
CURVE_TURNS = 4  #: turns with a gain curve of their own


def _figure(ncols: int = 1, width: float = 7.0) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(1, ncols, figsize=(width, 4.2), squeeze=False)


def _save(fig: Any, path: Path) -> None:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    atomic_write(path, buf.getvalue())


def break_even_heatmap(table: pd.DataFrame, path: Path, title: str) -> None:
    """Break-even hand value by own turn (columns) and position (rows), each cell
    labelled with its value and interval; blank where it does not cross."""
    fig, axes = _figure(width=1.1 * MAX_TURN + 2)
    ax = axes[0][0]
    t = table[table["turn"] <= MAX_TURN]
    turns = sorted(t["turn"].unique()) or [1]
    positions = sorted(t["position"].unique()) or [0]
    grid = np.full((len(positions), len(turns)), np.nan)
    for r in t.itertuples():
        grid[positions.index(r.position), turns.index(r.turn)] = r.break_even
    image = ax.imshow(grid, cmap="viridis", aspect="auto")
    for r in t.itertuples():
        i, j = positions.index(r.position), turns.index(r.turn)
        if np.isfinite(r.break_even):
            low = f"{r.low:.1f}" if np.isfinite(r.low) else "open"
            high = f"{r.high:.1f}" if np.isfinite(r.high) else "open"
            text = f"{r.break_even:.1f}\n[{low}, {high}]"
        else:
            text = {"always": "pays\nalways", "never": "never\npays"}.get(r.verdict, r.verdict)
        color = "white" if np.isfinite(r.break_even) else "black"
        ax.text(j, i, text, ha="center", va="center", fontsize=7, color=color)
    ax.set_xticks(range(len(turns)), [str(x) for x in turns])
    ax.set_yticks(range(len(positions)), [str(x) for x in positions])
    ax.set_xlabel("own turn in the round")
    ax.set_ylabel("position (0 = first to play)")
    ax.set_title(title)
    fig.colorbar(image, ax=ax, label="break-even hand value")
    fig.text(
        0.01,
        0.005,
        "Each cell: the lowest hand value from which knocking gains, [95% interval; open: no bound "
        "that side]. Blank: no decision measured there; 'never pays' / 'pays always': knocking loses / "
        "gains at every hand value seen.",
        fontsize=7,
        ha="left",
        va="bottom",
        wrap=True,
    )
    _save(fig, path)


def gain_curve(curve: pd.DataFrame, path: Path, title: str, by: str | None = None) -> None:
    """Mean gain by hand value with its 95% band (one line per value of ``by``)."""
    fig, axes = _figure()
    ax = axes[0][0]
    groups = [(None, curve)] if by is None else list(curve.groupby(by))
    for key, g in groups:
        g = g[g["decisions"] >= 5]
        label = "all" if key is None else f"{by} {key}"
        ax.plot(g["value"], g["gain"], marker=".", label=label)
        ax.fill_between(g["value"], g["low"], g["high"], alpha=0.2)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xlabel("hand value")
    ax.set_ylabel("gain over the baseline (lives a round)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    _save(fig, path)


def _with_interval(ax: Any, x: Any, y: Any, low: Any, high: Any, label: str | None = None) -> None:
    """Points with their interval as error bars."""
    ax.errorbar(x, y, yerr=[y - low, high - y], marker="o", capsize=3, label=label)


def switch_panels(by_turn: pd.DataFrame, path: Path, title: str) -> None:
    """Switch rate and switch gain by own turn, each with its 95% interval."""
    fig, axes = _figure(2, 11)
    a1, a2 = axes[0]
    t = by_turn[by_turn["turn"] <= MAX_TURN]
    _with_interval(a1, t["turn"], t["switch_rate"], t["rate_low"], t["rate_high"])
    a1.set_xlabel("own turn")
    a1.set_ylabel("share of discards that switch suits")
    a1.set_title("switch rate")
    _with_interval(a2, t["turn"], t["made_gain"], t["made_low"], t["made_high"], "the switches it made")
    _with_interval(
        a2, t["turn"], t["passed_gain"], t["passed_low"], t["passed_high"], "the best switch it passed up"
    )
    a2.legend(fontsize=8)
    a2.axhline(0, color="black", linewidth=0.8)
    a2.set_xlabel("own turn")
    a2.set_ylabel("gain of switching over staying (lives a round)")
    a2.set_title("what a switch is worth (hand values held fixed)")
    fig.suptitle(title)
    _save(fig, path)
