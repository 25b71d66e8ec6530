"""Tournaments with duplicate deals and rotated seats, and their statistics.

A tournament of ``games`` games between ``n`` named players is played as ``games / n``
**deal sets**. Each deal set fixes a sequence of shuffled decks (round 1 uses the
first, round 2 the second, ...) and is played ``n`` times, once per **rotation**: in
rotation ``r`` player ``i`` sits in seat ``(i + r) % n``. So every player sits in every
seat equally often and meets the same cards from every seat, and the luck of the deal
cancels out of the comparison. Seat 0 plays first in every game's first round.

All randomness derives from ``seed`` through ``numpy.random.SeedSequence`` keyed by
(deal set, rotation), never from the worker that plays it, so results are the same
for any number of workers. Confidence intervals treat each deal set as one
independent observation (its rotations share the cards), the honest unit here.

The module needs numpy only; ``openskill`` is imported for :func:`ratings`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from thirtyone_env.game.encoding import ObsLayout
from thirtyone_env.game.engine import legal_mask, new_game
from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.analysis import TurnRecorder, player_round_records
from thirtyone_env.harness.driver import NOBODY, Table, observe, reset_players
from thirtyone_env.harness.files import json_value
from thirtyone_env.harness.luck import LuckObserver, default_model
from thirtyone_env.harness.luck import applies as luck_applies
from thirtyone_env.harness.parallel import Backend, ordered_map
from thirtyone_env.harness.records import game_lines, write_lines, write_manifest

MAX_TURN_BIN = 30  #: suit switches by turn are counted for own turns 1..30 (later ones in the last bin)


@dataclass(frozen=True)
class TournamentConfig:
    """What to play. ``players`` are player specs (``"greedy"``, ``"search:worlds=16"``),
    one per seat, turned into players by the ``make_player`` callable given to
    :func:`run_tournament`; ``games`` is rounded up to a multiple of the table size."""

    players: tuple[str, ...]
    games: int
    rules: str | Rules = "standard"  #: a preset name (or, from code, a ``Rules``)
    seed: int = 0
    workers: int = 1
    record_dir: str | None = None  #: write every game as JSON Lines here (one file per deal set)
    #: display names, one per player, all different (empty: the specs, numbered where repeated)
    names: tuple[str, ...] = ()
    #: measure each game's luck (:mod:`~thirtyone_env.harness.luck`) where the rules allow,
    #: so the statistics can take it out; the games are the same either way
    luck: bool = True

    def __post_init__(self) -> None:
        if self.names:
            if len(self.names) != len(self.players):
                raise ValueError(f"{len(self.names)} names given for {len(self.players)} players")
            if any(not str(n).strip() for n in self.names) or len(set(self.names)) != len(self.names):
                raise ValueError(f"names {list(self.names)}: give every player a different, non-empty name")

    @property
    def num_players(self) -> int:
        return len(self.players)

    @property
    def deal_sets(self) -> int:
        return math.ceil(self.games / self.num_players)

    @property
    def total_games(self) -> int:
        return self.deal_sets * self.num_players


@dataclass
class GameOutcome:
    """One game of a tournament, by player index (not seat)."""

    deal: int
    rotation: int
    seats: tuple[int, ...]  #: seats[i] = seat of player i
    places: tuple[float, ...]  #: per player: finishing place (ties share the mean)
    wins: tuple[float, ...]  #: per player: 1 for a sole win, 1/k for a shared one
    rounds: int
    rows: list[tuple] = field(default_factory=list)  #: per round per player, ROW_FIELDS
    draws_by_turn: list[list[int]] = field(default_factory=list)  #: [player][turn bin]
    switches_by_turn: list[list[int]] = field(default_factory=list)
    #: per player: the game's luck in wins and in lives lost (:mod:`~thirtyone_env.harness.luck`);
    #: empty where it was not measured
    luck_wins: tuple[float, ...] = ()
    luck_lost: tuple[float, ...] = ()


ROW_FIELDS = (
    "game",
    "deal",
    "rotation",
    "round_no",
    "player",
    "seat",
    "lives_before",
    "lost",
    "lost_round",
    "reason",
    "final_value",
    "turns",
    "knocked",
    "knock_value",
    "knock_turn",
    "knock_success",
    "blitz",
    "switches",
    "discard_suit_changes",
    "eliminated",
)
#: The keys of a player-round record (:func:`~thirtyone_env.harness.analysis.player_round_records`)
#: a row takes: the game's own fields with these, the player (its index) after the round number.
ROUND_KEYS = ROW_FIELDS[3:4] + ROW_FIELDS[5:]


def deck_sequence(seed: int, deal: int, rules: Rules) -> Iterator[list[int]]:
    """The decks of one deal set, round after round (an endless generator)."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(deal,)))
    cards = np.array(rules.deck_cards)
    while True:
        yield rng.permutation(cards).tolist()


