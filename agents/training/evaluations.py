"""The run's ladder evaluation: the learner against tables of each evaluation opponent
(the tournament harness, duplicate deals), and ``evaluations.csv``, its rows in the
order written, from which the best model so far is chosen."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import numpy as np

import agents
from agents.training.config import TrainConfig
from thirtyone_env.harness.files import atomic_write

EVALUATIONS = "evaluations.csv"
EVAL_FIELDS = (
    "timesteps",
    "opponent",
    "games",
    "win_rate",
    "win_low",
    "win_high",
    "lives_lost_per_round",
    "lives_low",
    "lives_high",
    "opponent_lives_lost_per_round",
)


def evaluate_policy_file(path: Path, config: TrainConfig, spec: str, games: int, seed: int) -> dict[str, Any]:
    """The learner (seat-rotated, duplicate deals) against three copies of ``spec``."""
    from thirtyone_env.harness.evaluation import TournamentConfig, run_tournament, summarize

    players = (f"ppo:path={path}",) + (spec,) * (config.players - 1)
    tc = TournamentConfig(players=players, games=games, rules=config.rules, seed=seed, workers=1)
    summary = summarize(tc, run_tournament(tc, agents.from_spec))
    me, opp = summary[next(iter(summary))], list(summary.values())[1:]
    return {
        "opponent": spec,
        "games": tc.total_games,
        "win_rate": me["win_rate"][0],
        "win_low": me["win_rate"][1],
        "win_high": me["win_rate"][2],
        "lives_lost_per_round": me["lives_lost_per_round"][0],
        "lives_low": me["lives_lost_per_round"][1],
        "lives_high": me["lives_lost_per_round"][2],
        "opponent_lives_lost_per_round": float(np.mean([o["lives_lost_per_round"][0] for o in opp])),
    }


def read_evaluations(run_dir: Path) -> list[dict[str, str]]:
    """The rows of ``evaluations.csv`` in the order written; ``ValueError`` naming the
    file when it is not one this script wrote (missing columns, a bad number)."""
    path = run_dir / EVALUATIONS
    if not path.exists():
        return []
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    for k, row in enumerate(rows, 2):
        try:
            missing = [name for name in EVAL_FIELDS if row.get(name) is None]
            if missing:
                raise ValueError(f"no {', '.join(missing)}")
            int(row["timesteps"]), float(row["win_rate"])
        except ValueError as e:
            raise ValueError(f"{path} line {k} is not an evaluation row ({e})") from None
    return rows


def write_evaluations(run_dir: Path, rows: list[dict[str, Any]], name: str = EVALUATIONS) -> None:
    """Write evaluation rows as ``run_dir/name``, atomically."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=EVAL_FIELDS)
    writer.writeheader()
    for row in rows:
        writer.writerow({k: row[k] for k in EVAL_FIELDS})
    atomic_write(run_dir / name, buf.getvalue())


def best_evaluation(rows: list[dict[str, str]]) -> tuple[int | None, float]:
    """The evaluation that chose ``best_model.zip`` (its timesteps and mean win rate):
    the last to beat every earlier one, as the callback chooses (``None``: no rows)."""
    source, best = None, -np.inf
    for steps in dict.fromkeys(int(r["timesteps"]) for r in rows):
        score = float(np.mean([float(r["win_rate"]) for r in rows if int(r["timesteps"]) == steps]))
        if score > best:
            source, best = steps, score
    return source, best
