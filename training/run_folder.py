"""The run folder ``runs/<name>/``: a fresh run starts only in a new or empty folder
(never over another run's files), its config and library versions are stored there,
its last checkpoint is found there, and a resume keeps everything an earlier part
wrote (logs and evaluation rows after the checkpoint are set aside, never replaced).
Old checkpoints are pruned (``keep_checkpoints``) and what writes killed half way
left is removed: only files of the names the run writes, never another file."""

from __future__ import annotations

import dataclasses
import json
import platform
import re
import shutil
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from thirtyone_env.harness.files import FolderLock, atomic_write, json_value, read_json_object
from training.config import OPERATIONAL, PLACEMENT, REMOVED, UNSTORED, TrainConfig
from training.evaluations import best_evaluation, read_evaluations, write_evaluations

CONFIG = "config.json"
VERSIONS = "versions.json"
STEPS = "steps.json"  #: what each step before PPO reported (the warm start, the improvement step, ...)
CHECKPOINT = re.compile(r"ckpt_(\d+)\.zip$")
#: the checkpoint names the callback writes (``ckpt_<steps>.zip``, steps of 12 digits or
#: more): the only files of ``checkpoints/`` that pruning deletes
WRITTEN_CHECKPOINT = re.compile(r"ckpt_(\d{12,})\.zip")
#: the names :func:`~thirtyone_env.harness.files.atomic_write` gives a checkpoint or a
#: self-play snapshot while writing it (``tempfile.mkstemp`` with the prefix
#: ``.<name>.`` and the suffix ``.tmp`` around 8 characters of ``[a-z0-9_]``): what a
#: write killed before its rename leaves behind, by folder of the run
WRITE_LEFTOVERS = {
    "checkpoints": re.compile(r"\.ckpt_\d{12,}\.zip\.[a-z0-9_]{8}\.tmp"),
    "pool": re.compile(r"\.snap_\d{12,}\.npz\.[a-z0-9_]{8}\.tmp"),
}


