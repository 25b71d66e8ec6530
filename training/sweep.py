"""Sweeps of training configurations as Ray Tune trials: ``train.py --sweep FILE``.

A sweep file (JSON) names the trials' common options and what varies::

    {
      "name": "lr-clip",                        # the sweep's folder: <runs_dir>/<name>
      "base": {"imitate": "expert", "total_timesteps": 400000, "eval_every": 50000},
      "grid": {"learning_rate": [3e-5, 1e-4, 3e-4]},       # every value (tune.grid_search)
      "sample": {"ent_coef": {"loguniform": [1e-4, 1e-2]}}, # drawn per trial
      "samples": 2,                             # trials per grid point
      "metric": "win_rate",                     # or "lives_lost_per_round" (lower is better)
      "grace": 2, "reduction": 2,               # ASHA: evaluations before a stop, cut factor
      "concurrent": 2, "cpus_per_trial": 1, "seed": 0
    }

``base``, ``grid`` and ``sample`` take :class:`~training.config.TrainConfig`
fields (not ``run_name``, and ``runs_dir`` only in ``base``: each trial is the ordinary
run folder ``<runs_dir>/<name>/trial_<k>``, which ``train.py --resume`` goes on with). Samplers:
``uniform``, ``loguniform``, ``randint`` ([low, high)), ``choice`` (a list). Every
trial's config is checked before Ray starts (each grid value, each sampler's ends).

Trials report each ladder evaluation (the mean over ``eval_opponents`` of the win rate
and of the lives lost a round) with its number in the run folder's ``evaluations.csv``
(``evaluations``: ASHA's time); ASHA (:class:`ray.tune.schedulers.ASHAScheduler`) stops
the trials that fall behind. The sweep folder holds ``sweep.json`` (the file as read,
written first), ``tune/`` (Tune's own state), ``asha.json`` (what ASHA judged of each
trial) and, at the end, ``summary.csv`` and ``summary.png`` (each trial's curve). The
folder is locked while the sweep runs; the same command goes on with an interrupted
sweep (Ctrl-C or a kill), another sweep in that folder is refused. Tune's random draws
are seeded with ``seed``.

The run folders are the record of the trials, not Tune's history: Tune's restore
starts an unfinished trial's history (and its iteration count) anew, its scheduler
with empty rungs, and its saved state may lag behind the trials by some seconds. So
ASHA's rungs are filled again from the run folders, as far as ``asha.json`` says ASHA
had judged each trial (:class:`RunFolderASHA`); a resumed trial first reports the
evaluations its folder made that ASHA never judged, then goes on from its checkpoint,
counting its evaluations on from those the folder keeps; a trial that had ended (its
run finished, or ASHA stopped it) is not trained again; and the summary is read from
the run folders. A resumed sweep thus sums up, and ASHA judges, as an uninterrupted one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from thirtyone_env.harness.files import (
    FolderLock,
    atomic_write,
    check_name,
    check_writable_dir,
    json_value,
    read_json_object,
    read_small_text,
)
from training.config import TrainConfig
from training.evaluations import read_evaluations
from training.run_folder import checkpoint_steps, last_checkpoint

SWEEP = "sweep.json"
SUMMARY = "summary.csv"
PLOT = "summary.png"
JUDGED = "asha.json"  #: {trial: {"evaluations": ASHA judged so many, "stopped": it stopped the trial}}
TUNE_DIR = "tune"  #: Tune's state: <sweep folder>/tune/trials/<trial>
EXPERIMENT = "trials"
METRICS = {"win_rate": "max", "lives_lost_per_round": "min"}
SAMPLERS = ("uniform", "loguniform", "randint", "choice")
#: fields a sweep sets for each trial itself
PER_TRIAL = ("run_name", "runs_dir")


def _is_number(value: Any) -> bool:
    """A finite JSON number (not a boolean)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class Sweep:
    """A sweep file, checked (``ValueError`` naming the key or field otherwise)."""

    name: str = field(default="", metadata={"help": "the sweep's folder under the base's runs_dir"})
    base: dict[str, Any] = field(default_factory=dict, metadata={"help": "every trial's options"})
    grid: dict[str, list[Any]] = field(default_factory=dict, metadata={"help": "values tried in turn"})
    sample: dict[str, dict[str, list[Any]]] = field(
        default_factory=dict, metadata={"help": "values drawn per trial: {field: {sampler: args}}"}
    )
    samples: int = field(default=1, metadata={"help": "trials per grid point"})
    metric: str = field(default="win_rate", metadata={"help": "what ASHA compares"})
    grace: int = field(default=1, metadata={"help": "evaluations a trial plays before it may be stopped"})
    reduction: float = field(default=2.0, metadata={"help": "ASHA keeps 1/reduction of trials at a rung"})
    concurrent: int = field(default=0, metadata={"help": "trials at once (0: as the CPUs allow)"})
    cpus_per_trial: float = field(default=1.0, metadata={"help": "CPUs Ray reserves for a trial"})
    seed: int = field(default=0, metadata={"help": "seed of Tune's random draws"})

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("the sweep file needs a 'name' (its folder)")
        check_name(self.name, "the sweep's 'name' (its folder under runs_dir)")
        for key in ("base", "grid", "sample"):
            if not isinstance(getattr(self, key), dict):
                raise ValueError(f"'{key}' must be an object of TrainConfig fields")
        fields = {f.name for f in dataclasses.fields(TrainConfig)}
        for key in ("base", "grid", "sample"):
            for name in getattr(self, key):
                if name not in fields:
                    raise ValueError(f"'{key}' names {name!r}, which is no train.py option")
                if name in PER_TRIAL and (key, name) != ("base", "runs_dir"):
                    raise ValueError(f"'{key}' sets {name!r}: the sweep names each trial's run folder itself")
        both = set(self.grid) & set(self.sample)
        if both:
            raise ValueError(f"{sorted(both)} are both in 'grid' and 'sample'")
        for name, values in self.grid.items():
            if not isinstance(values, list) or not values:
                raise ValueError(f"grid {name!r} must be a non-empty list of values")
        for name, sampler in self.sample.items():
            if not (isinstance(sampler, dict) and len(sampler) == 1 and next(iter(sampler)) in SAMPLERS):
                raise ValueError(
                    f"sample {name!r} must be one of {{sampler: args}} with a sampler of {SAMPLERS}"
                )
            kind, args = next(iter(sampler.items()))
            if kind != "choice" and not (
                isinstance(args, list) and len(args) == 2 and all(map(_is_number, args)) and args[0] < args[1]
            ):
                raise ValueError(f"sample {name!r}: {kind} takes [low, high], two numbers with low < high")
            if kind == "randint" and not all(isinstance(a, int) for a in args):
                raise ValueError(f"sample {name!r}: randint takes [low, high], two integers")
            if kind == "choice" and not (isinstance(args, list) and args):
                raise ValueError(f"sample {name!r}: choice takes a non-empty list")
            if kind == "loguniform" and args[0] <= 0:
                raise ValueError(f"sample {name!r}: loguniform needs a positive low end")
        if self.metric not in METRICS:
            raise ValueError(f"metric {self.metric!r}: use one of {list(METRICS)}")
        for name, value, low in (
            ("samples", self.samples, 1),
            ("grace", self.grace, 1),
            ("concurrent", self.concurrent, 0),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an integer of at least {low}, got {value!r}")
        if not isinstance(self.reduction, (int, float)) or not self.reduction > 1:
            raise ValueError(f"reduction must be a number above 1, got {self.reduction!r}")
        if not isinstance(self.cpus_per_trial, (int, float)) or not self.cpus_per_trial > 0:
            raise ValueError(f"cpus_per_trial must be positive, got {self.cpus_per_trial!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        base = self.config({})
        for name, values in self.grid.items():
            for value in values:
                self.config({name: value}, f"grid {name}={value!r}")
        for name, sampler in self.sample.items():
            kind, args = next(iter(sampler.items()))
            ends = args if kind == "choice" else [args[0], args[1] - 1 if kind == "randint" else args[1]]
            for value in ends:
                self.config({name: value}, f"sample {name}={value!r}")
        check_writable_dir(base.runs_dir, "runs_dir")

    @classmethod
    def read(cls, path: str | os.PathLike, allow_code: bool = False) -> Sweep:
        """The sweep in a JSON file; ``ValueError`` naming the file and the problem (a
        player that runs code among its options too, unless ``allow_code``)."""
        try:
            text = read_small_text(path)
        except OSError as e:
            raise ValueError(f"cannot read the sweep file {path}: {e.strerror or e}") from None
        except ValueError as e:  # not a regular file, too large, not UTF-8
            raise ValueError(f"cannot read the sweep file {path}: {e}") from None
        try:
            data = json_value(text)
        except ValueError as e:
            raise ValueError(f"the sweep file {path} is not JSON: {e}") from None
        if not isinstance(data, dict):
            raise ValueError(f"the sweep file {path} must hold a JSON object")
        from training.trust import check_no_code

        check_no_code(data, f"the sweep file {path}", allow_code)
        known = {f.name for f in dataclasses.fields(cls)}
        odd = sorted(set(data) - known)
        if odd:
            raise ValueError(f"the sweep file {path} has unknown keys {odd}; keys are {sorted(known)}")
        try:
            return cls(**data)
        except ValueError as e:
            raise ValueError(f"sweep file {path}: {e}") from None

    def config(self, params: dict[str, Any], what: str = "base", trial: str = "trial_00000") -> TrainConfig:
        """A trial's config: the base with ``params``; ``ValueError`` saying which."""
        try:
            return TrainConfig(**{**self.base, **params, "run_name": trial, "runs_dir": str(self.folder)})
        except (TypeError, ValueError) as e:
            raise ValueError(f"{what}: {e}") from None

    @property
    def folder(self) -> Path:
        """The sweep's folder: ``<base runs_dir>/<name>``, absolute (trials may run elsewhere)."""
        return (Path(self.base.get("runs_dir", "runs")) / self.name).resolve()

    def as_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=2, sort_keys=True)


def check_folder(sweep: Sweep) -> bool:
    """Whether the sweep folder holds this sweep, begun (True: go on) or is free
    (False); ``ValueError`` for another sweep or a folder this command did not write."""
    folder = sweep.folder
    if not folder.exists():
        return False
    if not folder.is_dir():
        raise ValueError(f"{folder} is not a folder")
    stored = folder / SWEEP
    if not stored.is_file():
        if any(p.name != FolderLock.NAME for p in folder.iterdir()):
            raise ValueError(f"{folder} is not empty and holds no sweep: pick another sweep name")
        return False
    if stored.read_text() != sweep.as_json():
        raise ValueError(f"{folder} holds another sweep ({stored} differs): pick another sweep name")
    if (folder / SUMMARY).exists():
        raise ValueError(f"the sweep in {folder} is finished ({SUMMARY}): pick another sweep name")
    return True


def _trial(params: dict[str, Any], *, sweep: Sweep) -> None:
    """One trial (on a Ray worker): the run folder ``trial_<k>``, resumed when a
    restored sweep finds it begun; each evaluation reported to Tune with its number
    in the run folder (``evaluations``). A resumed trial first reports the evaluations
    its folder holds that ASHA never judged (made just before an interruption) and
    that the run will not make again; a run that had ended (finished, or stopped by
    ASHA) is not trained again, its last evaluation reported (Tune's view catching up)."""
    from ray import tune

    from training.run import train

    trial = "trial_" + tune.get_context().get_trial_id().rsplit("_", 1)[-1]
    config = sweep.config(params, trial, trial)
    run_dir = config.run_dir

    def send(point: dict[str, float], evaluations: int) -> None:
        try:
            tune.report({**point, "evaluations": evaluations})
        except SystemExit:  # how Tune ends a trial it stops
            raise TrialStopped() from None

    def report(steps: int, rows: list[dict[str, Any]]) -> None:
        send(evaluation_point(steps, rows), len(trial_history(run_dir)))  # the folder holds this one

    begun = (run_dir / "config.json").exists()
    with contextlib.suppress(TrialStopped):  # the run folder keeps a checkpoint of where it stopped
        if begun:
            judged = judged_trials(sweep.folder).get(trial, {"evaluations": 0, "stopped": False})
            history = trial_history(run_dir)
            resume = resume_point(run_dir)
            ended = judged["stopped"] or resume >= config.total_timesteps
            # the evaluations that stay: all of a run that ended, else those up to its checkpoint
            kept = len(history) if ended else sum(p["timesteps"] <= resume for p in history)
            for k in range(judged["evaluations"], kept):
                send(history[k], k + 1)
            if ended:
                if history and kept <= judged["evaluations"]:
                    send(history[-1], len(history))
                return
        train(config, resume=begun, progress=False, report=report)


def evaluation_point(steps: int, rows: list[dict[str, Any]]) -> dict[str, float]:
    """What a trial reports of one evaluation (its rows, one a table): the steps and
    the means over the tables of the win rate and of the lives lost a round."""
    import numpy as np

    return {
        "timesteps": steps,
        "win_rate": float(np.mean([float(r["win_rate"]) for r in rows])),
        "lives_lost_per_round": float(np.mean([float(r["lives_lost_per_round"]) for r in rows])),
    }


def trial_history(run_dir: Path) -> list[dict[str, float]]:
    """The evaluations a trial's run folder holds (``evaluations.csv``), in order, as
    the trial reported them (:func:`evaluation_point`); ``ValueError`` naming the file
    when it is not an evaluations file."""
    rows = read_evaluations(run_dir)
    return [
        evaluation_point(steps, [r for r in rows if int(r["timesteps"]) == steps])
        for steps in dict.fromkeys(int(r["timesteps"]) for r in rows)
    ]


def resume_point(run_dir: Path) -> int:
    """The steps a trial's run folder goes on from: its last checkpoint's (-1: none,
    the run starts again); later evaluations are set aside and made again."""
    checkpoint = last_checkpoint(run_dir)
    return checkpoint_steps(checkpoint) if checkpoint is not None else -1


def judged_trials(folder: Path) -> dict[str, dict[str, Any]]:
    """What ASHA judged of each trial of the sweep in ``folder`` (:data:`JUDGED`): the
    evaluations it judged (the first so many of the run folder's) and whether it
    stopped the trial; ``ValueError`` naming the file when it is not such a record."""

    def judged(entry: Any) -> bool:
        return (
            isinstance(entry, dict)
            and isinstance(entry.get("evaluations"), int)
            and isinstance(entry.get("stopped"), bool)
        )

    return read_json_object(
        folder / JUDGED,
        judged,
        "the record of what ASHA judged",
        "an object of trials, each with its 'evaluations' and 'stopped'",
    )


def check_records(folder: Path) -> None:
    """The records a sweep that goes on reads (``asha.json``, each trial's
    ``evaluations.csv``), checked before Ray starts: ``ValueError`` naming the file."""
    judged_trials(folder)
    for run_dir in sorted(folder.glob("trial_*")):
        trial_history(run_dir)


def __getattr__(name: str) -> Any:
    """:class:`RunFolderASHA`, made on first use: it subclasses Ray's ASHA, and Ray is
    imported only once :func:`_fit` has connected to it (Tune's restore unpickles the
    scheduler by this name)."""
    if name == "RunFolderASHA":
        globals()[name] = made = _run_folder_asha()
        return made
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _run_folder_asha() -> type:
    from ray.tune.schedulers import ASHAScheduler, TrialScheduler

    class RunFolderASHA(ASHAScheduler):
        """ASHA in evaluations (``evaluations``) whose rungs outlast an interruption.
        Each result it judges is written to ``asha.json`` (how many of the trial's
        evaluations it judged, whether it stopped the trial) before Tune acts on it.
        Tune's restore makes the scheduler anew, with empty rungs: each trial it adds
        back brings the evaluations ASHA had judged, read from its run folder, into the
        rungs as they were recorded then, without judging them again."""

        def __init__(self, folder: Path, **kwargs: Any) -> None:
            super().__init__(time_attr="evaluations", **kwargs)
            self.folder = Path(folder)

        def on_trial_add(self, tune_controller: Any, trial: Any) -> None:
            super().on_trial_add(tune_controller, trial)
            name = trial_name(trial)
            judged = judged_trials(self.folder).get(name, {}).get("evaluations", 0)
            bracket = self._trial_info[trial.trial_id]
            for k, point in enumerate(trial_history(self.folder / name)[:judged], 1):
                bracket.on_result(trial, k, self._metric_op * point[self._metric])

        def on_trial_result(self, tune_controller: Any, trial: Any, result: dict[str, Any]) -> str:
            action = super().on_trial_result(tune_controller, trial, result)
            if self._time_attr in result and self._metric in result:
                judged = judged_trials(self.folder)
                name = trial_name(trial)
                before = judged.get(name, {"evaluations": 0, "stopped": False})
                judged[name] = {
                    "evaluations": max(before["evaluations"], int(result[self._time_attr])),
                    "stopped": before["stopped"] or action == TrialScheduler.STOP,
                }
                atomic_write(self.folder / JUDGED, json.dumps(judged, indent=1, sort_keys=True) + "\n")
            return action

    RunFolderASHA.__module__, RunFolderASHA.__qualname__ = __name__, "RunFolderASHA"
    return RunFolderASHA


class TrialStopped(KeyboardInterrupt):
    """ASHA stopped the trial: the run saves a checkpoint as on Ctrl-C (its folder
    stays an ordinary run folder, which ``--resume`` can go on with) and the trial ends."""


def trial_name(trial: Any) -> str:
    """A trial's name and the name of its run folder: ``trial_<k>`` (k: its index)."""
    return "trial_" + trial.trial_id.rsplit("_", 1)[-1]


def param_space(sweep: Sweep) -> dict[str, Any]:
    """Tune's search space of the sweep's grid and samplers."""
    from ray import tune

    space: dict[str, Any] = {name: tune.grid_search(values) for name, values in sweep.grid.items()}
    for name, sampler in sweep.sample.items():
        kind, args = next(iter(sampler.items()))
        space[name] = tune.choice(args) if kind == "choice" else getattr(tune, kind)(*args)
    return space


def run_sweep(sweep: Sweep, address: str | None = None) -> list[dict[str, Any]]:
    """Run (or go on with) the sweep on Ray; its summary rows (also ``summary.csv``
    and ``summary.png`` in the sweep folder)."""
    going_on = check_folder(sweep)
    folder = sweep.folder
    with FolderLock(folder, "sweep folder"):
        going_on = check_folder(sweep)
        if going_on:
            check_records(folder)
        else:
            atomic_write(folder / SWEEP, sweep.as_json())
        results = _fit(sweep, address, going_on)
        if not finished(sweep, results):  # Ctrl-C: Tune saved its state, the trials their checkpoints
            raise KeyboardInterrupt("the sweep was interrupted")
        rows = summary_rows(sweep, results)
        write_summary(folder, rows)
        plot_summary(folder, sweep, rows)
    return rows


def _fit(sweep: Sweep, address: str | None, going_on: bool) -> Any:
    from thirtyone_env.harness.parallel import connect

    ray = connect(address)  # first: it decides how a local Ray starts
    from ray import tune
    from ray.tune.search.basic_variant import BasicVariantGenerator

    from training.sweep import RunFolderASHA  # made now that Ray is connected

    trainable = tune.with_resources(tune.with_parameters(_trial, sweep=sweep), {"cpu": sweep.cpus_per_trial})
    storage = sweep.folder / TUNE_DIR
    if going_on and tune.Tuner.can_restore(str(storage / EXPERIMENT)):
        tuner = tune.Tuner.restore(
            str(storage / EXPERIMENT), trainable, resume_unfinished=True, restart_errored=True
        )
        return tuner.fit()
    cpus = int(ray.cluster_resources().get("CPU", 1))
    concurrent = sweep.concurrent or max(1, int(cpus // sweep.cpus_per_trial))
    scheduler = RunFolderASHA(
        sweep.folder,
        max_t=max(1, evaluations_per_run(sweep)),
        grace_period=sweep.grace,
        reduction_factor=sweep.reduction,
    )
    tuner = tune.Tuner(
        trainable,
        param_space=param_space(sweep),
        tune_config=tune.TuneConfig(
            metric=sweep.metric,
            mode=METRICS[sweep.metric],
            scheduler=scheduler,
            search_alg=BasicVariantGenerator(random_state=sweep.seed, max_concurrent=concurrent),
            num_samples=sweep.samples,
            max_concurrent_trials=concurrent,
            trial_name_creator=trial_name,
            trial_dirname_creator=trial_name,
        ),
        run_config=tune.RunConfig(name=EXPERIMENT, storage_path=str(storage), verbose=1),
    )
    return tuner.fit()


def trial_count(sweep: Sweep) -> int:
    """Trials in the sweep: every grid point ``samples`` times."""
    return math.prod(len(values) for values in sweep.grid.values()) * sweep.samples


def finished(sweep: Sweep, results: Any) -> bool:
    """Whether every trial ran to its end (finished, stopped by ASHA or failed), not
    cut short by an interrupted sweep (Tune then returns the trials so far, some of
    them without a last result marked done)."""
    ended = [bool(r.error) or bool((r.metrics or {}).get("done")) for r in results]
    return len(ended) == trial_count(sweep) and all(ended)


def evaluations_per_run(sweep: Sweep) -> int:
    """Evaluations a full trial reports (the longest of its configs): ASHA's ``max_t``."""
    config = sweep.config({})
    steps = max([config.total_timesteps, *sweep.grid.get("total_timesteps", [])])
    every = min([config.eval_every or steps, *sweep.grid.get("eval_every", [])]) or steps
    return math.ceil(steps / every) + 1


SUMMARY_FIELDS = (
    "trial",
    "run_folder",
    "status",
    "evaluations",
    "timesteps",
    "win_rate",
    "best_win_rate",
    "lives_lost_per_round",
    "error",
)


def summary_rows(sweep: Sweep, results: Any) -> list[dict[str, Any]]:
    """One row per trial: its parameters, how far it went (ASHA stops some early),
    its last and best win rate and its last lives lost a round, read from its run
    folder's evaluations (Tune's history of a resumed trial starts at the resume)."""
    rows = []
    for result in results:
        config = result.config or {}
        trial = Path(result.path).name  # trial_name()
        history = trial_history(sweep.folder / trial)
        last = history[-1] if history else None
        total = sweep.config(config).total_timesteps
        steps = int(last["timesteps"]) if last is not None else 0
        status = "error" if result.error else ("finished" if steps >= total else "stopped early")
        nan = float("nan")
        rows.append(
            {
                "trial": trial,
                "run_folder": str(sweep.folder / trial),
                **{name: config.get(name) for name in (*sweep.grid, *sweep.sample)},
                "status": status,
                "evaluations": len(history),
                "timesteps": steps,
                "win_rate": last["win_rate"] if last is not None else nan,
                "best_win_rate": max(p["win_rate"] for p in history) if history else nan,
                "lives_lost_per_round": last["lives_lost_per_round"] if last is not None else nan,
                "error": str(result.error).splitlines()[0] if result.error else "",
                "curve": [[p["timesteps"], p[sweep.metric]] for p in history],
            }
        )
    return sorted(rows, key=lambda r: r["trial"])


def write_summary(folder: Path, rows: list[dict[str, Any]]) -> None:
    """``summary.csv`` (one row a trial, its parameters after the trial name), atomically."""
    import csv

    if not rows:
        return
    params = [k for k in rows[0] if k not in SUMMARY_FIELDS and k != "curve"]
    columns = ["trial", *params, *SUMMARY_FIELDS[1:]]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write(folder / SUMMARY, buf.getvalue())


def plot_summary(folder: Path, sweep: Sweep, rows: list[dict[str, Any]]) -> None:
    """``summary.png``: each trial's metric (the mean over the evaluation tables of
    the win rate, or of the lives lost a round) by training steps (dashed: stopped
    early by ASHA)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    params = [*sweep.grid, *sweep.sample]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for row in rows:
        if not row["curve"]:
            continue
        steps, wins = zip(*row["curve"], strict=True)
        label = row["trial"] + " " + ", ".join(f"{p}={_short(row.get(p))}" for p in params)
        ax.plot(steps, wins, "--" if row["status"] == "stopped early" else "-", marker="o", ms=3, label=label)
    ax.set_xlabel("training steps")
    ax.set_ylabel({"win_rate": "win rate", "lives_lost_per_round": "lives lost a round"}[sweep.metric])
    better = "higher" if METRICS[sweep.metric] == "max" else "lower"
    ax.set_title(
        f"sweep {sweep.name}: {len(rows)} trials, {better} is better (dashed: stopped early by ASHA)"
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    atomic_write(folder / PLOT, buf.getvalue())


def _short(value: Any) -> str:
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def print_summary(rows: list[dict[str, Any]], sweep: Sweep) -> None:
    """The summary as a table on the terminal."""
    from rich.console import Console
    from rich.table import Table

    params = [*sweep.grid, *sweep.sample]
    table = Table(title=f"sweep {sweep.name} ({sweep.folder})")
    for column in ("trial", *params, "status", "steps", "win rate", "best", "lives/round"):
        table.add_column(column)
    for row in rows:
        table.add_row(
            row["trial"],
            *(_short(row.get(p)) for p in params),
            row["status"],
            f"{row['timesteps']:,}",
            f"{row['win_rate']:.1%}",
            f"{row['best_win_rate']:.1%}",
            f"{row['lives_lost_per_round']:.3f}",
        )
    Console(width=None if sys.stdout.isatty() else 200).print(table)  # a log keeps whole names
