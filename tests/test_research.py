"""The research layer: the decision oracle on stacked positions, its questions, studies
identical on any worker count, the aggregations and the command line."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import deal

import agents
from thirtyone_env.game.actions import DISCARD_BASE, DRAW_STOCK, KNOCK, TAKE_DISCARD
from thirtyone_env.game.cards import parse_card
from thirtyone_env.game.encoding import ObsLayout
from thirtyone_env.game.engine import apply_action, legal_mask
from thirtyone_env.harness.driver import encodings_of, player_move
from thirtyone_env.research import aggregate, folder
from thirtyone_env.research.config import StudyConfig
from thirtyone_env.research.labelling import COLUMNS, regret
from thirtyone_env.research.oracle import gains, hand_rng, measure
from thirtyone_env.research.questions import options
from thirtyone_env.research.study import run_jobs

ROOT = Path(__file__).resolve().parents[1]


def mover(s, specs):
    players = [agents.from_spec(p) for p in specs]
    return player_move(
        players, encodings_of(players, "view"), ObsLayout(s.num_players, s.rules), "player"
    ), players


def discard(card: str) -> int:
    return DISCARD_BASE + parse_card(card)


@pytest.mark.parametrize("specs", [("expert",) * 4, ("greedy", "expert", "blitz31", "random")])
def test_a_knock_that_cannot_lose_is_worth_nothing_lost_in_every_play_out(specs):
    """Seat 0 holds 30; each opponent holds one low card of each suit and gets one turn:
    none can pass 30 (two cards of a suit make at most 15), so the knock costs nothing,
    whatever the shuffled stock brings. Waiting can only do as well or worse."""
    s, _ = deal(["Ah Kh 9h", "2c 3d 4s", "2d 3s 4c", "2s 3c 4d"], "5h", dealer=3)
    move, players = mover(s, specs)
    values = measure(s, [DRAW_STOCK, KNOCK], move, np.random.SeedSequence(1), 24, hand_rng(players))
    assert (values[1] == 0).all()
    assert (values[0] <= 0).all()


def test_a_knock_that_must_lose_costs_the_knockers_penalty_in_every_play_out():
    """Seat 0 holds 4 against three 24s that no draw lowers: a knock there is strictly
    lowest at the showdown and pays the knocker's penalty, 2 lives, every time."""
    s, _ = deal(["2c 3d 4s", "9h 8h 7h", "9s 8s 7s", "9c 8c 7c"], "5d", dealer=3)
    move, players = mover(s, ("expert",) * 4)
    values = measure(s, [KNOCK], move, np.random.SeedSequence(2), 24, hand_rng(players))
    assert (values == -2).all()


def test_play_outs_are_paired_and_seeded():
    """One action measured as both options meets the same luck in every play-out (gain 0,
    standard error 0); the same seed gives the same values; the stock is shuffled per
    play-out (the values differ across play-outs)."""
    s, _ = deal(["Th 4h 2c", "9s 3d 6c", "Kd 5c 7s", "8c 2s Jc"], "Qh", dealer=3)
    move, players = mover(s, ("expert",) * 4)
    a = measure(
        s, [DRAW_STOCK, DRAW_STOCK, TAKE_DISCARD], move, np.random.SeedSequence(3), 32, hand_rng(players)
    )
    b = measure(
        s, [DRAW_STOCK, DRAW_STOCK, TAKE_DISCARD], move, np.random.SeedSequence(3), 32, hand_rng(players)
    )
    np.testing.assert_array_equal(a, b)
    gain, se = gains(a)
    assert gain[0] == 0 and se[0] == 0
    assert len(set(a[0])) > 1
    assert s.phase == 0 and len(s.hands[0]) == 3  # the position itself is untouched