def finishing_places(keys: Sequence[tuple]) -> list[float]:
    """Places 1..n from per-seat sort keys (smaller is better); seats with equal keys
    share the mean of the places they cover (1, 2.5, 2.5, 4)."""
    n = len(keys)
    order = sorted(range(n), key=lambda p: keys[p])
    places = [0.0] * n
    i = 0
    while i < n:
        j = i
        while j + 1 < n and keys[order[j + 1]] == keys[order[i]]:
            j += 1
        for k in range(i, j + 1):
            places[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return places


def _place_keys(out_round: Sequence[int], winners: Sequence[int], lives: Sequence[int]) -> list[tuple]:
    """Winners first; then players still in (a max_rounds finish) by lives; then the
    eliminated, later elimination first."""
    return [
        (0, 0) if p in winners else (1, -lives[p]) if out_round[p] < 0 else (2, -out_round[p])
        for p in range(len(out_round))
    ]


def play_deal_set(
    config: TournamentConfig, deal: int, make_player: Callable[[str], Any]
) -> list[GameOutcome]:
    """Play every rotation of one deal set."""
    rules = Rules.resolve(config.rules)
    n = config.num_players
    layout = ObsLayout(n, rules)
    measure_luck = config.luck and luck_applies(rules)
    decks: list[list[int]] = []
    deck_iter = deck_sequence(config.seed, deal, rules)
    outcomes = []
    lines: list[str] = []

    def next_deck(k: int) -> list[int]:
        """The deck of round ``k + 1``: the same in every rotation of the deal set."""
        while len(decks) <= k:
            decks.append(next(deck_iter))
        return decks[k]

    for rotation in range(n):
        rng = np.random.default_rng(np.random.SeedSequence(config.seed, spawn_key=(deal, rotation, 1)))
        seat_of = tuple((i + rotation) % n for i in range(n))
        player_at = [0] * n
        for i, seat in enumerate(seat_of):
            player_at[seat] = i
        policies = [make_player(config.players[player_at[s]]) for s in range(n)]
        reset_players(policies, rng)
        labels = [f"player {config.players[player_at[seat]]!r}" for seat in range(n)]  # for errors
        if not decks:
            decks.append(next(deck_iter))
        out_round = [-1] * n
        game_index = deal * n + rotation
        outcome = GameOutcome(deal, rotation, seat_of, (), (), 0)
        outcome.draws_by_turn = [[0] * MAX_TURN_BIN for _ in range(n)]
        outcome.switches_by_turn = [[0] * MAX_TURN_BIN for _ in range(n)]
        recorder = TurnRecorder(game_index, [config.players[player_at[seat]] for seat in range(n)])
        state = new_game(rules, n, rng, dealer=n - 1, deck=decks[0])
        luck = (
            LuckObserver(default_model(), state, recorder, sampled_moves(policies, layout))
            if measure_luck
            else None
        )
        settled = _round_recorder(outcome, out_round, recorder, player_at, game_index, rotation)
        table = Table(
            state,
            policies,
            rng,
            layout=layout,
            labels=labels,
            keep_history=bool(config.record_dir),
            decks=next_deck,
            on_settle=settled,
            on_deal=None if luck is None else luck.dealt,
            observer=recorder if luck is None else luck,
        )
        if luck is not None:
            luck.dealt(state)
        table.advance(NOBODY)
        s = table.state
        if luck is not None:
            outcome.luck_wins = tuple(float(luck.wins[seat_of[i]]) for i in range(n))
            outcome.luck_lost = tuple(float(luck.lost[seat_of[i]]) for i in range(n))
        histories = table.histories
        places_by_seat = finishing_places(_place_keys(out_round, s.winners, s.lives))
        outcome.places = tuple(places_by_seat[seat_of[i]] for i in range(n))
        outcome.wins = tuple((1.0 / len(s.winners)) if seat_of[i] in s.winners else 0.0 for i in range(n))
        outcome.rounds = s.round_no
        outcomes.append(outcome)
        if config.record_dir:
            names = [config.players[player_at[seat]] for seat in range(n)]
            lines.extend(
                game_lines(
                    rules, n, histories, s.winners, s.lives, s.score, names, [config.seed, deal, rotation]
                )
            )
    if config.record_dir:
        write_lines(Path(config.record_dir) / deal_file_name(deal), lines)
    return outcomes


def sampled_moves(policies: Sequence[Any], layout: ObsLayout) -> dict[int, Callable[[Any], np.ndarray]]:
    """By seat, for the players that say with what chance they play each move
    (``move_probabilities(observation, mask)``, and sample from it): the chances in a
    state, so the luck of their sampled moves is measured too."""
    out = {}
    for seat, policy in enumerate(policies):
        probabilities = getattr(policy, "move_probabilities", None)
        if callable(probabilities):
            encoding = getattr(policy, "obs_encoding", "view")

            def chances(
                s: Any, seat: int = seat, probabilities: Any = probabilities, encoding: str = encoding
            ) -> np.ndarray:
                return np.asarray(
                    probabilities(observe(s, seat, encoding, layout), legal_mask(s)), dtype=np.float64
                )

            out[seat] = chances
    return out


def deal_file_name(deal: int) -> str:
    """The record file of one deal set in a record folder."""
    return f"deal_{deal:06d}.jsonl"


def config_dict(config: TournamentConfig) -> dict[str, Any]:
    """The configuration as plain JSON values (for results and record manifests)."""
    rules = config.rules if isinstance(config.rules, str) else "custom"
    return {
        "players": list(config.players),
        "games": config.total_games,
        "deal_sets": config.deal_sets,
        "rules": rules,
        "rules_fields": dataclasses.asdict(Rules.resolve(config.rules)),
        "seed": config.seed,
        "workers": config.workers,
        "luck": config.luck and luck_applies(Rules.resolve(config.rules)),
    } | ({"names": list(config.names)} if config.names else {})


def write_record_manifest(config: TournamentConfig, **extra: Any) -> Path:
    """Mark the record folder of a finished tournament complete (every deal set's file,
    its games, the configuration and ``extra``); call it only after the last game."""
    if not config.record_dir:
        raise ValueError("the tournament keeps no record folder")
    files = [(deal_file_name(d), config.num_players) for d in range(config.deal_sets)]
    return write_manifest(config.record_dir, files, {**config_dict(config), **extra})


def _round_recorder(
    outcome: GameOutcome,
    out_round: list[int],
    recorder: TurnRecorder,
    player_at: list[int],
    game: int,
    rotation: int,
) -> Callable[[Any], None]:
    """The table's ``on_settle``: a settled round's rows (its turns from ``recorder``,
    the table's observer) and who it put out when."""

    def settled(s: Any) -> None:
        _record_round(outcome, s, recorder.round_turns(s), player_at, game, rotation)
        for p in s.result.eliminated:
            out_round[p] = s.round_no

    return settled


def _record_round(
    outcome: GameOutcome, s: Any, turns: list[dict[str, Any]], player_at: list[int], game: int, rotation: int
) -> None:
    """Add a settled round's rows and draw turns (``turns``: its turn records) to ``outcome``."""
    deal = outcome.deal
    rows = outcome.rows
    for r in player_round_records(s.history, turns):
        v = tuple(r[k] for k in ROUND_KEYS)  # (round_no, seat, ...)
        rows.append((game, deal, rotation, v[0], player_at[v[1]], *v[1:]))
    draws, switches = outcome.draws_by_turn, outcome.switches_by_turn
    for t in turns:
        if t["card_out"] >= 0:
            player = player_at[t["seat"]]
            b = min(t["turn"], MAX_TURN_BIN) - 1
            draws[player][b] += 1
            switches[player][b] += t["switched"]


def _worker(args: tuple[TournamentConfig, list[int], Callable[[str], Any]]) -> list[GameOutcome]:
    config, deals, make_player = args
    out = []
    for d in deals:
        out.extend(play_deal_set(config, d, make_player))
    return out


def deal_chunks(deal_sets: int, chunk: int) -> Iterator[list[int]]:
    """The deal sets in work units of ``chunk``, generated lazily (a billion-game
    tournament costs no memory before it starts)."""
    for i in range(0, deal_sets, chunk):
        yield list(range(i, min(i + chunk, deal_sets)))


def worker_count(config: TournamentConfig, chunk: int) -> int:
    """Processes a tournament uses: ``config.workers``, but never more than it has
    work units (extra processes would have nothing to do)."""
    return max(1, min(config.workers, math.ceil(config.deal_sets / chunk)))


def run_tournament(
    config: TournamentConfig,
    make_player: Callable[[str], Any],
    progress: Callable[[int], None] | None = None,
    chunk: int = 8,
    backend: Backend | None = None,
    done: dict[int, list[GameOutcome]] | None = None,
    on_unit: Callable[[int, list[GameOutcome]], None] | None = None,
) -> list[GameOutcome]:
    """Play the tournament; returns every game, ordered by (deal set, rotation).

    ``make_player(spec)`` builds a player (a module-level function, so worker processes
    can import it, e.g. ``agents.from_spec``); ``progress(k)`` is called as k more games
    finish. Work units of ``chunk`` deal sets are generated lazily and their results
    arrive in order, so the result does not depend on the number of workers or where
    they run: ``backend`` (default: ``config.workers`` local processes, at most one per
    work unit) may be a Ray cluster (:mod:`~thirtyone_env.harness.parallel`).
    ``done`` holds work units (by index) finished by an interrupted run: only the
    others are played; ``on_unit(k, games)`` sees each unit played as it finishes.
    """
    done = done or {}
    todo = (
        (config, deals, make_player)
        for k, deals in enumerate(deal_chunks(config.deal_sets, chunk))
        if k not in done
    )
    if backend is None or backend.kind == "local":
        backend = Backend("local", worker_count(config, chunk))
    played = ordered_map(_worker, todo, backend)
    results: list[GameOutcome] = []
    for k, _deals in enumerate(deal_chunks(config.deal_sets, chunk)):
        unit = done.get(k)
        if unit is None:
            unit = next(played)
            if on_unit is not None:
                on_unit(k, unit)
        results.extend(unit)
        if progress:
            progress(len(unit))
    return results


def outcome_json(games: list[GameOutcome]) -> str:
    """A work unit's games as JSON (kept in a results folder while a tournament runs).
    Read field by field: ``dataclasses.asdict`` deep-copies every number of every row
    first, which took a third of a fast tournament's time."""
    names = [f.name for f in dataclasses.fields(GameOutcome)]
    return json.dumps([{k: getattr(g, k) for k in names} for g in games])


def check_unit(config: TournamentConfig, k: int, chunk: int, games: list[GameOutcome]) -> None:
    """``ValueError`` naming the first thing in the kept work unit ``k`` (``chunk`` deal
    sets) that no run of ``config`` would have written: not exactly its deal sets in
    every rotation, a game of another table size, seats that are no rotation, wins that
    are not one game's, more rounds than the rules play, a row of another game or
    player, of a field's wrong type or out of bounds, rows missing a round, counts by
    turn that are not counts, a figure that is not finite."""
    n = config.num_players
    max_rounds = Rules.resolve(config.rules).max_rounds
    deals = range(k * chunk, min((k + 1) * chunk, config.deal_sets))
    want = sorted((d, r) for d in deals for r in range(n))
    got = sorted((g.deal, g.rotation) for g in games)
    if got != want:
        raise ValueError(
            f"it holds games {got[:3]}..., not the {len(want)} of deal sets {deals.start}-{deals.stop - 1}"
        )
    for g in games:
        where = f"deal set {g.deal}, rotation {g.rotation}"
        if not (len(g.seats) == len(g.places) == len(g.wins) == n) or sorted(g.seats) != list(range(n)):
            raise ValueError(f"{where}: not a game of {n} players in {n} seats")
        figures = [*g.places, *g.wins, *g.luck_wins, *g.luck_lost]
        if not all(isinstance(x, int | float) and math.isfinite(x) for x in figures):
            raise ValueError(f"{where}: a place, win or luck that is not a finite number")
        if not (all(0 <= w <= 1 for w in g.wins) and abs(sum(g.wins) - 1) < 1e-9):
            raise ValueError(f"{where}: wins {list(g.wins)} are not one game's (they share 1)")
        if not all(1 <= p <= n for p in g.places) or g.rounds < 1:
            raise ValueError(f"{where}: places {list(g.places)} or {g.rounds} rounds no game has")
        if g.luck_wins and not (len(g.luck_wins) == len(g.luck_lost) == n):
            raise ValueError(f"{where}: luck for {len(g.luck_wins)} players, not {n}")
        if not (isinstance(g.rounds, int) and g.rounds <= max_rounds):
            raise ValueError(f"{where}: {g.rounds!r} rounds, more than the rules play ({max_rounds})")
        seen = set()
        for row in g.rows:
            if len(row) != len(ROW_FIELDS) or tuple(row[1:3]) != (g.deal, g.rotation) or not 0 <= row[4] < n:
                raise ValueError(f"{where}: a row of another game or player: {list(row)[:6]}")
            problem = _row_problem(row, n, g.rounds)
            if problem or (row[3], row[5]) in seen:
                raise ValueError(f"{where}: a row no game writes ({problem or 'a seat twice in a round'})")
            seen.add((row[3], row[5]))
        if {r for r, _ in seen} != set(range(1, g.rounds + 1)):
            raise ValueError(f"{where}: its rows are not those of its {g.rounds} rounds")
        for counts in (g.draws_by_turn, g.switches_by_turn):
            if len(counts) != n or not all(
                isinstance(c, list) and len(c) == MAX_TURN_BIN and all(_count(x) for x in c) for c in counts
            ):
                raise ValueError(f"{where}: counts by turn that are not {n} lists of {MAX_TURN_BIN} counts")


#: The type of each field of a row (:data:`ROW_FIELDS`) beyond its ids: a count
#: (``int``), a number that may be missing (a hand not shown), a flag, or text.
_ROW_TYPES = {
    "lives_before": "int", "lost": "int", "lost_round": "bool", "reason": "text", "final_value": "number?",
    "turns": "int", "knocked": "bool", "knock_value": "number?", "knock_turn": "int?", "knock_success": "bool?",
    "blitz": "bool", "switches": "int", "discard_suit_changes": "int", "eliminated": "bool",
}  # fmt: skip
#: Largest magnitude of a row's number (a brag hand's value is in the thousands).
_MAX_ROW_NUMBER = 10**6


def _count(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= _MAX_ROW_NUMBER


def _row_problem(row: Sequence[Any], n: int, rounds: int) -> str:
    """What in a kept row (:data:`ROW_FIELDS`) no game writes ('' if nothing)."""
    if not (_count(row[0]) and _count(row[3]) and 1 <= row[3] <= rounds and _count(row[5]) and row[5] < n):
        return f"game {row[0]!r}, round {row[3]!r}, seat {row[5]!r}"
    for name, value in zip(ROW_FIELDS[6:], row[6:], strict=True):
        kind = _ROW_TYPES[name]
        if value is None and kind.endswith("?"):
            continue
        kind = kind.rstrip("?")
        if kind == "bool":
            ok = isinstance(value, bool)
        elif kind == "text":
            ok = isinstance(value, str) and re.fullmatch(r"[a-z_]{1,40}", value) is not None
        else:
            ok = (
                isinstance(value, int | float)
                and not isinstance(value, bool)
                and (kind == "number" or isinstance(value, int))
                and math.isfinite(value)
                and abs(value) <= _MAX_ROW_NUMBER
            )
        if not ok:
            return f"{name} {value!r}"
    return ""


def outcomes_from_json(text: str) -> list[GameOutcome]:
    """The games of :func:`outcome_json` (plain JSON: nothing is unpickled);
    ``ValueError`` if the text is not such a list."""
    try:
        out = []
        for d in json_value(text):
            out.append(
                GameOutcome(
                    int(d["deal"]),
                    int(d["rotation"]),
                    tuple(d["seats"]),
                    tuple(d["places"]),
                    tuple(d["wins"]),
                    int(d["rounds"]),
                    [tuple(r) for r in d["rows"]],
                    [list(x) for x in d["draws_by_turn"]],
                    [list(x) for x in d["switches_by_turn"]],
                    tuple(float(x) for x in d.get("luck_wins", ())),
                    tuple(float(x) for x in d.get("luck_lost", ())),
                )
            )
        return out
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"not a work unit of games: {type(e).__name__}: {e}") from None


# -- statistics -------------------------------------------------------------------


def player_labels(config: TournamentConfig) -> list[str]:
    """Unique labels: the display names if given, else the spec, prefixed by its index
    where a spec repeats."""
    if config.names:
        return list(config.names)
    return [f"{i}:{p}" if config.players.count(p) > 1 else p for i, p in enumerate(config.players)]


#: Student's t, the two-sided 95% quantile for 1 to 10 degrees of freedom.
_T95 = (
    12.7062047,
    4.3026527,
    3.1824463,
    2.7764451,
    2.5705818,
    2.4469119,
    2.3646243,
    2.3060041,
    2.2621572,
    2.2281389,
)
_Z95 = 1.959963984540054  #: the normal one's


def t95(df: int) -> float:
    """The two-sided 95% quantile of Student's t with ``df`` degrees of freedom: what an
    interval of ``df + 1`` clusters' mean is wide in standard errors (12.7 for two, 2.26
    for ten, 1.98 for a hundred: a few clusters' spread is itself uncertain, and 1.96
    would claim more than they show). Exact to 10, then the Cornish-Fisher expansion
    (off by less than 0.01%)."""
    if df < 1:
        return math.nan
    if df <= len(_T95):
        return _T95[df - 1]
    z = _Z95
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


def mean_ci(per_cluster: np.ndarray) -> tuple[float, float, float]:
    """Mean and 95% interval of cluster means (Student's t over the clusters: :func:`t95`)."""
    x = np.asarray(per_cluster, dtype=float)
    m = x.size
    mean = float(x.mean()) if m else float("nan")
    half = t95(m - 1) * float(x.std(ddof=1)) / math.sqrt(m) if m > 1 else float("nan")
    return mean, mean - half, mean + half


def ratio_ci(num: np.ndarray, den: np.ndarray) -> tuple[float, float, float]:
    """Ratio of sums over clusters with a 95% interval by the delta method (Student's t
    over the clusters)."""
    x = np.asarray(num, dtype=float)
    y = np.asarray(den, dtype=float)
    m = x.size
    if m == 0 or y.sum() == 0:
        return float("nan"), float("nan"), float("nan")
    r = float(x.sum() / y.sum())
    if m < 2:
        return r, float("nan"), float("nan")
    se = math.sqrt(float(((x - r * y) ** 2).sum()) / (m * (m - 1))) / float(y.mean())
    return r, r - t95(m - 1) * se, r + t95(m - 1) * se


def ratio_difference_ci(
    num_a: np.ndarray, den_a: np.ndarray, num_b: np.ndarray, den_b: np.ndarray
) -> tuple[float, float, float]:
    """Difference of two ratios of sums measured on the same clusters (paired), with a
    95% interval by the delta method."""
    xa, ya, xb, yb = (np.asarray(v, dtype=float) for v in (num_a, den_a, num_b, den_b))
    m = xa.size
    if m == 0 or ya.sum() == 0 or yb.sum() == 0:
        return float("nan"), float("nan"), float("nan")
    ra, rb = float(xa.sum() / ya.sum()), float(xb.sum() / yb.sum())
    if m < 2:
        return ra - rb, float("nan"), float("nan")
    z = (xa - ra * ya) / ya.mean() - (xb - rb * yb) / yb.mean()
    half = t95(m - 1) * math.sqrt(float((z**2).sum()) / (m * (m - 1)))
    return ra - rb, ra - rb - half, ra - rb + half


#: The per-player statistics of :func:`summarize`, in table order: key -> (title, kind).
STATS = {
    "win_rate": "win rate",
    "mean_place": "mean place",
    "lives_lost_per_round": "lives lost/round",
    "rounds_lost": "rounds lost",
    "knock_rate": "knocks/round",
    "knock_success": "knock success",
    "knock_value": "value at knock",
    "knock_turn": "turn at knock",
    "blitz_rate": "blitzes/round",
    "switches_per_round": "switches/round",
}


def summarize(config: TournamentConfig, games: list[GameOutcome]) -> dict[str, dict[str, list[float]]]:
    """Per player: every statistic of :data:`STATS` as ``[value, low, high]`` (95%)."""
    n = config.num_players
    deals = config.deal_sets
    # per deal set, per player sums
    wins = np.zeros((deals, n))
    places = np.zeros((deals, n))
    games_ct = np.zeros((deals, n))
    cols = {
        k: np.zeros((deals, n))
        for k in ("rounds", "lost", "lost_round", "knocks", "ksucc", "kval", "kturn", "blitz", "switches")
    }
    for g in games:
        for i in range(n):
            wins[g.deal, i] += g.wins[i]
            places[g.deal, i] += g.places[i]
            games_ct[g.deal, i] += 1
        for row in g.rows:
            d, p = row[1], row[4]
            c = cols
            c["rounds"][d, p] += 1
            c["lost"][d, p] += row[7]
            c["lost_round"][d, p] += row[8]
            c["blitz"][d, p] += row[16]
            c["switches"][d, p] += row[17]
            if row[12]:
                c["knocks"][d, p] += 1
                c["ksucc"][d, p] += row[15]
                c["kval"][d, p] += row[13]
                c["kturn"][d, p] += row[14]
    out: dict[str, dict[str, list[float]]] = {}
    for i, key in enumerate(player_labels(config)):
        c = {k: v[:, i] for k, v in cols.items()}
        out[key] = {
            "win_rate": list(ratio_ci(wins[:, i], games_ct[:, i])),
            "mean_place": list(ratio_ci(places[:, i], games_ct[:, i])),
            "lives_lost_per_round": list(ratio_ci(c["lost"], c["rounds"])),
            "rounds_lost": list(ratio_ci(c["lost_round"], c["rounds"])),
            "knock_rate": list(ratio_ci(c["knocks"], c["rounds"])),
            "knock_success": list(ratio_ci(c["ksucc"], c["knocks"])),
            "knock_value": list(ratio_ci(c["kval"], c["knocks"])),
            "knock_turn": list(ratio_ci(c["kturn"], c["knocks"])),
            "blitz_rate": list(ratio_ci(c["blitz"], c["rounds"])),
            "switches_per_round": list(ratio_ci(c["switches"], c["rounds"])),
        }
    return out


def measured_luck(games: Sequence[GameOutcome]) -> bool:
    """Whether every game's luck was measured (:attr:`TournamentConfig.luck` at rules
    it applies to), so the statistics can take it out."""
    return bool(games) and all(g.luck_wins for g in games)


def paired_differences(config: TournamentConfig, games: list[GameOutcome]) -> list[dict[str, Any]]:
    """:func:`paired_difference` (wins: ``diff``, ``low``, ``high``) and
    :func:`paired_lives_difference` (``lives_diff``, ``lives_low``, ``lives_high``) for
    every pair of players, in table order; where a spec sits at more than one seat,
    also every pair of distinct specs with their seats pooled (label
    ``"search (2 seats)"``): the sharper test of a head-to-head.

    Where the games' luck was measured the differences have it taken out (``luck``
    true); ``plain_*`` give them with the luck left in, and ``effective_games`` /
    ``lives_effective_games`` how many games of the plain estimate the corrected one is
    worth (the games times the ratio of the two variances)."""
    labels = player_labels(config)
    luck = measured_luck(games)
    plain_lives = lives_by_deal(config, games)
    lives = lives_by_deal(config, games, luck=True) if luck else plain_lives
    pairs: list[tuple[str, str, Any, Any]] = [
        (labels[a], labels[b], a, b)
        for a in range(config.num_players)
        for b in range(a + 1, config.num_players)
    ]
    specs = list(dict.fromkeys(config.players))
    if len(specs) < config.num_players:
        seats = {p: [i for i, q in enumerate(config.players) if q == p] for p in specs}
        for i, a in enumerate(specs):
            for b in specs[i + 1 :]:
                la, lb = (f"{p} ({len(seats[p])} seat{'s' if len(seats[p]) > 1 else ''})" for p in (a, b))
                pairs.append((la, lb, seats[a], seats[b]))
    out = []
    total = config.total_games
    for la, lb, a, b in pairs:
        diff = paired_difference(config, games, a, b)
        lives_diff = paired_lives_difference(config, games, a, b, lives)
        plain = paired_difference(config, games, a, b, luck=False) if luck else diff
        plain_lives_diff = paired_lives_difference(config, games, a, b, plain_lives) if luck else lives_diff
        worth = effective_games(total, plain, diff, config.deal_sets)
        lives_worth = effective_games(total, plain_lives_diff, lives_diff, config.deal_sets)
        diff, plain = within_win_range(diff), within_win_range(plain)
        out.append(
            {
                "a": la,
                "b": lb,
                "diff": diff[0],
                "low": diff[1],
                "high": diff[2],
                "lives_diff": lives_diff[0],
                "lives_low": lives_diff[1],
                "lives_high": lives_diff[2],
                "luck": luck,
                "plain_diff": plain[0],
                "plain_low": plain[1],
                "plain_high": plain[2],
                "plain_lives_diff": plain_lives_diff[0],
                "plain_lives_low": plain_lives_diff[1],
                "plain_lives_high": plain_lives_diff[2],
                "effective_games": worth,
                "lives_effective_games": lives_worth,
            }
        )
    return out


#: Fewest deal sets whose two variances make a ratio worth stating (with fewer, each
#: is a guess from a handful of numbers: 8 games said one estimate was worth 24,839).
MIN_DEAL_SETS_WORTH = 10


def effective_games(
    games: int, plain: Sequence[float], corrected: Sequence[float], deal_sets: int
) -> float | None:
    """Games of the plain estimate the corrected one is worth: ``games`` times the
    ratio of the variances, read from the widths of the two 95% intervals (the same
    ``deal_sets`` clusters); ``None`` where an interval has no width (identical
    players: no luck to take out, and a corrected width of rounding alone) or the deal
    sets are fewer than :data:`MIN_DEAL_SETS_WORTH`. Give the intervals as computed,
    before :func:`within_win_range`."""
    plain_width, width = plain[2] - plain[1], corrected[2] - corrected[1]
    if not (width > 0 and plain_width > 0) or deal_sets < MIN_DEAL_SETS_WORTH:
        return None
    return float(games * (plain_width / width) ** 2)


def within_win_range(ci: Sequence[float]) -> tuple[float, float, float]:
    """An interval of a difference of win rates cut to what such a difference can be,
    -1 to +1 (Student's t over a few deal sets reaches far past both; the estimate
    itself is left as measured)."""
    return float(ci[0]), max(float(ci[1]), -1.0), min(float(ci[2]), 1.0)


def paired_difference(
    config: TournamentConfig,
    games: list[GameOutcome],
    a: int | Sequence[int],
    b: int | Sequence[int],
    luck: bool = True,
) -> tuple[float, float, float]:
    """Win-rate difference of player ``a`` over player ``b`` with a 95% interval,
    paired by deal set (both met the same cards): significant when the interval
    excludes 0. ``a`` and ``b`` may be groups of players (the same spec at several
    seats): then the difference of their mean win rates. With ``luck`` (and the luck
    measured: :func:`measured_luck`) each game's luck in wins is taken out."""
    group_a = [a] if isinstance(a, int) else list(a)
    group_b = [b] if isinstance(b, int) else list(b)
    luck = luck and measured_luck(games)
    deals = config.deal_sets
    ours: list[list[float]] = [[] for _ in range(deals)]
    theirs: list[list[float]] = [[] for _ in range(deals)]
    count = np.zeros(deals)
    for g in games:
        wins = np.subtract(g.wins, g.luck_wins) if luck else g.wins
        ours[g.deal] += [wins[i] / len(group_a) for i in group_a]
        theirs[g.deal] += [wins[i] / len(group_b) for i in group_b]
        count[g.deal] += 1
    # exact sums (fsum): two identical players meet the same numbers in another order,
    # and differ by exactly 0, not by rounding
    diff = np.array([math.fsum(o) - math.fsum(t) for o, t in zip(ours, theirs, strict=True)])
    return mean_ci(diff / np.maximum(count, 1))


def lost_label(rules: str | Rules) -> str:
    """What a row's ``lost`` counts at a table, as its labels say it: ``"lives lost a
    round"``, or at a points or chips table ``"chips lost a round"`` (what a player
    scored counts negative: the lower the better, as with lives)."""
    rules = Rules.preset(rules) if isinstance(rules, str) else rules
    return f"{rules.scoring} lost a round"


def lives_by_deal(
    config: TournamentConfig, games: list[GameOutcome], players_in: int | None = None, luck: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Lives lost and rounds played, per deal set and player: ``(deals, players)`` each;
    with ``players_in``, only the rounds dealt to that many players (2: the heads-up
    end of a game). With ``luck`` (and the luck measured, every round counted) each
    game's luck in lives is taken out of its lives lost."""
    lost = np.zeros((config.deal_sets, config.num_players))
    rounds = np.zeros_like(lost)
    for g in games:
        dealt = Counter(row[3] for row in g.rows)  # a round has one row per player dealt in
        for row in g.rows:
            if players_in is None or dealt[row[3]] == players_in:
                rounds[row[1], row[4]] += 1
                lost[row[1], row[4]] += row[7]
    if luck and players_in is None and measured_luck(games):
        taken: dict[tuple[int, int], list[float]] = {}
        for g in games:
            for p, x in enumerate(g.luck_lost):
                taken.setdefault((g.deal, p), []).append(x)
        for (deal, p), xs in taken.items():  # exact sums: see paired_difference
            lost[deal, p] -= math.fsum(xs)
    return lost, rounds


def paired_lives_difference(
    config: TournamentConfig,
    games: list[GameOutcome],
    a: int | Sequence[int],
    b: int | Sequence[int],
    lives: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[float, float, float]:
    """Lives lost per round of player ``a`` minus player ``b`` (groups: their seats'
    rounds pooled) with a 95% interval, paired by deal set; negative: ``a`` loses
    fewer. ``lives``: :func:`lives_by_deal`, when already counted."""
    lost, rounds = lives if lives is not None else lives_by_deal(config, games)
    group_a = [a] if isinstance(a, int) else list(a)
    group_b = [b] if isinstance(b, int) else list(b)
    return ratio_difference_ci(
        lost[:, group_a].sum(1), rounds[:, group_a].sum(1), lost[:, group_b].sum(1), rounds[:, group_b].sum(1)
    )


def ratings(config: TournamentConfig, games: list[GameOutcome]) -> list[dict[str, Any]]:
    """OpenSkill (Plackett-Luce) ratings from finishing places, game by game in order;
    a leaderboard sorted by the conservative ``ordinal`` (mu - 3 sigma).

    Bots do not change strength during a tournament, so the model has no drift
    (``tau=0``): every game counts alike. With the default drift the last few hundred
    games dominate and close players swap places by chance.
    """
    from openskill.models import PlackettLuce

    model = PlackettLuce(tau=0.0)
    players = [model.rating(name=f"{i}:{name}") for i, name in enumerate(config.players)]
    for g in games:
        teams = [[players[i]] for i in range(config.num_players)]
        rated = model.rate(teams, ranks=list(g.places))
        players = [t[0] for t in rated]
    labels = player_labels(config)
    board = [
        {"label": labels[i], "index": i, "mu": p.mu, "sigma": p.sigma, "ordinal": p.ordinal()}
        for i, p in enumerate(players)
    ]
    return sorted(board, key=lambda r: -r["ordinal"])
