"""The heads-up experiments' endgames (not part of the main suite, whose ``testpaths``
is ``tests``): ``python -m pytest lab/endgame`` from the repository root."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

import headsup  # noqa: E402
from starts import endgame_standing  # noqa: E402

import agents  # noqa: E402
from thirtyone_env.game.rules import Rules  # noqa: E402


def test_a_drawn_endgame_puts_the_seat_and_one_other_seat_in_with_lives_drawn():
    rules = Rules.preset("standard")
    others, lives = set(), set()
    for k in range(200):
        seat = k % 4
        standing = endgame_standing(np.random.default_rng(k), rules, 4, seat, 1.0)
        seats_in = [p for p in range(4) if standing[p] is not None]
        assert len(seats_in) == 2 and seat in seats_in
        (other,) = (p for p in seats_in if p != seat)
        others.add((other - seat) % 4)
        lives.update(standing[p] for p in seats_in)
    assert others == {1, 2, 3} and lives == {1, 2, 3, 4}


def test_the_endgame_share_is_the_share_of_heads_up_starts():
    rules = Rules.preset("standard")
    draws = [endgame_standing(np.random.default_rng(k), rules, 4, 0, 0.25) for k in range(2000)]
    share = sum(d is not None for d in draws) / len(draws)
    assert 0.22 < share < 0.28
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    assert endgame_standing(rng, rules, 4, 0, 0.0) is None
    assert rng.bit_generator.state == before  # share 0 draws nothing


def test_headsup_games_start_at_the_drawn_end_and_are_the_same_game_for_either_player():
    rules = Rules.preset("standard")
    seats = [agents.from_spec("greedy") for _ in range(4)]
    games = [headsup.play_endgame(seats, rules, 5, g) for g in range(12)]
    assert games == [
        headsup.play_endgame(seats, rules, 5, g) for g in range(12)
    ]  # a game is its seed and index
    assert any(won == 1.0 for won, _, _ in games) and any(won == 0.0 for won, _, _ in games)
    for g, (won, lost, rounds) in enumerate(games):
        standing = endgame_standing(np.random.default_rng([5, g, 0]), rules, 4, 0, 1.0)
        assert standing[0] is not None and sum(x is not None for x in standing) == 2 and rounds >= 1
        # the loser pays every life and the ride on the bike (free_ride); the winner fewer
        assert lost == standing[0] + 1 if won == 0.0 else 0 <= lost <= standing[0]


def test_the_script_runs_from_the_repository_root():
    script = str(HERE / "headsup.py")
    done = subprocess.run(
        [sys.executable, script, "greedy", "greedy", "--games", "6", "--seed", "2"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (
        "difference +0.0 points" in done.stdout and "difference +0.0000" in done.stdout
    )  # the same player: 0


@pytest.mark.parametrize(
    ("bad", "word"), [(["--rules", "no_elimination"], "points"), (["--opponent", "nobody"], "nobody")]
)
def test_bad_options_are_refused_before_any_game(bad, word):
    refused = subprocess.run(
        [sys.executable, str(HERE / "headsup.py"), "greedy", "expert", *bad],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert refused.returncode == 2 and word in refused.stderr and "Traceback" not in refused.stderr
