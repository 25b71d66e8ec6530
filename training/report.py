"""The run report: what each step of a run did to the model, measured honestly.

Every step of a run starts from a model and gives one (``steps/<k>_<name>.zip``: the
model the run started from, then each step's, PPO's last as ``final_model.zip``). At
the end of a run each step's model plays against the model it started from, in the
same seat, against the same opponents, on the same seeded deals
(:func:`agents.gauntlet.compare`: duplicate deals, paired differences clustered by deal
set), one table per evaluation opponent: wins (points) and lives lost a round, each
with its 95% interval. A step whose interval lies wholly on the worse side at some
table (in wins or in lives) made the model significantly worse there, even where it
made it better at another table (a trade the run does not take silently): the report
and the console say so, and the run's model (``best_model.zip``) is the better one it
started from unless ``keep_worse`` is set. ``report.md`` holds the table and
``report.png`` the same figures as a plot.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thirtyone_env.harness.files import atomic_write, json_text

STEPS = "steps"  #: the folder of each step's model in a run folder
REPORT_MD, REPORT_PNG, REPORT_JSON = "report.md", "report.png", "report.json"
#: the run's model: the last step's, unless a step made it significantly worse (chosen by
#: the paired comparisons, never by the ladder's noisy evaluations: ``best_evaluation.zip``)
MODEL = "best_model.zip"
#: a comparison plays on until its wins interval reaches at most this far from its
#: difference (2 points: a 2-point difference is resolved), or up to its most games
RESOLVE_WINS = 0.02
#: Games of a report's first comparison under a time limit: the rate they play at says
#: how many more fit before the deadline.
PROBE_GAMES = 40


def resolved(row: dict[str, Any]) -> bool:
    """Whether a comparison needs no more games: its wins interval reaches at most
    :data:`RESOLVE_WINS` from the difference, or both measures lie on the same side of
    0 by at least the half-width of their intervals (a step that took the model 25
    points ahead of a fresh network is told from a 2-point one at its first games; a
    true difference of 0 looks so at a first look less than once in 10,000)."""
    wins_half = (row["wins_high"] - row["wins_low"]) / 2
    if wins_half <= RESOLVE_WINS:
        return True
    lives_half = (row["lives_high"] - row["lives_low"]) / 2
    better = row["wins_low"] >= wins_half and row["lives_high"] <= -lives_half
    worse = row["wins_high"] <= -wins_half and row["lives_low"] >= lives_half
    return better or worse


def step_path(run_dir: Path, index: int, name: str) -> Path:
    return run_dir / STEPS / f"{index}_{name}.zip"


def step_models(run_dir: Path, ppo: bool = True) -> list[tuple[str, Path]]:
    """The run's models in order: (step name, file), the start first, PPO's last
    (``ppo``: the run trained with PPO; without it, ``final_model.zip`` is the last
    step's model, already listed)."""
    found = []
    for path in (run_dir / STEPS).glob("*.zip"):
        index, _, name = path.stem.partition("_")
        if index.isdigit() and name:
            found.append((int(index), name, path))
    models = [(name, path) for _, name, path in sorted(found)]
    final = run_dir / "final_model.zip"
    if ppo and final.exists():
        models.append(("ppo", final))
    return models


@dataclass(frozen=True)
class Verdict:
    """A step's model against the one it started from, at every table."""

    step: str
    rows: list[dict[str, Any]]

    @property
    def worse(self) -> bool:
        """Significantly worse at some table (whatever it did at the others)."""
        return any(map(_worse, self.rows))

    @property
    def better(self) -> bool:
        return any(map(_better, self.rows)) and not any(map(_worse, self.rows))


def _worse(row: dict[str, Any]) -> bool:
    return row["wins_high"] < 0 or row["lives_low"] > 0


def _better(row: dict[str, Any]) -> bool:
    return row["wins_low"] > 0 or row["lives_high"] < 0


def row_verdict(row: dict[str, Any]) -> str:
    """What one table's row says on its own: significantly worse (in wins or in lives),
    better, both (one measure each way), or not resolved."""
    worse, better = _worse(row), _better(row)
    if worse and better:
        return "**significantly worse** in one measure, better in the other"
    return "**significantly worse**" if worse else "better" if better else "not resolved"


def _worse_where(v: Verdict) -> str:
    """A worse step with the tables where it was worse (and better, if any)."""
    worse = [row["table"] for row in v.rows if _worse(row)]
    better = [row["table"] for row in v.rows if _better(row) and not _worse(row)]
    return f"{v.step} (at {', '.join(worse)}{'; better at ' + ', '.join(better) if better else ''})"


def resolved_row(
    after: str,
    before: str,
    opponents: list[str],
    games: int,
    rules: str,
    seed: int,
    workers: int,
    most: int,
    deadline: float = math.inf,
) -> dict[str, Any]:
    """Model file ``after`` minus ``before`` in the same seat against ``opponents`` on
    the same deals (:func:`agents.gauntlet.compare`): ``games`` games, then, until the
    difference is :func:`resolved`, as many more as the wins interval says a 2-point
    difference needs, up to ``most`` games. Under a ``deadline`` (``time.monotonic()``:
    a recipe's time limit bounds its reports too) the first comparison plays
    at most :data:`PROBE_GAMES` (a difference resolved there needs no more) and every
    later one only as many games as fit by then at the rate the last one played: at a
    table of slow opponents (``search``) the planned games alone can take minutes."""
    from agents.gauntlet import compare

    n = games if math.isinf(deadline) else min(games, PROBE_GAMES)
    while True:
        t0 = time.monotonic()
        row = compare(f"ppo:path={after}", f"ppo:path={before}", opponents, n, rules, seed, workers)
        if resolved(row) or n >= most:
            return row
        half = (row["wins_high"] - row["wins_low"]) / 2
        wanted = max(games, min(most, math.ceil(n * (half / RESOLVE_WINS) ** 2 * 1.1)))
        per_game = (time.monotonic() - t0) / n
        left = deadline - time.monotonic()
        fits = wanted if math.isinf(left) or per_game <= 0 else int(left / per_game)
        if fits <= n:
            return row
        n = min(wanted, fits)


def compare_steps(config: Any, games: int) -> list[Verdict]:
    """Each step's model minus the model it started from at each of the run's
    evaluation tables (the learner against ``players - 1`` copies of each
    ``eval_opponents`` spec), ``games`` games each and more, up to the run's
    ``report_most_games``, until a 2-point difference is resolved
    (:func:`resolved_row`), seeded from the run's evaluation seeds."""
    models = step_models(config.run_dir, config.total_timesteps > 0)
    workers = config.workers or min(4, os.cpu_count() or 1)
    verdicts = []
    for (_, before), (name, after) in zip(models, models[1:], strict=False):
        rows = []
        for k, spec in enumerate(config.eval_specs):
            opponents = [spec] * (config.players - 1)
            row = resolved_row(
                str(after),
                str(before),
                opponents,
                games,
                config.rules,
                config.seeds.evaluation(k),
                workers,
                max(games, config.report_most_games),
            )
            rows.append({**row, "table": f"{spec} x{config.players - 1}"})
        verdicts.append(Verdict(name, rows))
    return verdicts


def choose(models: list[tuple[str, Path]], verdicts: list[Verdict], keep_worse: bool) -> tuple[str, Path]:
    """The run's model: the last step's, except that a step that made the model
    significantly worse is undone (its start kept) unless ``keep_worse``."""
    name, path = models[0]
    for (step, after), verdict in zip(models[1:], verdicts, strict=True):
        if not verdict.worse or keep_worse:
            name, path = step, after
    return name, path


def write_report(
    run_dir: Path,
    verdicts: list[Verdict],
    chosen: str,
    games: int,
    notes: Sequence[str] = (),
    rules: str = "standard",
) -> str:
    """``report.md`` (with ``notes``, lines of Markdown, at its end), ``report.json`` and
    ``report.png`` in the run folder; the text. ``rules``: the table's preset, which
    names what its rounds cost (lives, points or chips)."""
    from agents.gauntlet import interval_text
    from thirtyone_env.harness.evaluation import lost_label

    lost = lost_label(rules)
    scored = "" if lost.startswith("lives") else "; points or chips scored count negative"
    fewest = min((row["games"] for v in verdicts for row in v.rows), default=games)
    played = (
        f"at least {games:,} games a table"
        if fewest >= games
        else f"{games:,} games a table, fewer where a difference was resolved sooner or the time limit left no more"
    )
    lines = [
        f"# Run report: {run_dir.name}",
        "",
        "Each step's model minus the model it started from, in the same seat against the same",
        f"opponents on the same deals ({played}); 95% intervals, `*` where",
        f"one excludes 0. Wins in points (percent of games won); {lost} (lower is better{scored}).",
        "",
        f"| step | table | games | wins | {lost} | verdict |",
        "|---|---|---:|---|---|---|",
    ]
    for v in verdicts:
        for row in v.rows:
            wins = interval_text(row["wins_diff"], row["wins_low"], row["wins_high"], 100, 1)
            lives = interval_text(row["lives_diff"], row["lives_low"], row["lives_high"], 1, 4)
            lines.append(
                f"| {v.step} | {row['table']} | {row['games']:,} | {wins} | {lives} | {row_verdict(row)} |"
            )
    if not verdicts:
        lines.append("| (no step to compare) | | | | | |")
    lines += ["", f"The run's model (`{MODEL}`) is the model of the step **{chosen}**."]
    worse = [_worse_where(v) for v in verdicts if v.worse]
    if worse:
        lines.append(f"Significantly worse than its start: {'; '.join(worse)}.")
    lines += list(notes)
    text = "\n".join(lines) + "\n"
    atomic_write(run_dir / REPORT_MD, text)
    data = {"games": games, "chosen": chosen, "steps": [{"step": v.step, "rows": v.rows} for v in verdicts]}
    atomic_write(run_dir / REPORT_JSON, json_text(data))
    _plot(run_dir / REPORT_PNG, verdicts, lost)
    return text


def _plot(path: Path, verdicts: list[Verdict], lost: str) -> None:
    """Each step's differences with their intervals, one panel for wins, one for what
    the rounds cost (``lost``: its label)."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{v.step}\n{row['table']}" for v in verdicts for row in v.rows] or ["(none)"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 1.2 + 0.6 * len(labels)), squeeze=False)
    for ax, key, scale, title in (
        (axes[0][0], "wins", 100, "wins minus its start (points)"),
        (axes[0][1], "lives", 1, f"{lost} minus its start"),
    ):
        rows = [row for v in verdicts for row in v.rows]
        for y, row in enumerate(rows):
            value, low, high = (scale * row[f"{key}_{p}"] for p in ("diff", "low", "high"))
            worse = high < 0 if key == "wins" else low > 0
            ax.errorbar(
                value, y, xerr=[[value - low], [high - value]], fmt="o", color="C3" if worse else "C0"
            )
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_yticks(range(len(labels)), labels)
        ax.invert_yaxis()
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    atomic_write(path, buf.getvalue())
