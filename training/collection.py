"""The imitation warm start's demonstrations: the teacher's decisions collected in
fixed-size jobs (each with its own seed of the run's seeding scheme, so the data is
the same on any worker count), saved as ``.npz`` files that are never unpickled, and
loaded back (``--imitate-from``, a run started again) only when they fit the run's
observation, actions and table."""

from __future__ import annotations

import dataclasses
import io
import json
import math
import os
import sys
import time
import zipfile
import zlib
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np

from agents import portable
from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.files import atomic_write
from thirtyone_env.harness.parallel import ordered_map
from training.config import TrainConfig
from training.envs import make_env_fn, observation_shape

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


def local_specs(specs: list[str], make_player: Any) -> list[str]:
    """``specs`` as a collection job on this machine names them: a portable reader
    (:mod:`agents.portable`) has written their files here too."""
    local = getattr(make_player, "local_spec", None)
    return [local(s) for s in specs] if callable(local) else list(specs)


def job_env(config: TrainConfig, make_player: Any) -> tuple[TrainConfig, Any]:
    """A collection job's config (its opponents' files where this machine has them) and
    the env of its seat."""
    config = dataclasses.replace(config, opponents=",".join(local_specs(config.opponent_specs, make_player)))
    return config, make_env_fn(config, -1)()


def _collect_chunk(job: tuple[TrainConfig, int, int, Any, float]) -> Any:
    """One collection job (module level so worker processes and Ray can run it): the
    run's players built by ``make_player``, which carries their files to other machines."""
    from training.imitation import collect

    config, seed, size, make_player, stop_at = job
    config, env = job_env(config, make_player)
    behaviour = make_player(config.imitate_behaviour) if config.imitate_behaviour else None
    return collect(
        env,
        make_player(config.imitate),
        size,
        config.gamma,
        seed,
        behaviour=behaviour,
        knock_rollouts=config.imitate_knock_rollouts,
        continuation=config.imitate_continuation,
        objective=config.imitate_knock_objective,
        stop_at=stop_at,
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
                # new keys only where they apply: a collection interrupted before they
                # existed goes on where it still means the same
                **(
                    {"objective": config.imitate_knock_objective}
                    if config.imitate_knock_objective != "lives"
                    else {}
                ),
                # play-outs on a shuffled stock since 2026-12-01: one measured on the
                # stock's true order is not continued with them
                **({"stock": "shuffled"} if config.imitate_knock_rollouts else {}),
                # knocks measured in batches since 2026-12-02 (training.imitation.KNOCK_BATCH):
                # players that draw from a generator draw in another order than one by one
                **({"measured": "batched"} if config.imitate_knock_rollouts else {}),
                "gamma": config.gamma,
                "seed": config.seed,
                "decisions": config.imitate_decisions,
                "chunk": IMITATION_CHUNK,
                "complete": complete,
            }
        )
    )


def collection_deadline(config: TrainConfig, reserve: float = 0.0) -> float:
    """When a collection stops taking jobs (``time.monotonic()``): ``time_limit``
    seconds from now less the ``reserve`` kept for the fit after it, the jobs finished
    by then kept (at least one); never without a time limit."""
    return time.monotonic() + config.time_limit - reserve if config.time_limit else math.inf


def wall_clock(deadline: float) -> float:
    """A ``time.monotonic()`` deadline as ``time.time()``, which a job in another
    process reads: the jobs running at the deadline stop after their episode."""
    return time.time() + deadline - time.monotonic() if math.isfinite(deadline) else math.inf


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