def library_versions() -> dict[str, str]:
    """Python's version and those of the libraries a run depends on."""
    out = {"python": platform.python_version()}
    for dist in ("thirtyone", "numpy", "gymnasium", "stable_baselines3", "sb3_contrib", "torch"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def last_checkpoint(run_dir: Path) -> Path | None:
    """The checkpoint of the most steps in ``run_dir`` (``None``: none)."""
    found = [
        (int(m.group(1)), p)
        for p in (run_dir / "checkpoints").glob("ckpt_*.zip")
        if (m := CHECKPOINT.search(p.name))
    ]
    return max(found)[1] if found else None


def checkpoint_steps(path: Path | None) -> int:
    """The steps a checkpoint's name says (0 for none: a run from the start)."""
    m = CHECKPOINT.search(path.name) if path is not None else None
    return int(m.group(1)) if m else 0


def remove_write_leftovers(run_dir: Path) -> list[Path]:
    """Remove the temporary files that checkpoint and snapshot writes killed before
    their rename left in ``run_dir`` (a checkpoint's size each, hidden, never read
    again); the paths removed. Only names of :data:`WRITE_LEFTOVERS` go: a file of
    any other name is the user's and stays. Call it with the run folder locked (no
    write of this run is under way)."""
    removed = []
    for folder, pattern in WRITE_LEFTOVERS.items():
        where = run_dir / folder
        if not where.is_dir():
            continue
        for p in where.iterdir():
            if pattern.fullmatch(p.name) and p.is_file() and not p.is_symlink():
                p.unlink(missing_ok=True)
                removed.append(p)
    return removed


def prune_checkpoints(run_dir: Path, keep: int, spare: tuple[Path, ...] = ()) -> list[Path]:
    """Delete the checkpoints of ``run_dir`` but the newest ``keep`` (0: delete none)
    and those in ``spare`` (the one just written, the best evaluation's); the paths
    deleted. Only the callback's own names (:data:`WRITTEN_CHECKPOINT`) are counted
    and deleted: any other file in ``checkpoints/`` stays."""
    if keep == 0:
        return []
    found = sorted(
        (int(m.group(1)), p)
        for p in (run_dir / "checkpoints").glob("ckpt_*.zip")
        if (m := WRITTEN_CHECKPOINT.fullmatch(p.name)) and p.is_file() and not p.is_symlink()
    )
    spared = {p.name for p in spare}
    deleted = []
    for _, p in found[:-keep]:
        if p.name not in spared:
            p.unlink(missing_ok=True)
            deleted.append(p)
    return deleted


def free_name(path: Path) -> Path:
    """``path``, else ``<stem>_2<suffix>``, ``<stem>_3<suffix>``, ...: the first name not
    taken (a log or result is never replaced)."""
    candidate, k = path, 1
    while candidate.exists() or candidate.is_symlink():
        k += 1
        candidate = path.with_name(f"{path.stem}_{k}{path.suffix}")
    return candidate


def refuse_existing(run_dir: Path) -> None:
    """A fresh run starts in a new (or empty) folder: never over another run's files."""
    if (run_dir / CONFIG).exists():
        raise ValueError(
            f"run folder {run_dir} exists: resume it with --resume {run_dir}, or pick another --run-name"
        )
    if run_dir.is_dir() and any(p.name != FolderLock.NAME for p in run_dir.iterdir()):
        raise ValueError(f"{run_dir} is not empty and holds no run (no config.json): pick another --run-name")


def write_new_run(config: TrainConfig) -> None:
    """A fresh run's ``config.json`` and ``versions.json``."""
    atomic_write(config.run_dir / CONFIG, json.dumps(dataclasses.asdict(config), indent=2))
    atomic_write(config.run_dir / VERSIONS, json.dumps(library_versions(), indent=2))


def read_steps(run_dir: Path) -> dict[str, Any]:
    """The run's ``steps.json`` (empty when none): ``ValueError`` naming the file when it
    is not what :func:`record_step` writes, so that a resume refuses it before any step
    runs, not after."""

    def figures(entry: Any) -> bool:
        return isinstance(entry, dict) and all(
            v is None or (isinstance(v, int | float) and not isinstance(v, bool)) for v in entry.values()
        )

    return read_json_object(
        run_dir / STEPS,
        figures,
        "the record of the steps this program wrote",
        "an object of steps, each an object of its figures",
    )


def record_step(run_dir: Path, step: str, stats: dict[str, float], seconds: float) -> None:
    """Add one step's figures (what it printed, and its time) to the run's ``steps.json``,
    atomically: a console piped away or cut short does not lose them. The steps run once,
    at the run's start (a run started again from its beginning writes them again)."""
    steps = read_steps(run_dir)
    path = run_dir / STEPS
    figures = {k: None if np.isnan(v) else float(v) for k, v in stats.items()}  # JSON has no NaN
    steps[step] = {**figures, "seconds": round(seconds, 1)}
    atomic_write(path, json.dumps(steps, indent=2) + "\n")


def stored_config(run_dir: Path, given: dict[str, Any], allow_code: bool = False) -> TrainConfig:
    """The config of the run in ``run_dir`` to go on with: its ``config.json`` with the
    operational fields ``given`` (no other field may differ); ``ValueError`` naming the
    file when it is not a run config, or naming the fields given otherwise, or a player
    that runs code (unless ``allow_code``: :mod:`training.trust`)."""
    stored_path = run_dir / CONFIG
    if not stored_path.is_file():
        raise ValueError(f"cannot resume: {stored_path} not found (is {run_dir} a run folder?)")
    try:
        stored = json_value(stored_path.read_text())
        names = {f.name for f in dataclasses.fields(TrainConfig)}
        if not isinstance(stored, dict):
            raise ValueError("it is not a JSON object")
        from training.trust import check_no_code

        check_no_code(stored, "it", allow_code)
        used = sorted(k for k, unused in REMOVED.items() if k in stored and stored[k] != unused)
        if used:
            raise ValueError(
                f"the run uses {', '.join(used)}, an experiment's option this train.py no longer has "
                "(resume it with the version that made it)"
            )
        stored = {k: v for k, v in stored.items() if k not in REMOVED}
        defaults = {f.name: f.default for f in dataclasses.fields(TrainConfig)}
        # an option added since the run was made takes what the train.py the run was made
        # with did: its default (added options default to what came before them), else
        # its UNSTORED value
        stored = {**defaults, **UNSTORED, **stored, **{k: given.get(k, defaults[k]) for k in PLACEMENT}}
        if set(stored) != names:
            odd = sorted(set(stored) - names)
            raise ValueError(f"its fields are not those of this train.py (unknown: {', '.join(odd)})")
    except (OSError, UnicodeDecodeError, ValueError) as e:  # JSONDecodeError is a ValueError
        raise ValueError(f"cannot resume: {stored_path} is not a run config ({e})") from None
    different = {k: (stored[k], v) for k, v in given.items() if k not in OPERATIONAL and stored[k] != v}
    if different:
        listed = ", ".join(f"{k}: run has {a!r}, given {b!r}" for k, (a, b) in different.items())
        raise ValueError(f"cannot resume {run_dir} with another config ({listed})")
    for k in OPERATIONAL:
        stored[k] = given.get(k, stored[k])
    try:
        config = TrainConfig(**stored)
        where = run_dir.resolve()
        if config.run_dir.resolve() != where:
            # the folder was moved or renamed: train where it is now
            config = dataclasses.replace(config, runs_dir=str(where.parent), run_name=where.name)
    except ValueError as e:
        raise ValueError(f"cannot resume: {stored_path}: {e}") from None
    try:
        read_steps(run_dir)
    except ValueError as e:
        raise ValueError(f"cannot resume: {e}") from None
    return config


def store_operational(config: TrainConfig) -> None:
    """Record in the run's config.json how far a resumed run now goes (the only fields
    a resume may change), once the resume is known to go ahead."""
    path = config.run_dir / CONFIG
    stored = json_value(path.read_text())
    changed = {k: getattr(config, k) for k in OPERATIONAL if stored.get(k) != getattr(config, k)}
    if changed:
        atomic_write(path, json.dumps({**stored, **changed}, indent=2))


def remove_failed_start(run_dir: Path) -> None:
    """Remove the folder a fresh start created when it failed before saving anything
    useful (a checkpoint or demonstrations): all in it is that start's own."""
    useful = any((run_dir / "checkpoints").glob("*.zip")) or any(run_dir.glob("demonstrations*.npz"))
    if run_dir.is_dir() and not useful:
        shutil.rmtree(run_dir, ignore_errors=True)
        print(f"removed {run_dir}: the run stopped before saving anything", file=sys.stderr)


def set_aside_snapshots(run_dir: Path, steps: int) -> None:
    """Move the self-play snapshots written after ``steps`` (``pool/snap_<steps>.npz``)
    to ``pool_set_aside/``: a run that goes on from ``steps`` never plays against the
    models of the part it lost."""
    later = [
        p
        for p in sorted((run_dir / "pool").glob("snap_*.npz"))
        if p.stem[5:].isdigit() and int(p.stem[5:]) > steps
    ]
    if not later:
        return
    aside = run_dir / "pool_set_aside"
    aside.mkdir(exist_ok=True)
    for path in later:
        path.rename(free_name(aside / path.name))
    print(f"{len(later)} self-play snapshots after {max(steps, 0):,} steps moved to {aside}", flush=True)


def set_aside_after(run_dir: Path, steps: int) -> None:
    """Before a run goes on from ``steps`` (-1: from the start): keep the log so far
    under a name of its own (SB3 starts ``progress.csv`` anew), and set aside the
    evaluation rows later than ``steps`` (written after the last checkpoint, before a
    crash) with the best model they chose, so they take no part in choosing the next,
    and the self-play snapshots of those steps (:func:`set_aside_snapshots`). Nothing is
    deleted or replaced."""
    log = run_dir / "logs" / "progress.csv"
    if log.exists():
        log.rename(free_name(run_dir / "logs" / f"progress_to_{max(steps, 0):012d}.csv"))
    set_aside_snapshots(run_dir, steps)
    rows = read_evaluations(run_dir)
    kept = [r for r in rows if int(r["timesteps"]) <= steps]
    if len(kept) == len(rows):
        return
    aside = free_name(run_dir / "evaluations_set_aside.csv")
    write_evaluations(run_dir, [r for r in rows if int(r["timesteps"]) > steps], aside.name)
    write_evaluations(run_dir, kept)  # after the copy: a crash between them loses nothing
    print(
        f"{len(rows) - len(kept)} evaluation rows after {max(steps, 0):,} steps (where the run goes on) "
        f"moved to {aside}",
        flush=True,
    )
    best = run_dir / "best_evaluation.zip"
    chosen = best_evaluation(rows)[0]
    if best.exists() and chosen is not None and chosen > steps:
        moved = best.rename(free_name(run_dir / "best_evaluation_set_aside.zip"))
        source = best_evaluation(kept)[0]
        restore = run_dir / "checkpoints" / f"ckpt_{source or 0:012d}.zip"
        note = "no model of the best evaluation kept: the next evaluation chooses anew"
        if source is not None and restore.exists():
            atomic_write(best, restore.read_bytes())
            note = f"best_evaluation.zip is again the model evaluated at {source:,} steps"
        print(f"the best model they chose moved to {moved}; {note}", flush=True)
