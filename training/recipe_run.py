"""Running a recipe (:mod:`training.recipe`) in its run folder ``runs/<name>/``.

Every check comes first (:func:`check`): the recipe's form, each step's run config,
every player it names, the start model against the table. Then, with the folder
locked:

- ``recipe.toml`` (the recipe with every option written out) and ``versions.json``;
- ``steps/0_start/``: the model the recipe starts from (a fresh network), unless it
  starts from a file;
- ``steps/<k>_<name>/``: step ``k``'s own run folder (its collections, checkpoints,
  ``best_model.zip``: the model it gives out); a repeated step's later passes are
  ``<k>_<name>.<r>``;
- after each step, its model plays the model it started from on the same deals at each
  report table until a 2-point difference in wins is resolved (or a cap of games); a
  step that made the model significantly worse is said so and undone (the recipe goes
  on from the model it started from) unless ``keep_worse``;
- ``recipe.json``: what each step gave, so that ``--resume`` skips the steps done and
  goes on inside the one that was interrupted;
- ``report.md``, ``report.png``, ``report.json`` and ``best_model.zip``, the recipe's
  model.

``time_limit`` bounds the recipe, its reports included: a step is not started once it
is spent, nor a collecting step (imitation, improvement, heads-up) with less than half
the time the longest earlier pass of its kind took; a running step stops early enough
to leave its report the time the longest report so far took (a collection's running
jobs each with their episode, leaving an imitation's fit its estimated time; PPO at
once), a step marked
``until_time`` repeats (PPO: trains on) while time is left (a step with ``time_share``
below 1: while its share of the time left when it began is left), and a report plays on to
resolve a difference only while time is left (its first ``report_games`` are always
played, so a recipe may end a report's length past its limit).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thirtyone_env.harness.files import FolderLock, atomic_write, check_writable_dir
from training.config import TrainConfig
from training.recipe import PlannedStep, Recipe, RecipeError, read
from training.recipe_state import read_state, write_state
from training.steps import MODEL, PPO, Imitation

RECIPE_FILE = "recipe.toml"
STEPS_DIR = "steps"
#: the recipe's model
BEST = "best_model.zip"
#: PPO's steps when it trains on until the time limit
UNBOUNDED = 10**12


@dataclass(frozen=True)
class Placement:
    """Where and how the recipe runs, given on every start; only the time limit is
    stored (in ``recipe.json``, with the time spent), so that a resume keeps it."""

    workers: int = 0
    cluster: str = "local"
    ray_address: str = ""
    device: str = "cpu"
    time_limit: float = 0.0
    keep_worse: bool = False
    report_games: int | None = None
    allow_code: bool = False  #: the run folder's files may name players that run code


def pass_name(planned: PlannedStep, r: int) -> str:
    """The folder of a step's ``r``-th pass."""
    base = f"{planned.index}_{planned.name}"
    return base if r == 1 else f"{base}.{r}"


def step_config(
    recipe: Recipe,
    planned: PlannedStep,
    r: int,
    model_in: str,
    root: Path,
    place: Placement,
    left: float,
    earlier: Sequence[str] = (),
) -> TrainConfig:
    """The run config of pass ``r`` of a step from ``model_in``, in the recipe folder
    ``root``, with ``left`` seconds of the recipe's time (0: no limit); ``earlier``: the
    run folders of the recipe's imitation passes before it (an ``aggregate`` step fits
    their decisions too)."""
    t = recipe.table
    fields = planned.step.train_fields(model_in)
    if isinstance(planned.step, Imitation) and planned.step.aggregate:
        from training.collection import DEMONSTRATIONS

        found = [Path(d) / DEMONSTRATIONS for d in earlier if (Path(d) / DEMONSTRATIONS).exists()]
        fields["imitate_with"] = ",".join(map(str, found))
    if isinstance(planned.step, Imitation) and planned.step.pool:
        passes = {s.name: s for s in recipe.steps}
        fields["imitate_from"] = ",".join(
            str(root / STEPS_DIR / pass_name(passes[name], 1) / "demonstrations.npz")
            for name in planned.step.pool
        )
    if isinstance(planned.step, PPO) and planned.until_time and left and planned.step.timesteps is None:
        fields["total_timesteps"] = UNBOUNDED
    base = {
        "run_name": pass_name(planned, r),
        "runs_dir": str(root / STEPS_DIR),
        "rules": t.rules,
        "players": t.players,
        "seat": t.seat,
        "opponents": planned.opponents,
        "eval_opponents": t.eval_opponents,
        "net_arch": t.net_arch,
        "activation": t.activation,
        "opponent_history": planned.opponent_history,
        "gamma": t.gamma,
        "seed": (planned.seed + 1000 * (r - 1)) % 2**32,
        "torch_threads": t.torch_threads,
        "report_games": 0,
        "total_timesteps": 0,
        "eval_every": 0,
        "time_limit": max(left, 0.0),
        "workers": place.workers,
        "cluster": place.cluster,
        "ray_address": place.ray_address,
        "device": place.device,
    }
    return TrainConfig(**{**base, **fields})


