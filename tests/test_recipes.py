"""Recipes: ``train.py RECIPE.toml`` and ``train.py --rules R --players N`` (the default
recipe). A recipe is read and checked whole before any work (a bad one: one line naming
the file, the step and the option, exit 2, no run folder); its steps run in their own
sub-folders, each compared with the model it started from; a resumed recipe skips the
steps done; the time limit bounds the whole recipe."""

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from training import cli
from training.recipe import RECIPES, RecipeError, default, parse, read
from training.steps import STEPS

ROOT = Path(__file__).resolve().parents[1]

#: a tiny table and two tiny steps: seconds on one core
TINY_TABLE = """
[table]
rules = "standard"
players = 2
opponents = "greedy"
eval_opponents = "greedy"
net_arch = "32,32"
report_games = 60
report_most_games = 60
"""
TINY_STEPS = """
[[step]]
kind = "imitation"
teacher = "greedy"
decisions = 400
epochs = 2

[[step]]
kind = "improvement"
decisions = 200
rollouts = 2
epochs = 2
"""


def train(*args: str) -> int:
    return cli.main([*args, "--no-progress", "--workers", "1"])


def write(tmp_path: Path, text: str, name: str = "r.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_recipe_runs_its_steps_in_their_folders_and_reports_each(tmp_path, capsys):
    recipe = write(tmp_path, TINY_TABLE + TINY_STEPS)
    assert train(str(recipe), "--runs-dir", str(tmp_path / "runs"), "--run-name", "a") == 0
    run = tmp_path / "runs" / "a"
    assert sorted(p.name for p in (run / "steps").iterdir()) == ["0_start", "1_imitation", "2_improvement"]
    state = json.loads((run / "recipe.json").read_text())
    assert [s["pass"] for s in state["steps"]] == ["1_imitation", "2_improvement"]
    # each step's model against the model it started from, at the report table
    first, second = state["steps"]
    assert first["model_in"] == "steps/0_start/best_model.zip"  # relative: the folder may move
    assert second["model_in"] == (first["model"] if first["kept"] else first["model_in"])
    for step in state["steps"]:
        [row] = step["rows"]
        assert row["table"] == "greedy x1" and row["games"] == 60
    assert (run / "best_model.zip").read_bytes() == (run / state["model"]).read_bytes()
    report = (run / "report.md").read_text()
    assert "| 1_imitation | greedy x1 | 60 |" in report and "| 2_improvement | improvement |" in report
    assert (run / "report.png").read_bytes()[:4] == b"\x89PNG"
    # the run keeps its recipe, every option written out: it reads back as the same recipe
    assert read(run / "recipe.toml").steps == read(recipe).steps
    # a second start of the same name is refused; --resume of a finished recipe has nothing to run
    assert train(str(recipe), "--runs-dir", str(tmp_path / "runs"), "--run-name", "a") == 2
    assert "exists: resume it with --resume" in capsys.readouterr().err
    before = {p: p.stat().st_mtime_ns for p in (run / "steps").rglob("*.zip")}
    assert train("--resume", str(run)) == 0
    assert before == {p: p.stat().st_mtime_ns for p in (run / "steps").rglob("*.zip")}


def test_an_aggregating_dagger_round_fits_the_decisions_of_the_passes_before_it(tmp_path):
    """DAgger's aggregated data set: each round records its own decisions (the model
    plays, the teacher labels) and fits them with every earlier imitation pass's."""
    dagger = (
        '\n[[step]]\nkind = "imitation"\nname = "dagger"\nteacher = "greedy"\nbehaviour = "model"\n'
        "decisions = 300\nepochs = 2\naggregate = true\nrepeat = 2\n"
    )
    text = TINY_TABLE.replace("report_games = 60", "report_games = 0") + TINY_STEPS.split("\n\n")[0] + dagger
    assert train(str(write(tmp_path, text)), "--runs-dir", str(tmp_path / "runs"), "--run-name", "a") == 0
    steps = tmp_path / "runs" / "a" / "steps"
    fitted = {}
    for name in ("1_imitation", "2_dagger", "2_dagger.2"):
        figures = json.loads((steps / name / "steps.json").read_text())["imitation"]
        with np.load(steps / name / "demonstrations.npz") as saved:
            assert len(saved["actions"]) == figures["recorded"]  # a pass saves only its own
        fitted[name] = (figures["recorded"], figures["decisions"])
    assert fitted == {"1_imitation": (400, 400), "2_dagger": (300, 700), "2_dagger.2": (300, 1000)}
    # under a time limit the round leaves its fit's time: the same decisions, fitted
    timed = TINY_TABLE.replace("report_games = 60", "report_games = 0") + "time_limit = 300\n"
    timed += TINY_STEPS.split("\n\n")[0] + dagger.replace("repeat = 2\n", "")
    assert (
        train(str(write(tmp_path, timed, "t.toml")), "--runs-dir", str(tmp_path / "runs"), "--run-name", "t")
        == 0
    )
    figures = json.loads((tmp_path / "runs" / "t" / "steps" / "2_dagger" / "steps.json").read_text())[
        "imitation"
    ]
    assert (figures["recorded"], figures["decisions"], figures["epochs"]) == (300, 700, 2)


def test_a_resumed_recipe_goes_on_from_the_step_that_did_not_end(tmp_path):
    recipe = write(tmp_path, TINY_TABLE + TINY_STEPS)
    assert train(str(recipe), "--runs-dir", str(tmp_path), "--run-name", "r", "--report-games", "0") == 0
    run = tmp_path / "r"
    state = json.loads((run / "recipe.json").read_text())
    # as if the recipe had been stopped inside the improvement step: its pass unrecorded
    (run / "steps" / "2_improvement" / "best_model.zip").unlink()
    state["steps"] = state["steps"][:1]
    state["model"], state["from"] = state["steps"][0]["model"], "1_imitation"
    (run / "recipe.json").write_text(json.dumps(state))
    imitation = run / "steps" / "1_imitation" / "best_model.zip"
    stamp = imitation.stat().st_mtime_ns
    assert train("--resume", str(run), "--report-games", "0") == 0
    assert imitation.stat().st_mtime_ns == stamp  # not trained again
    state = json.loads((run / "recipe.json").read_text())
    assert [s["pass"] for s in state["steps"]] == ["1_imitation", "2_improvement"]
    assert (run / "steps" / "2_improvement" / "best_model.zip").exists()


def test_a_resume_refuses_a_state_file_it_did_not_write(tmp_path, capsys):
    """The run folder's recipe.json may have been edited or come from someone else: a
    resume names the file and what is wrong with it, and trains nothing, copies
    nothing (a model path outside the run would have become its best model)."""
    recipe = write(tmp_path, TINY_TABLE + TINY_STEPS)
    assert train(str(recipe), "--runs-dir", str(tmp_path), "--run-name", "r", "--report-games", "0") == 0
    run = tmp_path / "r"
    good = json.loads((run / "recipe.json").read_text())
    best = (run / "best_model.zip").read_bytes()
    foreign = tmp_path / "foreign.zip"
    foreign.write_bytes(b"not ours")
    crafted = {
        "steps is a number": {**good, "steps": 5},
        "a step without its fields": {**good, "steps": [{"x": 1}]},
        "negative seconds": {**good, "seconds": -1e9},
        "seconds as text": {**good, "seconds": "abc"},
        "a model outside the run": {**good, "start": str(foreign), "model": str(foreign)},
        "a step's model outside": {**good, "steps": [{**good["steps"][0], "model": str(foreign)}]},
        "a relative model outside": {**good, "steps": [{**good["steps"][0], "model": "../foreign.zip"}]},
        "a row that is no row": {**good, "steps": [{**good["steps"][0], "rows": [{"wins_diff": "x"}]}]},
        "unknown field": {**good, "run": "x"},
    }
    texts = {name: json.dumps(state) for name, state in crafted.items()}
    texts["a list"] = "[1, 2]"
    texts["deep nesting"] = "[" * 100_000 + "]" * 100_000
    texts["truncated"] = json.dumps(good)[:40]
    for name, text in texts.items():
        (run / "recipe.json").write_text(text)
        capsys.readouterr()
        assert train("--resume", str(run), "--report-games", "0") == 2, name
        err = capsys.readouterr().err
        assert err.startswith(f"train.py: error: {run / 'recipe.json'} is not") and err.count("\n") == 1, (
            name,
            err,
        )
        assert (run / "best_model.zip").read_bytes() == best, name
    (run / "recipe.json").write_text(json.dumps(good))
    assert train("--resume", str(run), "--report-games", "0") == 0
    moved = tmp_path / "moved"
    run.rename(moved)  # the state names its models relative to the folder: it resumes there
    assert train("--resume", str(moved), "--report-games", "0") == 0, capsys.readouterr().err


def test_a_resumed_recipe_keeps_its_time_limit_less_the_time_spent(tmp_path, capsys):
    recipe = write(tmp_path, TINY_TABLE + TINY_STEPS)
    args = ("--runs-dir", str(tmp_path), "--run-name", "r", "--report-games", "0")
    assert train(str(recipe), *args, "--time-limit", "600") == 0
    run = tmp_path / "r"
    state = json.loads((run / "recipe.json").read_text())
    assert state["time_limit"] == 600 and 0 < state["seconds"] < 600
    # as if stopped inside the improvement step with the limit spent
    improved = run / "steps" / "2_improvement" / "best_model.zip"
    improved.unlink()
    state["steps"], state["seconds"] = state["steps"][:1], 600.0
    state["model"], state["from"] = state["steps"][0]["model"], "1_imitation"
    (run / "recipe.json").write_text(json.dumps(state))
    capsys.readouterr()
    assert train("--resume", str(run), "--report-games", "0") == 0
    assert "the time limit was spent before 2_improvement" in capsys.readouterr().out
    assert not improved.exists()
    # a limit given with --resume replaces it (0: none)
    assert train("--resume", str(run), "--report-games", "0", "--time-limit", "0") == 0
    assert improved.exists()
    assert json.loads((run / "recipe.json").read_text())["time_limit"] == 0


def test_a_harmful_step_is_flagged_and_undone_unless_kept(tmp_path, capsys):
    """PPO at a learning rate that wrecks the network after an imitation of the expert:
    the report says so, the console warns, the recipe's model is the imitation's."""
    harmful = TINY_TABLE.replace("report_most_games = 60", "report_most_games = 200").replace(
        "report_games = 60", "report_games = 200"
    ) + (
        '\n[[step]]\nkind = "imitation"\nteacher = "expert"\ndecisions = 4000\nepochs = 4\n'
        '\n[[step]]\nkind = "ppo"\ntimesteps = 1024\nlearning_rate = 0.5\nn_envs = 2\nn_steps = 256\n'
        "batch_size = 128\ncheckpoint_every = 1024\n"
    )
    recipe = write(tmp_path, harmful)
    assert train(str(recipe), "--runs-dir", str(tmp_path), "--run-name", "h", "--workers", "2") == 0
    out = capsys.readouterr().out
    assert "the step 2_ppo made the model significantly worse than its start: undone" in out
    run = tmp_path / "h"
    state = json.loads((run / "recipe.json").read_text())
    assert state["from"] == "1_imitation" and not state["steps"][1]["kept"]
    assert (run / "best_model.zip").read_bytes() == (
        run / "steps" / "1_imitation" / "best_model.zip"
    ).read_bytes()
    assert "**significantly worse**" in (run / "report.md").read_text()

    assert train(str(recipe), "--runs-dir", str(tmp_path), "--run-name", "k", "--keep-worse") == 0
    assert "kept anyway" in capsys.readouterr().out
    kept = tmp_path / "k"
    assert json.loads((kept / "recipe.json").read_text())["from"] == "2_ppo"


def test_the_time_limit_bounds_the_whole_recipe(tmp_path, capsys):
    """A step marked until_time repeats while time is left; no step starts after it."""
    text = TINY_TABLE + TINY_STEPS.replace("epochs = 2\n", "epochs = 2\nuntil_time = true\n", 2)
    recipe = write(tmp_path, text)
    assert train(str(recipe), "--runs-dir", str(tmp_path), "--run-name", "t", "--time-limit", "0.001") == 0
    state = json.loads((tmp_path / "t" / "recipe.json").read_text())
    assert state["steps"] == [] and state["stopped"] == "the time limit was spent before 1_imitation"
    assert "The recipe stopped early" in (tmp_path / "t" / "report.md").read_text()


def test_a_time_limit_leaves_the_collection_most_of_it_when_the_fit_asked_for_is_longer(tmp_path, capsys):
    """Fitting the decisions asked for would take far longer than the limit: the
    collection still gets three quarters of it (not one game), the fit the rest."""
    big = TINY_STEPS.split("[[step]]")[1].replace("decisions = 400", "decisions = 2000000")
    recipe = write(tmp_path, TINY_TABLE + "[[step]]" + big.replace("epochs = 2", "epochs = 200"))
    assert train(str(recipe), "--runs-dir", str(tmp_path), "--run-name", "t", "--time-limit", "12") == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("imitation of greedy:"))
    assert int(line.split(": ")[1].split(" decisions")[0].replace(",", "")) > 1000, line


