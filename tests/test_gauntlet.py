"""The gauntlet: its tables at every size, the paired difference of
a candidate against the expert in its seat (exactly 0 for the expert itself, the
harness's own numbers for a real candidate), and ``evaluate.py --gauntlet``: its
results folder and its refusals before any game."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import agents
from agents import gauntlet
from agents.gauntlet import (
    GAUNTLET,
    HELD_OUT_SEED,
    gauntlet_table,
    gauntlet_tables,
    planned_games,
    plot_gauntlet,
    run_gauntlet,
)
from agents.populations import HELD_OUT_RANGES, draw_members
from thirtyone_env.harness import evaluation
from thirtyone_env.harness.evaluation import TournamentConfig, run_tournament, summarize
from thirtyone_env.harness.files import FolderLock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import evaluate  # noqa: E402 (the command's module, from the project root)

#: Every table but the slow search one.
FAST = [name for name in GAUNTLET if name != "search"]


def test_tables_at_every_size():
    four = gauntlet_tables(4)
    assert [t.name for t in four] == list(GAUNTLET)
    by_name = {t.name: t.opponents for t in four}
    assert by_name["expert"] == ("expert",) * 3
    assert by_name["search"] == ("search",) * 3
    assert by_name["mixed"] == ("expert", "blitz31", "greedy")
    held = [s for t in four for s in t.opponents if s.startswith("population")]
    assert held == [f"population:split=held_out,seed={HELD_OUT_SEED},member={k}" for k in range(8)]
    assert agents.from_spec(held[3]).params == draw_members(HELD_OUT_RANGES, 4, HELD_OUT_SEED)[3]
    assert [t.slow for t in four] == [t.name == "search" for t in four]
    two = gauntlet_tables(2)
    assert [t.name for t in two] == [n for n in GAUNTLET if not n.startswith("mixed")]
    assert all(len(t.opponents) == 1 for t in two)
    assert all(len(t.opponents) == 6 for t in gauntlet_tables(7))
    # every table plays the games asked for, rounded up to whole deal sets
    assert planned_games(4, 40, ["expert", "search"]) == 4 * 40
    assert planned_games(4, 1, ["greedy"]) == 2 * 4


@pytest.fixture(scope="module")
def expert_rows() -> list[dict]:
    return run_gauntlet("expert", 3, "standard", games=6, seed=5, tables=FAST)


def test_the_expert_against_itself_differs_by_exactly_zero_at_every_table(expert_rows):
    assert [r["table"] for r in expert_rows] == FAST
    for r in expert_rows:
        assert r["games"] == 6 and r["deal_sets"] == 2
        for key in ("wins", "lives"):
            assert r[f"{key}_diff"] == r[f"{key}_low"] == r[f"{key}_high"] == 0.0, (r["table"], key)
        assert r["candidate_win_rate"] == r["expert_win_rate"]
        assert r["candidate_lives"] == r["expert_lives"] > 0


def test_a_candidates_difference_is_the_harness_tournament_of_each_side():
    """The candidate's side is the tournament with it as player 0, the expert's the
    same tournament with the expert there: same seed, so the same decks."""
    (row,) = run_gauntlet("greedy", 3, "standard", games=12, seed=2, tables=["blitz31"])
    sides = {}
    for first in ("greedy", "expert"):
        config = TournamentConfig((first, "blitz31", "blitz31"), 12, "standard", 2)
        sides[first] = summarize(config, run_tournament(config, agents.from_spec))[first]
    assert row["candidate_win_rate"] == pytest.approx(sides["greedy"]["win_rate"][0])
    assert row["expert_win_rate"] == pytest.approx(sides["expert"]["win_rate"][0])
    assert row["candidate_lives"] == pytest.approx(sides["greedy"]["lives_lost_per_round"][0])
    assert row["expert_lives"] == pytest.approx(sides["expert"]["lives_lost_per_round"][0])
    assert row["plain_wins_diff"] == pytest.approx(row["candidate_win_rate"] - row["expert_win_rate"])
    assert row["plain_lives_diff"] == pytest.approx(row["candidate_lives"] - row["expert_lives"])
    assert row["wins_low"] <= row["wins_diff"] <= row["wins_high"]
    assert row["luck"] and row["wins_diff"] != row["plain_wins_diff"]  # the luck was taken out


def test_a_search_table_smoke():
    (row,) = run_gauntlet("expert", 2, "standard", games=2, seed=0, tables=["search"])
    assert row["opponents"] == ["search"] and row["games"] == 2
    assert row["wins_diff"] == 0.0 and row["lives_diff"] == 0.0


def test_the_summary_table_and_the_plot(expert_rows, tmp_path):
    text = gauntlet_table(expert_rows)
    lines = [line for line in text.splitlines() if line.startswith("|")]
    assert len(lines) == 2 + len(FAST)
    assert lines[2].startswith("| expert | expert x2 | 6 | +0.0 [+0.0, +0.0] | +0.000 [+0.000, +0.000] |")
    assert "held-out #0, held-out #1" in text
    path = plot_gauntlet(expert_rows, tmp_path / "g.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "lives/round - expert" in text and "chips/round - expert" in gauntlet_table(expert_rows, "banking")


def test_the_command_writes_a_results_folder_and_never_replaces_it(tmp_path):
    out = tmp_path / "g"
    args = ["--gauntlet", "greedy", "--seats", "3", "--games", "3", "--tables", "expert", "mixed_held_out"]
    r = subprocess.run(  # stdout and stderr are pipes, not terminals: progress comes as plain lines
        [sys.executable, str(ROOT / "evaluate.py"), *args, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    total = planned_games(3, 3, ["expert", "mixed_held_out"])
    last = r.stderr.strip().splitlines()[-1]
    assert re.fullmatch(rf"games {total}/{total} [\d,.]+ games/s elapsed 0:\d\d:\d\d ETA 0:00:00", last)
    assert "games/s" not in r.stdout  # stdout keeps only the results
    files = {p.name for p in out.iterdir()} - {FolderLock.NAME}
    assert files == {"gauntlet.md", "gauntlet.png", "results.json"}
    results = json.loads((out / "results.json").read_text())
    assert [t["table"] for t in results["tables"]] == ["expert", "mixed_held_out"]
    assert results["config"]["candidate"] == "greedy" and results["config"]["seats"] == 3
    assert "| expert | expert x2 | 3 |" in (out / "gauntlet.md").read_text()
    # held-out members keep their numbers in the whole gauntlet (#0-#3 sit at held_out_a, _b)
    assert "| mixed_held_out | held-out #4, expert | 3 |" in r.stdout
    before = (out / "results.json").read_bytes()
    with pytest.raises(SystemExit) as e:
        evaluate.main([*args, "--out", str(out)])
    assert e.value.code == 2
    assert (out / "results.json").read_bytes() == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--gauntlet", "nobody"], "unknown player 'nobody'"),
        (["--gauntlet", "population:split=test"], "population option split='test'"),
        (["--gauntlet", "greedy", "--seats", "1"], "--seats 1: num_players=1 is not allowed"),
        (["--gauntlet", "greedy", "--seats", "10"], "--seats 10: num_players=10 is not allowed"),
        (["--gauntlet", "greedy", "--rules", "blitz31", "--seats", "3"], "seats=4"),
        (["--gauntlet", "greedy", "--games", "0"], "--games must be at least 1"),
        (["--gauntlet", "greedy", "--seed", "-1"], "--seed: must be a non-negative integer"),
        (["--gauntlet", "greedy", "--tables", "experts"], "unknown gauntlet table 'experts' at 4 seats"),
        (
            ["--gauntlet", "greedy", "--seats", "2", "--tables", "mixed"],
            "unknown gauntlet table 'mixed' at 2",
        ),
        (["--gauntlet", "greedy", "--tables", "expert", "expert"], "gauntlet tables named twice"),
        (["--gauntlet", "greedy", "--record", "recs"], "--record belongs to tournaments"),
        (["--players", "greedy", "greedy", "--seats", "3"], "--seats belongs to --gauntlet"),
        (["--players", "greedy", "greedy", "--tables", "expert"], "--tables belongs to --gauntlet;"),
        (["--players", "greedy", "greedy", "--decisions", "3"], "--decisions belongs to --card;"),
        (
            ["--players", "greedy", "greedy", "--time-limit", "9"],
            "--time-limit belongs to --exploit or --card;",
        ),
        (
            ["--players", "greedy", "random", "random", "--games", "1000000"],
            "rounded up to whole deal sets of 3: 1,000,002 games at once",
        ),
        (["--gauntlet", "greedy", "--players", "greedy"], "not allowed with argument"),
        (["--gauntlet", "greedy", "--out", str(ROOT / "README.md")], "is not a results folder"),
    ],
)
def test_bad_input_exits_2_before_any_game(args, message, capsys, tmp_path):
    """Refused before the results folder is made (a run makes and locks it first)."""
    out = [] if "--out" in args else ["--out", str(tmp_path / "never")]
    with pytest.raises(SystemExit) as e:
        evaluate.main([*args, "--no-progress", *out])
    assert e.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "never").exists()


def test_a_gauntlet_row_is_plain_json(expert_rows):
    row = json.loads(json.dumps(expert_rows[0]))
    assert row == expert_rows[0]
    assert all(isinstance(v, int | float | str | list | None) for v in row.values())
    assert not any(isinstance(v, np.generic) for v in expert_rows[0].values())


def test_rows_do_not_depend_on_the_workers():
    def rows(workers: int) -> list[dict]:
        gauntlet._BASELINES.clear()  # play the expert's side again too
        out = run_gauntlet("greedy", 3, "standard", games=30, seed=4, workers=workers, tables=["greedy"])
        return [{k: v for k, v in r.items() if k != "elapsed_s"} for r in out]

    assert rows(1) == rows(2)


def test_compare_is_a_gauntlet_table_with_any_player_in_the_experts_place():
    """``compare(a, b)``: A's side and B's side of one table on the same deals; with B
    the expert it is the gauntlet's row; a player against itself differs by 0."""
    (row,) = run_gauntlet("greedy", 3, "standard", games=12, seed=2, tables=["blitz31"])
    same = gauntlet.compare("greedy", "expert", ["blitz31", "blitz31"], 12, "standard", 2)
    for key in ("wins_diff", "lives_diff", "candidate_win_rate", "expert_lives", "games"):
        assert same[key] == pytest.approx(row[key])
    zero = gauntlet.compare("expert", "expert", ["greedy", "random"], 6, "standard", 4)
    assert zero["wins_diff"] == 0 and zero["lives_diff"] == 0


