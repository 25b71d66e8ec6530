"""A study's results folder: written atomically, locked while in use, resumable.

Layout: ``study.json`` (what the study is, written first), ``jobs/job_NNNNNN.csv``
(each finished job, while the study runs), then ``decisions.csv`` (the table),
the plots and ``summary.json``, written last: a folder with a ``summary.json`` holds
one whole study, and is never written again. A folder with a ``study.json`` and no
``summary.json`` is an interrupted study: running the same study there again goes on
from its finished jobs; another study is refused, naming what differs. A folder
holding anything else is refused. Every file is written with
:func:`~thirtyone_env.harness.files.atomic_write`.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from pathlib import Path
from typing import Any

from thirtyone_env.harness.files import FolderLock, atomic_write, check_writable_dir, json_text, json_value
from thirtyone_env.harness.report import check_not_inside_a_run
from thirtyone_env.research.config import StudyConfig
from thirtyone_env.research.labelling import COLUMNS, GAMES_PER_JOB

STUDY = "study.json"
SUMMARY = "summary.json"
TABLE = "decisions.csv"
JOBS = "jobs"
PLOTS = ("break_even.png", "gain_curve.png", "switches.png")
#: Every name a study folder of ours holds (the lock and atomic temporaries aside).
FILES = frozenset({STUDY, SUMMARY, TABLE, JOBS, FolderLock.NAME, *PLOTS})
#: How each column is read back from CSV.
_TYPES: dict[str, Any] = {
    "player": str,
    "question": str,
    "own": str,
    "baseline": str,
    "alternative": str,
    "chosen": lambda x: {"True": True, "False": False}[x],
    "value": float,
    "gain": float,
    "se": float,
    "regret": float,
    "score": lambda x: float(x) if "." in x else int(x),
}


def _ours(name: str) -> bool:
    return name in FILES or (name.startswith(".") and name.endswith(".tmp"))


def check_folder(out: Path, config: StudyConfig) -> dict[int, list[tuple]]:
    """``ValueError`` unless the study can be written to ``out``; the finished jobs of an
    interrupted run of this very study there (empty for a new folder)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file, not a results folder: refusing to replace it")
    check_writable_dir(out, "--out")
    check_not_inside_a_run(out)
    if not out.exists():
        return {}
    foreign = sorted(p.name for p in out.iterdir() if not _ours(p.name))
    if foreign:
        raise ValueError(
            f"--out {out} exists and is not a study folder (it holds {foreign[0]!r}): refusing to use it"
        )
    if (out / SUMMARY).exists():
        raise ValueError(f"--out {out} holds a finished study: refusing to replace it (give another --out)")
    if not (out / STUDY).exists():
        return {}
    try:
        theirs = json_value((out / STUDY).read_text())["study"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"--out {out}: cannot read its {STUDY} ({type(e).__name__}: {e})") from None
    ours = config.study_dict()
    if theirs != ours:
        keys = sorted(set(theirs) | set(ours)) if isinstance(theirs, dict) else sorted(ours)
        diff = [k for k in keys if not isinstance(theirs, dict) or theirs.get(k) != ours.get(k)]
        raise ValueError(
            f"--out {out} holds an interrupted study with other options ({', '.join(diff)}): "
            "run that study again to finish it, or give another --out"
        )
    return read_jobs(out, config)


def read_jobs(out: Path, config: StudyConfig) -> dict[int, list[tuple]]:
    """The finished jobs kept in ``out/jobs`` (a damaged one is refused, naming it)."""
    found: dict[int, list[tuple]] = {}
    sizes = config.jobs
    for path in sorted((Path(out) / JOBS).glob("job_*.csv")):
        try:
            if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_JOB_BYTES:
                raise ValueError("not a job this study wrote (a link, not a file, or too large)")
            k = int(path.stem[4:])
            rows = read_rows(path.read_text())
            if not 0 <= k < len(sizes) or not rows:
                raise ValueError("not a finished job of this study")
            _check_rows(rows, config, k)
        except (OSError, ValueError) as e:
            raise ValueError(f"cannot read the finished job {path}: {e}") from None
        found[k] = rows
    return found


