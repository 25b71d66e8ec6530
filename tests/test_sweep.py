"""``train.py --sweep FILE``: trials of tiny runs as real Ray Tune trials (a local Ray on
127.0.0.1, started by the command) with ASHA stopping the one that falls behind; each
trial an ordinary run folder; the summary table and plot; bad sweep files refused
before Ray starts (exit 2, no folder)."""

import csv
import json
import os
import subprocess
import sys

import pytest
from train_helpers import ROOT

pytest.importorskip("ray.tune")

TINY = {
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


def sweep_cmd(path, *extra):
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    env.pop("RAY_ADDRESS", None)
    return subprocess.run(
        [sys.executable, str(ROOT / "train.py"), "--sweep", str(path), *extra],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=400,
    )


def write(tmp_path, sweep, filename="s.json"):
    path = tmp_path / filename
    path.write_text(json.dumps(sweep))
    return path


def test_a_sweep_runs_its_trials_on_tune_and_asha_stops_the_weaker(tmp_path):
    """Two trials, one at a time, evaluated against three random players and against
    three greedy ones: the second loses far more lives at the first rung than the
    first, and ASHA stops it there."""
    runs = tmp_path / "runs"
    sweep = dict(
        name="lr",
        base={**TINY, "runs_dir": str(runs)},
        grid={"eval_opponents": ["random", "greedy"]},
        metric="lives_lost_per_round",
        grace=1,
        reduction=2,
        concurrent=1,
    )
    done = sweep_cmd(write(tmp_path, sweep))
    assert done.returncode == 0, done.stderr[-3000:]
    folder = runs / "lr"
    assert json.loads((folder / "sweep.json").read_text())["grid"] == sweep["grid"]
    with (folder / "summary.csv").open() as f:
        rows = {r["trial"]: r for r in csv.DictReader(f)}
    assert sorted(rows) == ["trial_00000", "trial_00001"]
    first, second = rows["trial_00000"], rows["trial_00001"]
    assert (first["eval_opponents"], second["eval_opponents"]) == ("random", "greedy")
    assert first["status"] == "finished" and int(first["timesteps"]) == 512
    assert float(second["lives_lost_per_round"]) > float(first["lives_lost_per_round"])
    assert second["status"] == "stopped early" and int(second["evaluations"]) < int(first["evaluations"])
    for trial in rows:  # ordinary run folders: train.py's own files, their evaluations
        run = folder / trial
        assert json.loads((run / "config.json").read_text())["run_name"] == trial
        with (run / "evaluations.csv").open() as f:
            assert len(list(csv.DictReader(f))) == int(rows[trial]["evaluations"])
    assert (folder / "summary.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "trial_00001" in done.stdout and "stopped early" in done.stdout
    again = sweep_cmd(write(tmp_path, sweep))  # finished: refused, nothing replaced
    assert again.returncode == 2 and "finished" in again.stderr
    other = sweep_cmd(write(tmp_path, {**sweep, "grid": {"learning_rate": [0.001]}}, "o.json"))
    assert other.returncode == 2 and "another sweep" in other.stderr


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