def demonstrations(config: TrainConfig, progress: Any = None, done: Any = None, reserve: float = 0.0) -> Any:
    """The teacher's decisions for the warm start, collected in fixed-size jobs (one
    child seed each) on the run's backend (:meth:`TrainConfig.backend`: local
    processes, one with ``--vec dummy``, or Ray, where the players' files travel by
    content). ``done``: the decisions of the first jobs, saved by an interrupted
    collection (a whole number of jobs); only the rest are collected. With a time
    limit, collecting stops ``reserve`` seconds before it (the fit's time). Ctrl-C raises
    :class:`CollectionInterrupted` holding every job finished (workers ignore it)."""
    from training.imitation import Demonstrations

    jobs = collection_jobs(config)
    parts = [done] if done is not None and len(done) else []
    todo = jobs[len(done) // IMITATION_CHUNK :] if parts else jobs
    if progress and parts:
        progress(len(done))
    auto = 1 if config.vec == "dummy" else min(config.n_envs, os.cpu_count() or 1)
    backend = config.backend(len(todo), auto)
    specs = [config.imitate, config.imitate_behaviour, *config.opponent_specs]
    make_player = portable.reader([s for s in specs if s], backend)
    deadline = collection_deadline(config, reserve)
    stop_at = wall_clock(deadline)
    try:
        with closing(
            ordered_map(_collect_chunk, [(*job, make_player, stop_at) for job in todo], backend)
        ) as played:
            for part in played:
                parts.append(part)
                if progress:
                    progress(len(part))
                if time.monotonic() > deadline:
                    print(f"imitation: time is up after {sum(map(len, parts)):,} decisions", flush=True)
                    break
    except KeyboardInterrupt:
        raise CollectionInterrupted(Demonstrations.concat(parts) if parts else None) from None
    demos = Demonstrations.concat(parts)
    demos.meta = collection_meta(config, complete=True)
    return demos


def collect_in_jobs(
    config: TrainConfig, total: int, job: Callable[..., Any], specs: list[str], desc: str, progress: bool
) -> Any:
    """``total`` decisions played by ``job`` (module level: ``job((config, seed, size,
    make_player, stop_at))`` returns :class:`~training.imitation.Demonstrations`) in jobs of
    ``IMITATION_CHUNK`` with one child seed each (the same data on any worker count), on
    the run's backend; ``specs``: the players the jobs build; a bar with ``progress``."""
    from training.imitation import Demonstrations

    sizes = [min(IMITATION_CHUNK, total - i) for i in range(0, total, IMITATION_CHUNK)]
    jobs = list(zip(config.seeds.collection(len(sizes)), sizes, strict=True))
    auto = 1 if config.vec == "dummy" else min(config.n_envs, len(jobs))
    backend = config.backend(len(jobs), auto)
    make_player = portable.reader(specs, backend)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=total, unit="decision", unit_scale=True, desc=desc)
    parts = []
    deadline = collection_deadline(config)
    stop_at = wall_clock(deadline)
    try:
        with closing(
            ordered_map(job, [(config, s, n, make_player, stop_at) for s, n in jobs], backend)
        ) as played:
            for part, size in zip(played, sizes, strict=False):
                parts.append(part)  # a job may keep fewer than it played (--heads-up-others)
                if bar:
                    bar.update(size)
                if time.monotonic() > deadline:
                    print(f"\n{desc}: time is up after {len(parts)} of {len(jobs)} jobs", flush=True)
                    break
    finally:
        if bar:
            bar.close()
    return Demonstrations.concat(parts)


def step_meta(config: TrainConfig, **own: Any) -> dict[str, Any]:
    """What a pre-PPO step's collection is (the table, the model it starts from, its
    opponents, seed and job size, and the step's ``own`` settings): saved with it and
    compared when the run starts again."""
    return {
        "table": table_of(config),
        "model": config.init_from,
        "opponents": config.opponents,
        "league": config.league,
        "seed": config.seed,
        "chunk": IMITATION_CHUNK,
        **own,
    }


def saved_or_collected(path: Path, meta: dict[str, Any], collect: Callable[[], Any], step: str) -> Any:
    """A pre-PPO step's decisions: those saved at ``path`` by an earlier start of the
    run (``ValueError`` if they are another collection than ``meta``), else
    ``collect()``'s, saved there before they are used."""
    if path.exists():
        demos = read_demonstrations(path)
        if demos.meta != meta:
            raise ValueError(f"{path} holds another collection than this run's {step}: remove it")
        print(f"{step}: fitting the {len(demos):,} decisions saved in {path}", flush=True)
        return demos
    try:
        demos = collect()
    except KeyboardInterrupt:
        print(f"\ninterrupted while playing the {step}", file=sys.stderr)
        raise
    save_demonstrations(demos, path)
    return demos


def save_demonstrations(demos: Any, path: Path) -> None:
    """Write demonstrations as a compressed ``.npz``, atomically."""
    buf = io.BytesIO()
    np.savez_compressed(buf, **demos.arrays())
    atomic_write(path, buf.getvalue())


def read_demonstrations(path: str | Path) -> Any:
    """A demonstrations file, never unpickled; ``ValueError`` naming it if damaged."""
    from training.imitation import Demonstrations

    try:
        return Demonstrations.load(path)
    except (
        OSError,
        KeyError,
        ValueError,
        EOFError,
        zipfile.BadZipFile,
        zlib.error,
        NotImplementedError,
        RuntimeError,
    ) as e:
        # zlib.error: a damaged member; NotImplementedError: an unknown compression
        # method; RuntimeError: an encrypted member
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
    from training.imitation import Demonstrations

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
