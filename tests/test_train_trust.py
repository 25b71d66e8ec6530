"""train.py loses nothing and says what is wrong: a
resume never replaces a log and sets aside evaluations from after its checkpoint; one
run per folder; Ctrl-C in the imitation warm start keeps what was collected; every
option checked before the run folder exists; files keep the user's umask."""

import csv
import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from train_helpers import ROOT, TINY, WARM

from agents.ppo import SHIPPED_MODEL
from thirtyone_env.harness.files import FolderLock
from training import collection, run_cli
from training.config import TrainConfig
from training.envs import make_vec, observation_shape
from training.evaluations import write_evaluations
from training.imitation import Demonstrations


def main(*args: str) -> int:
    return run_cli.main(list(args))


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A tiny run with a warm start, to 512 steps (checkpoints at 256 and 512)."""
    runs = tmp_path_factory.mktemp("runs")
    assert main("--run-name", "done", "--runs-dir", str(runs), *TINY, *WARM) == 0
    return runs / "done"


def copy_run(run: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    return copy


def log_rows(path: Path) -> list[int]:
    with path.open() as f:
        return [int(float(r["time/total_timesteps"])) for r in csv.DictReader(f)]


def eval_steps(path: Path) -> list[int]:
    with path.open() as f:
        return [int(r["timesteps"]) for r in csv.DictReader(f)]


# -- 3: a resume never loses a log ------------------------------------------------------------


def test_refused_resumes_leave_the_log_alone(finished, tmp_path, capsys):
    run = copy_run(finished, tmp_path)
    log = (run / "logs" / "progress.csv").read_bytes()
    for _ in range(2):  # the run is at 512 already: refused, twice
        assert main("--resume", str(run), "--total-timesteps", "512") == 2
        assert "already at 512 steps" in capsys.readouterr().err
    assert (run / "logs" / "progress.csv").read_bytes() == log
    assert sorted(p.name for p in (run / "logs").glob("*.csv")) == ["progress.csv"]
    assert json.loads((run / "config.json").read_text())["total_timesteps"] == 512


def test_a_crash_after_the_checkpoint_loses_no_log_and_no_evaluation(finished, tmp_path, capsys):
    """Resumed twice from the 512 checkpoint (the first resume 'crashed' after its
    evaluation at 768, before the checkpoint): both earlier logs are kept, the
    evaluation at 768 of the lost part is set aside, not mixed with the new one."""
    run = copy_run(finished, tmp_path)
    first_log = (run / "logs" / "progress.csv").read_bytes()
    assert main("--resume", str(run), "--total-timesteps", "768") == 0
    second_log = (run / "logs" / "progress.csv").read_bytes()
    lost = (run / "evaluations.csv").read_text().splitlines()[-1]
    for name in ("checkpoints/ckpt_000000000768.zip", "final_model.zip"):
        (run / name).unlink()  # the crash: nothing after the 512 checkpoint was saved
    assert main("--resume", str(run), "--total-timesteps", "768") == 0
    out = capsys.readouterr().out
    assert "1 evaluation rows after 512 steps" in out
    logs = run / "logs"
    assert (logs / "progress_to_000000000512.csv").read_bytes() == first_log
    assert (logs / "progress_to_000000000512_2.csv").read_bytes() == second_log
    assert log_rows(logs / "progress.csv")[-1] == 768
    assert eval_steps(run / "evaluations.csv") == [0, 256, 512, 768]
    aside = (run / "evaluations_set_aside.csv").read_text().splitlines()
    assert eval_steps(run / "evaluations_set_aside.csv") == [768] and aside[1] == lost


def test_the_best_model_of_a_lost_part_is_set_aside(finished, tmp_path, capsys):
    """The evaluation at 512 (after the last checkpoint kept) scored best and chose
    best_evaluation.zip: both are set aside, and best_evaluation.zip is again the model of the
    best evaluation kept (256, whose checkpoint exists), which the resumed run's
    evaluations do not beat."""
    run = copy_run(finished, tmp_path)
    for name in ("checkpoints/ckpt_000000000512.zip", "final_model.zip"):
        (run / name).unlink()
    with (run / "evaluations.csv").open() as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["win_rate"] = {0: "0.5", 256: "0.95", 512: "1.0"}[int(r["timesteps"])]
    write_evaluations(run, rows)
    chosen = (run / "best_evaluation.zip").read_bytes()
    assert main("--resume", str(run), "--total-timesteps", "512") == 0
    assert "moved to" in capsys.readouterr().out
    assert (run / "best_evaluation_set_aside.zip").read_bytes() == chosen
    ckpt = (run / "checkpoints" / "ckpt_000000000256.zip").read_bytes()
    assert (run / "best_evaluation.zip").read_bytes() == ckpt
    assert eval_steps(run / "evaluations.csv") == [0, 256, 512]
    assert eval_steps(run / "evaluations_set_aside.csv") == [512]


def test_the_snapshots_of_a_lost_part_are_set_aside_on_resume(tmp_path, capsys):
    """A self-play run that goes on from its 512 checkpoint does not draw the snapshot
    written at 768 before the crash: it is moved aside, not deleted."""
    from training.run_folder import set_aside_after

    pool = tmp_path / "pool"
    pool.mkdir()
    for steps in (256, 512, 768):
        (pool / f"snap_{steps:012d}.npz").write_bytes(str(steps).encode())
    set_aside_after(tmp_path, 512)
    assert sorted(p.name for p in pool.iterdir()) == ["snap_000000000256.npz", "snap_000000000512.npz"]
    assert (tmp_path / "pool_set_aside" / "snap_000000000768.npz").read_bytes() == b"768"
    assert "1 self-play snapshots after 512 steps moved to" in capsys.readouterr().out


# -- 5: one run per folder ---------------------------------------------------------------------


def test_a_second_run_on_a_locked_folder_is_refused(finished, tmp_path, capsys):
    run = copy_run(finished, tmp_path)
    with FolderLock(run, "run folder"):  # as a running train.py holds it
        assert main("--resume", str(run), "--total-timesteps", "768") == 2
        err = capsys.readouterr().err
        assert f"run folder {run} is in use" in err and "Traceback" not in err
    assert not (run / "checkpoints" / "ckpt_000000000768.zip").exists()
    with FolderLock(tmp_path / "new", "run folder"):
        assert main("--run-name", "new", "--runs-dir", str(tmp_path), *TINY) == 2
        assert f"run folder {tmp_path / 'new'} is in use" in capsys.readouterr().err
    assert not (tmp_path / "new" / "config.json").exists()


def test_two_processes_on_one_run_folder(tmp_path):
    """Two real train.py processes: the second is refused while the first runs."""
    args = [
        sys.executable, "-m", "training.run_cli", "--run-name", "x", "--runs-dir", str(tmp_path), *TINY,
        "--total-timesteps", "10000000", "--eval-every", "0", "--checkpoint-every", "10000000",
    ]  # fmt: skip
    first = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and not (tmp_path / "x" / "config.json").exists():
            time.sleep(0.1)
        second = subprocess.run(
            [*args[:3], "--resume", str(tmp_path / "x")], cwd=ROOT, capture_output=True, text=True, timeout=60
        )
        assert second.returncode == 2, second.stderr
        assert f"run folder {tmp_path / 'x'} is in use" in second.stderr
    finally:
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=60)
    assert first.returncode == 130


# -- 7 and 11: every option checked before the folder is made; no traceback ------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seed", "-1"], "seed=-1 must be in 0..4294967295"),
        (["--opponents", "expert,,greedy"], "opponents='expert,,greedy' has an empty entry"),
        (["--eval-opponents", "expert,"], "eval_opponents='expert,' has an empty entry"),
        (["--seed", str(2**32)], "seed=4294967296 must be in"),
        (["--learning-rate", "0"], "learning_rate=0.0 must be positive"),
        (["--learning-rate", "nan"], "learning_rate=nan must be a finite number"),
        (["--learning-rate", "inf"], "learning_rate=inf must be a finite number"),
        (["--gamma", "1.5"], "gamma=1.5 must be in [0, 1]"),
        (["--gamma", "nan"], "gamma=nan must be a finite number"),
        (["--gae-lambda", "-0.1"], "gae_lambda=-0.1 must be in [0, 1]"),
        (["--clip-range", "0"], "clip_range=0.0 must be positive"),
        (["--vf-coef", "-1"], "vf_coef=-1.0 must be 0 or more"),
        (["--ent-coef", "nan"], "ent_coef=nan must be a finite number"),
        (["--ent-coef", "-0.5"], "ent_coef=-0.5 must be 0 or more"),
        (["--time-limit", "nan"], "time_limit=nan must be a finite number"),
        (["--time-limit", "inf"], "time_limit=inf must be a finite number"),
        (["--imitate", "greedy", "--imitate-knock-weight", "nan"], "imitate_knock_weight=nan"),
        (["--self-play", "nan"], "self_play=nan"),
        (["--device", "bogus"], "device='bogus' is not a torch device"),
        (["--device", "meta"], "device='meta': a run trains on cpu, cuda"),
        (["--run-name", ".."], "run_name '..' is not a file or folder name"),
        (["--run-name", "."], "run_name '.' is not a file or folder name"),
        (["--net-arch", "99999999999,64"], "at most 16 layers of at most 8,192 units"),
        (["--n-envs", "100000"], "n_envs=100000: at most 65,536"),
        (["--vec-env", "subproc", "--n-envs", "1000"], "n_envs=1000: at most 256 with the subproc"),
        (["--opponents", "os:getcwd"], "getcwd is not a player class or factory function"),
        (["--players", "3", "--eval-opponents", f"ppo:path={SHIPPED_MODEL}"], "trained for another table"),
        (
            ["--players", "3", "--rules", "pagat", "--opponents", "ppo"],
            "no zoo model for 3 players with rules 'pagat'",
        ),
    ],
)
def test_bad_options_exit_2_before_any_folder(args, message, tmp_path, capsys):
    runs = tmp_path / "runs"
    runs.mkdir()
    assert main("--run-name", "r", "--runs-dir", str(runs), *TINY, *args) == 2
    err = capsys.readouterr().err
    assert err.startswith("python -m training.run_cli: error: ") and message in err, err
    assert list(runs.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["runs"]


def test_cuda_without_cuda_is_refused(tmp_path, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert main("--run-name", "r", "--runs-dir", str(tmp_path), *TINY, "--device", "cuda") == 2
    assert "device='cuda' is not available here" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_runs_dir_that_is_a_file_is_named(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("mine")
    assert main("--run-name", "r", "--runs-dir", str(afile), *TINY) == 2
    assert f"runs_dir {afile}: {afile} is a file, not a folder" in capsys.readouterr().err
    assert afile.read_text() == "mine"


def test_a_fresh_run_never_writes_over_files_in_its_folder(tmp_path, capsys):
    """A folder that is no run (no config.json) but holds files: a fresh start there
    would write its checkpoints over theirs. An empty folder is fine."""
    theirs = tmp_path / "r" / "checkpoints" / "ckpt_000000000256.zip"
    theirs.parent.mkdir(parents=True)
    theirs.write_bytes(b"someone's model")
    assert main("--run-name", "r", "--runs-dir", str(tmp_path), *TINY) == 2
    assert f"{tmp_path / 'r'} is not empty and holds no run" in capsys.readouterr().err
    assert theirs.read_bytes() == b"someone's model" and not (tmp_path / "r" / "config.json").exists()
    (tmp_path / "empty").mkdir()
    assert main("--run-name", "empty", "--runs-dir", str(tmp_path), *TINY, "--total-timesteps", "256") == 0


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("players", "four", "players='four' must be an integer, not str"),
        ("n_envs", "8", "n_envs='8' must be an integer"),
        ("gamma", "high", "gamma='high' must be a number"),
        ("opponent_deterministic", 1, "opponent_deterministic=1 must be true or false"),
        ("learning_rate", None, "learning_rate=None must be a number"),
        ("seed", -5, "seed=-5 must be in 0.."),
        ("gae_lambda", 2, "gae_lambda=2.0 must be in [0, 1]"),
        ("run_name", "..", "run_name '..' is not a file or folder name"),
    ],
)
def test_a_hand_edited_config_is_named_on_resume(finished, tmp_path, capsys, field, value, message):
    run = copy_run(finished, tmp_path)
    stored = json.loads((run / "config.json").read_text())
    stored[field] = value
    (run / "config.json").write_text(json.dumps(stored))
    assert main("--resume", str(run), "--total-timesteps", "768") == 2
    err = capsys.readouterr().err
    assert f"cannot resume: {run / 'config.json'}: {message}" in err, err
    assert not (run / "checkpoints" / "ckpt_000000000768.zip").exists()


def test_a_run_stored_with_a_removed_option_resumes_only_where_it_did_not_use_it(finished, tmp_path, capsys):
    """Options only experiments used are gone: a stored run that has one at the value
    that meant "not used" resumes; one that used it is refused, naming it."""
    run = copy_run(finished, tmp_path)
    stored = json.loads((run / "config.json").read_text())
    (run / "config.json").write_text(
        json.dumps({**stored, "kl_half_life": 0, "improve_objective": "lives", "endgame": 0.0})
    )
    assert main("--resume", str(run), "--total-timesteps", "768") == 0
    other = copy_run(finished, tmp_path / "other")
    (other / "config.json").write_text(json.dumps({**stored, "kl_heads_up": 0.5}))
    assert main("--resume", str(other), "--total-timesteps", "768") == 2
    assert (
        "the run uses kl_heads_up, an experiment's option this train.py no longer has"
        in capsys.readouterr().err
    )
    endgames = copy_run(finished, tmp_path / "endgames")  # heads-up starts: lab/endgame now
    (endgames / "config.json").write_text(json.dumps({**stored, "endgame": 0.25}))
    assert main("--resume", str(endgames), "--total-timesteps", "768") == 2
    assert "the run uses endgame, an experiment's option" in capsys.readouterr().err


def test_a_run_made_before_an_option_existed_resumes_with_it_at_its_default(finished, tmp_path, capsys):
    """A config written by an older train.py lacks the options added since: they take
    their defaults (what that train.py did); a field this train.py does not know is named."""
    run = copy_run(finished, tmp_path)
    stored = json.loads((run / "config.json").read_text())
    for name in ("heads_up_teacher", "heads_up_against", "report_games"):
        del stored[name]
    (run / "config.json").write_text(json.dumps(stored))
    assert main("--resume", str(run), "--total-timesteps", "768") == 0
    assert (run / "checkpoints" / "ckpt_000000000768.zip").exists()
    other = copy_run(finished, tmp_path / "other")
    stored = json.loads((other / "config.json").read_text())
    stored["heads_up_teachr"] = "expert"
    (other / "config.json").write_text(json.dumps(stored))
    assert main("--resume", str(other), "--total-timesteps", "768") == 2
    assert "its fields are not those of this train.py (unknown: heads_up_teachr)" in capsys.readouterr().err


def test_a_config_that_is_not_an_object_is_named(finished, tmp_path, capsys):
    run = copy_run(finished, tmp_path)
    (run / "config.json").write_text("[1, 2]")
    assert main("--resume", str(run)) == 2
    assert "is not a run config (it is not a JSON object)" in capsys.readouterr().err


def test_a_damaged_steps_record_is_refused_before_any_step_runs(finished, tmp_path, capsys):
    """``steps.json`` is checked when the resume is: a run whose steps would start again
    never fits a model first and fails on the record after."""
    for text in ("[1]", "[" * 100_000, '{"imitation": {"seconds": "long"}}'):
        run = copy_run(finished, tmp_path / str(len(text)))
        (run / "steps.json").write_text(text)
        before = sorted(p.name for p in run.rglob("*"))
        assert main("--resume", str(run)) == 2
        err = capsys.readouterr().err
        assert f"{run / 'steps.json'} is not the record of the steps this program wrote" in err, err
        assert sorted(p.name for p in run.rglob("*")) == before


# -- 7: --imitate-from files are checked before the run folder is made ---------------------


def demos_file(path: Path, rows: int = 20, **change) -> Path:
    """A demonstrations file of the standard 4-seat table (legal random decisions)."""
    from thirtyone_env import ThirtyOneEnv

    env = ThirtyOneEnv()
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    arrays = {"obs": [], "masks": [], "actions": [], "returns": []}
    for _ in range(rows):
        mask = info["action_mask"].astype(bool)
        action = int(rng.choice(np.flatnonzero(mask)))
        for k, v in zip(arrays, (obs, mask, action, 0.0), strict=True):
            arrays[k].append(v)
        obs, _, term, _, info = env.step(action)
        if term:
            obs, info = env.reset()
    out = {k: np.array(v) for k, v in arrays.items()}
    out["obs"] = out["obs"].astype(np.float16)
    out.update(change)
    np.savez(path, **out)
    return path


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: {"obs": d["obs"][:, :-3]}, "obs rows are"),
        (lambda d: {"actions": d["actions"][:-1]}, "differ in length"),
        (lambda d: {k: v[:0] for k, v in d.items()}, "no decisions (0 rows)"),
        (lambda d: {"actions": d["actions"] + 1000}, "is not an action id"),
        (lambda d: {"actions": np.where(d["masks"], -1, np.arange(d["masks"].shape[1])).max(1)}, "not legal"),
        (lambda d: {"returns": np.full(len(d["returns"]), np.nan, np.float32)}, "returns holds NaN"),
        (lambda d: {"masks": d["masks"].astype(np.float32)}, "masks is a 2-d float32 array"),
    ],
)
def test_imitate_from_files_that_do_not_fit_are_refused_first(tmp_path, capsys, change, message):
    good = demos_file(tmp_path / "good.npz")
    with np.load(good) as d:
        arrays = {k: d[k] for k in d.files}
    bad = demos_file(tmp_path / "bad.npz", **change(arrays))
    runs = tmp_path / "runs"
    args = ["--run-name", "r", "--runs-dir", str(runs), *TINY, *WARM]
    assert main(*args, "--imitate-from", f"{good},{bad}") == 2
    err = capsys.readouterr().err
    assert f"demonstrations {bad} do not fit this run: " in err and message in err, err
    assert not runs.exists()


def test_demonstrations_of_another_table_are_refused(finished, tmp_path, capsys):
    """Same observation width, other rules (pagat): refused by the table recorded with
    the demonstrations; a file saved before tables were recorded still loads."""
    config = TrainConfig(
        runs_dir=str(tmp_path), run_name="p", rules="pagat", imitate="greedy", imitate_decisions=40
    )
    assert observation_shape(config) == observation_shape(TrainConfig())
    pagat = tmp_path / "pagat.npz"
    collection.save_demonstrations(collection.demonstrations(config), pagat)
    runs = tmp_path / "runs"
    assert main("--run-name", "r", "--runs-dir", str(runs), *TINY, *WARM, "--imitate-from", str(pagat)) == 2
    err = capsys.readouterr().err
    assert f"demonstrations {pagat} were collected at another table" in err and "lives=3" in err
    assert not runs.exists()
    old = demos_file(tmp_path / "old.npz", rows=30)  # no meta: loads, checked by its arrays
    assert len(collection.load_demonstrations(str(old), TrainConfig(imitate="greedy"))) == 30
    saved = Demonstrations.load(finished / "demonstrations.npz")
    assert saved.meta["table"] == collection.table_of(TrainConfig()) and saved.meta["complete"]


# -- 7: Ctrl-C in the warm start; a folder without a checkpoint -------------------------------

SCRIPT = (
    "import sys; from training import collection, run_cli; "
    "collection.IMITATION_CHUNK = {chunk}; sys.exit(run_cli.main(sys.argv[1:]))"
)


def start(tmp_path: Path, chunk: int, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", SCRIPT.format(chunk=chunk), *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: Ctrl-C reaches every worker, as at a terminal
    )


def ctrl_c_when(proc: subprocess.Popen, ready, timeout: float = 60) -> tuple[str, str]:
    """Send Ctrl-C to the process group once ``ready(stderr so far)``; its output."""
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.extend(iter(lambda: proc.stderr.read(1), "")), daemon=True)
    reader.start()
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None and not ready("".join(err)):
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGINT)
    out = proc.stdout.read()
    proc.wait(timeout=60)
    reader.join(timeout=10)
    return out, "".join(err)


def test_ctrl_c_in_the_warm_start_keeps_the_decisions_and_resume_goes_on(tmp_path):
    """A real Ctrl-C to a train.py collecting on two pool workers: no worker
    traceback, the finished jobs saved; ``--resume`` collects only the rest and the
    demonstrations are those of an uninterrupted collection."""
    chunk, total = 1000, 30000  # thirty jobs: time to stop it midway
    run = tmp_path / "w"
    args = [
        "--run-name", "w", "--runs-dir", str(tmp_path), *TINY, "--vec-env", "subproc",
        "--total-timesteps", "256", "--eval-every", "0", "--imitate", "expert",
        "--imitate-decisions", str(total), "--imitate-epochs", "1",
    ]  # fmt: skip
    args.remove("--no-progress")  # the bar says when a job is done

    def one_job_done(err: str) -> bool:  # the bar reads like '2.00k/30.0k'
        done = [float(n) * (1000 if k else 1) for n, k in re.findall(r"([\d.]+)(k?)/30\.0k", err)]
        return max(done, default=0) >= chunk

    proc = start(tmp_path, chunk, *args)
    _, err = ctrl_c_when(proc, one_job_done)
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    assert f"decisions saved to {run / 'demonstrations.partial.npz'}" in err
    assert f"go on with: python -m training.run_cli --resume {run}" in err
    partial = Demonstrations.load(run / "demonstrations.partial.npz")
    assert 0 < len(partial) < total and len(partial) % chunk == 0
    assert not (run / "demonstrations.npz").exists() and not (run / "checkpoints").exists()

    again = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(chunk=chunk), "--resume", str(run), "--no-progress"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "has no checkpoint yet: its training starts from the beginning" in again.stdout
    assert f"going on from the {len(partial):,} decisions saved" in again.stdout
    assert f"imitation of expert: {total:,} decisions" in again.stdout
    done = Demonstrations.load(run / "demonstrations.npz")
    assert not (run / "demonstrations.partial.npz").exists()
    # the jobs saved are those an uninterrupted collection starts with, and kept
    config = TrainConfig(**json.loads((run / "config.json").read_text()))
    first_jobs = dataclasses.replace(config, imitate_decisions=len(partial), vec_env="dummy")
    collection.IMITATION_CHUNK, saved_chunk = chunk, collection.IMITATION_CHUNK
    try:
        uninterrupted = collection.demonstrations(first_jobs)
    finally:
        collection.IMITATION_CHUNK = saved_chunk
    for field in ("obs", "masks", "actions", "returns"):
        assert np.array_equal(getattr(partial, field), getattr(uninterrupted, field)), field
        assert np.array_equal(getattr(done, field)[: len(partial)], getattr(partial, field)), field


def test_the_trainer_itself_never_ignores_ctrl_c(tmp_path):
    """Envs built in the trainer's own process (one env, a collection on one worker)
    leave its Ctrl-C alone: only worker processes ignore it."""
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    config = TrainConfig(
        runs_dir=str(tmp_path), vec_env="subproc", n_envs=1, imitate="greedy", imitate_decisions=20
    )
    make_vec(config).close()  # one env: built in this process
    assert len(collection.demonstrations(config)) == 20  # one job: collected in this process
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_before_anything_is_saved_removes_the_new_folder(tmp_path):
    args = ["--run-name", "gone", "--runs-dir", str(tmp_path), *TINY, *WARM, "--imitate-decisions", "100000"]
    proc = start(tmp_path, 5000, *args)
    _, err = ctrl_c_when(proc, lambda _: (tmp_path / "gone" / "config.json").exists())
    assert proc.returncode == 130, err
    assert "Traceback" not in err and f"removed {tmp_path / 'gone'}" in err
    assert list(tmp_path.iterdir()) == []


def test_a_folder_without_checkpoint_starts_again_with_its_demonstrations(finished, tmp_path, capsys):
    """A run that died after its warm start, before its first checkpoint: --resume
    starts it again, fitting the saved demonstrations; what the dead start logged is
    set aside, not lost."""
    run = copy_run(finished, tmp_path)
    shutil.rmtree(run / "checkpoints")
    (run / "final_model.zip").unlink()
    log = (run / "logs" / "progress.csv").read_bytes()
    best = (run / "best_evaluation.zip").read_bytes()
    assert main("--resume", str(run)) == 0
    out = capsys.readouterr().out
    assert "has no checkpoint yet: its training starts from the beginning" in out
    assert f"fitting the 300 decisions saved in {run / 'demonstrations.npz'}" in out
    assert (run / "logs" / "progress_to_000000000000.csv").read_bytes() == log
    assert eval_steps(run / "evaluations_set_aside.csv") == [0, 256, 512]
    assert eval_steps(run / "evaluations.csv") == [0, 256, 512]
    assert (run / "best_evaluation_set_aside.zip").read_bytes() == best
    assert sorted(p.name for p in (run / "checkpoints").iterdir())[-1] == "ckpt_000000000512.zip"


# -- 14: files keep the user's umask -------------------------------------------------------------


def test_run_files_keep_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        args = ("--eval-every", "64", "--eval-games", "4", "--self-play", "0.5", "--snapshot-every", "64")
        assert main("--run-name", "u", "--runs-dir", str(tmp_path), *TINY, *WARM, *args) == 0
    finally:
        os.umask(old)
    run = tmp_path / "u"
    files = [p for p in run.rglob("*") if p.is_file()]
    assert {"config.json", "versions.json", "demonstrations.npz", "final_model.zip", "progress.csv"} | {
        "eval_policy.npz",
        "evaluations.csv",
    } <= {p.name for p in files}
    assert any(p.parent.name == "pool" for p in files)  # self-play snapshots
    for p in files:
        assert p.stat().st_mode & 0o777 == 0o640, p
    for p in [run, *(p for p in run.rglob("*") if p.is_dir())]:
        assert p.stat().st_mode & 0o777 == 0o750, p


def test_where_a_run_works_is_given_anew_on_every_start(tmp_path):
    """--cluster, --ray-address and --workers say where the collection and the
    evaluations run, not what is trained: a resume takes them from its own command
    line (else the defaults), and a config.json stored before they existed resumes."""
    from training.run_folder import stored_config

    run = tmp_path / "old"
    run.mkdir()
    stored = dataclasses.asdict(TrainConfig(runs_dir=str(tmp_path), run_name="old", cluster="ray", workers=3))
    (run / "config.json").write_text(json.dumps(stored))
    assert (stored_config(run, {}).cluster, stored_config(run, {}).workers) == ("local", 0)
    assert stored_config(run, {"workers": 2}).workers == 2
    for field in ("cluster", "ray_address", "workers"):
        del stored[field]
    (run / "config.json").write_text(json.dumps(stored))
    assert stored_config(run, {"cluster": "ray"}).cluster == "ray"
    with pytest.raises(ValueError, match="another config"):
        stored_config(run, {"seed": 5})
    with pytest.raises(ValueError, match="ray_address needs --cluster ray"):
        TrainConfig(ray_address="127.0.0.1:6379")


FINALIZER_STOP = """
import sys, time
from training.run_cli import exit_code