def test_play_with_plays_the_players_games_once_and_gives_each_comparisons_row():
    """One tournament of A serves every comparison: each row is the one :func:`compare`
    gives on the same deals, field for field."""
    others = ["expert", "blitz31"]
    played = gauntlet.play_with("greedy", others, ["greedy", "greedy"], 12, "standard", 5)
    assert [c.players[0] for c, _ in played] == ["greedy", *others]
    rows = gauntlet.pair_rows(played, 0.0)
    assert len(rows) == 2
    for other, row in zip(others, rows, strict=True):
        alone = gauntlet.compare("greedy", other, ["greedy", "greedy"], 12, "standard", 5)
        assert {k: v for k, v in row.items() if k != "elapsed_s"} == {
            k: v for k, v in alone.items() if k != "elapsed_s"
        }
    assert rows[0]["wins_diff"] != rows[1]["wins_diff"] or rows[0]["lives_diff"] != rows[1]["lives_diff"]


def test_the_ablation_benchmark_prints_the_paired_difference_and_refuses_bad_input():
    script = ROOT / "benchmarks" / "ablation.py"
    done = subprocess.run(
        [sys.executable, str(script), "expert", "greedy", "--opponents", "greedy", "--games", "4", "--seed", "3"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "expert minus greedy" in done.stdout and "lives lost a round" in done.stdout
    bad = subprocess.run(
        [sys.executable, str(script), "expert", "nobody", "--games", "4"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert bad.returncode == 2 and "nobody" in bad.stderr and "Traceback" not in bad.stderr


def test_lives_split_by_players_in_adds_up_to_the_whole_and_counts_each_round_once():
    played = gauntlet.play_with("greedy", ["expert"], ["greedy", "blitz31", "greedy"], 24, "standard", 6)
    whole = gauntlet.pair_row(played, 0.0)
    split = gauntlet.by_players_in(played)
    assert [r["players_in"] for r in split] == [4, 3, 2]
    for side, lives in (("a", whole["candidate_lives"]), ("b", whole["expert_lives"])):
        assert sum(r[f"{side}_share"] for r in split) == pytest.approx(1.0)
        mixed = [r[f"{side}_share"] * r[f"{side}_lives"] for r in split if r[f"{side}_share"] > 0]
        assert sum(mixed) == pytest.approx(lives)  # the shares weight the parts back into the whole
    config, games = played[0]
    # each round of a game is dealt to as many players as it has rows, never more than are seated
    for g in games[:5]:
        rounds = {row[3] for row in g.rows}
        in_round = [sum(row[3] == k for row in g.rows) for k in sorted(rounds)]
        assert all(2 <= n <= 4 for n in in_round) and in_round == sorted(in_round, reverse=True)
    # a round split this way is the whole when every round is counted
    lost, rounds = evaluation.lives_by_deal(config, games)
    parts = [evaluation.lives_by_deal(config, games, players_in=k) for k in (4, 3, 2)]
    assert np.array_equal(sum(p[0] for p in parts), lost) and np.array_equal(sum(p[1] for p in parts), rounds)
    same = gauntlet.by_players_in(gauntlet.play_with("expert", ["expert"], ["greedy"] * 3, 8, "standard", 2))
    assert all(r["lives_diff"] == 0 or np.isnan(r["lives_diff"]) for r in same)


def test_the_ablation_benchmark_splits_lives_by_players_in_as_json():
    script = ROOT / "benchmarks" / "ablation.py"
    done = subprocess.run(
        [sys.executable, str(script), "greedy", "expert", "--opponents", "greedy", "greedy", "--games", "6",
         "--by-players-in", "--json"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert [r["players_in"] for r in out["by_players_in"]] == [3, 2]
    assert out["games"] == 6


def test_a_tiny_gauntlet_keeps_its_intervals_to_what_a_difference_can_be():
    """Eight games (two deal sets): Student's t reaches far past ±100 points, so the
    wins intervals are cut there, and no variance ratio of two numbers is stated."""
    for row in run_gauntlet("random", 4, "standard", games=8, seed=1, tables=["greedy", "expert"]):
        for key in ("wins", "plain_wins"):
            assert -1.0 <= row[f"{key}_low"] <= row[f"{key}_diff"] <= row[f"{key}_high"] <= 1.0, row
        assert row["deal_sets"] == 2
        assert row["effective_games"] is None and row["lives_effective_games"] is None
