"""The policy-improvement step of a run started from a model (``--init-from`` with
``--improve-decisions``; :mod:`training.measured_moves`): the model's decisions at the run's
tables, every legal move measured by paired play-outs with the model playing on,
collected in fixed-size jobs (one child seed each: the same data on any worker count),
saved in the run folder (``improvement.npz``; a run started again before its first
checkpoint fits those instead of collecting again), then the fit of the model's actor."""

from __future__ import annotations

import time
from typing import Any

from training.collection import (
    collect_in_jobs,
    job_env,
    saved_or_collected,
    step_meta,
)
from training.config import TrainConfig

IMPROVEMENT = "improvement.npz"  #: the improvement step's measured decisions, in the run folder


def model_spec(config: TrainConfig) -> str:
    """The player spec of the model the run starts from (its deterministic argmax)."""
    return f"ppo:path={config.init_from}"


def improvement_meta(config: TrainConfig) -> dict[str, Any]:
    """What the step's collection is: saved with it, compared when a run starts again."""
    return step_meta(
        config, rollouts=config.improve_rollouts, objective="lives", decisions=config.improve_decisions
    )


def _improve_chunk(job: tuple[TrainConfig, int, int, Any, float]) -> Any:
    """One collection job (module level so worker processes and Ray can run it)."""
    from training.imitation import collect

    config, seed, size, make_player, stop_at = job
    config, env = job_env(config, make_player)
    return collect(
        env,
        make_player(model_spec(config)),
        size,
        config.gamma,
        seed,
        move_rollouts=config.improve_rollouts,
        stop_at=stop_at,
    )


def collect_measured(config: TrainConfig, progress: bool) -> Any:
    """The model's measured decisions, collected on the run's backend."""
    specs = [model_spec(config), *config.opponent_specs]
    demos = collect_in_jobs(
        config, config.improve_decisions, _improve_chunk, specs, "improve: measuring moves", progress
    )
    demos.meta = improvement_meta(config)
    return demos


def improvement_step(model: Any, config: TrainConfig, progress: bool) -> dict[str, float]:
    """Measure the model's moves (or read those this run saved), then fit its actor."""
    from training.measured_moves import improve

    t0 = time.perf_counter()
    demos = saved_or_collected(
        config.run_dir / IMPROVEMENT,
        improvement_meta(config),
        lambda: collect_measured(config, progress),
        "improvement step",
    )
    stats = improve(
        model,
        demos,
        config.improve_epochs,
        lr=config.improve_lr,
        kl_coef=config.improve_kl,
        seed=config.seeds.learner,
    )
    print(
        f"improvement step: {len(demos):,} decisions ({stats['rows']:,.0f} fitted, {stats['held_out']:,.0f} "
        f"held out), {config.improve_epochs} epochs; held out: {stats.get('changed', float('nan')):.2%} of "
        f"choices changed, measured gain {stats.get('gain', float('nan')):+.5f} "
        f"(se {stats.get('gain_se', float('nan')):.5f}) a decision ({time.perf_counter() - t0:.0f}s)",
        flush=True,
    )
    return stats
