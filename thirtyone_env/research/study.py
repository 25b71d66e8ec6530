"""Running an oracle study: its jobs on worker processes, as one tidy table.

The jobs (:func:`~thirtyone_env.research.labelling.label_job`) are fixed by the
study's seed and decision count; they run in order on ``workers`` processes and are
put together in job order, so the table is the same, byte for byte, on any worker
count. ``done`` holds jobs finished by an earlier, interrupted run (a results folder
keeps each finished job, :mod:`~thirtyone_env.research.folder`): only the rest run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from thirtyone_env.harness.parallel import Backend, ordered_map
from thirtyone_env.research.config import StudyConfig
from thirtyone_env.research.labelling import COLUMNS, label_job


def _job(args: tuple[StudyConfig, int, int, Callable[[str], Any]]) -> tuple[int, list[tuple]]:
    config, job, size, make_player = args
    return job, label_job(config, job, size, make_player)


def run_jobs(
    config: StudyConfig,
    make_player: Callable[[str], Any],
    *,
    done: dict[int, list[tuple]] | None = None,
    on_job: Callable[[int, list[tuple]], None] | None = None,
    progress: Callable[[int], None] | None = None,
    backend: Backend | None = None,
) -> list[tuple]:
    """Every row of the study (:data:`~thirtyone_env.research.labelling.COLUMNS`), in
    job order. ``make_player(spec)`` builds a player (a module-level function, so worker
    processes can use it, e.g. ``agents.from_spec``); ``on_job(k, rows)`` sees each job
    as it finishes, ``progress(d)`` the decisions it measured. ``backend``: where the
    jobs run (default: ``config.workers`` local processes; or a Ray cluster,
    :mod:`~thirtyone_env.harness.parallel`)."""
    parts: dict[int, list[tuple]] = dict(done or {})
    sizes = config.jobs
    if progress is not None and parts:
        progress(sum(sizes[k] for k in parts))
    todo = [(config, k, size, make_player) for k, size in enumerate(sizes) if k not in parts]

    def finished(k: int, rows: list[tuple]) -> None:
        parts[k] = rows
        if on_job is not None:
            on_job(k, rows)
        if progress is not None:
            progress(sizes[k])

    if backend is None or backend.kind == "local":
        backend = Backend("local", max(1, min(config.workers, len(todo))))
    for k, rows in ordered_map(_job, todo, backend):
        finished(k, rows)
    return [row for k in range(len(sizes)) for row in parts[k]]


def study_frame(rows: list[tuple]) -> Any:
    """The study's rows as a pandas DataFrame with :data:`COLUMNS`."""
    import pandas as pd

    return pd.DataFrame(rows, columns=list(COLUMNS))


def run_study(config: StudyConfig, make_player: Callable[[str], Any], **kwargs: Any) -> Any:
    """The study's table (a pandas DataFrame, :data:`COLUMNS`): :func:`run_jobs` in a frame."""
    return study_frame(run_jobs(config, make_player, **kwargs))