class Slow:
    def __del__(self):
        print("finalizing", flush=True)
        time.sleep(3)  # the stop lands here, where Python drops what it raises

def work():
    Slow()
    for _ in range(300):  # 30 s: a stop that was dropped lets it run on
        time.sleep(0.1)
    return 0

sys.exit(exit_code("prog", work))
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_that_lands_in_a_finalizer_still_stops_the_command(sig):
    """Ctrl-C or SIGTERM while a ``__del__`` runs: Python prints the interrupt and goes
    on there; the command is stopped again as soon as the finalizer is done (exit 130)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", FINALIZER_STOP],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().strip() == "finalizing"
    time.sleep(0.5)
    t0 = time.monotonic()
    proc.send_signal(sig)
    assert proc.wait(timeout=20) == 130
    assert time.monotonic() - t0 < 10


@pytest.mark.parametrize("script", ["train.py", "evaluate.py"])
def test_a_ctrl_c_while_a_command_loads_its_libraries_is_one_line(script):
    """A Ctrl-C a moment after the start lands while torch or numpy load, before the
    command's own handler runs: one line naming the command, the status of a Ctrl-C,
    no traceback of whichever import it stopped."""
    proc = subprocess.Popen(
        [sys.executable, script, "--help"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert "Traceback" not in err, err
    if proc.returncode == 0:  # it had loaded and printed its help before the signal came
        assert "usage" in out
    else:
        assert proc.returncode in (130, -signal.SIGINT), (proc.returncode, err)
        assert err.strip() in ("", f"{script}: interrupted"), err