def test_a_recipe_file_carries_its_time_limit_and_the_command_line_overrides_it(tmp_path):
    recipe = write(tmp_path, TINY_TABLE + "time_limit = 0.001\n" + TINY_STEPS)
    assert train(str(recipe), "--runs-dir", str(tmp_path), "--run-name", "own") == 0
    state = json.loads((tmp_path / "own" / "recipe.json").read_text())
    assert state["stopped"] == "the time limit was spent before 1_imitation"
    assert train(str(recipe), "--runs-dir", str(tmp_path), "--run-name", "none", "--time-limit", "0") == 0
    state = json.loads((tmp_path / "none" / "recipe.json").read_text())
    assert [s["pass"] for s in state["steps"]] == ["1_imitation", "2_improvement"] and not state["stopped"]
    assert all(s["report_seconds"] > 0 for s in state["steps"])


def test_a_step_marked_until_time_repeats_until_the_time_is_spent(tmp_path):
    text = TINY_TABLE + '\n[[step]]\nkind = "improvement"\ndecisions = 100\nrollouts = 1\nuntil_time = true\n'
    recipe = write(tmp_path, text)
    assert train(str(recipe), "--runs-dir", str(tmp_path), "--run-name", "u", "--time-limit", "10") == 0
    state = json.loads((tmp_path / "u" / "recipe.json").read_text())
    passes = [s["pass"] for s in state["steps"]]
    assert passes[:2] == ["1_improvement", "1_improvement.2"], passes
    assert all(p.startswith("1_improvement") for p in passes) and state["stopped"] == ""


