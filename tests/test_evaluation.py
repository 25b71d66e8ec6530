"""The tournament harness: duplicate deals and rotations, worker-count independence,
statistics on known cases, and evaluate.py's output and error paths."""

import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from conftest import run_evaluate

import agents
from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.evaluation import (
    GameOutcome,
    TournamentConfig,
    deck_sequence,
    finishing_places,
    mean_ci,
    paired_difference,
    paired_differences,
    paired_lives_difference,
    ratings,
    ratio_ci,
    run_tournament,
    summarize,
)

ROOT = Path(__file__).resolve().parent.parent


def test_every_player_sits_in_every_seat_equally_often():
    config = TournamentConfig(("greedy", "random", "blitz31"), games=30, seed=4)
    games = run_tournament(config, agents.from_spec)
    assert len(games) == 30 and config.deal_sets == 10
    seats = Counter((i, g.seats[i]) for g in games for i in range(3))
    assert set(seats.values()) == {10}
    assert sorted(seats) == [(i, s) for i in range(3) for s in range(3)]
    for g in games:
        assert sorted(g.seats) == [0, 1, 2]


def test_duplicate_deals_give_identical_games_to_identical_players():
    """Four copies of one deterministic player: every rotation of a deal set meets the
    same cards from the same seats, so the game by seat must repeat exactly."""
    config = TournamentConfig(("greedy",) * 4, games=24, seed=9)
    games = run_tournament(config, agents.from_spec)
    by_deal: dict[int, list[GameOutcome]] = {}
    for g in games:
        by_deal.setdefault(g.deal, []).append(g)
    for rotations in by_deal.values():
        assert len(rotations) == 4
        per_seat = []
        for g in rotations:
            wins_by_seat = [0.0] * 4
            for i in range(4):
                wins_by_seat[g.seats[i]] = g.wins[i]
            rows_by_seat = sorted((r[3], r[5], r[7], r[10]) for r in g.rows)  # round, seat, lost, value
            per_seat.append((g.rounds, wins_by_seat, rows_by_seat))
        assert all(x == per_seat[0] for x in per_seat)


def test_same_seed_same_results_with_one_or_two_workers():
    base = dict(players=("greedy", "blitz31", "random"), games=18, seed=11)
    one = run_tournament(TournamentConfig(**base, workers=1), agents.from_spec, chunk=2)
    two = run_tournament(TournamentConfig(**base, workers=2), agents.from_spec, chunk=2)
    assert [(g.deal, g.rotation, g.wins, g.places, g.rows) for g in one] == [
        (g.deal, g.rotation, g.wins, g.places, g.rows) for g in two
    ]
    other = run_tournament(TournamentConfig(**{**base, "seed": 12}), agents.from_spec)
    assert [g.rows for g in one] != [g.rows for g in other]


def test_deck_sequence_is_keyed_by_seed_and_deal():
    rules = Rules()
    a, b = deck_sequence(1, 5, rules), deck_sequence(1, 5, rules)
    first = [next(a) for _ in range(3)]
    assert first == [next(b) for _ in range(3)]
    assert sorted(first[0]) == list(range(52)) and first[0] != first[1]
    assert next(deck_sequence(1, 6, rules)) != first[0]


def test_finishing_places_share_ties():
    assert finishing_places([(0, 0), (2, -3), (2, -3), (2, -5)]) == [1.0, 3.5, 3.5, 2.0]
    assert finishing_places([(0, 0), (0, 0), (1, -2)]) == [1.5, 1.5, 3.0]


def test_the_interval_factor_is_students_t_and_tends_to_the_normal():
    """Two clusters give an interval 12.7 standard errors wide each side (their spread
    says little), many the normal 1.96; the expansion past the table joins it smoothly."""
    from thirtyone_env.harness.evaluation import t95

    assert t95(1) == pytest.approx(12.706, abs=1e-3) and t95(10) == pytest.approx(2.228, abs=1e-3)
    assert t95(11) == pytest.approx(2.200985, abs=2e-4) and t95(30) == pytest.approx(2.042272, abs=2e-4)
    assert t95(100) == pytest.approx(1.983972, abs=1e-4) and t95(10**6) == pytest.approx(1.959966, abs=1e-5)
    factors = [t95(df) for df in range(1, 200)]
    assert all(a > b for a, b in zip(factors, factors[1:], strict=False))
    assert np.isnan(t95(0))