def start_config(recipe: Recipe, root: Path, place: Placement) -> TrainConfig:
    """The run that makes the fresh network a recipe starts from (no step, no PPO)."""
    t = recipe.table
    first = recipe.steps[0]
    return TrainConfig(
        run_name="0_start",
        runs_dir=str(root / STEPS_DIR),
        rules=t.rules,
        players=t.players,
        seat=t.seat,
        opponents=first.opponents,
        eval_opponents=t.eval_opponents,
        net_arch=t.net_arch,
        activation=t.activation,
        opponent_history=first.opponent_history,
        gamma=t.gamma,
        seed=t.seed,
        report_games=0,
        total_timesteps=0,
        eval_every=0,
        workers=place.workers,
        device=place.device,
    )


def check(recipe: Recipe, root: Path, place: Placement) -> None:
    """Every check that needs no run folder, each failure one line naming the recipe
    file, the step and the option: the device and the folder the run would take, each
    step's run config, every player it names (built once), the start model against the
    table."""
    from training.models import check_device, read_initial_weights
    from training.run import check_players

    try:
        check_device(place.device)
    except ValueError as e:
        raise RecipeError(f"--device {place.device}: {e}") from None
    check_writable_dir(root.parent, "runs_dir")
    check_writable_dir(root, "run folder")
    start = recipe.table.start
    if start != "random" and not Path(start).is_file():
        raise RecipeError(f"{recipe.source}: [table] start={start!r}: no such model file")
    model_in = start if start != "random" else str(root / "model_in.zip")
    for planned in recipe.steps:
        where = f"{recipe.source}: step {planned.index} ({planned.name})"
        step = planned.step
        if isinstance(step, Imitation) and step.behaviour == MODEL:
            step = dataclasses.replace(step, behaviour="random")
        try:
            config = step_config(
                recipe, dataclasses.replace(planned, step=step), 1, model_in, root, place, place.time_limit
            )
            check_players(config)
        except ValueError as e:
            raise RecipeError(f"{where}: {planned.step.option_of(str(e))}") from None
    if start != "random":
        try:
            read_initial_weights(dataclasses.replace(start_config(recipe, root, place), init_from=start))
        except ValueError as e:
            raise RecipeError(f"{recipe.source}: [table] start={start!r}: {e}") from None
    try:
        start_config(recipe, root, place)
    except ValueError as e:
        raise RecipeError(f"{recipe.source}: [table]: {e}") from None


def run_recipe(recipe: Recipe, root: Path, place: Placement, resume: bool, progress: bool) -> dict[str, Any]:
    """Run (or go on with) ``recipe`` in the folder ``root``; returns its state (what
    each step gave and the recipe's model)."""
    check_writable_dir(root.parent, "runs_dir")
    check_writable_dir(root, "run folder")
    if resume and not (root / RECIPE_FILE).exists():
        raise ValueError(f"{root} holds no recipe run (no {RECIPE_FILE})")
    if not resume and root.exists() and any(p.name != FolderLock.NAME for p in root.iterdir()):
        raise ValueError(
            f"run folder {root} exists: resume it with --resume {root}, or pick another --run-name"
        )
    check(recipe, root, place)
    created = not root.exists()
    with FolderLock(root, "run folder"):
        try:
            return _run_locked(recipe, root, place, resume, progress)
        except BaseException:
            # a step's run removes its own folder when it saved nothing to go on from
            kept = [p for p in (root / STEPS_DIR).glob("*") if p.name != "0_start"]
            if created and not kept:
                shutil.rmtree(root, ignore_errors=True)
                print(
                    f"train.py: removed {root}: the recipe stopped before a step saved anything",
                    file=sys.stderr,
                )
            raise


def stored_recipe(root: Path, allow_code: bool = False) -> Recipe:
    """The recipe a run folder was started with (naming players that run code only
    with ``allow_code``: the folder may have come from someone else)."""
    if not (root / RECIPE_FILE).exists():
        raise ValueError(f"{root} holds no recipe run (no {RECIPE_FILE})")
    return read(root / RECIPE_FILE, allow_code)


