"""Luck as a control variate: every correction has mean exactly zero, the games are
the same with or without it, and the corrected estimate agrees with the plain one."""

import copy
import itertools
import json
import math

import numpy as np
import pytest
from conftest import run_evaluate

import agents
from agents.gauntlet import run_gauntlet
from thirtyone_env.game.actions import DRAW_STOCK, KNOCK
from thirtyone_env.game.engine import ROUND_OVER, apply_action, legal_actions, legal_mask, new_game
from thirtyone_env.game.policies import RandomPolicy
from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.evaluation import (
    TournamentConfig,
    measured_luck,
    paired_differences,
    run_tournament,
)
from thirtyone_env.harness.luck import (
    FEATURES,
    LuckObserver,
    _lives,
    _mean_and_last,
    applies,
    default_model,
    features,
    state_arrays,
    state_features,
)


def _mid_round(seed: int, rules: str = "standard", n: int = 4, moves: int = 9):
    """A state some moves into a round, a seat to draw from the stock next."""
    rng = np.random.default_rng(seed)
    s = new_game(rules, n, rng)
    for _ in range(moves):
        legal = legal_actions(s)
        apply_action(s, DRAW_STOCK if DRAW_STOCK in legal else legal[-1], rng)
        assert s.phase < ROUND_OVER
    while DRAW_STOCK not in legal_actions(s):
        apply_action(s, legal_actions(s)[-1], rng)
    return s


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_draws_luck_averages_exactly_zero_over_the_card_on_top(seed):
    """Whatever card lies on top of the stock, the luck of drawing it is measured; over
    every card that could lie there (all equally likely) it sums to zero, by seat, in
    lives and in wins."""
    s = _mid_round(seed)
    seat = s.current
    lost, wins = [], []
    for k in range(len(s.stock)):
        t = copy.deepcopy(s)
        t.stock[-1], t.stock[k] = t.stock[k], t.stock[-1]
        luck = LuckObserver(default_model(), t)
        luck.dealt(t)  # the standing the round's loser leaves
        luck.lost[:] = luck.wins[:] = 0.0
        luck.before(t, seat, DRAW_STOCK)
        lost.append(luck.lost.copy())
        wins.append(luck.wins.copy())
    assert np.abs(np.mean(lost, axis=0)).max() < 1e-12 and np.abs(np.mean(wins, axis=0)).max() < 1e-12
    assert np.abs(np.array(lost)).max() > 1e-3  # some cards are lucky, some are not
    blitz = [_draws_a_blitz(s, k) for k in range(len(s.stock))]
    moved = np.sum(lost, axis=1)[~np.array(blitz)]
    assert np.allclose(moved, 0.0)  # without a blitz the chance to lose moves between seats


def _draws_a_blitz(s, k: int) -> bool:
    t = copy.deepcopy(s)
    t.stock[-1], t.stock[k] = t.stock[k], t.stock[-1]
    hand = [*t.hands[t.current], t.stock[-1]]
    rules = Rules.preset("standard")
    return max(_value3(rules, [c for c in hand if c != drop]) for drop in hand) == 31


def _value3(rules: Rules, hand: list[int]) -> float:
    from thirtyone_env.game.cards import NUM_CARDS, PAIR_STRIDE, hand_table

    return hand_table(rules)[hand[0] * PAIR_STRIDE + hand[1] * NUM_CARDS + hand[2]]


def _lives_of(s, drawn: bool = False) -> np.ndarray:
    f, active, knocker = state_features(s, drawn)
    out = np.zeros(s.num_players)
    _lives(f, active, knocker, default_model().arrays(), out)
    return out


def _stacked(rules: str, drawer: str):
    """The first turn of a round dealt ``drawer`` to seat 0, the seat to play first."""
    from thirtyone_env.game.engine import stacked_deck

    hands = [drawer, "7h 8c Td", "7c 8h Js", "Qd Jc 7d"]  # a 32-card deck's (7 up)
    return new_game(
        rules, 4, np.random.default_rng(0), dealer=3, deck=stacked_deck(hands, upcard="8d", dealer=3)
    )