def test_confidence_intervals_on_known_data():
    mean, lo, hi = mean_ci(np.array([1.0, 2.0, 3.0, 4.0]))
    se = np.std([1, 2, 3, 4], ddof=1) / 2
    # four clusters: Student's t with 3 degrees of freedom, not the normal 1.96
    assert (
        mean == 2.5
        and lo == pytest.approx(2.5 - 3.1824463 * se)
        and hi == pytest.approx(2.5 + 3.1824463 * se)
    )
    r, lo, hi = ratio_ci(np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 6.0]))
    assert r == 0.5 and lo == pytest.approx(0.5) and hi == pytest.approx(0.5)  # exact ratio: no spread
    assert np.isnan(ratio_ci(np.array([1.0]), np.array([0.0]))[0])


def _outcome(deal, rotation, wins, places, rows):
    g = GameOutcome(deal, rotation, (0, 1), places, wins, len(rows))
    g.rows = rows
    return g


def test_summarize_and_pairing_on_handmade_games():
    config = TournamentConfig(("a", "b"), games=4)

    def row(deal, player, lost, knocked=False, value=None, ok=None):
        return (
            0,
            deal,
            0,
            1,
            player,
            player,
            4,
            lost,
            lost > 0,
            "knock",
            20,
            3,
            knocked,
            value,
            2,
            ok,
            False,
            1,
            0,
            False,
        )

    games = [
        _outcome(0, 0, (1.0, 0.0), (1.0, 2.0), [row(0, 0, 0, True, 25, True), row(0, 1, 1)]),
        _outcome(0, 1, (1.0, 0.0), (1.0, 2.0), [row(0, 0, 0), row(0, 1, 2)]),
        _outcome(1, 0, (0.0, 1.0), (2.0, 1.0), [row(1, 0, 1, True, 21, False), row(1, 1, 0)]),
        _outcome(1, 1, (1.0, 0.0), (1.0, 2.0), [row(1, 0, 0), row(1, 1, 1)]),
    ]
    s = summarize(config, games)
    assert s["a"]["win_rate"][0] == 0.75 and s["b"]["win_rate"][0] == 0.25
    assert s["a"]["mean_place"][0] == 1.25
    assert s["a"]["lives_lost_per_round"][0] == 0.25 and s["b"]["lives_lost_per_round"][0] == 1.0
    assert s["a"]["knock_rate"][0] == 0.5 and s["a"]["knock_success"][0] == 0.5
    assert s["a"]["knock_value"][0] == 23.0 and s["b"]["knock_rate"][0] == 0.0
    diff, lo, hi = paired_difference(config, games, 0, 1)
    assert diff == 0.5  # deal 0: +1, deal 1: 0
    lives_diff, lo, hi = paired_lives_difference(config, games, 0, 1)
    assert lives_diff == pytest.approx(0.25 - 1.0)  # a loses 1 life in 4 rounds, b 4
    assert lo <= lives_diff <= hi
    row = paired_differences(config, games)[0]
    assert (row["lives_diff"], row["lives_low"], row["lives_high"]) == (lives_diff, lo, hi)
    board = ratings(config, games)
    assert board[0]["label"] == "a" and board[0]["ordinal"] > board[1]["ordinal"]