def test_the_options_of_each_question():
    """Knock: knock vs the player's move (its move without knocking when it knocks);
    take vs draw; switch: the suits a discard abandons the hand's best suits for, vs
    the best discard that keeps one (lowest card on ties)."""
    s, rng = deal(["5h 6h Kd", "9s 3d 6c", "Ts 5c 7s", "8c 2s Jc"], "Ad", dealer=3)
    mask = legal_mask(s)
    o = options("knock", s, mask, DRAW_STOCK, lambda m: 0)
    assert o.baseline == ("wait", DRAW_STOCK) and o.alternatives == (("knock", KNOCK),) and o.own == "wait"
    o = options("knock", s, mask, KNOCK, lambda m: TAKE_DISCARD if m[TAKE_DISCARD] and not m[KNOCK] else -1)
    assert o.baseline == ("wait", TAKE_DISCARD) and o.own == "knock"
    o = options("take", s, mask, TAKE_DISCARD, lambda m: 0)
    assert (
        o.baseline == ("draw", DRAW_STOCK) and o.alternatives == (("take", TAKE_DISCARD),) and o.own == "take"
    )
    assert options("switch", s, mask, DRAW_STOCK, lambda m: 0) is None  # not a discard
    apply_action(s, TAKE_DISCARD, rng)  # 5h 6h Kd + Ad: hearts 11 before
    mask = legal_mask(s)
    o = options("switch", s, mask, discard("6h"), lambda m: 0)
    # Ad may not go straight back; discarding Kd keeps hearts (11, tied with diamonds)
    assert o.baseline == ("stay", discard("Kd"))
    assert o.alternatives == (("switch:d", discard("6h")),)  # the player's own switch
    assert o.own == "switch:d"
    o = options("switch", s, mask, discard("Kd"), lambda m: 0)
    assert o.alternatives == (("switch:d", discard("5h")),) and o.own == "stay"


def small(**kw) -> StudyConfig:
    return StudyConfig(**{"decisions": 230, "rollouts": 4, "seed": 11, **kw})


@pytest.mark.parametrize("question", ["knock", "switch", "take"])
def test_a_study_is_the_same_on_one_and_two_workers(question):
    one = run_jobs(small(question=question, workers=1), agents.from_spec)
    two = run_jobs(small(question=question, workers=2), agents.from_spec)
    assert pd.DataFrame(one).equals(pd.DataFrame(two))  # nan (a regret with no value) equals nan here
    df = pd.DataFrame(one, columns=list(COLUMNS))
    assert df.groupby(["game", "round", "turn"]).ngroups == 230
    assert set(df["question"]) == {question} and (df["seat"] == 0).all()
    assert df["se"].notna().all() and (df["rollouts"] == 4).all()
    assert pd.DataFrame(folder.read_rows(folder.write_rows(one))).equals(
        pd.DataFrame(one)
    )  # read back exactly


def test_knock_rows_agree_with_the_players_own_moves():
    """The expert knocks where its own move is KNOCK; the rows record that choice, and
    the position columns are those of a 4-player round."""
    df = pd.DataFrame(run_jobs(small(decisions=300), agents.from_spec), columns=list(COLUMNS))
    assert set(df["own"]) <= {"knock", "wait"} and (df["chosen"] == (df["own"] == "knock")).all()
    assert df["position"].between(0, 3).all() and (df["players_in"] <= 4).all()
    assert df["value"].between(3, 31).all() and (df["turn"] >= 1).all()


def test_a_study_by_the_win_objective_measures_the_same_decisions_in_chances():
    """``objective="win"``: the same decisions and play-outs, each round valued by the
    chance to win the game it leaves (in lives at the start) instead of the lives lost:
    other gains, the same sign where a knock surely costs lives and nobody goes out."""
    lives = pd.DataFrame(run_jobs(small(decisions=120), agents.from_spec), columns=list(COLUMNS))
    win = pd.DataFrame(
        run_jobs(small(decisions=120, objective="win"), agents.from_spec), columns=list(COLUMNS)
    )
    same = [c for c in COLUMNS if c not in ("gain", "se", "regret")]
    assert lives[same].equals(win[same])
    assert not np.allclose(lives["gain"], win["gain"])
    # the same outcomes valued two ways: related (0.67 here), not the same (last lives, eliminations)
    assert np.corrcoef(lives["gain"], win["gain"])[0, 1] > 0.5
    assert small(objective="win").study_dict()["objective"] == "win"
    assert "objective" not in small().study_dict()  # studies stored before the option still resume


