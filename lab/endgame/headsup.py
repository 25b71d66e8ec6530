"""Heads-up ends: one player minus another at the drawn heads-up end of a game.

    python lab/endgame/headsup.py ppo:path=agents/models/ppo_standard_4p-v5.zip expert \\
        --opponent greedy --games 8000 --workers 2

A full-game ablation (``benchmarks/ablation.py --by-players-in``) meets the heads-up end
of a game in about one round in ten, too few to tell heads-up play apart. Here every
game starts there: seat 0 and one other seat in, each with lives drawn from 1 to the
rules' lives (``endgame_standing`` in ``starts.py`` beside this script), the other
seats out, and the game is played to its end on the plain engine.
Game ``i`` is the same for both players: its standing, dealer and every round's deck
order come from the seed and ``i`` alone, so the difference is paired game by game:
games won (95% interval of the mean difference) and lives lost a round (the ratio's
difference, delta method).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

import agents
from thirtyone_env.game.deal import new_game
from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.command import add_game_options
from thirtyone_env.harness.driver import NOBODY, Table, reset_players
from thirtyone_env.harness.evaluation import mean_ci, ratio_difference_ci

# lab is not a package: ``starts.py`` beside this script, however the script is loaded
sys.path.insert(0, str(Path(__file__).resolve().parent))
from starts import endgame_standing  # noqa: E402

CHUNK = 250  #: games a worker plays per task


def play_endgame(players: Sequence, rules: Rules, seed: int, game: int) -> tuple[float, int, int]:
    """Play game ``game`` of the seed from its drawn heads-up standing with ``players``
    seated (seat 0 measured): (seat 0's share of the win, lives it lost, rounds)."""
    n = len(players)
    draw = np.random.default_rng([seed, game, 0])
    standing = endgame_standing(draw, rules, n, 0, 1.0)
    seats_in = [p for p in range(n) if standing[p] is not None]
    dealer = seats_in[int(draw.integers(len(seats_in)))]
    cards = np.array(rules.deck_cards)

    def deck(k: int) -> list[int]:
        return np.random.default_rng([seed, game, 1, k]).permutation(cards).tolist()

    rng = np.random.default_rng([seed, game, 2])
    reset_players(players, rng)
    state = new_game(rules, n, rng, dealer=dealer, deck=deck(0), lives=standing)
    table = Table(state, players, rng, decks=lambda k: deck(k + 1))
    table.advance(NOBODY)
    won = 1.0 / len(state.winners) if 0 in state.winners else 0.0
    return won, sum(r.losses[0] for r in table.results), len(table.results)


def _chunk(args: tuple[str, str, int, str, int, int, int]) -> list[tuple[float, int, int]]:
    spec, opponent, n, rules, seed, lo, hi = args
    players = [agents.from_spec(spec)] + [agents.from_spec(opponent) for _ in range(n - 1)]
    r = Rules.preset(rules)
    return [play_endgame(players, r, seed, g) for g in range(lo, hi)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", help="the player measured (a player spec)")
    parser.add_argument("b", help="the player it is measured against, on the same games")
    parser.add_argument(
        "--opponent", default="greedy", help="the spec of the seat left in (and of the seats out)"
    )
    add_game_options(parser, games=8000, seed=77, rules_help="a rules preset scored in lives")
    args = parser.parse_args(argv)
    try:
        rules = Rules.preset(args.rules)
        if rules.scoring != "lives":
            raise ValueError(
                f"--rules {args.rules} scores {rules.scoring}; heads-up ends are for lives games"
            )
        if args.games < 1 or args.workers < 1:
            raise ValueError("--games and --workers must be at least 1")
        rules.check_num_players(args.players)
        agents.check_at_table((args.a, args.b, args.opponent), args.players, rules)
    except ValueError as e:
        parser.error(str(e))
    from tqdm import tqdm

    chunks = [(lo, min(lo + CHUNK, args.games)) for lo in range(0, args.games, CHUNK)]
    bar = tqdm(total=2 * args.games, unit="game", desc="heads-up", file=sys.stderr)
    played = []
    with bar, ProcessPoolExecutor(args.workers) as pool:
        for spec in (args.a, args.b):
            rows: list[tuple[float, int, int]] = []
            tasks = [(spec, args.opponent, args.players, args.rules, args.seed, lo, hi) for lo, hi in chunks]
            for part in pool.map(_chunk, tasks):
                rows += part
                bar.update(len(part))
            played.append(np.array(rows, dtype=float))
    a, b = played
    wins, wins_low, wins_high = mean_ci(a[:, 0] - b[:, 0])
    lives, lives_low, lives_high = ratio_difference_ci(a[:, 1], a[:, 2], b[:, 1], b[:, 2])
    print(
        f"{args.a} minus {args.b}, seat 0 heads-up against {args.opponent} "
        f"({args.players}-seat table, seed {args.seed}): {args.games} games each"
    )
    print(
        f"wins: {100 * a[:, 0].mean():.1f}% vs {100 * b[:, 0].mean():.1f}%, "
        f"difference {100 * wins:+.1f} points [{100 * wins_low:+.1f}, {100 * wins_high:+.1f}]"
    )
    print(
        f"lives lost a round: {a[:, 1].sum() / a[:, 2].sum():.4f} vs {b[:, 1].sum() / b[:, 2].sum():.4f}, "
        f"difference {lives:+.4f} [{lives_low:+.4f}, {lives_high:+.4f}]; "
        f"rounds a game {a[:, 2].mean():.2f} vs {b[:, 2].mean():.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
