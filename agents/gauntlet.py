"""The gauntlet: a fixed, seeded set of tables that says how a candidate player fares
against many kinds of opponent, each measured against ``expert`` in its place.

For a table of ``n`` seats every gauntlet table seats ``n - 1`` opponents
(:func:`gauntlet_tables`): three experts, three greedy, three blitz31 and three
``search`` players at four seats, a mixed table (expert, blitz31, greedy), two tables of
heuristic players drawn from the *held-out* population ranges
(:data:`agents.populations.HELD_OUT_RANGES`, disjoint from the league's: no training run
sees them) and a mixed held-out table (an expert between held-out players). A mixed table
needs two opponent seats, so two-seat gauntlets leave both mixed tables out.

Each table is played twice with the same seed (duplicate deals, seats rotated, the
harness's :func:`~thirtyone_env.harness.evaluation.run_tournament`): once with the
candidate as player 0 and once with ``expert`` there. Both meet the same decks from the
same seats against the same opponents, who draw from the same generators, so the paired
difference per deal set (candidate minus expert: wins, and lives lost a round) cancels
the luck of the deal; its 95% interval takes deal sets as the independent unit. The
expert against itself differs by exactly 0 at every table.

Every table plays the same number of games. The ``search`` table is the slowest (about
0.2 s a game with three search seats on one core, its roll-outs on the compiled kernels:
some eight times an expert table), so the learning curves of training runs leave it
out (:attr:`GauntletTable.slow`).
The expert's side of a table is kept per process (:func:`_baseline`): a training run
that plays the same small gauntlet every few steps plays the expert's games once.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import agents
from agents import portable
from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.driver import check_table
from thirtyone_env.harness.evaluation import (
    GameOutcome,
    TournamentConfig,
    effective_games,
    lives_by_deal,
    lost_label,
    mean_ci,
    measured_luck,
    ratio_difference_ci,
    run_tournament,
    within_win_range,
)
from thirtyone_env.harness.parallel import Backend

#: The player every candidate is measured against, in the same seat on the same deals.
BASELINE = "expert"
#: The seed of the gauntlet's held-out populations (members are numbered table by table).
HELD_OUT_SEED = 16
#: Stands for the next held-out population member in :data:`GAUNTLET`.
HELD_OUT = "held_out"
#: Games per table of ``evaluate.py --gauntlet`` unless ``--games`` says otherwise.
DEFAULT_GAMES = 400

#: The gauntlet's tables: name -> the opponents' kinds, repeated to fill ``n - 1`` seats.
GAUNTLET: dict[str, tuple[str, ...]] = {
    "expert": ("expert",),
    "greedy": ("greedy",),
    "blitz31": ("blitz31",),
    "search": ("search",),
    "mixed": ("expert", "blitz31", "greedy"),
    "held_out_a": (HELD_OUT,),
    "held_out_b": (HELD_OUT,),
    "mixed_held_out": (HELD_OUT, "expert", HELD_OUT),
}


@dataclass(frozen=True)
class GauntletTable:
    """One table: its name and the opponents' specs (seats 1..n-1 of player order)."""

    name: str
    opponents: tuple[str, ...]

    @property
    def slow(self) -> bool:
        """Whether a ``search`` player sits here (training runs' curves leave it out)."""
        return any(spec.split(":")[0] == "search" for spec in self.opponents)


def gauntlet_tables(num_players: int) -> list[GauntletTable]:
    """The gauntlet's tables for ``num_players`` seats (see the module doc); held-out
    members ``population:split=held_out,seed=HELD_OUT_SEED,member=k`` are numbered in
    table order, so no two seats of the gauntlet hold the same member."""
    if num_players < 2:
        raise ValueError(f"a gauntlet needs at least 2 seats, got {num_players}")
    seats = num_players - 1
    member = 0
    tables = []
    for name, kinds in GAUNTLET.items():
        if len(set(kinds)) > 1 and seats < 2:
            continue  # a mixed table needs two opponent seats
        opponents = []
        for i in range(seats):
            kind = kinds[i % len(kinds)]
            if kind == HELD_OUT:
                kind = f"population:split=held_out,seed={HELD_OUT_SEED},member={member}"
                member += 1
            opponents.append(kind)
        tables.append(GauntletTable(name, tuple(opponents)))
    return tables


