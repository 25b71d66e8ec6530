"""The heads-up teacher step of a run started from a model (``--init-from`` with
``--heads-up-teacher``): the model plays its seat at the run's tables, every decision
taken with two players in labelled by the teacher and every other by the model's own
move (:func:`training.imitation.collect` with ``teach_players_in=2``), collected in
fixed-size jobs (one child seed each: the same data on any worker count), saved in the
run folder (``heads_up.npz``; a run started again before its first checkpoint fits
those instead of collecting again), then a refit of the model on them, the heads-up
decisions weighted ``--heads-up-weight``.

Why: the heads-up end decides a game, and the best heads-up play depends on the
opponent; a model trained mostly at tables of strong players can learn there the
heads-up game of a teacher that plays it better, on the states its own play reaches
(DAgger), while keeping the rest of its play (its own moves are the other labels)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from thirtyone_env.game.encoding import ObsLayout
from thirtyone_env.game.rules import Rules
from training.collection import (
    collect_in_jobs,
    job_env,
    local_specs,
    saved_or_collected,
    step_meta,
)
from training.config import TrainConfig
from training.improvement import model_spec

HEADS_UP = "heads_up.npz"  #: the heads-up teacher step's decisions, in the run folder


def heads_up_meta(config: TrainConfig) -> dict[str, Any]:
    """What the step's collection is: saved with it, compared when a run starts again."""
    own: dict[str, Any] = {"against": config.heads_up_against} if config.heads_up_against else {}
    if config.heads_up_others < 1:  # absent at 1: files saved before the option still match
        own["others"] = config.heads_up_others
    return step_meta(config, teacher=config.heads_up_teacher, decisions=config.heads_up_decisions, **own)


def _choices(policy: Any, demos: Any) -> np.ndarray:
    """``policy``'s argmax over the legal moves of each decision (in blocks: the
    observations are stored as float16)."""
    out = np.empty(len(demos), dtype=np.int64)
    for i in range(0, len(demos), 50_000):
        logits = policy.logits(demos.obs[i : i + 50_000].astype(np.float32))
        out[i : i + 50_000] = np.where(demos.masks[i : i + 50_000], logits, -np.inf).argmax(axis=1)
    return out


def heads_up_rows(obs: np.ndarray, config: TrainConfig) -> np.ndarray:
    """Which of these flat observations were taken with two players in (their
    ``active`` part, the seat's own flag included)."""
    layout = ObsLayout(config.players, Rules.resolve(config.rules), config.opponent_history)
    return obs[:, layout.slices["active"]].astype(np.float32).sum(axis=1) <= 2.5


def _heads_up_chunk(job: tuple[TrainConfig, int, int, Any, float]) -> Any:
    """One collection job (module level so worker processes and Ray can run it)."""
    from training.imitation import collect

    config, seed, size, make_player, stop_at = job
    config, env = job_env(config, make_player)
    model = make_player(model_spec(config))
    teacher = make_player(config.heads_up_teacher)
    against = local_specs([a.strip() for a in config.heads_up_against.split(",") if a.strip()], make_player)
    demos = collect(
        env,
        teacher,
        size,
        config.gamma,
        seed,
        behaviour=model,
        teach_players_in=2,
        teach_against=against,
        stop_at=stop_at,
    )
    if config.heads_up_others >= 1:
        return demos
    # the job's own stream for the draw (a child of its seed: the play's stream is the seed's)
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    keep = heads_up_rows(demos.obs, config) | (rng.random(len(demos)) < config.heads_up_others)
    return demos.take(np.flatnonzero(keep))


def collect_heads_up(config: TrainConfig, progress: bool) -> Any:
    """The model's decisions with the teacher's heads-up labels, on the run's backend."""
    specs = [model_spec(config), config.heads_up_teacher, *config.opponent_specs]
    demos = collect_in_jobs(
        config, config.heads_up_decisions, _heads_up_chunk, specs, "heads-up teacher: playing", progress
    )
    demos.meta = heads_up_meta(config)
    return demos


def heads_up_step(model: Any, config: TrainConfig, progress: bool) -> dict[str, float]:
    """Collect the model's decisions with the teacher's heads-up labels (or read those
    this run saved), then refit the model on them."""
    from agents.ppo import NumpyPolicy
    from training.imitation import pretrain

    t0 = time.perf_counter()
    demos = saved_or_collected(
        config.run_dir / HEADS_UP,
        heads_up_meta(config),
        lambda: collect_heads_up(config, progress),
        "heads-up teacher step",
    )
    heads_up = heads_up_rows(demos.obs, config)
    own = _choices(NumpyPolicy.from_sb3(model.policy), demos)
    taught = heads_up & (own != demos.actions)  # where the teacher's move is not the model's
    weight = np.where(heads_up, config.heads_up_weight, 1.0).astype(np.float32)
    stats = pretrain(
        model,
        demos,
        config.heads_up_epochs,
        lr=config.heads_up_lr,
        seed=config.seeds.learner,
        row_weight=weight,
    )
    now = _choices(NumpyPolicy.from_sb3(model.policy), demos)
    stats.update(
        rows=float(len(demos)),
        heads_up=float(heads_up.sum()),
        differ=float(taught.sum()),
        learnt=float((now[taught] == demos.actions[taught]).mean()) if taught.any() else float("nan"),
        moved=float((now[~heads_up] != own[~heads_up]).mean()) if (~heads_up).any() else 0.0,
    )
    print(
        f"heads-up teacher step: {len(demos):,} decisions, {stats['heads_up']:,.0f} heads-up, where the "
        f"teacher's move differed from the model's in {stats['differ']:,.0f}; after the refit "
        f"{config.heads_up_epochs} epochs: the teacher's move in {stats['learnt']:.1%} of those, "
        f"{stats['moved']:.2%} of the other choices changed ({time.perf_counter() - t0:.0f}s)",
        flush=True,
    )
    return stats