def test_a_time_share_leaves_the_rest_of_the_time_to_the_steps_after(tmp_path):
    """A step with ``time_share`` passes only while its share of the time is left; the
    steps after it get the rest."""
    step = '\n[[step]]\nkind = "improvement"\ndecisions = 100\nrollouts = 1\nuntil_time = true\n'
    text = TINY_TABLE.replace("report_games = 60", "report_games = 0") + step + "time_share = 0.3\n" + step
    recipe = write(tmp_path, text)
    assert train(str(recipe), "--runs-dir", str(tmp_path), "--run-name", "s", "--time-limit", "14") == 0
    state = json.loads((tmp_path / "s" / "recipe.json").read_text())
    first = [s for s in state["steps"] if s["pass"].startswith("1_")]
    second = [s for s in state["steps"] if s["pass"].startswith("2_")]
    assert first and second, state["steps"]
    assert sum(s["seconds"] for s in first) < 0.3 * 14 + 3  # a pass already begun ends
    assert sum(s["seconds"] for s in second) > sum(s["seconds"] for s in first)


def test_a_ppo_step_until_time_stops_at_the_timesteps_it_gives(tmp_path):
    """``until_time`` with ``timesteps``: PPO trains until the time or the steps, whichever
    comes first, and the steps after it get the rest of the time."""
    ppo = (
        '\n[[step]]\nkind = "ppo"\nepisode = "round"\ntimesteps = 1024\nn_envs = 2\nn_steps = 256\n'
        "batch_size = 256\ncheckpoint_every = 1024\nuntil_time = true\n"
    )
    step = '\n[[step]]\nkind = "improvement"\ndecisions = 100\nrollouts = 1\n'
    text = TINY_TABLE.replace("report_games = 60", "report_games = 0") + ppo + step
    recipe = write(tmp_path, text)
    assert train(str(recipe), "--runs-dir", str(tmp_path), "--run-name", "p", "--time-limit", "300") == 0
    state = json.loads((tmp_path / "p" / "recipe.json").read_text())
    assert [s["pass"] for s in state["steps"]] == ["1_ppo", "2_improvement"], state["steps"]
    assert state["steps"][0]["seconds"] < 120
    assert "timesteps = 1024" in (tmp_path / "p" / "recipe.toml").read_text()