def stored_time_limit(root: Path, recipe: Recipe) -> float:
    """The time limit a run folder's recipe was last started with (``--time-limit`` or
    the recipe's own), so that a resume without one keeps it."""
    return float(read_state(root, _named_start(recipe)).get("time_limit", recipe.table.time_limit))


def _run_locked(recipe: Recipe, root: Path, place: Placement, resume: bool, progress: bool) -> dict[str, Any]:
    from training.run_folder import library_versions

    # the state names every model by its absolute path: a run started in one working
    # folder is read in any other (the exploiter's measurement, a resume from elsewhere)
    root = root.resolve()
    t0 = time.monotonic()
    if not resume:
        atomic_write(root / RECIPE_FILE, recipe.to_toml())
        atomic_write(root / "versions.json", json.dumps(library_versions(), indent=2))
    state = read_state(root, _named_start(recipe))
    # the limit bounds the recipe's working time over all its starts: a resumed run has
    # what its earlier starts left (the time of a pass cut short by the stop is not counted)
    spent = float(state.get("seconds", 0.0))
    deadline = t0 - spent + place.time_limit if place.time_limit else math.inf
    state["time_limit"] = place.time_limit

    def checkpoint() -> None:
        state["seconds"] = spent + time.monotonic() - t0
        write_state(root, state)

    if "start" not in state:
        state["start"] = _make_start(recipe, root, place, progress)
        state["model"], state["from"] = state["start"], "start"
        state.setdefault("steps", [])
    checkpoint()
    done = {s["pass"] for s in state["steps"]}
    stopped = ""
    for planned in recipe.steps:
        r = 1
        end = deadline  # this step's passes end by then: its share of the time left
        if planned.time_share < 1 and math.isfinite(deadline):
            end = time.monotonic() + planned.time_share * (deadline - time.monotonic())
        while True:
            name = pass_name(planned, r)
            if name not in done:
                left = end - time.monotonic() - _report_reserve(state, place)
                if left <= 0:
                    stopped = f"the time limit was spent before {name}"
                    break
                need = _time_needed(state, planned, place)
                if left < need:  # a collection cut far short fits a worse model than it started from
                    if r == 1:
                        stopped = (
                            f"{name} would have {left:.0f} s, less than half of the {2 * need:.0f} s "
                            f"an earlier {planned.step.kind} pass took"
                        )
                    break
                _run_pass(recipe, planned, r, root, place, state, left, deadline, progress)
                checkpoint()
                done.add(name)
            r += 1
            more = r <= planned.repeat or (
                planned.until_time
                and not isinstance(planned.step, PPO)  # a PPO pass already trains until the time
                and place.time_limit
                and time.monotonic() < end - _report_reserve(state, place)
            )
            if not more:
                break
        if stopped:
            print(f"train.py: {stopped}: the recipe ends here", flush=True)
            break
    state["stopped"] = stopped
    checkpoint()
    _write_report(recipe, root, state, place)
    return state


def _time_needed(state: dict[str, Any], planned: PlannedStep, place: Placement) -> float:
    """Seconds a pass of a collecting step must have before it starts under a time
    limit: half of the longest earlier pass of its kind (0 for PPO, which trains for
    whatever time it gets, and for a first pass of its kind). A DAgger round left a
    few minutes collects a fraction of its decisions, and a network fitted afresh on
    so few plays worse than the one it started from (5 to 21 points worse in the
    learning benchmark, each undone by the report): such a round is not begun."""
    if not place.time_limit or isinstance(planned.step, PPO):
        return 0.0
    taken = [s["seconds"] for s in state.get("steps", []) if s["kind"] == planned.step.kind]
    return max(taken) / 2 if taken else 0.0


def _report_reserve(state: dict[str, Any], place: Placement) -> float:
    """Seconds a step leaves of the recipe's time for the report that follows it: the
    longest report so far, or a twentieth of the time limit before the first."""
    if not place.time_limit:
        return 0.0
    spent = [s.get("report_seconds", 0.0) for s in state.get("steps", [])]
    return max(spent) if spent else place.time_limit / 20


def _make_start(recipe: Recipe, root: Path, place: Placement, progress: bool) -> str:
    """The model the first step starts from: the recipe's file, or a fresh network."""
    named = _named_start(recipe)
    if named is not None:
        return named
    config = start_config(recipe, root, place)
    if not (config.run_dir / BEST).exists():
        _train(config, progress, place.allow_code)
    return str(config.run_dir / BEST)


