"""``train.py --sweep FILE``: trials of tiny runs as real Ray Tune trials (a local Ray on
127.0.0.1, started by the command) with ASHA stopping the one that falls behind; each
trial an ordinary run folder; the summary table and plot; a sweep killed mid-trial and
run again sums up and stops as an uninterrupted one; bad sweep files refused before
Ray starts (exit 2, no folder)."""

import csv
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from train_helpers import ROOT

from thirtyone_env.harness.files import FolderLock

pytest.importorskip("ray.tune")

TINY = {
    "report_games": 0,
    "total_timesteps": 512,
    "n_envs": 2,
    "vec_env": "dummy",
    "n_steps": 128,
    "batch_size": 128,
    "n_epochs": 1,
    "net_arch": "32,32",
    "eval_every": 256,
    "eval_games": 8,
    "checkpoint_every": 256,
    "opponents": "greedy,random",
    "eval_opponents": "greedy",
}


def sweep_env():
    """The environment of a sweep that starts a local Ray of its own."""
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    env.pop("RAY_ADDRESS", None)
    return env


def sweep_cmd(path, *extra):
    return subprocess.run(
        [sys.executable, "-m", "training.run_cli", "--sweep", str(path), *extra],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=sweep_env(),
        timeout=400,
    )


def write(tmp_path, sweep, filename="s.json"):
    path = tmp_path / filename
    path.write_text(json.dumps(sweep))
    return path


def evaluations(run):
    """A run folder's evaluations, as a trial reports them: by steps, the means over
    the evaluation tables of the win rate and of the lives lost a round."""
    with (run / "evaluations.csv").open() as f:
        rows = list(csv.DictReader(f))
    steps = list(dict.fromkeys(int(r["timesteps"]) for r in rows))
    at = [[r for r in rows if int(r["timesteps"]) == s] for s in steps]
    wins = [float(np.mean([float(r["win_rate"]) for r in x])) for x in at]
    lives = [float(np.mean([float(r["lives_lost_per_round"]) for r in x])) for x in at]
    return steps, wins, lives


def test_a_sweep_killed_mid_trial_goes_on_as_if_uninterrupted(tmp_path):
    """Two trials, one at a time, evaluated against three random players and against
    three greedy ones, four evaluations a trial and ASHA's one rung at the third: the
    sweep is killed (``kill -9``, its whole process group) when the second trial has
    made two evaluations, then run again. Uninterrupted, the first trial finishes and
    ASHA stops the second at the third evaluation, where it loses more lives than the
    first did: so it does after the kill, although Tune's restore starts the trial's
    history and the scheduler anew. The summary counts every evaluation each run folder
    holds (those before the kill too), its last, best and curve are theirs; the resumed
    trial reports each evaluation with its number in the run folder (ASHA's time), and
    ``asha.json`` holds what ASHA judged. Each trial is an ordinary run folder; a
    finished sweep, or another sweep of the same name, is refused."""
    from ray.tune import ExperimentAnalysis
    from ray.tune.result_grid import ResultGrid

    from training import sweep as sw

    runs = tmp_path / "runs"
    sweep = dict(
        name="k",
        base={**TINY, "runs_dir": str(runs), "total_timesteps": 768},
        grid={"eval_opponents": ["random", "greedy"]},
        metric="lives_lost_per_round",
        grace=3,
        reduction=2,
        concurrent=1,
    )
    path = write(tmp_path, sweep)
    folder = runs / "k"
    second = folder / "trial_00001"
    with (tmp_path / "killed.log").open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "training.run_cli", "--sweep", str(path)],
            cwd=ROOT,
            env=sweep_env(),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: the driver and the Ray it started
        )
        deadline = time.time() + 300
        while proc.poll() is None and time.time() < deadline:
            if (second / "evaluations.csv").exists() and len(evaluations(second)[0]) >= 2:
                break
            time.sleep(0.02)
        made = len(evaluations(second)[0]) if (second / "evaluations.csv").exists() else 0
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    assert made == 2, (tmp_path / "killed.log").read_text()[-3000:]
    assert not (folder / "summary.csv").exists()
    deadline = time.time() + 60  # the trial's Ray worker, in a session of its own, ends with its raylet
    while time.time() < deadline:
        try:
            FolderLock(second, "run folder").acquire().release()
            break
        except ValueError:
            time.sleep(0.5)

    done = sweep_cmd(path)
    assert done.returncode == 0, done.stderr[-3000:]
    with (folder / "summary.csv").open() as f:
        rows = {r["trial"]: r for r in csv.DictReader(f)}
    first, last = rows["trial_00000"], rows["trial_00001"]
    assert (first["status"], first["evaluations"], first["timesteps"]) == ("finished", "4", "768")
    assert (last["status"], last["evaluations"], last["timesteps"]) == ("stopped early", "3", "512")
    for trial, row in rows.items():
        steps, wins, lives = evaluations(folder / trial)
        assert steps == [0, 256, 512, 768][: int(row["evaluations"])]  # none lost, none twice
        assert float(row["win_rate"]) == wins[-1] and float(row["best_win_rate"]) == max(wins)
        assert float(row["lives_lost_per_round"]) == lives[-1]
    assert float(last["lives_lost_per_round"]) > evaluations(folder / "trial_00000")[2][2]

    steps = evaluations(second)[0]
    with (folder / "tune" / "trials" / "trial_00001" / "result.json").open() as f:
        resumed = [json.loads(line) for line in f]  # what Tune kept: the results since the resume
    assert [r["evaluations"] for r in resumed] == [steps.index(r["timesteps"]) + 1 for r in resumed]
    assert resumed[-1]["evaluations"] == 3
    judged = json.loads((folder / "asha.json").read_text())
    assert judged["trial_00000"]["evaluations"] == 4
    assert judged["trial_00001"] == {"evaluations": 3, "stopped": True}

    results = ResultGrid(ExperimentAnalysis(str(folder / "tune" / "trials")))
    for row in sw.summary_rows(sw.Sweep.read(path), results):  # the plot's curves
        steps, _, lives = evaluations(folder / row["trial"])
        assert row["curve"] == [list(point) for point in zip(steps, lives, strict=True)]

    assert json.loads((folder / "sweep.json").read_text())["grid"] == sweep["grid"]
    assert (first["eval_opponents"], last["eval_opponents"]) == ("random", "greedy")
    for trial in rows:  # ordinary run folders: train.py's own files, their evaluations
        run = folder / trial
        assert json.loads((run / "config.json").read_text())["run_name"] == trial
        with (run / "evaluations.csv").open() as f:
            assert len(list(csv.DictReader(f))) == int(rows[trial]["evaluations"])
    assert (folder / "summary.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "trial_00001" in done.stdout and "stopped early" in done.stdout
    again = sweep_cmd(path)  # finished: refused, nothing replaced
    assert again.returncode == 2 and "finished" in again.stderr
    other = sweep_cmd(write(tmp_path, {**sweep, "grid": {"learning_rate": [0.001]}}, "o.json"))
    assert other.returncode == 2 and "another sweep" in other.stderr


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("asha.json", "[1, 2]", "is not the record of what ASHA judged"),
        ("asha.json", '{"trial_00000": {"evaluations": "3"}}', "is not the record of what ASHA judged"),
        ("trial_00000/evaluations.csv", "timesteps,win_rate\nx,0.5\n", "is not an evaluation row"),
        (
            "trial_00000/evaluations.csv",
            f"timesteps,win_rate\n1,{'9' * 200_000}\n",
            "is not an evaluations file",
        ),
    ],
)
def test_a_sweep_that_goes_on_refuses_bad_records_before_ray_starts(tmp_path, name, text, message):
    from training import sweep as sw

    sweep = {"name": "b", "base": {**TINY, "runs_dir": str(tmp_path / "runs")}}
    folder = tmp_path / "runs" / "b"
    (folder / "trial_00000").mkdir(parents=True)
    (folder / "sweep.json").write_text(sw.Sweep(**sweep).as_json())
    (folder / name).write_text(text)
    done = sweep_cmd(write(tmp_path, sweep))
    assert done.returncode == 2, done.stderr[-3000:]
    assert message in done.stderr and str(folder / name) in done.stderr and "Traceback" not in done.stderr
    assert not (folder / "tune").exists()