def test_house_rules_train_a_model_of_their_own_table(tmp_path, capsys):
    """A table with house rules (``PRESET:OPTION=VALUE,...``): the recipe runs there and
    its model names those rules, so it sits at that table and no other."""
    from agents.ppo import trained_table
    from thirtyone_env.game.rules import Rules

    house = "standard:lives=2,knock_from_turn=2"
    recipe = write(
        tmp_path, TINY_TABLE.replace('rules = "standard"', f'rules = "{house}"') + TINY_STEPS.split("\n\n")[0]
    )
    assert train(str(recipe), "--runs-dir", str(tmp_path), "--run-name", "h", "--report-games", "0") == 0
    assert trained_table(tmp_path / "h" / "best_model.zip") == (2, Rules(lives=2, knock_from_turn=2))
    assert train("--rules", "standard:lives=two", "--show") == 2
    assert "lives='two' must be int" in capsys.readouterr().err


def test_a_bad_time_share_is_named(tmp_path, capsys):
    text = TINY_TABLE + '[[step]]\nkind = "improvement"\ntime_share = 1.5\n'
    assert train(str(write(tmp_path, text)), "--runs-dir", str(tmp_path / "runs")) == 2
    assert "step 1 (improvement): time_share=1.5 must be more than 0 and at most 1" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