@pytest.mark.parametrize(
    "state",
    [
        *[lambda seed=seed: _mid_round(seed, moves=8 + seed) for seed in (1, 2, 3, 4)],
        # three of a kind worth 30.5: many cards leave the drawer that value, each
        # offering the next seat another card
        lambda: _stacked("dutch", "9s 9d 9c"),
        lambda: _stacked("cut_throat", "9s 9d 9c"),
        lambda: _stacked("dutch", "9s 9d Kc"),
        lambda: _mid_round(6, "dutch", moves=4),
    ],
)
def test_a_draws_expectation_worked_out_by_groups_is_the_mean_over_every_card(state):
    """Cards that leave the drawer the same value and offer the next seat the same gain
    are valued once; the expectation is still the mean over every card one by one."""
    s = state()
    state = state_arrays(s, drawn=True)
    cards = np.array(s.stock, dtype=np.int64)
    weights = default_model().arrays()
    mean, last = np.zeros(4), np.zeros(4)
    _mean_and_last(state, s.current, cards, weights, mean, last)
    each = []
    for card in cards:
        hands = state[1].copy()
        hands[s.current, 3] = card
        f = np.zeros((4, len(FEATURES)))
        features(state, hands, f)
        lives = np.zeros(4)
        _lives(f, state[2], state[5], weights, lives)
        each.append(lives)
    assert np.abs(mean - np.mean(each, axis=0)).max() < 1e-12
    assert np.abs(last - each[-1]).max() < 1e-12


def test_a_draw_that_makes_31_is_valued_exactly():
    """A 31 made on a turn ends the round at once, every other seat a life down: the
    model answers that exactly, so that luck is measured in full."""
    rng = np.random.default_rng(3)
    for _ in range(500):
        s = _mid_round(int(rng.integers(1 << 30)))
        hits = [k for k in range(len(s.stock)) if _draws_a_blitz(s, k)]
        if hits:
            break
    t = copy.deepcopy(s)
    k = hits[0]
    t.stock[-1], t.stock[k] = t.stock[k], t.stock[-1]
    seat = t.current
    apply_action(t, DRAW_STOCK, rng)
    lives = _lives_of(t)
    assert lives[seat] == 0.0 and all(lives[p] == 1.0 for p in range(4) if p != seat)


def test_the_model_reads_a_showdown_to_come_and_a_knocker_caught_low():
    """After a knock, once no seat has a turn before the showdown, the seat holding the
    lowest hand is the likely loser; a knocker loses more lives than a seat that did not
    knock would (the knocker's penalty)."""
    model = default_model()
    assert model.knocker_scale > 0.5
    rng = np.random.default_rng(8)
    checked = 0
    for _ in range(400):
        s = new_game("standard", 3, rng)
        while s.phase < ROUND_OVER and s.knocker < 0:
            legal = legal_actions(s)
            apply_action(s, KNOCK if KNOCK in legal and s.turn > 3 else legal[0], rng)
        if s.phase >= ROUND_OVER:
            continue
        while s.phase < ROUND_OVER:
            f, _, _ = state_features(s)
            if (
                f[:, FEATURES.index("lowest x last")].max() > 0
                and f[:, FEATURES.index("four cards")].max() > 0
            ):
                lives = _lives_of(s)
                low = int(np.argmax(f[:, FEATURES.index("lowest")]))
                if f[:, FEATURES.index("lowest")].sum() == 1:
                    assert np.argmax(lives) == low and lives[low] > 0.6
                    checked += 1
            legal = legal_actions(s)
            apply_action(s, DRAW_STOCK if DRAW_STOCK in legal else legal[0], rng)
    assert checked >= 10


def test_a_deals_luck_averages_exactly_zero_over_who_gets_which_hand():
    """The seats dealt in are alike to the model, so over every way of handing the same
    hands round the table the deal's luck sums to zero for every seat."""
    s = new_game("standard", 4, np.random.default_rng(5), dealer=3)
    hands = [list(h) for h in s.hands]
    total_lost, total_wins = np.zeros(4), np.zeros(4)
    for order in itertools.permutations(range(4)):
        t = copy.deepcopy(s)
        t.hands = [list(hands[order[p]]) for p in range(4)]
        luck = LuckObserver(default_model(), t)
        luck.dealt(t)
        total_lost += luck.lost
        total_wins += luck.wins
    assert np.abs(total_lost).max() < 1e-12 and np.abs(total_wins).max() < 1e-12


