"""Tournament output: the terminal table (rich) and the results folder.

The folder holds ``results.json`` (configuration, per-player statistics with 95%
intervals, paired differences in win rate and lives per round, OpenSkill leaderboard),
``games.csv`` (one row per round per player) and three PNG plots. Every file is
written atomically and ``results.json`` last, so a folder with a ``results.json``
holds one whole result; files keep the user's umask.

Needs the ``eval`` extra: rich, matplotlib, openskill.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from thirtyone_env.harness.evaluation import (
    MAX_TURN_BIN,
    ROW_FIELDS,
    STATS,
    GameOutcome,
    TournamentConfig,
    config_dict,
    lost_label,
    player_labels,
)
from thirtyone_env.harness.files import (
    FolderLock,
    atomic_write,
    check_writable_dir,
    json_text,
    json_value,
    make_dir,
)

PLOTS = ("knock_values.png", "knock_success.png", "suit_switches_by_turn.png")


def write_results(
    out_dir: Path,
    config: TournamentConfig,
    games: list[GameOutcome],
    summary: dict[str, Any],
    extra: dict[str, Any],
) -> Path:
    """Write the results folder; returns its path. Every file is written atomically with
    the user's umask, ``results.json`` last (an earlier one is removed first), so a
    folder with a ``results.json`` always holds one whole result. The caller holds the
    folder's :class:`~thirtyone_env.harness.files.FolderLock` for the run."""
    out_dir = Path(out_dir)
    check_out_dir(out_dir)
    make_dir(out_dir)
    (out_dir / "results.json").unlink(missing_ok=True)
    rows = io.StringIO(newline="")
    w = csv.writer(rows)
    w.writerow((*ROW_FIELDS[:4], "player_spec", *ROW_FIELDS[4:]))
    for g in games:
        for row in g.rows:
            w.writerow((*row[:4], config.players[row[4]], *row[4:]))
    atomic_write(out_dir / "games.csv", rows.getvalue())
    write_plots(out_dir, config, games)
    payload = {"config": config_dict(config), "players": summary, **extra}
    atomic_write(out_dir / "results.json", json_text(payload, indent=2))
    return out_dir


#: Every name a results folder of ours holds (with the run's lock and the atomic
#: writer's temporary files): a folder holding only these may be written again.
#: (``gauntlet.md`` and ``gauntlet.png``: what ``evaluate.py --gauntlet`` writes beside them;
#: ``tournament.json`` and ``partial/``: a running tournament's configuration and finished work units)
RESULT_FILES = frozenset(
    {
        "results.json",
        "games.csv",
        "gauntlet.md",
        "gauntlet.png",
        "tournament.json",
        "partial",
        "exploit.json",
        "exploit.md",
        "exploit.png",
        "run",
        "parts",
        "card.md",
        "card.png",
        "card.json",
        "exploit_run.json",
        "card_run.json",
        FolderLock.NAME,
        *PLOTS,
    }
)


#: The runs that write a results folder: per kind, the file naming an unfinished run's
#: options (``None``: the kind does not resume), the folders of its unfinished work and
#: the file of its finished results (written last). One folder holds one run.
RUN_KINDS: dict[str, tuple[str | None, tuple[str, ...], str]] = {
    "tournament": ("tournament.json", ("partial",), "results.json"),
    "gauntlet": (None, (), "results.json"),
    "exploit": ("exploit_run.json", ("run",), "exploit.json"),
    "card": ("card_run.json", ("parts", "run"), "card.json"),
}