BAD = [
    # (recipe text, what the one line names)
    (TINY_TABLE + '[[step]]\nkind = "imitate"\n', "step 1: kind='imitate' is not a step"),
    (TINY_TABLE + '[[step]]\nkind = "improvement"\nrollout = 8\n', "step 1 (improvement): unknown option 'rollout'"),
    (TINY_TABLE + '[[step]]\nkind = "improvement"\nrollouts = "8"\n', "step 1 (improvement): rollouts='8' must be an integer"),
    (TINY_TABLE + '[[step]]\nkind = "improvement"\nrollouts = 0\n', "step 1 (improvement): rollouts=0 must be at least 1"),
    (TINY_TABLE + '[[step]]\nkind = "imitation"\nteacher = "expret"\n', "step 1 (imitation): "),
    (TINY_TABLE + '[[step]]\nkind = "imitation"\npool = ["warm"]\n', "step 1 (imitation): pool names 'warm'"),
    (TINY_TABLE + TINY_STEPS.split("\n\n")[0] + '\n[[step]]\nkind = "imitation"\npool = ["imitation"]\naggregate = true\n', "step 2 (imitation2): aggregate fits new decisions"),
    (TINY_TABLE.replace('opponents = "greedy"', 'opponents = "ppo:path=gone.zip"', 1) + TINY_STEPS, "step 1 (imitation): "),
    (TINY_TABLE + 'start = "nowhere.zip"\n' + TINY_STEPS, "[table] start='nowhere.zip': no such model file"),
    (TINY_TABLE.replace("players = 2", "players = 12") + TINY_STEPS, "step 1 (imitation): "),
    (TINY_TABLE + "[tabel]\n" + TINY_STEPS, "unknown section 'tabel'"),
    (TINY_TABLE, "no [[step]]"),
    (TINY_TABLE + "time_limit = -5\n" + TINY_STEPS, "[table] time_limit=-5.0 must be 0 or more"),
    ("[table\n", "not a TOML file"),
    ("step = [1]\n" + TINY_TABLE, "step 1 is int, not a [[step]] table"),
    ('step = ["imitation"]\n' + TINY_TABLE, "step 1 is str, not a [[step]] table"),
    (TINY_TABLE + '[[step]]\nkind = ["imitation"]\n', "step 1: kind=['imitation'] is not a step"),
    ("x = " + "[" * 2000 + "]" * 2000 + "\n", "not a TOML file: nested too deep"),
    (TINY_TABLE + '[[step]]\nkind = "imitation"\nname = ""\n', "step 1 (imitation): name is empty"),
]  # fmt: skip


def test_a_recipe_saved_with_a_byte_order_mark_reads(tmp_path):
    """Some editors start a UTF-8 file with a BOM: the recipe is the same."""
    plain = read(write(tmp_path, TINY_TABLE + TINY_STEPS))
    marked = read(write(tmp_path, "\ufeff" + TINY_TABLE + TINY_STEPS, "bom.toml"))
    assert marked.table == plain.table and marked.steps == plain.steps