run_cli = run_evaluate


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--players", "greedy", "nobody"], "unknown player 'nobody'"),
        (["--players", "greedy", "greedy", "--rules", "nope"], "unknown rules preset 'nope'"),
        (["--players", "greedy"], "num_players=1 is not allowed"),
        (["--players", *["greedy"] * 10], "num_players=10 is not allowed"),
        (["--players", "greedy", "greedy", "--games", "0"], "--games must be at least 1"),
        (["--players", "greedy:knock=3", "greedy"], "bad options for player 'greedy'"),
        (["--players", "greedy", "greedy", "greedy", "--rules", "blitz31"], "seats=4"),
        (["--players", "greedy:knock_at=abc", "greedy"], "option 'knock_at' takes a finite number"),
        (["--players", "search:worlds=lots", "greedy"], "option 'worlds' takes an integer"),
        (["--players", "greedy", "greedy", "--seed", "-1"], "--seed: must be a non-negative integer"),
        (["--players", "greedy", "greedy", "--out", ""], "--out: is empty"),
        (["--players", "greedy", "greedy", "--record", " "], "--record: is empty"),
        (["--players", "greedy", "greedy", "--out", str(ROOT / "README.md")], "is not a results folder"),
        (["--players", "greedy", "greedy", "--out", str(ROOT / "notebooks")], "is not a results folder"),
        (["--players", "greedy", "greedy", "--names", "a"], "--names: 1 names given for 2 players"),
        (["--players", "greedy", "random", "--names", "a", "a"], "give every player a different"),
    ],
)
def test_bad_input_exits_2_with_a_clear_message(args, message):
    r = run_cli(*args)
    assert r.returncode == 2
    assert message in r.stderr
    assert "Traceback" not in r.stderr


def test_a_random_seed_is_drawn_printed_and_plays_the_same_games_again(tmp_path):
    """``--seed random`` draws a 63-bit seed no player can guess, prints it, and that
    seed given back plays the same games."""
    r = run_cli(
        "--players", "greedy", "random", "--games", "8", "--seed", "random", "--out", str(tmp_path / "a")
    )
    assert r.returncode == 0, r.stderr
    seed = int(re.search(r"seed (\d+) \(drawn at random; --seed \1 plays these games again\)", r.stdout)[1])
    first = json.loads((tmp_path / "a" / "results.json").read_text())
    assert first["config"]["seed"] == seed and 0 <= seed < 2**63
    again = run_cli(
        "--players", "greedy", "random", "--games", "8", "--seed", str(seed), "--out", str(tmp_path / "b")
    )
    assert again.returncode == 0, again.stderr
    second = json.loads((tmp_path / "b" / "results.json").read_text())
    assert second["players"] == first["players"]
    other = run_cli(
        "--players", "greedy", "random", "--games", "8", "--seed", "random", "--out", str(tmp_path / "c")
    )
    assert (
        other.returncode == 0
        and json.loads((tmp_path / "c" / "results.json").read_text())["config"]["seed"] != seed
    )


def test_display_names_label_every_table_and_long_names_are_never_cut(tmp_path):
    """``--names`` labels the players in the tables and results; without it, two long
    specs that share their start are printed whole (folded), never cut alike."""
    out = tmp_path / "named"
    r = run_cli(
        "--players", "greedy", "random", "--names", "Greta", "Randy", "--games", "8", "--out", str(out)
    )
    assert r.returncode == 0, r.stderr
    assert "Greta" in r.stdout and "Randy" in r.stdout
    results = json.loads((out / "results.json").read_text())
    assert list(results["players"]) == ["Greta", "Randy"] and results["config"]["names"] == ["Greta", "Randy"]
    long_a, long_b = "greedy:knock_at=25.0", "greedy:knock_at=26.0"
    r = run_cli("--players", long_a, long_b, "--games", "4", "--out", str(tmp_path / "long"), env_columns=60)
    assert r.returncode == 0, r.stderr
    flat = "".join(ch for ch in r.stdout if ch not in " \n│┃║|")
    assert "…" not in r.stdout and "knock_at=25.0" in flat and "knock_at=26.0" in flat