def check_out_dir(out_dir: Path, kind: str = "tournament") -> None:
    """Raise ``ValueError`` unless a ``kind`` run (:data:`RUN_KINDS`) can write its
    results to ``out_dir``: a writable place for a new folder, or a folder holding
    nothing but the files of an interrupted run of that kind. Finished results of any
    run are never replaced, and another kind's unfinished run is never mixed in: two
    runs never write one folder (:func:`claim_run` then tells whether an unfinished run
    of the same kind is this one)."""
    out_dir = Path(out_dir)
    try:
        is_file = out_dir.is_file()
    except OSError:  # a name too long: check_writable_dir names it
        is_file = False
    if is_file:
        raise ValueError(f"--out {out_dir} is not a results folder but a file: refusing to replace it")
    check_writable_dir(out_dir, "--out")
    check_not_inside_a_run(out_dir)
    if not out_dir.exists():
        return
    entries = [p.name for p in out_dir.iterdir()]
    foreign = [n for n in entries if not _ours(n)]
    if foreign:
        raise ValueError(
            f"--out {out_dir} exists and is not a results folder (it holds {foreign[0]!r}): "
            "refusing to replace it"
        )
    for other, (_, _, finished) in RUN_KINDS.items():
        if (out_dir / finished).exists():
            what = "tournament or gauntlet" if finished == "results.json" else other
            raise ValueError(
                f"--out {out_dir} holds the results of an earlier run (an earlier {what}'s {finished}): "
                "refusing to replace them (give another --out, or remove that folder)"
            )
    marker, state, _ = RUN_KINDS[kind]
    mine = {marker, *state} - {None}
    for other, (their_marker, their_state, _) in RUN_KINDS.items():
        theirs = [n for n in (their_marker, *their_state) if n is not None and n not in mine]
        held = [n for n in theirs if (out_dir / n).exists()]
        if other != kind and held:
            raise ValueError(
                f"--out {out_dir} holds an interrupted {other} run ({held[0]}), not {_a(kind)}: "
                "finish that one with its own command, or give another --out"
            )
    if entries and FolderLock.NAME not in entries:  # every run of ours locks its folder first
        raise ValueError(
            f"--out {out_dir} holds {sorted(entries)[0]!r}, which no run of this program wrote (its folders "
            f"hold a {FolderLock.NAME} file): refusing to replace it"
        )


def _a(noun: str) -> str:
    return f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}"


#: The files that say a folder is a run's (its finished results or its options).
_RUN_MARKS = tuple(
    sorted({name for marker, _, finished in RUN_KINDS.values() for name in (marker, finished) if name})
)


#: Files that, beside a run's lock, mark a folder as a run of the layers above the
#: harness (which it does not import): a study's (``research.folder.STUDY``), a
#: training run's (``training.run_folder.CONFIG``), a recipe run's
#: (``training.recipe_run.RECIPE_FILE``), a sweep's (``training.sweep.SWEEP``).
LOCKED_RUN_MARKS = ("study.json", "config.json", "recipe.toml", "sweep.json")


def check_not_inside_a_run(folder: Path, what: str = "--out") -> None:
    """``ValueError`` where a folder above ``folder`` (the option ``what``) is a run's
    folder: its results (:data:`RUN_KINDS`), or the lock every run of this program
    leaves in its folder beside a file of a study or a training run
    (:data:`LOCKED_RUN_MARKS`). A run never writes inside another's."""
    for parent in Path(os.path.abspath(folder)).parents:
        marks = [m for m in _RUN_MARKS if (parent / m).is_file()]
        if (parent / FolderLock.NAME).is_file():
            marks += [m for m in LOCKED_RUN_MARKS if (parent / m).is_file()]
        if marks:
            raise ValueError(
                f"{what} {folder} lies inside the folder of another run ({parent}, which holds "
                f"{marks[0]}): give a folder outside it"
            )