def _train(config: TrainConfig, progress: bool, allow_code: bool = False) -> None:
    """A step's run: fresh, or resumed where an earlier start of the recipe left it."""
    from training.run import train
    from training.run_folder import stored_config

    if (config.run_dir / "config.json").exists():
        given = {k: getattr(config, k) for k in ("time_limit", "workers", "cluster", "ray_address")}
        if config.total_timesteps >= UNBOUNDED:
            given["total_timesteps"] = config.total_timesteps
        train(stored_config(config.run_dir, given, allow_code), resume=True, progress=progress)
    else:
        train(config, resume=False, progress=progress)


def _run_pass(
    recipe: Recipe,
    planned: PlannedStep,
    r: int,
    root: Path,
    place: Placement,
    state: dict[str, Any],
    left: float,
    deadline: float,
    progress: bool,
) -> None:
    """One pass of a step from the recipe's model so far, then its comparison with
    that model; the recipe's model becomes the step's unless it is significantly worse."""
    name = pass_name(planned, r)
    model_in = state["model"]
    earlier = [str(Path(s["model"]).parent) for s in state["steps"] if s["kind"] == Imitation.kind]
    config = step_config(
        recipe, planned, r, model_in, root, place, 0.0 if math.isinf(left) else left, earlier
    )
    print(f"train.py: step {name} ({planned.step.kind}) from {_short(model_in, root)}", flush=True)
    t0 = time.perf_counter()
    if not (config.run_dir / BEST).exists():
        _train(config, progress, place.allow_code)
    seconds = time.perf_counter() - t0
    out = str(config.run_dir / BEST)
    t1 = time.monotonic()
    verdict = compare_models(recipe, out, model_in, config.seed, place, deadline)
    report_seconds = time.monotonic() - t1
    worse = verdict.worse if verdict else False
    kept = not worse or place.keep_worse
    if worse:
        what = "kept anyway (keep_worse)" if place.keep_worse else "undone: the recipe goes on from its start"
        print(
            f"warning: the step {name} made the model significantly worse than its start: {what}", flush=True
        )
    if kept:
        state["model"], state["from"] = out, name
    state["steps"].append(
        {
            "pass": name,
            "kind": planned.step.kind,
            "seconds": seconds,
            "report_seconds": report_seconds,
            "model": out,
            "model_in": model_in,
            "kept": kept,
            "rows": verdict.rows if verdict else [],
        }
    )
    write_state(root, state)


def compare_models(
    recipe: Recipe, after: str, before: str, seed: int, place: Placement, deadline: float = math.inf
) -> Any:
    """``after`` minus ``before`` at each report table (:class:`training.report.Verdict`
    of :func:`training.report.resolved_row`, played on no further than ``deadline``);
    ``None`` without report games."""
    from training.report import Verdict, resolved_row
    from training.seeding import RunSeeds

    games = recipe.table.report_games if place.report_games is None else place.report_games
    if not games:
        return None
    t = recipe.table
    workers = place.workers or min(4, os.cpu_count() or 1)
    rows = []
    specs = [s.strip() for s in t.eval_opponents.split(",") if s.strip()]
    for k, spec in enumerate(specs):
        opponents = [spec] * (t.players - 1)
        most = max(games, t.report_most_games)
        row = resolved_row(
            after, before, opponents, games, t.rules, RunSeeds(seed).evaluation(k), workers, most, deadline
        )
        rows.append({**row, "table": f"{spec} x{t.players - 1}"})
    return Verdict("", rows)


def _short(path: str, root: Path) -> str:
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return path


def _named_start(recipe: Recipe) -> str | None:
    """The model the recipe names as its start (resolved), None when it trains its own."""
    return None if recipe.table.start == "random" else str(Path(recipe.table.start).resolve())


def _write_report(recipe: Recipe, root: Path, state: dict[str, Any], place: Placement) -> None:
    """The recipe's report and model: every step's verdict, the model it ends with."""
    from training.report import Verdict, write_report

    verdicts = [Verdict(s["pass"], s["rows"]) for s in state["steps"] if s["rows"]]
    games = recipe.table.report_games if place.report_games is None else place.report_games
    extra = [
        f"| {s['pass']} | {s['kind']} | {s['seconds'] / 60:.1f} | {'yes' if s['kept'] else 'no'} |"
        for s in state["steps"]
    ]
    notes = ["", "| step | kind | minutes | kept |", "|---|---|---:|---|", *extra]
    if state.get("stopped"):
        notes += ["", f"The recipe stopped early: {state['stopped']}."]
    write_report(root, verdicts, state["from"], games, notes, recipe.table.rules)
    atomic_write(root / BEST, Path(state["model"]).read_bytes())
    print(f"report: {root / 'report.md'}; the recipe's model: {root / BEST} (from the step {state['from']})")