@pytest.mark.parametrize(
    ("rules", "lives"),
    [("standard", [1, 3, 3]), ("standard", [0, 3, 3]), ("pagat", [1, 2, 3]), ("standard", [3, 3, 3])],
)
def test_a_dealt_31s_luck_averages_exactly_zero_though_the_engine_settles_it_at_once(rules, lives):
    """A 31 dealt ends the round inside the deal, before the observer sees it (lives
    taken, a seat maybe put out): its luck is still read as dealt, so over the rotations
    of the same hands (the 31 to every seat in turn) it sums to zero, in lives and wins."""
    from thirtyone_env.game.engine import stacked_deck

    hands = ["As Ks Qs", "2h 7c 9d", "3c 8h 4s"]
    total_lost, total_wins = np.zeros(3), np.zeros(3)
    for r in range(3):
        rotated = [hands[(p + r) % 3] for p in range(3)]
        deck = stacked_deck(rotated, upcard="2d", dealer=2)
        s = new_game(rules, 3, np.random.default_rng(0), dealer=2, deck=deck, lives=lives)
        assert s.phase >= ROUND_OVER  # settled by the deal itself
        luck = LuckObserver(default_model(), s)
        luck.dealt(s)
        holder = (3 - r) % 3
        assert luck.lost[holder] < 0  # the 31's holder was lucky: it loses nothing
        total_lost += luck.lost
        total_wins += luck.wins
    assert np.abs(total_lost).max() < 1e-12 and np.abs(total_wins).max() < 1e-12


def test_the_games_are_the_same_with_the_luck_measured_or_not():
    plain = TournamentConfig(("expert", "greedy", "blitz31"), 12, "standard", 3, luck=False)
    measured = TournamentConfig(("expert", "greedy", "blitz31"), 12, "standard", 3)
    a = run_tournament(plain, agents.from_spec)
    b = run_tournament(measured, agents.from_spec)
    assert [(g.wins, g.places, g.rows) for g in a] == [(g.wins, g.places, g.rows) for g in b]
    assert not measured_luck(a) and measured_luck(b)
    assert all(len(g.luck_wins) == len(g.luck_lost) == 3 for g in b)
    again = run_tournament(measured, agents.from_spec)
    assert [(g.luck_wins, g.luck_lost) for g in again] == [(g.luck_wins, g.luck_lost) for g in b]
    two = run_tournament(
        TournamentConfig(("expert", "greedy", "blitz31"), 12, "standard", 3, 2), agents.from_spec
    )
    assert [(g.luck_wins, g.luck_lost) for g in two] == [(g.luck_wins, g.luck_lost) for g in b]


def test_the_luck_is_only_measured_where_the_model_applies():
    assert applies(Rules.preset("standard")) and applies(Rules.preset("blitz31"))
    for rules in ("switch", "stop_the_bus", "banking"):
        assert not applies(Rules.preset(rules))
        config = TournamentConfig(("expert", "greedy"), 4, rules, 1)
        games = run_tournament(config, agents.from_spec)
        assert not measured_luck(games)
        row = paired_differences(config, games)[0]
        assert (
            not row["luck"]
            and row["diff"] == row["plain_diff"]
            and row["lives_diff"] == row["plain_lives_diff"]
        )


def test_the_luck_has_mean_zero_and_the_corrected_estimate_is_narrower():
    """Over 800 games the luck of each player averages zero (within four standard
    errors), and taking it out narrows the interval of the paired differences without
    moving the estimate outside the plain one's interval."""
    config = TournamentConfig(("expert", "greedy", "greedy", "greedy"), 800, "standard", 11, 2)
    games = run_tournament(config, agents.from_spec)
    for key in ("luck_wins", "luck_lost"):
        x = np.array([getattr(g, key) for g in games])
        assert np.all(np.abs(x.mean(0)) < 4 * x.std(0) / math.sqrt(len(x))), key
    for row in paired_differences(config, games)[:3]:
        assert row["luck"]
        assert row["high"] - row["low"] < row["plain_high"] - row["plain_low"]
        assert row["plain_low"] <= row["diff"] <= row["plain_high"]
        assert row["effective_games"] > config.total_games


def test_the_expert_against_itself_differs_by_exactly_zero_with_the_luck_out():
    rows = run_gauntlet("expert", 3, "standard", games=12, seed=3, tables=["greedy", "mixed"])
    for r in rows:
        assert r["luck"]
        assert r["wins_diff"] == r["wins_low"] == r["wins_high"] == 0.0
        assert r["lives_diff"] == r["lives_low"] == r["lives_high"] == 0.0
        assert r["effective_games"] is None and r["lives_effective_games"] is None  # nothing to be worth


