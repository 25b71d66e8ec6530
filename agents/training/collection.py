"""The imitation warm start's demonstrations: the teacher's decisions collected in
fixed-size jobs (each with its own seed of the run's seeding scheme, so the data is
the same on any worker count), saved as ``.npz`` files that are never unpickled, and
loaded back (``--imitate-from``, a run started again) only when they fit the run's
observation, actions and table."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import signal
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

import agents
from agents.training.config import TrainConfig
from agents.training.envs import make_env_fn, observation_shape
from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.files import atomic_write

#: Teacher decisions per collection job: the jobs and their seeds depend on the seed
#: and the decision count only, so the demonstrations are the same on any worker count.
IMITATION_CHUNK = 5_000
DEMONSTRATIONS = "demonstrations.npz"  #: the warm start's decisions, in the run folder
PARTIAL_DEMONSTRATIONS = "demonstrations.partial.npz"  #: those collected before a Ctrl-C


class CollectionInterrupted(KeyboardInterrupt):
    """Ctrl-C during the collection; ``collected`` holds the jobs finished before it
    (``None``: none)."""

    def __init__(self, collected: Any) -> None:
        super().__init__("interrupted during the collection")
        self.collected = collected


def _ignore_interrupts() -> None:
    """A collection worker's start: Ctrl-C is the trainer's to handle (it saves what
    was collected), and the pool's SIGTERM just ends the worker (no traceback)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _collect_chunk(job: tuple[TrainConfig, int, int]) -> Any:
    """One collection job (module level so worker processes can run it)."""
    from agents.imitation import collect

    config, seed, size = job
    env = make_env_fn(config, -1)()
    behaviour = agents.from_spec(config.imitate_behaviour) if config.imitate_behaviour else None
    return collect(
        env,
        agents.from_spec(config.imitate),
        size,
        config.gamma,
        seed,
        behaviour=behaviour,
        knock_rollouts=config.imitate_knock_rollouts,
        continuation=config.imitate_continuation,
    )


def table_of(config: TrainConfig) -> dict[str, Any]:
    """The table a run plays (every rules option and the table size), as JSON holds
    it: demonstrations from another table do not fit."""
    return json.loads(
        json.dumps({"rules": dataclasses.asdict(Rules.resolve(config.rules)), "players": config.players})
    )


def collection_meta(config: TrainConfig, complete: bool) -> dict[str, Any]:
    """What the run's collection is (stored with its demonstrations): the table, the
    players and the job layout, so that an interrupted one can go on."""
    return json.loads(
        json.dumps(
            {
                "table": table_of(config),
                "teacher": config.imitate,
                "behaviour": config.imitate_behaviour,
                "knock_rollouts": config.imitate_knock_rollouts,
                "continuation": config.imitate_continuation,
                "gamma": config.gamma,
                "seed": config.seed,
                "decisions": config.imitate_decisions,
                "chunk": IMITATION_CHUNK,
                "complete": complete,
            }
        )
    )


def collection_jobs(config: TrainConfig) -> list[tuple[TrainConfig, int, int]]:
    """The collection's jobs (config, seed, decisions), one child seed each."""
    total = config.imitate_decisions
    sizes = [min(IMITATION_CHUNK, total - i) for i in range(0, total, IMITATION_CHUNK)]
    seeds = config.seeds.collection(len(sizes))
    return [(config, seed, size) for seed, size in zip(seeds, sizes, strict=True)]


def is_first_jobs(done: Any, config: TrainConfig) -> bool:
    """Whether ``done`` (saved by an interrupted collection) is the first jobs of the
    run's collection, with some left to collect."""
    return (
        done.meta == collection_meta(config, complete=False)
        and len(done) % IMITATION_CHUNK == 0
        and len(done) < config.imitate_decisions
    )


def demonstrations(config: TrainConfig, progress: Any = None, done: Any = None) -> Any:
    """The teacher's decisions for the warm start, collected in fixed-size jobs (one
    child seed each), on ``n_envs`` worker processes with ``--vec-env subproc``.
    ``done``: the decisions of the first jobs, saved by an interrupted collection (a
    whole number of jobs); only the rest are collected. Ctrl-C raises
    :class:`CollectionInterrupted` holding every job finished (workers ignore it)."""
    import multiprocessing as mp

    from agents.imitation import Demonstrations

    jobs = collection_jobs(config)
    parts = [done] if done is not None and len(done) else []
    todo = jobs[len(done) // IMITATION_CHUNK :] if parts else jobs
    if progress and parts:
        progress(len(done))
    workers = min(config.n_envs, len(todo), os.cpu_count() or 1) if config.vec != "dummy" else 1
    try:
        if workers <= 1:
            for job in todo:
                parts.append(_collect_chunk(job))
                if progress:
                    progress(job[2])
        else:
            with mp.get_context().Pool(workers, initializer=_ignore_interrupts) as pool:
                for part in pool.imap(_collect_chunk, todo):
                    parts.append(part)
                    if progress:
                        progress(len(part))
    except KeyboardInterrupt:
        raise CollectionInterrupted(Demonstrations.concat(parts) if parts else None) from None
    demos = Demonstrations.concat(parts)
    demos.meta = collection_meta(config, complete=True)
    return demos


def save_demonstrations(demos: Any, path: Path) -> None:
    """Write demonstrations as a compressed ``.npz``, atomically."""
    buf = io.BytesIO()
    np.savez_compressed(buf, **demos.arrays())
    atomic_write(path, buf.getvalue())


def read_demonstrations(path: str | Path) -> Any:
    """A demonstrations file, never unpickled; ``ValueError`` naming it if damaged."""
    from agents.imitation import Demonstrations

    try:
        return Demonstrations.load(path)
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise ValueError(f"cannot read demonstrations {path}: {type(e).__name__}: {e}") from None


def table_differences(theirs: Any, ours: dict[str, Any]) -> list[str]:
    """How a stored table differs from the run's (rules options stored in both)."""
    if not isinstance(theirs, dict) or not isinstance(theirs.get("rules"), dict):
        return ["its table is not recorded in a form this train.py reads"]
    out = [] if theirs.get("players") == ours["players"] else [f"players={theirs.get('players')!r}"]
    rules = theirs["rules"]
    out += [f"{k}={rules[k]!r}" for k, v in ours["rules"].items() if k in rules and rules[k] != v]
    return out


def load_demonstrations(paths: str, config: TrainConfig) -> Any:
    """Demonstrations saved by earlier runs (``--imitate-from``, comma-separated files,
    fitted together), each checked to fit the run (see ``Demonstrations.check``) and,
    where recorded, to come from the run's table; ``ValueError`` names the file."""
    from agents.imitation import Demonstrations

    obs_size, num_actions = observation_shape(config)
    ours = table_of(config)
    parts = []
    for path in filter(None, (p.strip() for p in paths.split(","))):
        demos = read_demonstrations(path)
        try:
            demos.check(obs_size, num_actions)
        except ValueError as e:
            raise ValueError(f"demonstrations {path} do not fit this run: {e}") from None
        if demos.meta is not None:
            different = table_differences(demos.meta.get("table"), ours)
            if different:
                raise ValueError(
                    f"demonstrations {path} were collected at another table than this run's "
                    f"({config.rules}, {config.players} players): {', '.join(different)}"
                )
        parts.append(demos)
    if not parts:
        raise ValueError(f"imitate_from={paths!r} names no file")
    demos = Demonstrations.concat(parts)
    demos.meta = {"table": ours, "from": paths, "complete": True}
    return demos