@pytest.mark.parametrize(("text", "named"), BAD)
def test_a_bad_recipe_is_refused_before_any_work(tmp_path, text, named):
    recipe = write(tmp_path, text, "bad.toml")
    runs = tmp_path / "runs"
    done = subprocess.run(
        [sys.executable, str(ROOT / "train.py"), str(recipe), "--runs-dir", str(runs)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("train.py: error: "), done.stderr
    assert str(recipe) in lines[0] and named in lines[0], lines[0]
    assert not runs.exists()  # no run folder left


def test_a_start_model_made_for_another_table_is_refused(tmp_path, capsys):
    two = ROOT / "agents" / "models" / "ppo_standard_2p-v2.zip"
    recipe = write(
        tmp_path, TINY_TABLE.replace("players = 2", "players = 4") + f'start = "{two}"\n' + TINY_STEPS
    )
    assert train(str(recipe), "--runs-dir", str(tmp_path / "runs")) == 2
    err = capsys.readouterr().err
    assert f"{recipe}: [table] start=" in err and "players" in err, err
    assert not (tmp_path / "runs").exists()


def test_bad_options_are_named(capsys):
    assert train("--set", "imitation.decisions") == 2
    assert "give STEP.OPTION=VALUE" in capsys.readouterr().err
    assert train("--set", "imitatoin.decisions=5") == 2
    assert "'imitatoin' is no step" in capsys.readouterr().err
    assert train("--set", "dagger.decisions=0", "--show") == 2
    assert "step 2 (dagger): decisions=0 must be at least 1" in capsys.readouterr().err
    assert train("--teacher", "none", "--set", "ppo.n_envs=0", "--show") == 2
    assert "step 1 (ppo): n_envs=0 must be" in capsys.readouterr().err
    assert train(str(RECIPES / "default.toml"), "--rules", "cut_throat") == 2
    assert "a recipe file names its own" in capsys.readouterr().err
    assert train("--resume", "nowhere", "--seed", "3") == 2
    assert "drop --seed" in capsys.readouterr().err


def test_every_recipe_file_reads_and_checks():
    """The zoo's recipes and the defaults: each parses and every step's run config
    and players are built (what train.py checks before any work)."""
    from training.recipe_run import Placement, check

    files = sorted(RECIPES.glob("*.toml"))
    assert {"default.toml", "no_teacher.toml"} <= {p.name for p in files}
    for path in files:
        check(read(path), Path("/nonexistent/run"), Placement())


def test_the_default_recipe_takes_the_table_and_the_teacher():
    with_teacher = default("cut_throat", 3, "blitz31")
    assert (with_teacher.table.rules, with_teacher.table.players) == ("cut_throat", 3)
    assert set(with_teacher.teachers()) == {"blitz31"}
    alone = default("switch", 4, "none")
    assert alone.teachers() == [] and {s.step.kind for s in alone.steps} <= {"improvement", "ppo"}
    # a banking game plays on to its 100th round: its reports play a tenth of the games
    standard, banking = default("standard", 4, "expert").table, default("banking", 4, "none").table
    assert (banking.report_games, banking.report_most_games) == (
        standard.report_games // 10,
        standard.report_most_games // 10,
    )
    assert default("no_elimination", 4, "expert").table.report_games == standard.report_games
    # a teacher that searches its own knocks is copied; the others' knocks are measured
    measured = {s.step.knock_rollouts for s in default("standard", 4, "expert").steps}
    copied = {s.step.knock_rollouts for s in default("stop_the_bus", 4, "search:moves=all").steps}
    assert min(measured) > 0 and copied == {0}


def test_a_stop_the_bus_table_has_a_default_recipe_of_its_own():
    """Every turn there is a table move, which the expert plays no better than greedy:
    without --teacher the recipe copies search trying every move, house rules of that
    table included; a teacher named replaces it, and other tables keep the expert."""
    for rules in ("stop_the_bus", "stop_the_bus:lives=5"):
        bus = default(rules, 4)
        assert bus.table.rules == rules and set(bus.teachers()) == {"search:moves=all"}
        assert [s.step.epochs for s in bus.steps] == [30]
    assert set(default("stop_the_bus", 4, "expert").teachers()) == {"expert"}
    for rules in ("standard", "banking", "standard:table=bus,hand_ranking=brag"):
        assert set(default(rules, 3).teachers()) == ({"search:moves=all"} if "bus" in rules else {"expert"})


def test_show_prints_the_recipe_that_would_run(capsys):
    assert train("--rules", "standard", "--players", "3", "--set", "imitation.decisions=1234", "--show") == 0
    text = capsys.readouterr().out
    shown = parse(__import__("tomllib").loads(text), "shown")
    assert shown.table.players == 3 and shown.steps[0].step.decisions == 1234


def test_steps_lists_every_step_and_option(capsys):
    assert train("--steps") == 0
    text = capsys.readouterr().out
    for kind, cls in STEPS.items():
        assert f"kind = {kind!r}" in text
        for f in dataclasses.fields(cls):
            assert f"  {f.name} " in text


def test_recipe_errors_name_the_file(tmp_path):
    with pytest.raises(RecipeError, match="nowhere.toml: no such recipe file"):
        read("nowhere.toml")
    os.mkfifo(tmp_path / "fifo.toml")  # a plain read would wait for a writer for ever
    with pytest.raises(RecipeError, match="fifo.toml: cannot read the recipe: .* is not a regular file"):
        read(tmp_path / "fifo.toml")
    with pytest.raises(RecipeError, match="is not a regular file"):
        read(tmp_path)


def test_the_training_docs_list_every_step_option_as_the_code_has_them():
    """docs/training.md holds ``train.py --steps`` word for word: a step option added or
    changed without its documentation fails here."""
    from training.steps import step_help

    assert f"```text\n{step_help()}\n```" in (ROOT / "docs" / "training.md").read_text()


def test_ctrl_c_inside_a_step_keeps_its_work_and_the_recipe_goes_on_from_it(tmp_path):
    """A real SIGINT during the imitation's collection: train.py exits with 130, the
    decisions collected so far stay in the step's folder, and ``--resume`` finishes the
    recipe from them."""
    import os
    import signal
    import time

    text = TINY_TABLE.replace("report_games = 60", "report_games = 0") + TINY_STEPS.replace(
        "decisions = 400", "decisions = 60000", 1
    )
    recipe = write(tmp_path, text)
    run = tmp_path / "c"
    cmd = [
        sys.executable,
        str(ROOT / "train.py"),
        str(recipe),
        "--runs-dir",
        str(tmp_path),
        "--run-name",
        "c",
    ]
    proc = subprocess.Popen(
        [*cmd, "--no-progress", "--workers", "1"], cwd=ROOT, stderr=subprocess.PIPE, text=True
    )
    config = run / "steps" / "1_imitation" / "config.json"
    deadline = time.monotonic() + 120
    while not config.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    # a few collection jobs of 5,000 decisions, far from the 60,000 (about 12,000 a
    # second on an idle core)
    time.sleep(1)
    os.kill(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    partial = run / "steps" / "1_imitation" / "demonstrations.partial.npz"
    assert partial.exists(), err
    assert f"go on with: python train.py --resume {run}\n" in err and "run_cli" not in err
    assert json.loads((run / "recipe.json").read_text())["steps"] == []
    done = subprocess.run(
        [sys.executable, str(ROOT / "train.py"), "--resume", str(run), "--no-progress", "--workers", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "going on from the" in done.stdout
    state = json.loads((run / "recipe.json").read_text())
    assert [s["pass"] for s in state["steps"]] == ["1_imitation", "2_improvement"]


def test_a_collecting_pass_is_not_begun_with_less_than_half_the_time_its_kind_took():
    """A DAgger round left a few minutes would fit a fresh network on a fraction of its
    decisions: under a time limit it needs half the longest earlier pass of its kind;
    PPO trains for whatever time it gets; without a limit nothing is held back."""
    from training.recipe_run import Placement, _time_needed

    recipe = parse(tomllib_loads(TINY_TABLE + TINY_STEPS + '[[step]]\nkind = "ppo"\n'), "t.toml")
    imitation, improvement, ppo = recipe.steps
    state = {"steps": [{"kind": "imitation", "seconds": 600.0}, {"kind": "imitation", "seconds": 200.0}]}
    limited = Placement(time_limit=1800)
    assert _time_needed(state, imitation, limited) == 300.0
    assert _time_needed(state, improvement, limited) == 0.0  # none of its kind yet
    assert _time_needed(state, ppo, limited) == 0.0
    assert _time_needed(state, imitation, Placement()) == 0.0


def tomllib_loads(text):
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads(text)


EVIL = """
from pathlib import Path
Path(__file__).with_name("CODE_RAN").write_text("it ran")
class X:
    def act(self, observation, action_mask):
        return int(action_mask.nonzero()[0][0])
"""


@pytest.mark.parametrize(
    "where",
    ["table.opponents", "step.teacher", "step.behaviour", "step.opponents", "module", "eval_opponents"],
)
def test_a_recipe_file_naming_code_is_refused_before_it_runs(tmp_path, where):
    """A recipe is a data file: a player spec in it that imports code (a file or a
    module) is refused before anything is imported, unless ``--allow-code``."""
    (tmp_path / "evil.py").write_text(EVIL)
    spec = "json.decoder:JSONDecoder" if where == "module" else f"{tmp_path / 'evil.py'}:X"
    table = TINY_TABLE
    steps = TINY_STEPS
    if where in ("table.opponents", "module"):
        table = table.replace('\nopponents = "greedy"', f'\nopponents = "{spec}"', 1)
    elif where == "eval_opponents":
        table = table.replace('\neval_opponents = "greedy"', f'\neval_opponents = "expert,{spec}"', 1)
    elif where == "step.teacher":
        steps = steps.replace('teacher = "greedy"', f'teacher = "{spec}"', 1)
    elif where == "step.behaviour":
        steps = steps.replace('teacher = "greedy"', f'teacher = "greedy"\nbehaviour = "{spec}"', 1)
    else:
        steps = steps.replace('kind = "imitation"', f'kind = "imitation"\nopponents = "greedy,{spec}"', 1)
    recipe = write(tmp_path, table + steps)
    assert spec in recipe.read_text()
    with pytest.raises(RecipeError, match=r"names a player that runs code .*--allow-code"):
        read(recipe)
    r = subprocess.run(
        [sys.executable, str(ROOT / "train.py"), str(recipe), "--show"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 2 and "runs code" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "CODE_RAN").exists()
    if where != "module":
        read(recipe, allow_code=True)  # the user says they trust it


def test_a_player_typed_on_the_command_line_may_be_code(tmp_path):
    """``--opponents bots.py:Class`` is the user's own choice: no flag needed."""
    (tmp_path / "evil.py").write_text(EVIL)
    r = subprocess.run(
        [sys.executable, str(ROOT / "train.py"), "--opponents", f"{tmp_path / 'evil.py'}:X", "--show"],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert f'opponents = "{tmp_path / "evil.py"}:X"' in r.stdout


def test_a_run_folder_or_sweep_naming_code_is_refused_on_resume(tmp_path):
    """A run folder someone sent (its ``config.json``) and a sweep file are data too."""
    from training.run_folder import stored_config
    from training.sweep import Sweep

    (tmp_path / "evil.py").write_text(EVIL)
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"opponents": f"expert,{tmp_path / 'evil.py'}:X"}))
    with pytest.raises(ValueError, match="names a player that runs code"):
        stored_config(run, {})
    sweep = tmp_path / "sweep.json"
    sweep.write_text(json.dumps({"base": {"imitate": f"{tmp_path / 'evil.py'}:X"}}))
    with pytest.raises(ValueError, match="the sweep file .* names a player that runs code"):
        Sweep.read(sweep)
    for varied in (
        {"grid": {"opponents": [f"{tmp_path / 'evil.py'}:X"]}},
        {"sample": {"eval_opponents": {"choice": ["expert", f"{tmp_path / 'evil.py'}:X"]}}},
    ):
        sweep.write_text(json.dumps({"name": "s", **varied}))
        with pytest.raises(ValueError, match="the sweep file .* names a player that runs code"):
            Sweep.read(sweep)
    assert not (tmp_path / "CODE_RAN").exists()


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--set", "table.seed=1", "--set", "table.seed=2"], "--set table.seed is given twice"),
        (["--set", "table.report_most_games=-5"], "report_most_games=-5 must be 0..10000000"),
        (["--set", "table.torch_threads=100000"], "torch_threads=100000 must be 1..1024"),
        (["--set", "table.seed=-1"], "seed=-1 must be 0.."),
        (["--set", "imitation.decisions=9223372036854775807"], "decisions=9223372036854775807 must be 0.."),
        (["--set", "imitation.seed=-3"], "seed=-3 must be 0.."),
        (["--workers", "9999"], "--workers must be at most the"),
        (["--time-limit", "-1"], "--time-limit must be 0 or more, got -1"),
        (["--seed", "-1"], "--seed must be 0..4294967295, got -1"),
        (["--players", "0"], "--rules standard --players 0: num_players=0 is not allowed"),
        (["--rules", ""], "--rules is empty"),
        (["--device", "nosuch"], "--device nosuch: device='nosuch' is not a torch device"),
        (["--opponents", "expert,,greedy"], "--opponents 'expert,,greedy' has an empty entry"),
        (
            [str(ROOT / "recipes" / "ppo_standard_4p.toml"), "--players", "0"],
            "--players choose the default recipe's table",
        ),
        (["--set", "table.seed=4294967296"], "seed=4294967296 must be 0..4294967295"),
    ],
)
def test_out_of_range_options_are_named_before_any_training(tmp_path, capsys, args, named):
    assert cli.main(["--runs-dir", str(tmp_path), "--no-progress", "--show", *args]) == 2
    err = capsys.readouterr().err
    assert named in err and err.count("\n") == 1, err
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("args", "named"), [([""], "argument recipe: is empty"), (["--resume", ""], "--resume: is empty")]
)
def test_an_empty_path_is_named_not_read_as_this_folder(tmp_path, capsys, args, named):
    with pytest.raises(SystemExit) as refused:
        cli.main(["--runs-dir", str(tmp_path), "--show", *args])
    err = capsys.readouterr().err
    assert refused.value.code == 2 and named in err and err.count("\n") == 1, err
