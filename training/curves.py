"""Learning curves: the small gauntlet a run plays every ``--gauntlet-every`` steps.

Each point is :func:`agents.gauntlet.run_gauntlet` of the current policy (every table
but those with ``search``, which would stall training), on the same seeded deals each
time (``RunSeeds.gauntlet``), so the curve compares the learner with itself and with
``expert`` in its seat. The rows go to ``gauntlet.csv`` in the run folder (rewritten
atomically, in the order played) and, as a picture, to ``learning_curves.png``: the
paired difference against the expert in wins and in lives lost a round, per table,
with 95% bands.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from thirtyone_env.harness.files import atomic_write
from training.config import TrainConfig

CURVES = "gauntlet.csv"
CURVES_PNG = "learning_curves.png"
FIELDS = (
    "timesteps",
    "table",
    "games",
    "wins_diff",
    "wins_low",
    "wins_high",
    "lives_diff",
    "lives_low",
    "lives_high",
    "candidate_win_rate",
    "expert_win_rate",
    "candidate_lives",
    "expert_lives",
)


def curve_tables(players: int) -> list[str]:
    """The gauntlet tables a training run plays: all but the slow ``search`` ones."""
    from agents.gauntlet import gauntlet_tables

    return [t.name for t in gauntlet_tables(players) if not t.slow]


def gauntlet_point(policy_path: Path, config: TrainConfig, timesteps: int) -> list[dict[str, Any]]:
    """One point of the curves: the policy file's small gauntlet, rows tagged with
    ``timesteps``."""
    from agents.gauntlet import run_gauntlet

    backend = config.backend(len(curve_tables(config.players)) * 64, 1)  # the tables' work units
    rows = run_gauntlet(
        f"ppo:path={policy_path}",
        config.players,
        config.rules,
        config.gauntlet_games,
        config.seeds.gauntlet,
        workers=max(1, backend.workers),
        tables=curve_tables(config.players),
        backend=backend,
    )
    return [{"timesteps": timesteps, **{k: row[k] for k in FIELDS if k != "timesteps"}} for row in rows]


def read_curves(run_dir: Path, upto: int | None = None) -> list[dict[str, Any]]:
    """The rows of ``gauntlet.csv`` (those at ``upto`` steps or before, when given):
    ``ValueError`` naming the file when it is not one a run wrote."""
    path = run_dir / CURVES
    if not path.exists():
        return []
    try:
        with path.open(newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            if reader.fieldnames is None or list(reader.fieldnames) != list(FIELDS):
                raise ValueError(f"{path} is not a gauntlet curve file (columns {reader.fieldnames})")
            try:
                rows = [{k: (v if k == "table" else float(v)) for k, v in row.items()} for row in reader]
            except (TypeError, ValueError) as e:
                raise ValueError(f"{path}: a row that is not numbers ({e})") from None
    except (csv.Error, UnicodeDecodeError) as e:  # a NUL byte, a field over csv's limit, not UTF-8
        raise ValueError(f"{path} is not a gauntlet curve file ({e})") from None
    for row in rows:
        row["timesteps"] = int(row["timesteps"])
    return [r for r in rows if upto is None or r["timesteps"] <= upto]


def write_curves(run_dir: Path, rows: list[dict[str, Any]]) -> None:
    """``gauntlet.csv`` (atomically) and ``learning_curves.png`` from all rows."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=FIELDS)
    writer.writeheader()
    for row in rows:
        writer.writerow({k: row[k] for k in FIELDS})
    atomic_write(run_dir / CURVES, buf.getvalue())
    plot_curves(rows, run_dir / CURVES_PNG, run_dir.name)


def plot_curves(rows: list[dict[str, Any]], path: Path, title: str) -> None:
    """Wins and lives a round against the expert in the same seat, per table, over
    training steps (95% bands); written atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tables = list(dict.fromkeys(r["table"] for r in rows))
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for name in tables:
        mine = [r for r in rows if r["table"] == name]
        steps = [r["timesteps"] for r in mine]
        for ax, key, scale in ((axes[0], "wins", 100.0), (axes[1], "lives", 1.0)):
            line = ax.plot(steps, [scale * r[f"{key}_diff"] for r in mine], marker="o", label=name)[0]
            ax.fill_between(
                steps,
                [scale * r[f"{key}_low"] for r in mine],
                [scale * r[f"{key}_high"] for r in mine],
                color=line.get_color(),
                alpha=0.12,
            )
    axes[0].set_ylabel("wins minus expert's in the seat (points)")
    axes[1].set_ylabel("lives lost a round minus expert's (lower is better)")
    for ax in axes:
        ax.axhline(0.0, color="black", linewidth=0.8)
        ax.set_xlabel("training steps")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"{title}: gauntlet against the expert in the same seat (95% bands)")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    atomic_write(path, buf.getvalue())
