"""The ``win`` objective: a settled round valued by the chance to win the game from the
standing it leaves (``thirtyone_env.harness.equity``), exact on small standings."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest
from conftest import deal, heads_up_known

from agents.expert import ExpertPlayer
from thirtyone_env.envs.env import ThirtyOneEnv
from thirtyone_env.game.actions import DRAW_STOCK, KNOCK
from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.driver import round_value
from thirtyone_env.harness.equity import check_win_objective, life_at_start, standing_equity, win_chance
from thirtyone_env.research.oracle import measure
from training.imitation import _table_move, knock_gain


def _heads_up(a: int, b: int) -> float:
    """Seat 0's chance when each round one of two seats, drawn evenly, loses: seat 1
    takes its b-th loss before seat 0 its a-th, i.e. at least b of the first a+b-1
    rounds go against seat 1 (negative binomial, written independently of the module)."""
    rounds = a + b - 1
    return sum(comb(rounds, k) for k in range(b, rounds + 1)) / 2**rounds


@pytest.mark.parametrize(("a", "b"), [(1, 1), (2, 1), (1, 3), (4, 5), (5, 5), (7, 2)])
def test_heads_up_chances_are_the_negative_binomial(a, b):
    assert win_chance([a, b], 0) == pytest.approx(_heads_up(a, b), abs=1e-12)
    assert win_chance([a, b], 1) == pytest.approx(1 - _heads_up(a, b), abs=1e-12)


def test_chances_share_the_game_and_order_by_losses_left():
    left = [3, 1, 0, 5, 3]
    chances = [win_chance(left, p) for p in range(5)]
    assert sum(chances) == pytest.approx(1.0, abs=1e-12)
    assert chances[2] == 0.0  # out
    assert chances[0] == pytest.approx(chances[4], abs=1e-12)  # the same standing
    assert chances[1] < chances[0] < chances[3]
    assert win_chance([5, 5, 5, 5], 2) == pytest.approx(0.25, abs=1e-12)


def test_one_life_at_the_start_is_the_unit():
    """Standard rules (4 lives and the free ride: 5 losses to go out), heads-up: one life
    lost costs 1/2 - 93/256 = 35/256 of the game."""
    assert life_at_start(2, 5) == pytest.approx(35 / 256, abs=1e-12)
    for n in (2, 3, 4):
        unit = life_at_start(n, 5)
        assert unit == pytest.approx(1 / n - win_chance([4] + [5] * (n - 1), 0), abs=1e-12)


def test_a_settled_round_is_worth_the_standing_it_leaves():
    """Seat 1 is dealt a 31: seats 0 and 2 lose a life each. With 4 lives and the free
    ride they are left 4 losses, seat 1 five; with 1 life and no free ride both are out
    and seat 1 has won the game."""
    s, _ = deal(["2c 3d 5h", "Ah Kh Qh", "4c 6d 8s"], "9c", dealer=2, rules=Rules())
    unit = life_at_start(3, 5)
    assert standing_equity(s, 0) == pytest.approx(win_chance([4, 5, 4], 0) / unit)
    assert round_value(s, 1, 0.0, "win") == pytest.approx(win_chance([4, 5, 4], 1) / unit)
    s, _ = deal(["2c 3d 5h", "Ah Kh Qh", "4c 6d 8s"], "9c", dealer=2, rules=Rules(lives=1, free_ride=False))
    assert s.winners == (1,)
    unit = life_at_start(3, 1)
    assert [round_value(s, p, 0.0, "win") for p in range(3)] == [0.0, pytest.approx(1 / unit), 0.0]
    with pytest.raises(ValueError, match="objective='wins' is not allowed"):
        round_value(s, 0, 0.0, "wins")


def test_a_knock_that_puts_the_knocker_out_costs_the_whole_game():
    """Knocking a 4 on the bike against a known 30 (both on the bike): the knocker loses
    and is out, worth -2 in lives and nothing in the win objective in every play-out.
    Drawing instead leaves seat 0 a 0, a half (a round that would put both out: both
    stay in) or the whole game (the opponent out) in units of one life at the start,
    35/256; the measured gain is the mean of the paired differences."""
    env = ThirtyOneEnv(num_players=2, opponents=ExpertPlayer(), seat=0)
    env.reset(seed=0)
    start = heads_up_known("2c 3d 4h", "Kh Qh Jh", lives=0)
    move = _table_move(env, ExpertPlayer())

    def seed():  # what knock_gain draws from default_rng(3) (spawning children uses one up)
        return np.random.SeedSequence(int(np.random.default_rng(3).integers(2**63)))

    lives = measure(start, [KNOCK, DRAW_STOCK], move, seed(), 8)
    win = measure(start, [KNOCK, DRAW_STOCK], move, seed(), 8, objective="win")
    assert (lives[0] == -2.0).all() and (win[0] == 0.0).all()
    game = 256 / 35
    assert all(any(v == pytest.approx(x) for x in (0.0, game / 2, game)) for v in win[1])
    assert np.isclose(win[1], game).any()
    env.unwrapped.state = start
    got = knock_gain(env.unwrapped, ExpertPlayer(), DRAW_STOCK, 8, np.random.default_rng(3), 0.0, "win")
    assert got == pytest.approx((win[0] - win[1]).mean())
    got = knock_gain(env.unwrapped, ExpertPlayer(), DRAW_STOCK, 8, np.random.default_rng(3), 0.0)
    assert got == pytest.approx((lives[0] - lives[1]).mean())


def test_the_win_objective_is_refused_where_it_has_no_meaning():
    with pytest.raises(ValueError, match="values lives games; these rules score 'points'"):
        check_win_objective(Rules.resolve("no_elimination"), 4)
    with pytest.raises(ValueError, match="at most 12 losses a seat"):
        check_win_objective(Rules(lives=20), 4)
    check_win_objective(Rules.resolve("standard"), 7)
