"""The SB3 callback of a run: checkpoints, self-play snapshots, the ladder evaluations
(``evaluations.csv``, ``best_model.zip``), the time limit and the progress bar. It
imports stable-baselines3: import it once training starts."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from agents.ppo import NumpyPolicy
from agents.training.config import TrainConfig
from agents.training.evaluations import (
    best_evaluation,
    evaluate_policy_file,
    read_evaluations,
    write_evaluations,
)
from agents.training.models import save_model
from thirtyone_env.harness.files import make_dir


class RunCallback(BaseCallback):
    """Checkpoints, self-play snapshots, ladder evaluations and the progress bar."""

    def __init__(self, config: TrainConfig, progress: bool) -> None:
        super().__init__()
        self.config = config
        self.run_dir = config.run_dir
        self.progress = progress
        self.bar: Any = None
        self.started = time.perf_counter()
        self.evaluated = -1
        self.marks: dict[str, int] = {}
        self.evals = read_evaluations(self.run_dir)
        # the score to beat: that of the evaluation whose model best_model.zip holds
        has_best = (self.run_dir / "best_model.zip").exists()
        self.best = best_evaluation(self.evals)[1] if has_best else -np.inf

    def _due(self, key: str, every: int) -> bool:
        last = self.marks.setdefault(key, self.num_timesteps // every)
        now = self.num_timesteps // every
        self.marks[key] = now
        return now > last

    def _on_training_start(self) -> None:
        config = self.config
        self.started = time.perf_counter()
        for key, every in (("ckpt", config.checkpoint_every), ("snap", config.snapshot_every)):
            self.marks[key] = self.num_timesteps // every
        if config.eval_every:
            self.marks["eval"] = self.num_timesteps // config.eval_every
        if config.self_play > 0 and not any((self.run_dir / "pool").glob("*.npz")):
            self.snapshot()  # the initial policy: the pool is never empty
        if config.eval_every and self.num_timesteps == 0 and not self.evals:
            self.evaluate()  # where the curve starts (after any warm start)
        if self.progress:
            from tqdm import tqdm

            self.bar = tqdm(
                total=config.total_timesteps,
                initial=self.num_timesteps,
                unit="step",
                unit_scale=True,
                dynamic_ncols=True,
                desc=config.run_name,
            )

    def snapshot(self) -> None:
        """Add the current policy to the self-play pool (the newest ``pool_size`` kept)."""
        pool = make_dir(self.run_dir / "pool")
        NumpyPolicy.from_sb3(self.model.policy).save(pool / f"snap_{self.num_timesteps:012d}.npz")
        for old in sorted(pool.glob("snap_*.npz"))[: -self.config.pool_size]:
            old.unlink()

    def checkpoint(self) -> Path:
        """Save the model as ``checkpoints/ckpt_<steps>.zip``; its path."""
        path = self.run_dir / "checkpoints" / f"ckpt_{self.num_timesteps:012d}.zip"
        save_model(self.model, path, self.config)
        return path

    def evaluate(self) -> None:
        """One evaluation row per evaluation opponent, appended to ``evaluations.csv``;
        the model becomes ``best_model.zip`` when its mean win rate beats the best."""
        config = self.config
        self.evaluated = self.num_timesteps
        path = self.run_dir / "eval_policy.npz"
        NumpyPolicy.from_sb3(self.model.policy).save(path)
        rows = []
        for k, spec in enumerate(config.eval_specs):
            row = evaluate_policy_file(path, config, spec, config.eval_games, config.seeds.evaluation(k))
            row["timesteps"] = self.num_timesteps
            rows.append(row)
            tag = spec.replace(":", "_")
            self.logger.record(f"eval/{tag}_win_rate", row["win_rate"])
            self.logger.record(f"eval/{tag}_lives_lost_per_round", row["lives_lost_per_round"])
            self._print(
                f"eval @ {self.num_timesteps:,} vs {config.players - 1}x {spec}: win {row['win_rate']:.1%} "
                f"[{row['win_low']:.1%}, {row['win_high']:.1%}], lives lost/round "
                f"{row['lives_lost_per_round']:.3f} [{row['lives_low']:.3f}, {row['lives_high']:.3f}] "
                f"(theirs {row['opponent_lives_lost_per_round']:.3f})"
            )
        self.evals.extend({k: str(v) for k, v in r.items()} for r in rows)
        write_evaluations(self.run_dir, self.evals)
        score = float(np.mean([r["win_rate"] for r in rows])) if rows else -np.inf
        if score > self.best:
            self.best = score
            save_model(self.model, self.run_dir / "best_model.zip", self.config)

    def _print(self, text: str) -> None:
        if self.bar is not None:
            self.bar.write(text)
        else:
            print(text, flush=True)

    def _on_step(self) -> bool:
        config = self.config
        if self.bar is not None:
            self.bar.update(self.training_env.num_envs)
        if config.self_play > 0 and self._due("snap", config.snapshot_every):
            self.snapshot()
        if self._due("ckpt", config.checkpoint_every):
            self.checkpoint()
        if config.eval_every and self._due("eval", config.eval_every):
            self.evaluate()
        if config.time_limit and time.perf_counter() - self.started > config.time_limit:
            self._print(f"time limit of {config.time_limit:g}s reached at {self.num_timesteps:,} steps")
            return False
        return True

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.close()
