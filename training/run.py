"""A training run from start to end: every check that needs no run folder first
(:func:`preflight`), then, with the folder locked, the model (fresh or from the last
checkpoint), the imitation warm start, MaskablePPO with the run's callback, and the
final and best models. Ctrl-C saves what can be saved; a fresh start that fails
before saving anything removes the folder it created."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import agents
from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.driver import check_table
from thirtyone_env.harness.files import FolderLock, atomic_write, check_writable_dir
from training.collection import load_demonstrations
from training.config import TrainConfig
from training.envs import make_vec
from training.models import (
    build_model,
    check_device,
    init_width,
    load_checkpoint,
    load_initial_weights,
    read_initial_weights,
    save_model,
)
from training.run_folder import (
    checkpoint_steps,
    last_checkpoint,
    record_step,
    refuse_existing,
    remove_failed_start,
    set_aside_after,
    store_operational,
    write_new_run,
)
from training.warm_start import warm_start


def check_players(config: TrainConfig) -> None:
    """Build every named player once, here in the trainer's process: one that cannot be
    built, or a model made for another table, fails now with its name instead of later
    inside the env workers."""
    rules = Rules.resolve(config.rules)
    teachers = [s for s in (config.imitate, config.imitate_behaviour) if s]
    for spec in dict.fromkeys((*config.opponent_specs, *config.eval_specs, *teachers)):
        check_table(agents.from_spec(spec), config.players, rules, spec)


def anchor_to_warm_start(model: Any, config: TrainConfig, fresh: bool) -> None:
    """Anchor PPO to the warm-start policy (``--kl-coef``): a fresh run keeps it as
    ``anchor_policy.npz`` in the run folder, a resumed one reads it back from there."""
    from agents.ppo import NumpyPolicy, load_policy
    from training.anchor import ANCHOR

    path = config.run_dir / ANCHOR
    if fresh:
        anchor = NumpyPolicy.from_sb3(model.policy)
        anchor.save(path)
    elif not path.exists():
        raise ValueError(f"{path} is missing: a run with --kl-coef resumes with the anchor it saved")
    else:
        anchor = load_policy(path)
    model.policy.set_anchor(anchor)


def check_can_go_on(config: TrainConfig, steps: int) -> None:
    """``ValueError`` when a run at ``steps`` has nothing left to train (a fresh run
    of no PPO steps has its steps before PPO to take)."""
    if steps == 0 == config.total_timesteps:
        return
    if steps >= config.total_timesteps:
        raise ValueError(
            f"the run is already at {steps:,} steps of total_timesteps={config.total_timesteps:,}: "
            "give a larger --total-timesteps to go on"
        )


def preflight(config: TrainConfig, resume: bool) -> Any:
    """Every check that needs no run folder, before one is created or changed: the
    place, the device, and the warm start's demonstrations to fit or model to start
    from (loaded here, once: returned)."""
    check_writable_dir(config.runs_dir, "runs_dir")
    check_writable_dir(config.run_dir, "run folder")
    if not resume:
        refuse_existing(config.run_dir)
    check_device(config.device)
    check_players(config)
    from_start = not resume or last_checkpoint(config.run_dir) is None
    if config.imitate and config.imitate_from and from_start:
        return load_demonstrations(config.imitate_from, config)
    if config.init_from and from_start:
        return read_initial_weights(config)
    return None


def train(
    config: TrainConfig,
    resume: bool = False,
    progress: bool = True,
    report: Callable[[int, list[dict[str, Any]]], None] | None = None,
) -> dict[str, Any]:
    """Run (or go on with) training; returns the run's figures. Every check comes
    before the run folder is created; the folder is locked for the run (another
    train.py on it is refused); a fresh start that fails before saving anything
    removes the folder it created. Raises ``ValueError`` on bad input and
    ``KeyboardInterrupt`` after saving what can be saved. ``report(steps, rows)``
    sees each evaluation's rows as they are written (a sweep's trials report them)."""
    import torch

    torch.set_num_threads(config.torch_threads)
    warm = preflight(config, resume)
    created = not config.run_dir.exists()
    with FolderLock(config.run_dir, "run folder"):
        try:
            return run_locked(config, resume, progress, warm, report)
        except BaseException:
            if created:
                remove_failed_start(config.run_dir)
            raise


def timed_step(run_dir: Path, name: str, step: Callable[[], dict[str, float]]) -> None:
    """Run one step before PPO and keep what it reports in the run folder (``steps.json``)."""
    t0 = time.perf_counter()
    stats = step()
    record_step(run_dir, name, stats, time.perf_counter() - t0)


def run_locked(
    config: TrainConfig,
    resume: bool,
    progress: bool,
    warm: Any,
    report: Callable[[int, list[dict[str, Any]]], None] | None = None,
) -> dict[str, Any]:
    """:func:`train` once the run folder is locked: a resume without a checkpoint
    (a warm start that was interrupted, a start that failed) starts the run again."""
    from stable_baselines3.common.logger import configure

    from training.callback import RunCallback

    run_dir = config.run_dir
    ckpt = last_checkpoint(run_dir) if resume else None
    if resume:
        check_can_go_on(config, checkpoint_steps(ckpt))
        store_operational(config)
        if ckpt is None:
            print(
                f"{run_dir} has no checkpoint yet: its training starts from the beginning "
                "(an imitation warm start goes on from the decisions it saved)",
                flush=True,
            )
    else:
        refuse_existing(run_dir)
        write_new_run(config)
    env = make_vec(config)
    try:
        model = load_checkpoint(ckpt, env, config) if ckpt else build_model(config, env)
        start = model.num_timesteps
        check_can_go_on(config, start)
        set_aside_after(run_dir, start if ckpt else -1)
        if ckpt is None:
            steps_before_ppo(model, config, progress, warm)
        if config.total_timesteps == 0:  # no PPO: the run's model is the last step's
            save_model(model, run_dir / "final_model.zip", config)
            return {"timesteps": 0, "elapsed_s": 0.0, "steps_per_s": 0.0, "model_from": report_run(config)}
        if config.kl_coef > 0:
            anchor_to_warm_start(model, config, fresh=ckpt is None)
        model.set_logger(configure(str(run_dir / "logs"), ["csv", "tensorboard"]))
        callback = RunCallback(config, progress, report)
        t0 = time.perf_counter()
        try:
            model.learn(
                config.total_timesteps - start,
                callback=callback,
                reset_num_timesteps=ckpt is None,
            )
        except KeyboardInterrupt:
            path = callback.checkpoint()
            print(
                f"\ninterrupted at {model.num_timesteps:,} steps: checkpoint saved to {path}", file=sys.stderr
            )
            raise
        elapsed = time.perf_counter() - t0
        if config.eval_every and callback.evaluated != model.num_timesteps:
            callback.num_timesteps = model.num_timesteps
            callback.evaluate()  # the final policy is a candidate for the best model too
            model.logger.dump(model.num_timesteps)
        if config.gauntlet_every and (
            not callback.curves or callback.curves[-1]["timesteps"] != model.num_timesteps
        ):
            callback.num_timesteps = model.num_timesteps
            callback.gauntlet()  # the curve's last point: the final policy
            model.logger.dump(model.num_timesteps)
        callback.checkpoint()
        save_model(model, run_dir / "final_model.zip", config)
        if not (run_dir / "best_evaluation.zip").exists():
            save_model(model, run_dir / "best_evaluation.zip", config)
    finally:
        env.close()
    steps = model.num_timesteps - start
    figures = {"timesteps": model.num_timesteps, "elapsed_s": elapsed, "steps_per_s": steps / elapsed}
    print(
        f"trained {steps:,} steps in {elapsed:.1f}s ({steps / elapsed:,.0f} steps/s, {config.vec} env); "
        f"models: {run_dir / 'final_model.zip'}, {run_dir / 'best_evaluation.zip'} (best evaluation)"
    )
    figures["model_from"] = report_run(config)
    return figures


def steps_before_ppo(model: Any, config: TrainConfig, progress: bool, warm: Any) -> None:
    """The steps a fresh run takes before PPO, each timed (``steps.json``) and its
    model kept (``steps/<k>_<name>.zip``, the start first) for the run report."""
    from training.report import step_path

    run_dir = config.run_dir
    kept = [0]

    def keep(name: str) -> None:
        save_model(model, step_path(run_dir, kept[0], name), config)
        kept[0] += 1

    if config.init_from:
        load_initial_weights(model, warm, config.init_from, init_width(config))
    keep("start")
    if config.imitate:
        timed_step(run_dir, "imitation", lambda: warm_start(model, config, progress, warm))
        keep("imitation")
    if config.init_from and config.improve_decisions:
        from training.improvement import improvement_step

        timed_step(run_dir, "improvement", lambda: improvement_step(model, config, progress))
        keep("improvement")
    if config.init_from and config.heads_up_teacher:
        from training.heads_up import heads_up_step

        timed_step(run_dir, "heads_up_teacher", lambda: heads_up_step(model, config, progress))
        keep("heads_up_teacher")


def report_run(config: TrainConfig) -> str:
    """The run report (:mod:`training.report`) and the run's model, ``best_model.zip``:
    the last step's, unless a step made the model significantly worse (said on the
    console). Returns the step whose model it is."""
    from training.report import MODEL, choose, compare_steps, step_models, write_report

    run_dir = config.run_dir
    models = step_models(run_dir, config.total_timesteps > 0)
    verdicts = compare_steps(config, config.report_games) if config.report_games and len(models) > 1 else []
    chosen, path = choose(models, verdicts, config.keep_worse) if verdicts else models[-1]
    write_report(run_dir, verdicts, chosen, config.report_games, rules=config.rules)
    atomic_write(run_dir / MODEL, path.read_bytes())
    for v in verdicts:
        if v.worse:
            kept = "kept anyway (--keep-worse)" if config.keep_worse else "not kept"
            print(f"warning: the step {v.step} made the model significantly worse than its start: {kept}")
    if verdicts:
        print(f"report: {run_dir / 'report.md'}; the run's model: {run_dir / MODEL} (from the step {chosen})")
    else:
        print(f"the run's model: {run_dir / MODEL} (from the step {chosen})")
    return chosen