def check_run(out_dir: Path, kind: str, options: dict[str, Any]) -> bool:
    """Whether ``out_dir`` (checked by :func:`check_out_dir`) holds an interrupted
    ``kind`` run of these ``options`` (plain JSON values) to go on with; nothing is
    written. An unfinished run of other options, or one whose options are not
    recorded, is refused (``ValueError`` naming the options that differ): its work is
    never mixed into another run's results."""
    out_dir = Path(out_dir)
    marker_name, state, _ = RUN_KINDS[kind]
    assert marker_name is not None, f"a {kind} run does not resume"
    marker = out_dir / marker_name
    if marker.exists():
        try:
            theirs = json_value(marker.read_bytes())
        except (OSError, ValueError) as e:
            raise ValueError(f"--out {out_dir}: cannot read its {marker_name} ({e})") from None
        want = json.loads(json.dumps(options))
        if theirs != want:
            keys = set(theirs) | set(want) if isinstance(theirs, dict) else set(want)
            diff = sorted(k for k in keys if not isinstance(theirs, dict) or theirs.get(k) != want.get(k))
            raise ValueError(
                f"--out {out_dir} holds an interrupted {kind} with other options ({', '.join(diff)}): "
                "run that one again to finish it, or give another --out"
            )
        return True
    held = [n for n in state if (out_dir / n).exists()]
    if held:
        raise ValueError(
            f"--out {out_dir} holds unfinished work ({held[0]}) of {_a(kind)} whose options are not "
            "recorded: give another --out, or remove that folder"
        )
    return False


def unfinished_work(out_dir: Path, kind: str) -> bool:
    """Whether ``out_dir`` holds any unfinished work of a ``kind`` run (a part or a
    step it kept); where it holds none, a stopped run forgets its options
    (:func:`forget_run`) and leaves nothing behind that would refuse another."""
    for name in RUN_KINDS[kind][1]:
        folder = Path(out_dir) / name
        if folder.is_dir() and any(folder.iterdir()):
            return True
    return False


def forget_run(out_dir: Path, kind: str) -> None:
    """Remove a stopped ``kind`` run's options and empty work folders from ``out_dir``
    where it kept no work (:func:`unfinished_work`)."""
    if unfinished_work(out_dir, kind):
        return
    for name in RUN_KINDS[kind][1]:
        folder = Path(out_dir) / name
        if folder.is_dir():
            folder.rmdir()
    marker = RUN_KINDS[kind][0]
    if marker is not None:
        (Path(out_dir) / marker).unlink(missing_ok=True)


def claim_run(out_dir: Path, kind: str, options: dict[str, Any]) -> bool:
    """:func:`check_run`, then, for a new run, its options written into the folder
    (locked by the caller) first, so that whoever finds the run unfinished knows it:
    ``True`` where an interrupted run of these options is gone on with."""
    if check_run(out_dir, kind, options):
        return True
    make_dir(Path(out_dir))
    atomic_write(
        Path(out_dir) / RUN_KINDS[kind][0], json.dumps(json.loads(json.dumps(options)), indent=2) + "\n"
    )
    return False


def new_results_dir(
    parent: Path, name: str, kind: str | None = None, options: dict[str, Any] | None = None
) -> Path:
    """``parent/name``, or ``name-2``, ``name-3``, ... where it exists: a default results
    folder never lands on an earlier run's. Given a ``kind`` that resumes and its
    ``options``, the first of them holding an interrupted run of these options instead
    (:func:`check_run`): the same command goes on with it."""
    path, k = parent / name, 1
    while path.exists() or path.is_symlink():
        if kind is not None and RUN_KINDS[kind][0] is not None and options is not None:
            try:
                check_out_dir(path, kind)
                if check_run(path, kind, options):
                    return path
            except (ValueError, OSError):
                pass  # another run's: the next name
        k += 1
        path = parent / f"{name}-{k}"
    return path


def _ours(name: str) -> bool:
    """A file name a results folder of ours holds (a temporary one included)."""
    return name in RESULT_FILES or (
        name.endswith(".tmp") and any(name.startswith(f".{n}.") for n in RESULT_FILES)
    )


def default_out_name(rules: str, players: tuple[str, ...] | list[str], seed: int) -> str:
    """The default results folder name: ``<rules>-<players>-s<seed>`` made of plain
    characters only (a path separator in a spec never makes subfolders), at most
    :data:`MAX_DEFAULT_NAME` characters; where characters were replaced or the name cut,
    a short hash of the full name keeps different tournaments apart."""
    full = f"{rules}-{'_'.join(players)}-s{seed}"
    plain = re.sub(r"[^A-Za-z0-9._=+-]+", "-", full.replace(":", "-"))
    if plain == full.replace(":", "-") and len(plain) <= MAX_DEFAULT_NAME:
        return plain
    digest = hashlib.sha256(full.encode()).hexdigest()[:10]
    keep = MAX_DEFAULT_NAME - len(digest) - len(f"-s{seed}") - 2
    head = plain[: max(keep, 1)].rstrip("-.")
    return f"{head}-{digest}-s{seed}"