def test_evaluate_writes_the_results_folder(tmp_path):
    out = tmp_path / "res"
    r = run_cli(
        "--players",
        "greedy",
        "random",
        "blitz31",
        "--games",
        "12",
        "--seed",
        "3",
        "--out",
        str(out),
        "--no-progress",
    )
    assert r.returncode == 0, r.stderr
    data = json.loads((out / "results.json").read_text())
    assert data["config"]["games"] == 12 and set(data["players"]) == {"greedy", "random", "blitz31"}
    assert {"win_rate", "knock_success", "switches_per_round"} <= set(data["players"]["greedy"])
    assert len(data["ratings"]) == 3 and len(data["paired_differences"]) == 3
    lines = (out / "games.csv").read_text().splitlines()
    assert lines[0].startswith("game,deal,rotation,round_no,player_spec")
    assert len(lines) - 1 == sum(1 for _ in lines[1:])
    for png in ("knock_values.png", "knock_success.png", "suit_switches_by_turn.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".res")]  # no temp folder left
    assert "win rate" in r.stdout


def test_pooled_difference_of_a_spec_at_several_seats():
    """2 v 2: seats of one spec are pooled into one row beside the pairwise rows."""
    config = TournamentConfig(("s", "e", "s", "e"), games=8)
    wins = [(1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (1, 0, 0, 0), (0, 0, 0, 1), (0, 0, 1, 0)]
    wins += [(0, 0.5, 0.5, 0), (1, 0, 0, 0)]
    games = [_outcome(k // 4, k % 4, w, (1.0, 2.0, 3.0, 4.0), []) for k, w in enumerate(wins)]
    # deal 0: s wins 3 of 4 games -> per game (mean s - mean e) = (3/2 - 1/2)/4 = 0.25
    # deal 1: s wins 2.5, e 1.5 -> (2.5/2 - 1.5/2)/4 = 0.125
    diff, low, high = paired_difference(config, games, [0, 2], [1, 3])
    assert diff == pytest.approx(0.1875) and low < diff < high
    rows = paired_differences(config, games)
    assert len(rows) == 6 + 1
    pooled = rows[-1]
    assert (pooled["a"], pooled["b"]) == ("s (2 seats)", "e (2 seats)")
    assert pooled["diff"] == pytest.approx(0.1875)
    # the pooled difference is the mean of the four cross pairs
    cross = [paired_difference(config, games, a, b)[0] for a in (0, 2) for b in (1, 3)]
    assert pooled["diff"] == pytest.approx(sum(cross) / 4)


@pytest.mark.parametrize("rules", ["cut_throat", "no_elimination", "banking", "switch", "stop_the_bus"])
def test_cli_runs_every_variant_preset(rules, tmp_path):
    r = run_cli(
        "--players",
        "expert",
        "greedy",
        "--games",
        "2",
        "--rules",
        rules,
        "--out",
        str(tmp_path / rules),
        "--no-progress",
    )
    assert r.returncode == 0, r.stderr
    data = json.loads((tmp_path / rules / "results.json").read_text())
    assert data["config"]["rules"] == rules


def test_plots_of_brag_ranked_knocks_bin_the_ranks_and_warn_nothing(tmp_path):
    """Stop the Bus scores hands by Brag rank (thousands, not 0-31): the knock plots bin
    the ranks seen, so every knock lands in a bin, and matplotlib and numpy warn nothing."""
    import warnings

    from thirtyone_env.harness.report import _value_bins, write_plots

    config = TournamentConfig(
        ("expert", "greedy", "greedy", "greedy"), games=40, seed=2, rules="stop_the_bus"
    )
    games = run_tournament(config, agents.from_spec)
    values = [row[13] for g in games for row in g.rows if row[12]]
    assert values and max(values) > 31
    bins, unit = _value_bins(values)
    assert unit == "hand rank (Brag)" and bins[0] <= min(values) and max(values) < bins[-1]
    assert np.histogram(values, bins=bins)[0].sum() == len(values)
    assert _value_bins([12.0, 31.0])[1] == "hand value"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        write_plots(tmp_path, config, games)
    for png in ("knock_values.png", "knock_success.png", "suit_switches_by_turn.png"):
        assert (tmp_path / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
