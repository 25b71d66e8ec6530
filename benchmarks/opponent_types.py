"""How well the opponent history tells two kinds of player apart, by rounds seen.

    python benchmarks/opponent_types.py greedy expert --games 1000 --workers 2

Half the games seat three players of the first kind around the observer (seat 0,
``--observer``), half three of the second. After every settled round each opponent's
``opponent_history`` row, as the observer's observation holds it
(``ObsLayout(..., opponent_history=True)``), is one example labelled with its kind. A
linear read-out (least squares on the six numbers and their squares) is fitted on
half the games' rows and scored on the other half's, for rows with 1, 3, 5 and
10 or more rounds seen: what a learner could read from the part at that point of a
game. Games ``4k`` and ``4k+1`` (one of each kind) are fitted, ``4k+2`` and ``4k+3``
scored; each is seeded by ``--seed`` and its number alone.
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor

import numpy as np

import agents
from thirtyone_env.game.deal import new_game
from thirtyone_env.game.encoding import HISTORY_ROUNDS, ObsLayout, encode_flat
from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.command import add_game_options
from thirtyone_env.harness.driver import NOBODY, Table, reset_players

CHUNK = 50  #: games a worker plays per task
ROUNDS_SEEN = (1, 3, 5, HISTORY_ROUNDS)  #: the last one: that many rounds or more


def history_rows(observer: str, kinds: tuple[str, str], players: int, rules: Rules, seed: int, game: int):
    """Game ``game``: (rows, labels) of every opponent's history row after every
    settled round; the opponents are all of kind ``game % 2``."""
    label = game % 2
    seats = [agents.from_spec(observer)] + [agents.from_spec(kinds[label]) for _ in range(players - 1)]
    layout = ObsLayout(players, rules, opponent_history=True)
    rng = np.random.default_rng([seed, game])
    reset_players(seats, rng)
    rows: list[np.ndarray] = []

    def settled(s) -> None:
        part = layout.part(encode_flat(s, 0, layout), "opponent_history")
        rows.extend(part[r - 1].copy() for r in range(1, players) if s.result.values[r] is not None)

    state = new_game(rules, players, rng)
    Table(state, seats, rng, on_settle=settled).advance(NOBODY)
    return rows, [label] * len(rows)


def _chunk(args: tuple) -> list[tuple[int, list[np.ndarray], list[int]]]:
    observer, kinds, players, rules, seed, lo, hi = args
    r = Rules.preset(rules)
    return [(g, *history_rows(observer, kinds, players, r, seed, g)) for g in range(lo, hi)]


def accuracy(train: tuple[np.ndarray, np.ndarray], test: tuple[np.ndarray, np.ndarray]) -> float:
    """Held-out accuracy of a least-squares read-out on the rows and their squares."""

    def features(x: np.ndarray) -> np.ndarray:
        return np.c_[x, x**2, np.ones(len(x))]

    coef, *_ = np.linalg.lstsq(features(train[0]), 2.0 * train[1] - 1.0, rcond=None)
    return float(((features(test[0]) @ coef > 0) == test[1]).mean())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("first", help="one kind of opponent (a player spec)")
    parser.add_argument("second", help="the other kind")
    parser.add_argument("--observer", default="greedy", help="the player in seat 0, whose view is read")
    add_game_options(parser, games=1000, seed=5, games_help="games, half with each kind")
    args = parser.parse_args(argv)
    try:
        rules = Rules.preset(args.rules)
        rules.check_num_players(args.players)
        if args.games < 4 or args.workers < 1:
            raise ValueError("--games must be at least 4 and --workers at least 1")
        agents.check_at_table((args.first, args.second, args.observer), args.players, rules)
    except ValueError as e:
        parser.error(str(e))
    from rich.console import Console

    from thirtyone_env.harness.progress import RateBar

    kinds = (args.first, args.second)
    chunks = [(lo, min(lo + CHUNK, args.games)) for lo in range(0, args.games, CHUNK)]
    tasks = [(args.observer, kinds, args.players, args.rules, args.seed, lo, hi) for lo, hi in chunks]
    split: dict[int, tuple[list, list]] = {0: ([], []), 1: ([], [])}
    console = Console(stderr=True)
    with RateBar("games", "games", args.games, console) as advance, ProcessPoolExecutor(args.workers) as pool:
        parts = pool.map(_chunk, tasks) if args.workers > 1 else map(_chunk, tasks)
        for part in parts:
            for game, rows, labels in part:
                split[game % 4 >= 2][0].extend(rows)  # games 4k, 4k+1 fit; 4k+2, 4k+3 test
                split[game % 4 >= 2][1].extend(labels)
            advance(len(part))
    (fit_x, fit_y), (test_x, test_y) = ((np.array(x), np.array(y)) for x, y in split.values())
    print(
        f"{args.first} or {args.second}? one opponent's history row, {args.observer} observing, seed {args.seed}"
    )
    print("| rounds seen | rows fitted / tested | held-out accuracy |")
    print("|---:|---:|---:|")
    for k in ROUNDS_SEEN:
        seen = k / HISTORY_ROUNDS
        pick_fit = fit_x[:, 0] >= 1.0 if k == HISTORY_ROUNDS else np.isclose(fit_x[:, 0], seen)
        pick_test = test_x[:, 0] >= 1.0 if k == HISTORY_ROUNDS else np.isclose(test_x[:, 0], seen)
        if pick_fit.sum() < 10 or pick_test.sum() < 10:
            print(
                f"| {k}{'+' if k == HISTORY_ROUNDS else ''} | {pick_fit.sum()} / {pick_test.sum()} | too few |"
            )
            continue
        acc = accuracy((fit_x[pick_fit], fit_y[pick_fit]), (test_x[pick_test], test_y[pick_test]))
        label = f"{k}+" if k == HISTORY_ROUNDS else str(k)
        print(f"| {label} | {pick_fit.sum()} / {pick_test.sum()} | {100 * acc:.1f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