#: Longest default results folder name (characters); any file system takes 255 bytes.
MAX_DEFAULT_NAME = 120


def write_plots(folder: Path, config: TournamentConfig, games: list[GameOutcome]) -> None:
    """The three PNG plots of :data:`PLOTS`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = player_labels(config)
    n = config.num_players
    knock_vals: list[list[float]] = [[] for _ in range(n)]
    knock_ok: list[list[bool]] = [[] for _ in range(n)]
    draws = np.zeros((n, MAX_TURN_BIN))
    switches = np.zeros((n, MAX_TURN_BIN))
    for g in games:
        for row in g.rows:
            if row[12]:
                knock_vals[row[4]].append(row[13])
                knock_ok[row[4]].append(bool(row[15]))
        draws += np.asarray(g.draws_by_turn)
        switches += np.asarray(g.switches_by_turn)

    values = [v for vals in knock_vals for v in vals]
    bins, unit = _value_bins(values)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for i in range(n):
        if knock_vals[i]:
            ax.hist(knock_vals[i], bins=bins, histtype="step", density=True, linewidth=1.8, label=labels[i])
    ax.set(xlabel=f"{unit} at the knock", ylabel="share of the player's knocks", title="Knock values")
    _legend(ax, "no knocks")
    fig.tight_layout()
    _save_png(fig, folder / PLOTS[0])

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for i in range(n):
        v = np.asarray(knock_vals[i], dtype=float)
        ok = np.asarray(knock_ok[i], dtype=bool)
        which = np.digitize(v, bins) - 1
        xs, ys = [], []
        for b in range(len(bins) - 1):
            sel = which == b
            if sel.sum() >= 20:
                xs.append((bins[b] + bins[b + 1]) / 2)
                ys.append(ok[sel].mean())
        if xs:
            ax.plot(xs, ys, marker="o", label=labels[i])
    ax.set(
        xlabel=f"{unit} at the knock",
        ylabel="knock success (lost no life)",
        title="Knock success by hand value (values with at least 20 knocks)",
        ylim=(0, 1.02),
    )
    _legend(ax, "fewer than 20 knocks at every value")
    fig.tight_layout()
    _save_png(fig, folder / PLOTS[1])

    fig, ax = plt.subplots(figsize=(8, 4.5))
    turns = np.arange(1, MAX_TURN_BIN + 1)
    for i in range(n):
        keep = draws[i] >= 20
        if keep.any():
            ax.plot(turns[keep], switches[i][keep] / draws[i][keep], marker=".", label=labels[i])
    ax.set(
        xlabel="own turn number in the round",
        ylabel="suit switches per draw turn",
        title="Suit switches by turn (turns with at least 20 draws)",
    )
    _legend(ax, "fewer than 20 draws at every turn")
    fig.tight_layout()
    _save_png(fig, folder / PLOTS[2])


def _value_bins(values: list[float]) -> tuple[np.ndarray, str]:
    """Histogram bins for knock values and the axis's name: one bin per point of the
    0-31 scale, or (Brag ranking, whose hand ranks run into the thousands) 30 equal
    bins over the ranks seen."""
    if not values or max(values) <= 31:
        return np.arange(0, 33) - 0.5, "hand value"
    low, high = min(values), max(values)
    return np.linspace(low, high + 1, 31), "hand rank (Brag)"


def _legend(ax: Any, empty: str) -> None:
    """A legend of the plotted players, or a note saying why nothing is plotted (an
    empty legend is a matplotlib warning, and an empty plot without a word puzzles)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend()
    else:
        ax.text(0.5, 0.5, empty, ha="center", va="center", transform=ax.transAxes)