def test_break_even_finds_a_known_crossing():
    """Gains that rise through zero at 20 (plus noise): the break-even is 20 within its
    interval; gains above zero everywhere say 'always', below zero 'never'."""
    rng = np.random.default_rng(0)
    n = 4000
    value = rng.integers(5, 32, n).astype(float)
    df = pd.DataFrame(
        {"game": np.arange(n) // 4, "turn": 1, "position": 0, "value": value, "alternative": "knock"}
        | {"gain": (value - 20) / 10 + rng.normal(0, 0.3, n), "chosen": value > 25}
    )
    b = aggregate.break_even(df, ())
    assert (
        b["verdict"][0] == "crosses"
        and b["low"][0] <= 20 <= b["high"][0]
        and abs(b["break_even"][0] - 20) < 0.6
    )
    assert aggregate.break_even(df.assign(gain=1.0), ())["verdict"][0] == "always"
    assert aggregate.break_even(df.assign(gain=-1.0), ())["verdict"][0] == "never"
    c = aggregate.choices(df, ()).iloc[0]
    assert c["low_taken"] > 0 and c["high_passed"] < 0
    # the player knocks from 26 on: 5 to 6 points later than the break-even
    late = aggregate.knock_timing(df, ()).iloc[0]
    assert late["verdict"] == "too late" and late["threshold"] == 25.5 and 5 < late["difference"] < 6.2
    early = aggregate.knock_timing(df.assign(chosen=value > 14), ()).iloc[0]
    assert early["verdict"] == "too early" and early["high"] < 0
    coin = aggregate.knock_timing(df.assign(chosen=rng.random(n) < 0.3), ()).iloc[0]
    assert coin["verdict"] == "no threshold"


def test_switch_rate_interval_holds_its_rate_at_none_and_all():
    """No switch (or all switches) among n decisions: the Wilson interval starts (ends)
    exactly at the rate, never a rounding error past it (a negative error bar), for
    every n; inside, it lies strictly around the rate."""
    rows = []
    for n in range(1, 60):
        for k in (0, n, n // 2):
            rows += [
                {
                    "game": n,
                    "round": k,
                    "seat": 0,
                    "turn": t,
                    "value": 20.0,
                    "own": "switch" if t < k else "stay",
                    "chosen": True,
                    "gain": 0.01,
                }
                for t in range(n)
            ]
    df = pd.DataFrame(rows)
    out = aggregate.switch_by_turn(df, ("game", "round"))
    assert len(out) > 150
    assert ((out["rate_low"] <= out["switch_rate"]) & (out["switch_rate"] <= out["rate_high"])).all()
    assert ((out["rate_low"] >= 0) & (out["rate_high"] <= 1)).all()
    assert ((out["switch_rate"] == 0) == (out["rate_low"] == 0)).all()
    assert ((out["switch_rate"] == 1) == (out["rate_high"] == 1)).all()


def test_the_discard_signal_and_stratified_differences():
    turns = pd.DataFrame(
        {
            "player": ["a"] * 8,
            "discard_suit_changed": [True, True, True, False, False, False, None, True],
            "switched": [True, True, False, False, True, False, True, True],
        }
    )
    s = aggregate.discard_signal(turns).iloc[0]
    assert (s["turns"], s["signalled"], s["switches"]) == (7, 4, 4)
    assert s["precision"] == 0.75 and s["recall"] == 0.75
    assert s["precision_low"] < 0.75 < s["precision_high"]
    # a difference that is +1 within every stratum, whatever the strata's levels
    df = pd.DataFrame(
        {"v": [1, 1, 1, 1, 2, 2, 2, 2], "g": [1, 1, 0, 0] * 2, "y": [5, 5.2, 4, 4.2, 9, 9.4, 8, 8.4]}
    )
    d = aggregate.stratified_difference(df, "y", "g", "v").iloc[0]
    assert d["difference"] == pytest.approx(1.0) and d["low"] < 1 < d["high"]


def cli(*args, cwd=ROOT):
    return subprocess.run(
        [sys.executable, "-m", "thirtyone_env.research", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


def test_the_command_line_writes_a_study_and_goes_on_after_an_interruption(tmp_path):
    args = ["switch", "--table", "expert,greedy:knock_at=27,blitz31", "--decisions", "150", "--rollouts", "4"]
    args += ["--seed", "5", "--no-progress"]
    r = cli(*args, "--workers", "2", "--out", str(tmp_path / "a"))
    assert r.returncode == 0, r.stderr
    a = tmp_path / "a"
    assert {p.name for p in a.iterdir()} == {
        "study.json",
        "decisions.csv",
        "summary.json",
        "switches.png",
        ".lock",
    }
    summary = json.loads((a / "summary.json").read_text())
    assert summary["decisions"] == 150 and summary["study"]["table"] == [
        "expert",
        "greedy:knock_at=27",
        "blitz31",
    ]
    assert summary["switch_by_turn"][0]["turn"] == 1 and summary["decisions_per_s"] > 0
    assert (a / "switches.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # an interrupted run: its study.json and first finished job only
    config = StudyConfig(
        question="switch",
        table=("expert", "greedy:knock_at=27", "blitz31"),
        decisions=150,
        rollouts=4,
        seed=5,
    )
    b = tmp_path / "b"
    folder.start(b, config)
    first = folder.read_rows((a / "decisions.csv").read_text())
    job0 = [row for row in first if row[0] < 100_000]
    folder.save_job(b, 0, job0)
    r = cli(*args, "--workers", "1", "--out", str(b))
    assert r.returncode == 0, r.stderr
    assert "going on" in r.stdout
    assert (b / "decisions.csv").read_bytes() == (a / "decisions.csv").read_bytes()
    assert not (b / "jobs").exists()
    # a finished study is never replaced; another study is refused in an interrupted one
    r = cli(*args, "--out", str(a))
    assert r.returncode == 2 and "finished study" in r.stderr and "Traceback" not in r.stderr
    c = tmp_path / "c"
    folder.start(c, config)
    r = cli(*[x if x != "150" else "160" for x in args], "--out", str(c))
    assert r.returncode == 2 and "decisions" in r.stderr


def test_a_knock_study_reports_break_evens_with_intervals_and_its_plots(tmp_path):
    r = cli(
        "knock",
        "--table",
        "expert,greedy,expert",
        "--seat",
        "1",
        "--decisions",
        "300",
        "--rollouts",
        "4",
        "--no-progress",
        "--out",
        str(tmp_path / "k"),
    )
    assert r.returncode == 0, r.stderr
    assert "break-even hand value by own turn: 1:" in r.stdout and "threshold - break-even" in r.stdout
    summary = json.loads((tmp_path / "k" / "summary.json").read_text())
    cells = summary["break_even_by_turn_and_position"]
    assert {c["position"] for c in cells} <= {0, 1, 2} and sum(c["decisions"] for c in cells) == 300
    assert summary["choices"]["taken"] + summary["choices"]["passed"] == 300
    for name in ("break_even.png", "gain_curve.png"):
        assert (tmp_path / "k" / name).read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["knock", "--table", "expert,nobody,expert"], "nobody"),
        (["knock", "--seat", "4"], "seat 4"),
        (["switch", "--rules", "stop_the_bus"], "stock game"),
        (["knock", "--rules", "nonsense"], "nonsense"),
        (["knock", "--decisions", "0"], "decisions"),
        (["knock", "--table", "expert"], "players"),
        (["knock", "--table", "ppo:path=missing.zip,expert"], "missing.zip"),
        (["ask"], "invalid choice"),
        (["knock", "--objective", "win", "--rules", "no_elimination"], "values lives games"),
        (["knock", "--objective", "chips"], "invalid choice"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(tmp_path, args, message):
    r = cli(*args, "--out", str(tmp_path / "out"))
    assert r.returncode == 2
    assert message in r.stderr and "Traceback" not in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert not (tmp_path / "out").exists()


def test_an_out_that_is_a_file_or_someone_elses_folder_is_refused(tmp_path):
    f = tmp_path / "f"
    f.write_text("mine")
    r = cli("knock", "--decisions", "5", "--out", str(f))
    assert r.returncode == 2 and "is a file" in r.stderr and f.read_text() == "mine"
    d = tmp_path / "d"
    d.mkdir()
    (d / "notes.txt").write_text("mine")
    r = cli("knock", "--decisions", "5", "--out", str(d))
    assert r.returncode == 2 and "notes.txt" in r.stderr


def test_each_question_has_its_own_help_with_the_defaults_it_uses():
    r = cli("knock", "--help")
    assert r.returncode == 0 and "knock now, or play on" in r.stdout and "switch suits" not in r.stdout
    assert "(default: 2000)" in r.stdout  # --decisions, the default StudyConfig uses
    from thirtyone_env.research.config import StudyConfig

    assert StudyConfig().decisions == 2000
    flat = " ".join(r.stdout.split()).replace("- <", "-<")
    assert "results/research-<question>-<rules>-seat<seat>-<table>-s<seed>" in flat  # as default_out names it
    assert "(default: None)" not in r.stdout
    from thirtyone_env.research.__main__ import default_out

    config = StudyConfig(question="knock", table=("expert", "greedy"), seat=1, seed=4)
    assert default_out(config).name.startswith("research-knock-standard-seat1-expert_greedy-s4")
    r = cli("switch", "--help")
    assert "stay with the hand's best suit" in r.stdout
    r = cli("--help")
    assert all(q in r.stdout for q in ("knock", "switch", "take"))


def test_an_open_interval_prints_as_words():
    from thirtyone_env.research.report import interval

    assert interval(24.5, float("nan"), ".1f", point=25.0) == "[24.5, no upper bound]"
    assert interval(float("-inf"), 26.0, ".1f") == "[no lower bound, 26.0]"
    assert interval(float("nan"), float("nan"), ".1f") == "[-, -]"  # no data, no point
    assert interval(24.5, 25.5, ".1f", point=25.0) == "[24.5, 25.5]"


def test_regret_is_picked_on_one_half_of_the_play_outs_and_measured_on_the_other():
    values = np.array([[0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0], [-1.0, -1.0, -1.0, -1.0]])
    assert regret(values, 0) == 1.0 and regret(values, 1) == 0.0 and regret(values, 2) == 2.0
    # noise alone: the option that looks best on one half is measured on the other, so
    # the mean regret of a choice among equal options is zero, not the noise's maximum
    rng = np.random.default_rng(0)
    losses = [regret(rng.normal(size=(3, 16)), 0) for _ in range(4000)]
    assert abs(np.mean(losses)) < 4 * np.std(losses) / np.sqrt(len(losses))
    assert np.isnan(regret(values[:, :1], 0)) and np.isnan(regret(values, -1))


def test_a_studys_regret_is_one_value_a_decision_summed_up_by_turn():
    df = pd.DataFrame(
        run_jobs(small(question="knock", decisions=60), agents.from_spec), columns=list(COLUMNS)
    )
    per_decision = df.groupby(["game", "round", "turn"])["regret"].nunique(dropna=False)
    assert (per_decision == 1).all()
    table = aggregate.regret(df)
    assert table["decisions"].iloc[0] == 60 and np.isfinite(table["regret"].iloc[0])
    by_turn = aggregate.regret(df, ("turn",))
    assert by_turn["decisions"].sum() == 60


def _job_row(**changed):
    """A row as a knock study of expert in seat 0 writes it (job 0)."""
    from thirtyone_env.research.labelling import COLUMNS

    row = dict(game=3, round=1, seat=0, player="expert", turn=2, position=0, players_in=2, lives=3, score=0,
               stock=20, value=21.0, question="knock", own="draw", baseline="draw", alternative="knock",
               chosen=False, gain=-0.1, se=0.05, rollouts=2, regret=0.0)  # fmt: skip
    row.update(changed)
    return tuple(row[c] for c in COLUMNS)


@pytest.mark.parametrize(
    ("rows", "named"),
    [
        ([_job_row(player="evil")], "a row of another study"),
        ([_job_row(question="take")], "a row of another study"),
        ([_job_row(seat=1)], "a row of another seat or job"),
        ([_job_row(game=10**20)], "a row of another seat or job"),
        ([_job_row(gain=float("nan"))], "not finite"),
        ([_job_row(), _job_row()], "a row given twice"),
        ([_job_row(gain=1e300)], "beyond any game's"),
        ([_job_row(se=-0.1)], "negative turn or error"),
        ([_job_row(rollouts=3)], "another number of play-outs"),
        ([_job_row(own="<script>")], "no options' names"),
        ([_job_row(chosen="maybe")], "not True or False"),
        ([_job_row(own="x" * 200_000)], "not a CSV table"),
        ([_job_row(turn=t) for t in range(19)], "it holds 19 decisions, not the job's 20"),
        ([_job_row(turn=t) for t in range(20)], None),
    ],
)
def test_a_kept_job_is_checked_against_its_study(tmp_path, rows, named):
    """A resumed study takes a kept job only if this study could have written it."""
    from thirtyone_env.research import folder
    from thirtyone_env.research.config import StudyConfig

    config = StudyConfig("knock", ("expert", "expert"), 0, decisions=20, rollouts=2)
    (tmp_path / folder.JOBS).mkdir()
    (tmp_path / folder.JOBS / "job_000000.csv").write_text(folder.write_rows(rows))
    if named is None:
        assert folder.read_jobs(tmp_path, config) == {0: rows}
    else:
        with pytest.raises(ValueError, match=named):
            folder.read_jobs(tmp_path, config)


def test_the_games_players_never_play_the_oracles_play_outs():
    """The play-outs run on the true hands and stock: stand-ins play them, so each of the
    game's own players is handed a generator once (at its game's start) and is asked
    only about the real game's positions, never a play-out's."""
    from thirtyone_env.game.policies import GreedyPolicy
    from thirtyone_env.research.labelling import label_job

    built: list = []

    class Counting(GreedyPolicy):
        def __init__(self) -> None:
            super().__init__()
            self.resets = 0
            self.turns: list[int] = []

        def reset(self, rng) -> None:
            self.resets += 1

        def act(self, obs, mask):
            self.turns.append((obs.round_no, obs.turns_played))
            return super().act(obs, mask)

    def make(spec):
        player = Counting()
        built.append(player)
        return player

    config = StudyConfig(
        question="knock", table=("greedy", "greedy", "greedy"), decisions=6, rollouts=3, seed=2
    )
    rows = label_job(config, 0, 6, make)
    assert len(rows) >= 6
    game_players = [p for k, p in enumerate(built) if k % 6 < 3]  # each game: its 3 players, then 3 stand-ins
    stand_ins = [p for k, p in enumerate(built) if k % 6 >= 3]
    assert all(p.resets == 1 for p in game_players)
    assert any(p.resets > 1 for p in stand_ins)  # each play-out hands them its generator
    for p in game_players:  # the real game only: its turns never go back
        assert p.turns == sorted(p.turns)


def test_a_study_seats_the_zoo_model_for_its_game_and_its_play_outs():
    """``ppo`` without a path picks its zoo model when told the table: the play-outs'
    stand-ins are told it as the game's players are."""
    from thirtyone_env.research.labelling import label_job

    config = StudyConfig(
        question="knock", table=("ppo", "expert", "expert", "expert"), decisions=2, rollouts=2, seed=4
    )
    assert len(label_job(config, 0, 2, agents.from_spec)) >= 2
