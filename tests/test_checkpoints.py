"""A run folder's checkpoints stay bounded: the newest ``--keep-checkpoints`` are kept
(0 keeps all), and what a checkpoint or snapshot write killed half way left behind is
removed when the run goes on. Only files of the names the run writes are ever deleted."""

import dataclasses
import json
import os
import tempfile

import pytest
from train_helpers import TINY

from training.config import TrainConfig
from training.evaluations import best_evaluation, read_evaluations, write_evaluations
from training.run import train
from training.run_cli import build_parser, config_from_args
from training.run_folder import stored_config

#: a tiny run without evaluations, a checkpoint every 128 steps (6 by 768 steps)
OFTEN = [*TINY, "--eval-every", "0", "--checkpoint-every", "128"]


def run_train(*args):
    """``train.py args`` in this process (its options parsed as train.py parses them):
    the tiny runs here take a second each, not the seconds a new process takes to
    import torch."""
    config, resume = config_from_args(build_parser().parse_args(args))
    train(config, resume=resume, progress=False)


def killed_write(path):
    """The temporary file ``atomic_write(path, ...)`` makes, left as a write killed
    before its rename leaves it (same call: same folder, prefix and suffix)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "wb") as f:
        f.write(b"half a model")
    return tmp


def names(folder):
    return {p.name for p in folder.iterdir()}


def test_resume_removes_what_killed_writes_left_and_nothing_else(tmp_path):
    run_train(
        "--run-name", "k", "--runs-dir", str(tmp_path), *TINY, "--eval-every", "0",
        "--self-play", "0.5", "--snapshot-every", "256",
    )  # fmt: skip
    run = tmp_path / "k"
    ckpts, pool = run / "checkpoints", run / "pool"
    leftovers = [
        killed_write(ckpts / "ckpt_000000000768.zip"),
        killed_write(pool / "snap_000000000768.npz"),
    ]
    theirs = {
        ckpts / "notes.tmp": b"mine",
        ckpts / ".ckpt_000000000768.zip.tmp": b"mine too",
        ckpts / ".ckpt_000000000768.zip.by_hand.tmp": b"and this",
        pool / ".snap_x.npz.abcdefgh.tmp": b"and that",
    }
    for path, data in theirs.items():
        path.write_bytes(data)
    run_train("--resume", str(run), "--total-timesteps", "768")
    assert not any(os.path.exists(p) for p in leftovers)
    assert all(path.read_bytes() == data for path, data in theirs.items())
    assert "ckpt_000000000768.zip" in names(ckpts)


def test_only_the_newest_checkpoints_are_kept_and_the_run_resumes_from_the_newest(tmp_path):
    run_train(
        "--run-name", "n", "--runs-dir", str(tmp_path), *OFTEN, "--total-timesteps", "768",
        "--keep-checkpoints", "2",
    )  # fmt: skip
    run = tmp_path / "n"
    ckpts = run / "checkpoints"
    assert names(ckpts) == {"ckpt_000000000640.zip", "ckpt_000000000768.zip"}
    theirs = {"ckpt_by_hand.zip", "ckpt_7.zip", "old_ckpt_000000000001.zip"}  # not names the run writes
    for name in theirs:
        (ckpts / name).write_bytes(b"mine")
    run_train("--resume", str(run), "--total-timesteps", "1024")
    assert names(ckpts) == {"ckpt_000000000896.zip", "ckpt_000000001024.zip"} | theirs
    assert (run / "logs" / "progress_to_000000000768.csv").exists()  # went on from 768 steps
    assert (run / "final_model.zip").exists() and (run / "best_evaluation.zip").exists()
    assert json.loads((run / "config.json").read_text())["keep_checkpoints"] == 2


def test_zero_keeps_every_checkpoint(tmp_path):
    run_train(
        "--run-name", "z", "--runs-dir", str(tmp_path), *OFTEN, "--total-timesteps", "768",
        "--keep-checkpoints", "0",
    )  # fmt: skip
    assert names(tmp_path / "z" / "checkpoints") == {f"ckpt_{s:012d}.zip" for s in range(128, 769, 128)}


def test_the_best_evaluations_checkpoint_is_kept_beside_the_newest(tmp_path):
    """The checkpoint of the evaluation that chose ``best_evaluation.zip`` stays beside the
    newest: a resume after a crash restores the best model from it. A resume may
    change the count (it says what is kept, not what is trained)."""
    run_train(
        "--run-name", "b", "--runs-dir", str(tmp_path), *OFTEN, "--total-timesteps", "768",
        "--eval-every", "128", "--keep-checkpoints", "0",
    )  # fmt: skip
    run = tmp_path / "b"
    rows = read_evaluations(run)
    for row in rows:  # the evaluation at 256 steps the best: none after it beats a win rate of 1
        row["win_rate"] = "1.0" if row["timesteps"] == "256" else "0.0"
    write_evaluations(run, rows)
    run_train("--resume", str(run), "--total-timesteps", "1024", "--keep-checkpoints", "1")
    assert best_evaluation(read_evaluations(run))[0] == 256
    assert names(run / "checkpoints") == {"ckpt_000000000256.zip", "ckpt_000000001024.zip"}
    assert (run / "best_evaluation.zip").exists() and (run / "final_model.zip").exists()


def test_pruning_spares_the_named_checkpoints_and_files_the_run_did_not_write(tmp_path):
    """The checkpoint just written and the best evaluation's are spared (a resume after
    a crash restores ``best_evaluation.zip`` from the latter); other names are never counted."""
    from training.run_folder import prune_checkpoints

    ckpts = tmp_path / "checkpoints"
    ckpts.mkdir()
    for s in range(1, 7):
        (ckpts / f"ckpt_{s:012d}.zip").write_bytes(b"")
    (ckpts / "ckpt_9.zip").write_bytes(b"")
    (ckpts / "ckpt_000000000099.zip.bak").write_bytes(b"")
    spare = (ckpts / "ckpt_000000000006.zip", ckpts / "ckpt_000000000002.zip")
    deleted = prune_checkpoints(tmp_path, 2, spare)
    assert sorted(p.name for p in deleted) == [f"ckpt_{s:012d}.zip" for s in (1, 3, 4)]
    assert names(ckpts) == {f"ckpt_{s:012d}.zip" for s in (2, 5, 6)} | {
        "ckpt_9.zip",
        "ckpt_000000000099.zip.bak",
    }
    assert prune_checkpoints(tmp_path, 0) == []


def test_the_keep_count_is_checked_and_an_older_run_keeps_all(tmp_path):
    """A negative count is refused, naming the option. A config.json stored before the
    option existed resumes keeping every checkpoint, as its run was made, unless the
    resume gives a count (a resume may change it: it says what is kept, not trained)."""
    assert TrainConfig().keep_checkpoints == 5
    with pytest.raises(ValueError, match="keep_checkpoints=-1 must be 0"):
        TrainConfig(keep_checkpoints=-1)
    run = tmp_path / "old"
    run.mkdir()
    stored = dataclasses.asdict(TrainConfig(runs_dir=str(tmp_path), run_name="old"))
    del stored["keep_checkpoints"]
    (run / "config.json").write_text(json.dumps(stored))
    assert stored_config(run, {}).keep_checkpoints == 0
    assert stored_config(run, {"keep_checkpoints": 3}).keep_checkpoints == 3
    stored["keep_checkpoints"] = 4
    (run / "config.json").write_text(json.dumps(stored))
    assert stored_config(run, {}).keep_checkpoints == 4


def test_an_evaluation_a_crash_cut_off_is_made_when_the_run_goes_on(tmp_path):
    """The checkpoint is written before its step's evaluation: killed between them, the
    run goes on from that checkpoint and makes the evaluation first, the same one (same
    model, same deals) the crash cut off."""
    run_train(
        "--run-name", "cut", "--runs-dir", str(tmp_path), *TINY, "--total-timesteps", "768",
        "--keep-checkpoints", "0",
    )  # fmt: skip
    cut = tmp_path / "cut"
    rows = read_evaluations(cut)
    assert [int(r["timesteps"]) for r in rows] == [0, 256, 512, 768]
    # as if killed after the checkpoint at 512 and before its evaluation
    (cut / "checkpoints" / "ckpt_000000000768.zip").unlink()
    (cut / "final_model.zip").unlink()
    write_evaluations(cut, rows[:2])
    run_train("--resume", str(cut), "--total-timesteps", "768")
    resumed = read_evaluations(cut)
    assert [int(r["timesteps"]) for r in resumed] == [0, 256, 512, 768]
    assert resumed[2] == rows[2]