def select_tables(num_players: int, names: Sequence[str] | None = None) -> list[GauntletTable]:
    """The tables named in ``names`` (all where ``None``), in gauntlet order;
    ``ValueError`` naming an unknown or repeated name."""
    tables = gauntlet_tables(num_players)
    if names is None:
        return tables
    known = [t.name for t in tables]
    for name in names:
        if name not in known:
            raise ValueError(f"unknown gauntlet table {name!r} at {num_players} seats; tables are {known}")
    if len(set(names)) != len(names):
        raise ValueError(f"gauntlet tables named twice: {list(names)}")
    return [t for t in tables if t.name in names]


def planned_games(num_players: int, games: int, names: Sequence[str] | None = None) -> int:
    """Games a gauntlet plays in all (both sides of every table)."""
    total = 0
    for table in select_tables(num_players, names):
        config = TournamentConfig((BASELINE, *table.opponents), games)
        total += 2 * config.total_games
    return total


def check_gauntlet(
    candidate: str,
    num_players: int,
    rules: str | Rules,
    games: int,
    seed: int,
    tables: Sequence[str] | None = None,
) -> list[GauntletTable]:
    """The tables to play, after checking everything a gauntlet needs before its first
    game: the rules, the table size for them, the counts, the table names, the
    candidate's spec and that it (and every opponent) can sit at this table.
    ``ValueError`` naming the problem otherwise."""
    resolved = Rules.resolve(rules)
    resolved.check_num_players(num_players)
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ValueError(f"games per table must be a positive integer, got {games!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    chosen = select_tables(num_players, tables)
    specs = dict.fromkeys([candidate, BASELINE, *(s for t in chosen for s in t.opponents)])
    for spec in specs:
        agents.check_spec(spec)
    for spec in specs:
        check_table(agents.from_spec(spec), num_players, resolved, spec)
    return chosen


def run_gauntlet(
    candidate_spec: str,
    num_players: int,
    rules: str | Rules,
    games: int,
    seed: int,
    workers: int = 1,
    tables: Sequence[str] | None = None,
    progress: Callable[[int], None] | None = None,
    backend: Backend | None = None,
    luck: bool = True,
) -> list[dict[str, Any]]:
    """Play the gauntlet of ``candidate_spec`` at ``num_players`` seats: ``games``
    games a table, every table twice
    (the candidate, then :data:`BASELINE`, as player 0), ``tables`` a subset of names.
    Returns one row a table (:func:`table_row`); ``progress(k)`` as k more games
    finish; ``backend``: where the games run (default: ``workers`` local processes);
    ``luck``: take each game's luck out of the differences where the rules allow.
    Checks everything first (:func:`check_gauntlet`)."""
    chosen = check_gauntlet(candidate_spec, num_players, rules, games, seed, tables)
    rows = []
    for table in chosen:
        start = time.perf_counter()
        config = TournamentConfig((candidate_spec, *table.opponents), games, rules, seed, workers, luck=luck)
        mine = _side(config, _play(config, progress, backend))
        base = _baseline(table.opponents, config.games, rules, seed, workers, progress, backend, luck)
        rows.append(table_row(table, config, mine, base, time.perf_counter() - start))
    return rows


def play_with(
    spec: str,
    others: Sequence[str],
    opponents: Sequence[str],
    games: int,
    rules: str | Rules,
    seed: int,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
) -> list[tuple[TournamentConfig, list[GameOutcome]]]:
    """Player ``spec``'s tournament, then each of ``others``', each in seat 0 against
    ``opponents`` on the same seeded deals: ``[(config, games)]``, ``spec``'s first.
    ``spec``'s games are played once however many players it is measured against (they
    do not depend on the comparison; a model's games cost the most to play)."""
    played = []
    for one in (spec, *others):
        config = TournamentConfig((one, *opponents), games, rules, seed, workers)
        played.append((config, _play(config, progress)))
    return played


def compare(
    spec_a: str,
    spec_b: str,
    opponents: Sequence[str],
    games: int,
    rules: str | Rules,
    seed: int,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Player ``spec_a`` minus player ``spec_b``, each in seat 0 against ``opponents``
    on the same seeded deals (an ablation: a run against its warm start): the row of
    :func:`table_row`, its ``candidate_*`` fields A's and its ``expert_*`` fields B's."""
    start = time.perf_counter()
    played = play_with(spec_a, [spec_b], opponents, games, rules, seed, workers, progress)
    return pair_row(played, time.perf_counter() - start)


def pair_rows(
    played: list[tuple[TournamentConfig, list[GameOutcome]]], elapsed: float
) -> list[dict[str, Any]]:
    """The rows of a :func:`play_with`: its first player minus each other player, in
    order, each as :func:`pair_row` gives it (``elapsed``: the seconds of them all)."""
    return [pair_row([played[0], theirs], elapsed) for theirs in played[1:]]


def pair_row(played: list[tuple[TournamentConfig, list[GameOutcome]]], elapsed: float) -> dict[str, Any]:
    """:func:`table_row` of a :func:`play_with` of two players: A as the candidate, B as
    the expert."""
    (config, games_a), (config_b, games_b) = played
    table = GauntletTable("compare", tuple(config.players[1:]))
    return table_row(table, config, _side(config, games_a), _side(config_b, games_b), elapsed)


def by_players_in(played: list[tuple[TournamentConfig, list[GameOutcome]]]) -> list[dict[str, Any]]:
    """Where the lives of a :func:`play_with` of two players go: player 0's lives lost a round split by
    how many players each round was dealt to (every seat down to the heads-up end of a
    game), one row per count, most first. Each row: ``players_in``, each side's share of
    its rounds and lives lost a round there (``a_*``, ``b_*``), and the paired
    difference A minus B with its 95% interval (by deal set, as :func:`table_row`)."""
    totals = [lives_by_deal(c, g)[1][:, 0].sum() for c, g in played]
    rows = []
    for k in range(played[0][0].num_players, 1, -1):
        (lost_a, rounds_a), (lost_b, rounds_b) = (lives_by_deal(c, g, players_in=k) for c, g in played)
        a = (lost_a[:, 0], rounds_a[:, 0])
        b = (lost_b[:, 0], rounds_b[:, 0])
        diff, low, high = ratio_difference_ci(*a, *b)
        rows.append(
            {
                "players_in": k,
                "a_share": float(a[1].sum() / totals[0]),
                "b_share": float(b[1].sum() / totals[1]),
                "a_lives": _ratio(*a),
                "b_lives": _ratio(*b),
                "lives_diff": diff,
                "lives_low": low,
                "lives_high": high,
            }
        )
    return rows


def _play(
    config: TournamentConfig, progress: Callable[[int], None] | None, backend: Backend | None = None
) -> list[GameOutcome]:
    """The tournament's games, in work units small enough to keep every worker busy
    (a search table's few deal sets would otherwise make one or two units; the games
    do not depend on the units)."""
    chunk = max(1, min(8, math.ceil(config.deal_sets / (4 * config.workers))))
    make_player = portable.reader(config.players, backend)
    return run_tournament(config, make_player, progress=progress, chunk=chunk, backend=backend)


@dataclass(frozen=True)
class Side:
    """Player 0's results of one side of a table, per deal set."""

    wins: np.ndarray  #: wins (shared wins split) summed over the deal set's games
    games: np.ndarray  #: games per deal set
    lost: np.ndarray  #: lives lost
    rounds: np.ndarray  #: rounds dealt in
    #: the luck in wins and in lives lost (:mod:`~thirtyone_env.harness.luck`), zero
    #: where it was not measured
    luck_wins: np.ndarray
    luck_lost: np.ndarray
    luck: bool  #: whether the luck was measured


def _side(config: TournamentConfig, games: list[GameOutcome]) -> Side:
    """Player 0's per-deal-set sums of a finished tournament."""
    wins = np.zeros(config.deal_sets)
    count = np.zeros(config.deal_sets)
    luck_wins = np.zeros(config.deal_sets)
    luck_lost = np.zeros(config.deal_sets)
    luck = measured_luck(games)
    for g in games:
        wins[g.deal] += g.wins[0]
        count[g.deal] += 1
        if luck:
            luck_wins[g.deal] += g.luck_wins[0]
            luck_lost[g.deal] += g.luck_lost[0]
    lost, rounds = lives_by_deal(config, games)
    return Side(wins, count, lost[:, 0].copy(), rounds[:, 0].copy(), luck_wins, luck_lost, luck)


#: The expert's side of tables played in this process, by (opponents, games, rules, seed).
_BASELINES: dict[tuple[Any, ...], Side] = {}
#: Most sides kept (each a few arrays of one number per deal set).
MAX_BASELINES = 256


def _baseline(
    opponents: tuple[str, ...],
    games: int,
    rules: str | Rules,
    seed: int,
    workers: int,
    progress: Callable[[int], None] | None,
    backend: Backend | None = None,
    luck: bool = True,
) -> Side:
    """The expert's side of a table, played once per process: its games depend only
    on the opponents, the games, the rules and the seed (not on the workers); its luck
    is measured with ``luck``."""
    config = TournamentConfig((BASELINE, *opponents), games, rules, seed, workers, luck=luck)
    key = (opponents, games, rules, seed, luck)
    side = _BASELINES.get(key)
    if side is None:
        side = _side(config, _play(config, progress, backend))
        if len(_BASELINES) >= MAX_BASELINES:
            del _BASELINES[next(iter(_BASELINES))]
        _BASELINES[key] = side
    elif progress is not None:
        progress(config.total_games)
    return side


def table_row(
    table: GauntletTable, config: TournamentConfig, mine: Side, base: Side, elapsed: float
) -> dict[str, Any]:
    """One table's result: the paired differences candidate minus expert with their
    95% intervals (wins: per deal set; lives lost a round: ratio of sums, delta
    method), and each side's win rate and lives lost a round.

    Where both sides' luck was measured the differences have it taken out (``luck``
    true); ``plain_*`` give them with the luck in, and ``effective_games`` /
    ``lives_effective_games`` how many games of the plain estimate the corrected one is
    worth. The win rates and lives a round of each side are plain."""
    luck = mine.luck and base.luck
    plain_wins = mean_ci(mine.wins / mine.games - base.wins / base.games)
    plain_lives = ratio_difference_ci(mine.lost, mine.rounds, base.lost, base.rounds)
    if luck:
        wins = mean_ci((mine.wins - mine.luck_wins) / mine.games - (base.wins - base.luck_wins) / base.games)
        lives = ratio_difference_ci(
            mine.lost - mine.luck_lost, mine.rounds, base.lost - base.luck_lost, base.rounds
        )
    else:
        wins, lives = plain_wins, plain_lives
    worth = effective_games(config.total_games, plain_wins, wins, config.deal_sets)
    lives_worth = effective_games(config.total_games, plain_lives, lives, config.deal_sets)
    wins, plain_wins = within_win_range(wins), within_win_range(plain_wins)
    return {
        "table": table.name,
        "opponents": list(table.opponents),
        "games": config.total_games,
        "deal_sets": config.deal_sets,
        "wins_diff": wins[0],
        "wins_low": wins[1],
        "wins_high": wins[2],
        "lives_diff": lives[0],
        "lives_low": lives[1],
        "lives_high": lives[2],
        "luck": luck,
        "plain_wins_diff": plain_wins[0],
        "plain_wins_low": plain_wins[1],
        "plain_wins_high": plain_wins[2],
        "plain_lives_diff": plain_lives[0],
        "plain_lives_low": plain_lives[1],
        "plain_lives_high": plain_lives[2],
        "effective_games": worth,
        "lives_effective_games": lives_worth,
        "candidate_win_rate": float(mine.wins.sum() / mine.games.sum()),
        "expert_win_rate": float(base.wins.sum() / base.games.sum()),
        "candidate_lives": _ratio(mine.lost, mine.rounds),
        "expert_lives": _ratio(base.lost, base.rounds),
        "elapsed_s": elapsed,
    }


def _ratio(num: np.ndarray, den: np.ndarray) -> float:
    total = float(den.sum())
    return float(num.sum()) / total if total else float("nan")


# -- output ----------------------------------------------------------------------------


def opponents_text(opponents: Sequence[str]) -> str:
    """The opponents in short: ``expert x3``, ``expert, blitz31, greedy``, held-out
    members as ``held-out #k``."""
    names = [
        "held-out #" + spec.rsplit("member=", 1)[1] if spec.startswith("population:split=held_out") else spec
        for spec in opponents
    ]
    if len(set(names)) == 1 and len(names) > 1:
        return f"{names[0]} x{len(names)}"
    return ", ".join(names)


def interval_text(value: float | None, low: float | None, high: float | None, scale: float = 1.0,
                  digits: int = 3) -> str:  # fmt: skip
    """A signed estimate with its 95% interval, ``*`` where the interval excludes 0: ``-``
    where there is no estimate, the estimate alone where it has no interval (one
    sample; ``None`` or ``nan``, as strict JSON and numpy write it)."""
    if _missing(value):
        return "-"
    if _missing(low) or _missing(high):
        return f"{scale * value:+.{digits}f}"
    star = "*" if low > 0 or high < 0 else ""
    return f"{scale * value:+.{digits}f} [{scale * low:+.{digits}f}, {scale * high:+.{digits}f}]{star}"


def _missing(x: float | None) -> bool:
    return x is None or math.isnan(x)


def with_nan(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with ``nan`` for each figure strict JSON wrote as ``None`` (a plot leaves it out)."""
    return {k: math.nan if v is None else v for k, v in row.items()}


def gauntlet_table(rows: Sequence[dict[str, Any]], rules: str | Rules = "standard") -> str:
    """The rows as a Markdown table (readable as plain text too): per table the
    candidate's paired differences against the expert in points of win rate and in
    lives lost a round (``*``: the 95% interval excludes 0; negative lives: fewer
    lost), then each side's win rate and lives a round. At a points or chips table
    (``rules``) the rounds' cost is in points or chips, what a player scored negative."""
    unit = lost_label(rules).split()[0]
    luck = any(r.get("luck") for r in rows)
    worth = " | worth games (wins, lives)" if luck else ""
    lines = [
        f"| table | opponents | games | wins - expert [95% CI], points | {unit}/round - expert [95% CI] "
        f"| candidate wins | expert wins | candidate {unit}/round | expert {unit}/round{worth} |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if luck else ""),
    ]
    for r in rows:
        line = (
            f"| {r['table']} | {opponents_text(r['opponents'])} | {r['games']:,} "
            f"| {interval_text(r['wins_diff'], r['wins_low'], r['wins_high'], 100, 1)} "
            f"| {interval_text(r['lives_diff'], r['lives_low'], r['lives_high'], 1, 3)} "
            f"| {r['candidate_win_rate']:.1%} | {r['expert_win_rate']:.1%} "
            f"| {r['candidate_lives']:.3f} | {r['expert_lives']:.3f} |"
        )
        if luck:
            line += f" {_worth(r.get('effective_games'))}, {_worth(r.get('lives_effective_games'))} |"
        lines.append(line)
    note = (
        "\nDifferences with the luck of the cards taken out (deals and stock draws; unbiased); "
        "worth games: the plain estimate's games that give the same interval.\n"
        if luck
        else ""
    )
    return "\n".join(lines) + "\n" + note


def _worth(games: float | None) -> str:
    """Effective games, or ``-`` where not measured."""
    return "-" if games is None else f"{games:,.0f}"


def plot_gauntlet(
    rows: Sequence[dict[str, Any]], path: str | Path, title: str = "Gauntlet", rules: str | Rules = "standard"
) -> Path:
    """A PNG of the paired differences per table with their 95% intervals: wins (points)
    and lives lost a round (points or chips at those tables: ``rules``), candidate minus
    expert (right of 0 / left of 0 is better), written atomically; returns its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from thirtyone_env.harness.report import _save_png

    names = [r["table"] for r in rows]
    y = np.arange(len(rows))[::-1]
    fig, axes = plt.subplots(1, 2, figsize=(11, 0.45 * len(rows) + 1.8), sharey=True)
    panels = (
        ("wins", 100.0, "wins: candidate - expert (points; right is better)", True),
        ("lives", 1.0, f"{lost_label(rules)}: candidate - expert (left is better)", False),
    )
    for ax, (key, scale, label, higher_better) in zip(axes, panels, strict=True):
        value = np.array([r[f"{key}_diff"] for r in rows], dtype=float) * scale
        low = np.array([r[f"{key}_low"] for r in rows], dtype=float) * scale
        high = np.array([r[f"{key}_high"] for r in rows], dtype=float) * scale
        better = (low > 0) if higher_better else (high < 0)
        worse = (high < 0) if higher_better else (low > 0)
        colors = [
            "tab:green" if b else "tab:red" if w else "tab:gray" for b, w in zip(better, worse, strict=True)
        ]
        err = np.nan_to_num(np.vstack([value - low, high - value]))
        for i, color in enumerate(colors):
            ax.errorbar(value[i], y[i], xerr=err[:, i : i + 1], fmt="o", color=color, capsize=3)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set(xlabel=label)
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(y, names)
    fig.suptitle(f"{title} (95% CIs; green: better than expert, red: worse)")
    fig.tight_layout()
    path = Path(path)
    _save_png(fig, path)
    return path