def _save_png(fig: Any, path: Path) -> None:
    """Save a figure as PNG atomically (umask kept) and close it."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    atomic_write(path, buf.getvalue())


def _fmt(stat: list[float], pct: bool) -> str:
    v, lo, hi = stat
    if np.isnan(v):
        return "-"
    if pct:
        return f"{v:.1%} ±{(hi - lo) / 2:.1%}" if not np.isnan(lo) else f"{v:.1%}"
    return f"{v:.3f} ±{(hi - lo) / 2:.3f}" if not np.isnan(lo) else f"{v:.3f}"


PERCENT_STATS = {"win_rate", "rounds_lost", "knock_success"}


def _star(low: float, high: float) -> str:
    """``*`` where a 95% interval excludes 0."""
    return "*" if low > 0 or high < 0 else ""


def _games(value: float | None) -> str:
    """A count of effective games, or ``-`` where it has no value."""
    return "-" if value is None else f"{value:,.0f}"


def print_report(
    config: TournamentConfig, summary: dict[str, Any], extra: dict[str, Any], console: Any = None
) -> None:
    """The per-player table, the paired differences and the leaderboard."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = console or Console()
    labels = list(summary)  # names are shown as given: "[v2]" is no markup
    table = Table(title=f"{config.total_games} games, rules={config.rules}, seed={config.seed} (±: 95% CI)")
    table.add_column("statistic")
    for label in labels:  # names fold onto more lines, never cut: two players never look alike
        table.add_column(escape(label), justify="right", overflow="fold")
    unit = lost_label(config.rules).split()[0]  # lives, or points or chips (scored: negative)
    for key, title in STATS.items():
        title = title.replace("lives", unit, 1) if key == "lives_lost_per_round" else title
        table.add_row(title, *(_fmt(summary[p][key], key in PERCENT_STATS) for p in labels))
    console.print(table)

    pairs = extra.get("paired_differences", [])
    luck = any(d.get("luck") for d in pairs)
    how = "the luck of the cards taken out; " if luck else ""
    diffs = Table(
        title=f"Paired differences, row minus column player (same deals; {how}* = 95% CI excludes 0)"
    )
    for col in ("player", "vs"):
        diffs.add_column(col, overflow="fold")
    for col in ("wins [95% CI, points]", "", f"{unit}/round [95% CI]", ""):
        diffs.add_column(col, no_wrap=True)
    for d in pairs:
        low, high = d["low"], d["high"]
        row = [
            escape(d["a"]),
            escape(d["b"]),
            f"{d['diff']:+.1%} [{100 * low:+.1f}, {100 * high:+.1f}]",
            _star(low, high),
        ]
        low, high = d["lives_low"], d["lives_high"]
        row += [f"{d['lives_diff']:+.3f} [{low:+.3f}, {high:+.3f}]", _star(low, high)]
        diffs.add_row(*row)
    console.print(diffs)
    if luck:
        plain = Table(
            title="The same with the luck left in (plain), and the plain games the estimate above is worth"
        )
        for col in (
            "player",
            "vs",
            "wins [95% CI, points]",
            f"{unit}/round [95% CI]",
            "worth games (wins, lives)",
        ):
            plain.add_column(col, overflow="fold")
        for d in pairs:
            plain.add_row(
                escape(d["a"]),
                escape(d["b"]),
                f"{d['plain_diff']:+.1%} [{100 * d['plain_low']:+.1f}, {100 * d['plain_high']:+.1f}]",
                f"{d['plain_lives_diff']:+.3f} [{d['plain_lives_low']:+.3f}, {d['plain_lives_high']:+.3f}]",
                f"{_games(d['effective_games'])}, {_games(d['lives_effective_games'])}",
            )
        console.print(plain)

    board = Table(title="OpenSkill leaderboard (Plackett-Luce, by finishing place)")
    for col in ("rank", "player", "ordinal", "mu", "sigma"):
        board.add_column(col, overflow="fold")
    for rank, r in enumerate(extra.get("ratings", []), 1):
        board.add_row(
            str(rank), escape(r["label"]), f"{r['ordinal']:.2f}", f"{r['mu']:.2f}", f"{r['sigma']:.2f}"
        )
    console.print(board)