def start(out: Path, config: StudyConfig) -> None:
    """Write ``study.json`` (once: a resumed study keeps it)."""
    if not (Path(out) / STUDY).exists():
        atomic_write(Path(out) / STUDY, json.dumps({"study": config.study_dict()}, indent=2) + "\n")


def save_job(out: Path, k: int, rows: list[tuple]) -> None:
    """Keep a finished job."""
    atomic_write(Path(out) / JOBS / f"job_{k:06d}.csv", write_rows(rows))


def finish(out: Path, rows: list[tuple], summary: dict[str, Any]) -> None:
    """Write the table and ``summary.json`` (last), then drop the kept jobs."""
    atomic_write(Path(out) / TABLE, write_rows(rows))
    atomic_write(Path(out) / SUMMARY, json_text(summary, indent=2))
    jobs = Path(out) / JOBS
    if jobs.is_dir():
        for path in jobs.glob("job_*.csv"):
            path.unlink()
        jobs.rmdir()


def write_rows(rows: list[tuple]) -> str:
    """Rows as CSV with a header (floats as Python writes them, so they read back exactly)."""
    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    w.writerows(rows)
    return buf.getvalue()


#: A kept job's largest file (a job of 100,000 decisions' rows is some tens of MB).
MAX_JOB_BYTES = 256 << 20


#: Largest magnitude of a study row's number (a brag hand's value is in the thousands).
MAX_ROW_NUMBER = 1e6
#: An option's name in a row (``wait``, ``switch:c``, an action's name such as ``discard Th``).
LABEL = re.compile(r"[A-Za-z0-9_: ]{1,40}")


def _check_rows(rows: list[tuple], config: StudyConfig, job: int) -> None:
    """``ValueError`` for a row job ``job`` of this study could not have written: another
    question, player or seat, a game outside the job's, a number that is not finite or
    beyond any game's, a negative error, another number of play-outs, an option that is
    no option's name, a row twice, not the job's number of decisions."""
    first = job * GAMES_PER_JOB
    col = {c: i for i, c in enumerate(COLUMNS)}
    player = config.table[config.seat]
    for row in rows:
        if row[col["question"]] != config.question or row[col["player"]] != player:
            raise ValueError(f"a row of another study ({row[col['question']]!r}, {row[col['player']]!r})")
        if row[col["seat"]] != config.seat or not first <= row[col["game"]] < first + GAMES_PER_JOB:
            raise ValueError(
                f"a row of another seat or job (seat {row[col['seat']]}, game {row[col['game']]})"
            )
        if not all(math.isfinite(x) and abs(x) <= MAX_ROW_NUMBER for x in row if isinstance(x, float)):
            raise ValueError("a row holding a number that is not finite, or beyond any game's")
        if row[col["turn"]] < 0 or row[col["se"]] < 0 or row[col["rollouts"]] != config.rollouts:
            raise ValueError("a row with a negative turn or error, or another number of play-outs")
        labels = [row[col[c]] for c in ("own", "baseline", "alternative")]
        if not all(LABEL.fullmatch(x) for x in labels):
            raise ValueError(f"a row whose options {labels} are no options' names")
    if len(set(rows)) != len(rows):
        raise ValueError("a row given twice")
    decisions = len({(row[col["game"]], row[col["round"]], row[col["turn"]]) for row in rows})
    if decisions != config.jobs[job]:
        raise ValueError(f"it holds {decisions} decisions, not the job's {config.jobs[job]}")


def read_rows(text: str) -> list[tuple]:
    """Rows written by :func:`write_rows`; ``ValueError`` if the text is not such a table."""
    try:
        lines = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as e:  # a NUL byte, a field over csv's limit
        raise ValueError(f"it is not a CSV table ({e})") from None
    if not lines or tuple(lines[0]) != COLUMNS:
        raise ValueError(f"its header is not {','.join(COLUMNS)}")
    types = [_TYPES.get(c, int) for c in COLUMNS]
    out = []
    for line in lines[1:]:
        if len(line) != len(COLUMNS):
            raise ValueError(f"a row has {len(line)} fields, not {len(COLUMNS)}")
        try:
            out.append(tuple(t(x) for t, x in zip(types, line, strict=True)))
        except KeyError as e:  # (chosen: only True or False)
            raise ValueError(f"a row's 'chosen' is {e}, not True or False") from None
    return out