@pytest.mark.parametrize(
    "sweep, message",
    [
        ({"base": {}}, "needs a 'name'"),
        ({"name": "x", "grid": {"learning_rat": [1]}}, "no train.py option"),
        ({"name": "x", "grid": {"run_name": ["a"]}}, "names each trial's run folder"),
        ({"name": "x", "grid": {"learning_rate": [-1.0]}}, "grid learning_rate=-1.0: learning_rate"),
        ({"name": "x", "sample": {"ent_coef": {"loguniform": [0, 1]}}}, "positive low end"),
        ({"name": "x", "sample": {"ent_coef": {"gauss": [0, 1]}}}, "sampler of"),
        ({"name": "x", "metric": "reward"}, "metric 'reward'"),
        ({"name": "x", "samples": 0}, "samples must be"),
        ({"name": "x", "colour": 1}, "unknown keys"),
        ({"name": "x", "sample": {"ent_coef": {"uniform": ["a", 1]}}}, "two numbers with low < high"),
        ({"name": "x", "sample": {"ent_coef": {"uniform": None}}}, "two numbers with low < high"),
        (
            {"name": "x", "sample": {"n_epochs": {"randint": [1, 4.5]}}},
            "randint takes [low, high], two integers",
        ),
        ({"name": "../escape"}, "is not a file or folder name"),
        ({"name": "/tmp/escape"}, "is not a file or folder name"),
    ],
)
def test_bad_sweep_files_are_refused_before_ray_starts(tmp_path, sweep, message):
    sweep.setdefault("base", {})["runs_dir"] = str(tmp_path / "runs")
    done = sweep_cmd(write(tmp_path, sweep))
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "runs").exists()


def test_sweep_options_belong_in_the_file(tmp_path):
    done = sweep_cmd(write(tmp_path, {"name": "x"}), "--learning-rate", "0.1")
    assert done.returncode == 2 and "put --learning-rate in its 'base'" in done.stderr
    missing = sweep_cmd(tmp_path / "nope.json")
    assert missing.returncode == 2 and "cannot read the sweep file" in missing.stderr
    os.mkfifo(tmp_path / "fifo.json")  # would block a plain read for ever
    fifo = sweep_cmd(tmp_path / "fifo.json")
    assert fifo.returncode == 2 and "fifo.json is not a regular file" in fifo.stderr