def test_identical_players_in_a_tournament_are_worth_no_count_of_games():
    """Four greedy players: each pair's differences are exactly 0 with the luck in or
    out (each meets the same luck in another order), so the corrected estimate is worth
    no number of plain games (shown ``-``, not 0)."""
    from thirtyone_env.harness.evaluation import TournamentConfig, paired_differences, run_tournament

    config = TournamentConfig(("greedy",) * 4, 200, "standard", 2)
    games = run_tournament(config, agents.from_spec)
    for d in paired_differences(config, games):
        assert d["luck"] and d["diff"] == d["low"] == d["high"] == 0.0  # exactly: no rounding, no star
        assert d["lives_diff"] == d["lives_low"] == d["lives_high"] == 0.0
        assert d["effective_games"] is None and d["lives_effective_games"] is None


def test_plain_leaves_the_luck_in(tmp_path):
    out = tmp_path / "plain"
    r = run_evaluate(
        "--players", "expert", "greedy", "--games", "8", "--seed", "2", "--plain", "--out", str(out)
    )
    assert r.returncode == 0, r.stderr
    plain = json.loads((out / "results.json").read_text())
    assert plain["config"]["luck"] is False
    assert all(not d["luck"] and d["diff"] == d["plain_diff"] for d in plain["paired_differences"])
    out = tmp_path / "luck"
    r = run_evaluate("--players", "expert", "greedy", "--games", "8", "--seed", "2", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "luck left in" in r.stdout
    luck = json.loads((out / "results.json").read_text())
    assert luck["config"]["luck"] is True
    (d,) = luck["paired_differences"]
    (p,) = plain["paired_differences"]
    assert d["luck"] and d["plain_diff"] == p["diff"] and d["diff"] != p["diff"]
    assert (out / "games.csv").read_bytes() == (tmp_path / "plain" / "games.csv").read_bytes()


@pytest.mark.parametrize("seed", [4, 6])
def test_the_luck_of_a_sampled_move_averages_exactly_zero_over_the_moves_it_could_draw(seed):
    """A player that samples its move from chances it tells (``random``): over the moves
    it could have drawn, weighted by their chances, the luck of its draw sums to zero."""
    for moves in (9, 10):  # a draw decision, then a discard decision
        s = _mid_round(seed, moves=moves)
        mask = legal_mask(s)
        chances = mask / mask.sum()
        total_lost, total_wins = np.zeros(4), np.zeros(4)
        for a in np.flatnonzero(mask):
            luck = LuckObserver(default_model(), s, sampled={s.current: lambda state, c=chances: c})
            luck.dealt(s)
            luck.lost[:] = luck.wins[:] = 0.0
            luck._move_luck(s, int(a), chances)
            total_lost += chances[a] * luck.lost
            total_wins += chances[a] * luck.wins
        assert np.abs(total_lost).max() < 1e-12 and np.abs(total_wins).max() < 1e-12


def test_a_random_players_moves_are_corrected_and_its_games_unchanged():
    players = ("expert", "random", "greedy")
    plain = run_tournament(TournamentConfig(players, 24, "standard", 8, luck=False), agents.from_spec)
    measured = run_tournament(TournamentConfig(players, 24, "standard", 8), agents.from_spec)
    assert [(g.wins, g.rows) for g in plain] == [(g.wins, g.rows) for g in measured]
    assert RandomPolicy().move_probabilities(None, np.array([1, 0, 1, 1], np.int8)).tolist() == [
        1 / 3,
        0,
        1 / 3,
        1 / 3,
    ]


def test_a_state_whose_knocker_the_showdown_put_out_is_still_read():
    """After a showdown that put the knocker out (a valued move can end the round so),
    the model still reads the state: no seat waits for a knocker who will not play."""
    rng = np.random.default_rng(12)
    for _ in range(200):
        s = new_game("standard", 3, rng, lives=[1, 1, 1])
        while s.phase < ROUND_OVER:
            apply_action(s, KNOCK if KNOCK in legal_actions(s) else legal_actions(s)[0], rng)
        if s.knocker >= 0 and not s.active[s.knocker]:
            break
    assert s.knocker >= 0 and not s.active[s.knocker]
    arrays = state_arrays(s)
    assert arrays[6].shape == (2, 3)
