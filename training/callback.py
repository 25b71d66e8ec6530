"""The SB3 callback of a run: checkpoints (the newest ``keep_checkpoints`` kept),
self-play snapshots, the ladder evaluations (``evaluations.csv``, ``best_evaluation.zip``),
the league's results and ratings (``league.json``), the KL anchor's weight, the time
limit and the progress bar. It imports stable-baselines3: import it once training
starts."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from agents.ppo import NumpyPolicy
from thirtyone_env.harness.files import atomic_write, make_dir
from training.anchor import freeze_actor
from training.config import TrainConfig
from training.curves import gauntlet_point, read_curves, write_curves
from training.envs import league_seats
from training.evaluations import (
    best_evaluation,
    evaluate_all,
    places,
    read_evaluations,
    win_share,
    write_evaluations,
)
from training.models import save_model
from training.run_folder import prune_checkpoints, remove_write_leftovers

#: The league's members, ratings and the learner's score against each, in the run folder.
LEAGUE_FILE = "league.json"


class RunCallback(BaseCallback):
    """Checkpoints, self-play snapshots, ladder evaluations and the progress bar."""

    def __init__(
        self,
        config: TrainConfig,
        progress: bool,
        report: Callable[[int, list[dict[str, Any]]], None] | None = None,
    ) -> None:
        super().__init__()
        self.config = config
        self.report = report  # sees each evaluation's rows (a sweep's trial)
        self.run_dir = config.run_dir
        self.progress = progress
        self.bar: Any = None
        self.started = time.perf_counter()
        self.evaluated = -1
        self.marks: dict[str, int] = {}
        self.seats: list[list[Any]] | None = None  # each game's league seats (a --league run)
        self.league: Any = None
        self.curves: list[dict[str, Any]] = []  # the learning-curve gauntlet's rows so far
        self.evals = read_evaluations(self.run_dir)
        # the score to beat: that of the evaluation whose model best_evaluation.zip holds
        has_best = (self.run_dir / "best_evaluation.zip").exists()
        self.best = best_evaluation(self.evals)[1] if has_best else -np.inf

    def _due(self, key: str, every: int) -> bool:
        last = self.marks.setdefault(key, self.num_timesteps // every)
        now = self.num_timesteps // every
        self.marks[key] = now
        return now > last

    def _on_training_start(self) -> None:
        config = self.config
        self.started = time.perf_counter()
        remove_write_leftovers(self.run_dir)  # the folder is locked: no write of ours is under way
        self.seats = league_seats(self.training_env) if config.league else None
        self.league = self.seats[0][0].league if self.seats else None
        self._on_rollout_end()  # the anchor's weight from the first update on
        for key, every in (("ckpt", config.checkpoint_every), ("snap", config.snapshot_every)):
            self.marks[key] = self.num_timesteps // every
        if config.eval_every:
            self.marks["eval"] = self.num_timesteps // config.eval_every
        if config.gauntlet_every:
            self.marks["gauntlet"] = self.num_timesteps // config.gauntlet_every
            self.curves = read_curves(self.run_dir, upto=self.num_timesteps)  # a resume drops later points
        if config.self_play > 0 and not any((self.run_dir / "pool").glob("*.npz")):
            self.snapshot()  # the initial policy: the pool is never empty
        if config.eval_every and self._evaluation_missing():
            self.evaluate()  # where the curve starts (after any warm start), or one a crash cut off
        if config.gauntlet_every and self.num_timesteps == 0 and not self.curves:
            self.gauntlet()
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

    def _evaluation_missing(self) -> bool:
        """Whether the evaluation of the step the run starts from is not in the folder:
        at step 0 (none made yet), or on a resume from a checkpoint whose own evaluation
        a crash cut off (the checkpoint is written first): the uninterrupted run made it
        there, with this model."""
        if not self.evals:
            return True
        last = max(int(r["timesteps"]) for r in self.evals)
        every = self.config.eval_every
        return self.num_timesteps // every > last // every

    def snapshot(self) -> None:
        """Add the current policy to the self-play pool (the leagues draw the newest
        ``pool_size``; older ones are deleted at the next checkpoint, so a run that goes
        on from a checkpoint finds the pool it had there)."""
        pool = make_dir(self.run_dir / "pool")
        NumpyPolicy.from_sb3(self.model.policy).save(pool / f"snap_{self.num_timesteps:012d}.npz")
        seats = league_seats(self.training_env)
        if seats is not None:  # the batched env's seats, in this process
            leagues = {id(s.league): s.league for row in seats for s in row if hasattr(s, "league")}
            for league in leagues.values():
                league.refresh()
        else:  # each slot's own league, in its env worker
            self.training_env.env_method("refresh_league")

    def gauntlet(self) -> None:
        """One point of the learning curves (:mod:`training.curves`): the small
        gauntlet, in ``gauntlet.csv``, ``learning_curves.png`` and TensorBoard."""
        path = self.run_dir / "gauntlet_policy.npz"
        NumpyPolicy.from_sb3(self.model.policy).save(path)
        rows = gauntlet_point(path, self.config, self.num_timesteps)
        self.curves = [r for r in self.curves if r["timesteps"] != self.num_timesteps] + rows
        write_curves(self.run_dir, self.curves)
        for row in rows:
            self.logger.record(f"gauntlet/{row['table']}_wins_diff", row["wins_diff"])
            self.logger.record(f"gauntlet/{row['table']}_lives_diff", row["lives_diff"])
        self._print(
            f"gauntlet @ {self.num_timesteps:,} (wins / lives a round minus the expert's): "
            + ", ".join(f"{r['table']} {r['wins_diff']:+.1%} / {r['lives_diff']:+.3f}" for r in rows)
        )

    # -- the league -----------------------------------------------------------------

    def _record_games(self) -> None:
        """Tell the league how the finished games went: the learner's score against the
        members at its table (for PFSP) and every seat's place (for OpenSkill)."""
        seats = self.seats
        n = self.config.players
        for i in np.flatnonzero(self.locals["dones"]).tolist():
            end = self.locals["infos"][i]
            if "seat" not in end:  # an illegal action ended it: no result to rate
                continue
            me = end["seat"]
            labels: list[str | None] = [None] * n
            for j, seat in enumerate(seats[i]):
                labels[(me + 1 + j) % n] = seat.previous  # the member of the game that ended
            self.league.record([x for x in labels if x is not None], win_share(end))
            self.league.rate(labels, places(end))

    def write_league(self) -> None:
        """``league.json`` (every member's rating and the learner's score against it),
        written atomically, and the ratings in TensorBoard."""
        rows = self.league.table()
        atomic_write(
            self.run_dir / LEAGUE_FILE,
            json.dumps({"timesteps": self.num_timesteps, "members": rows}, indent=1),
        )
        for row in rows:
            if row["ordinal"] is not None:
                self.logger.record(f"league/{row['label']}_ordinal", row["ordinal"])
            if row["learner_win_share"] is not None:
                self.logger.record(f"league/{row['label']}_learner_win_share", row["learner_win_share"])

    # -- the KL anchor ----------------------------------------------------------------

    def kl_weight(self) -> float:
        """``--kl-coef``: the anchor's weight, the same all run long."""
        return self.config.kl_coef

    def _on_rollout_end(self) -> None:
        policy = self.model.policy
        if self.config.vf_warmup:
            frozen = self.num_timesteps < self.config.vf_warmup
            freeze_actor(policy, frozen)
            self.logger.record("train/actor_frozen", int(frozen))
        if getattr(policy, "anchored", False):
            weight = self.kl_weight()
            policy.entropy_scale = weight / self.model.ent_coef
            self.logger.record("train/anchor_kl_coef", weight)
            if np.isfinite(policy.last_kl):
                self.logger.record("train/anchor_kl", policy.last_kl)

    def checkpoint(self) -> Path:
        """Save the model as ``checkpoints/ckpt_<steps>.zip``, then delete the older
        checkpoints but the newest ``keep_checkpoints``, and the self-play snapshots but
        the newest ``pool_size``; its path. The checkpoint of the best evaluation so far
        is kept too: a resume after a crash that sets aside later evaluations restores
        ``best_evaluation.zip`` from it."""
        path = self.run_dir / "checkpoints" / f"ckpt_{self.num_timesteps:012d}.zip"
        save_model(self.model, path, self.config)
        best = best_evaluation(self.evals)[0]
        spare = (path,) if best is None else (path, path.with_name(f"ckpt_{best:012d}.zip"))
        prune_checkpoints(self.run_dir, self.config.keep_checkpoints, spare)
        for old in sorted((self.run_dir / "pool").glob("snap_*.npz"))[: -self.config.pool_size]:
            old.unlink()  # older than the pool this checkpoint's run draws from
        return path

    def evaluate(self) -> None:
        """One evaluation row per evaluation opponent, appended to ``evaluations.csv``;
        the model becomes ``best_evaluation.zip`` when its mean win rate beats the best."""
        config = self.config
        self.evaluated = self.num_timesteps
        path = self.run_dir / "eval_policy.npz"
        NumpyPolicy.from_sb3(self.model.policy).save(path)
        if self.league is not None:
            self.write_league()
        rows = evaluate_all(path, config, [config.seeds.evaluation(k) for k in range(len(config.eval_specs))])
        for spec, row in zip(config.eval_specs, rows, strict=True):
            row["timesteps"] = self.num_timesteps
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
            save_model(self.model, self.run_dir / "best_evaluation.zip", self.config)
        if self.report is not None:  # last: a sweep may stop the run here
            self.report(self.num_timesteps, rows)

    def _print(self, text: str) -> None:
        if self.bar is not None:
            self.bar.write(text)
        else:
            print(text, flush=True)

    def _on_step(self) -> bool:
        config = self.config
        if self.bar is not None:
            self.bar.update(self.training_env.num_envs)
        if self.league is not None and self.locals["dones"].any():
            self._record_games()
        if config.self_play > 0 and self._due("snap", config.snapshot_every):
            self.snapshot()
        if self._due("ckpt", config.checkpoint_every):
            self.checkpoint()
        if config.eval_every and self._due("eval", config.eval_every):
            self.evaluate()
        if config.gauntlet_every and self._due("gauntlet", config.gauntlet_every):
            self.gauntlet()
        if config.time_limit and time.perf_counter() - self.started > config.time_limit:
            self._print(f"time limit of {config.time_limit:g}s reached at {self.num_timesteps:,} steps")
            return False
        return True

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.close()
        if self.league is not None:
            self.write_league()
