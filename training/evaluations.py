"""The run's ladder evaluation: the learner against tables of each evaluation opponent,
and ``evaluations.csv``, its rows in the order written, from which the best model so
far is chosen.

Where the kernels play the rules (the stock game with lives) the games run on the
batched env (:func:`evaluate_batched`: every game's learner decisions in one forward
pass, the opponents asked for all their waiting games at once); elsewhere on the
tournament harness (duplicate deals, seats rotated)."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import numpy as np

import agents
from thirtyone_env.harness.files import atomic_write
from thirtyone_env.harness.parallel import ordered_map
from training.config import TrainConfig

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
    """The learner against a table of ``spec`` players: on the batched env where the
    kernels play the rules, else on the harness (seat-rotated, duplicate deals)."""
    from thirtyone_env.envs.vector import batchable
    from thirtyone_env.game.rules import Rules

    if batchable(Rules.resolve(config.rules)):
        return evaluate_batched(path, config, spec, games, seed)
    return evaluate_on_harness(path, config, spec, games, seed)


def evaluate_all(path: Path, config: TrainConfig, seeds: list[int]) -> list[dict[str, Any]]:
    """The learner in ``path`` against a table of each evaluation opponent (seed
    ``seeds[k]`` for the k-th), one task each on the run's backend: in this process
    unless ``--workers`` says otherwise, or on Ray, where the learner's file and the
    opponents' travel by content. Rows in the order of the opponents."""
    from agents import portable
    from agents.portable import CarriedFile

    specs = config.eval_specs
    backend = config.backend(len(specs), 1)
    make_player = portable.reader(specs, backend)
    model: Path | CarriedFile = path
    if backend.kind == "ray":
        from agents.ppo import PPOPlayer

        model = CarriedFile.read(path, PPOPlayer.companion_files(str(path)))
    tasks = [
        (model, config, spec, config.eval_games, seed, make_player)
        for spec, seed in zip(specs, seeds, strict=True)
    ]
    return list(ordered_map(_evaluation_task, tasks, backend))


def _evaluation_task(task: tuple[Any, TrainConfig, str, int, int, Any]) -> dict[str, Any]:
    """One evaluation table (module level, for worker processes and Ray)."""
    model, config, spec, games, seed, make_player = task
    path = model if isinstance(model, Path) else model.place()
    local = getattr(make_player, "local_spec", None)
    row = evaluate_policy_file(path, config, local(spec) if callable(local) else spec, games, seed)
    return {**row, "opponent": spec}


#: Games played at once by :func:`evaluate_batched`.
EVAL_BATCH = 512


def evaluate_batched(path: Path, config: TrainConfig, spec: str, games: int, seed: int) -> dict[str, Any]:
    """``games`` whole games of the learner (deterministic, a random seat each) against
    ``spec`` players on the batched env, game ``j`` seeded ``seed + j``; each game is
    counted once, to its end (a game's first episode in its slot), so short games are
    not favoured. A shared win counts 1/k, as on the harness."""
    from agents.ppo import PPOPlayer
    from thirtyone_env.envs.vector import ThirtyOneVectorEnv, ended_game
    from thirtyone_env.game.rules import Rules
    from thirtyone_env.harness.evaluation import ratio_ci

    learner = PPOPlayer(str(path))
    opponent = agents.from_spec(spec)
    rules = Rules.resolve(config.rules)
    won, lost, rounds, opp_lost, opp_rounds = [], [], [], [], []
    for first in range(0, games, EVAL_BATCH):
        size = min(EVAL_BATCH, games - first)
        vec = ThirtyOneVectorEnv(
            size,
            config.players,
            rules,
            [opponent] * (config.players - 1),
            seat="random",
            opponent_history=config.opponent_history,
        )
        obs, info = vec.reset(seed=seed + first)
        open_ = np.ones(size, dtype=bool)
        while open_.any():
            obs, _, done, _, info = vec.step(learner.act_batch(obs, info["action_mask"]))
            for i in np.flatnonzero(done & open_).tolist():
                open_[i] = False
                end = ended_game(info, i)
                me = end["seat"]
                won.append(win_share(end))
                lost.append(end["lives_lost"][me])
                rounds.append(end["rounds_played"][me])
                opp_lost.append(sum(end["lives_lost"][p] for p in range(config.players) if p != me))
                opp_rounds.append(sum(end["rounds_played"][p] for p in range(config.players) if p != me))
    win = ratio_ci(np.array(won), np.ones(len(won)))
    lives_ci = ratio_ci(np.array(lost), np.array(rounds))
    return {
        "opponent": spec,
        "games": len(won),
        "win_rate": win[0],
        "win_low": win[1],
        "win_high": win[2],
        "lives_lost_per_round": lives_ci[0],
        "lives_low": lives_ci[1],
        "lives_high": lives_ci[2],
        "opponent_lives_lost_per_round": float(np.sum(opp_lost) / max(1, np.sum(opp_rounds))),
    }


def places(end: dict[str, Any]) -> list[int]:
    """Each seat's place when a batched game ended (its ``final_info``): 0 for the
    seats still in with the most lives, then by (still in, lives); ties share."""
    key = [(bool(a), x) for a, x in zip(end["active"], end["lives"], strict=True)]
    return [sum(other > mine for other in key) for mine in key]


def win_share(end: dict[str, Any]) -> float:
    """The agent's share of the win in a finished batched game: 1, 1/k for a win
    shared by k seats (as the harness counts it), 0 when it was out or behind."""
    me = end["seat"]
    if not end["active"][me]:
        return 0.0
    order = places(end)
    return 1.0 / order.count(0) if order[me] == 0 else 0.0


def evaluate_on_harness(path: Path, config: TrainConfig, spec: str, games: int, seed: int) -> dict[str, Any]:
    """The learner (seat-rotated, duplicate deals) against copies of ``spec``."""
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
    try:
        with path.open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except (csv.Error, UnicodeDecodeError) as e:  # a NUL byte, a field over csv's limit, not UTF-8
        raise ValueError(f"{path} is not an evaluations file this script wrote ({e})") from None
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
    """The evaluation that chose ``best_evaluation.zip`` (its timesteps and mean win rate):
    the last to beat every earlier one, as the callback chooses (``None``: no rows)."""
    source, best = None, -np.inf
    for steps in dict.fromkeys(int(r["timesteps"]) for r in rows):
        score = float(np.mean([float(r["win_rate"]) for r in rows if int(r["timesteps"]) == steps]))
        if score > best:
            source, best = steps, score
    return source, best
