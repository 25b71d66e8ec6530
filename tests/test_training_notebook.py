"""The training notebook, executed headless on a run by ``python -m apps.notebook``
(``make notebook RUN=...``), reads any run's table from its ``config.json``: a tiny
3-player cut_throat run (not the 4-player standard table), with its gauntlet curves;
its HTML is written next to the run, never over an earlier one."""

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from apps import notebook

ROOT = Path(__file__).resolve().parent.parent
TINY = shlex.split(
    "--total-timesteps 256 --n-envs 2 --vec-env dummy --n-steps 128 --batch-size 128 --net-arch 16 "
    "--eval-every 256 --eval-games 6 --opponents greedy --eval-opponents greedy --no-progress "
    "--gauntlet-every 256 --gauntlet-games 6 --report-games 0"
)


def outputs(nb) -> list[str]:
    """Every code cell output as text (streams, and the plain text of results)."""
    texts = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            texts.append(o.get("text") or o.get("data", {}).get("text/plain", ""))
    return texts


def test_the_training_notebook_reads_a_3_player_cut_throat_run(tmp_path, monkeypatch):
    done = subprocess.run(
        [sys.executable, "-m", "training.run_cli", "--run-name", "ct3", "--runs-dir", str(tmp_path)]
        + ["--players", "3", "--rules", "cut_throat", *TINY],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    monkeypatch.setenv("THIRTYONE_NOTEBOOK_SMALL", "1")
    run = tmp_path / "ct3"
    assert notebook.ppo_run(run) == run
    nb, html, error = notebook.execute(run, notebook.NOTEBOOK, 300)
    assert error is None and "cut_throat" in html and html.lstrip().lower().startswith("<!doctype html")
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors, errors[0]["evalue"]
    texts = outputs(nb)
    assert any("(3 players, rules 'cut_throat')" in t for t in texts)
    # the run's gauntlet curves (train.py's picture) and its last point, per table
    images = [o for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(images) == 1  # the gauntlet's (figures drawn here stay in the Agg backend)
    (last,) = [t for t in texts if "wins_diff" in t]
    assert "expert" in last and "256" in last
    # the tournament sat the agent with the two heuristics a 3-seat table has room for
    (table,) = [t for t in texts if "knocks/round" in t]
    assert [line.split()[0] for line in table.splitlines()[-3:]] == ["agent", "greedy", "blitz31"]


def test_the_notebook_command_refuses_what_is_not_a_run_and_never_writes_over(tmp_path):
    def run(*args):
        return subprocess.run(
            [sys.executable, "-m", "apps.notebook", *args], capture_output=True, text=True, cwd=ROOT
        )

    for args, said in (
        ([str(tmp_path / "nowhere")], "no such run folder"),
        ([str(tmp_path)], "not a run folder"),
        ([], "required: run"),
    ):
        done = run(*args)
        assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr
    recipe_run = tmp_path / "r"
    (recipe_run / "steps" / "1_imitation").mkdir(parents=True)
    (recipe_run / "recipe.toml").write_text("")
    done = run(str(recipe_run))
    assert done.returncode == 2 and "has no PPO step" in done.stderr
    (tmp_path / "training-notebook.html").write_text("someone's")
    assert notebook.html_path(tmp_path).name == "training-notebook-2.html"


def test_a_run_folder_that_cannot_be_written_is_refused_before_the_notebook_runs(
    tmp_path, monkeypatch, capsys
):
    """The HTML goes into the run folder: where it cannot be written the command says
    so at once, not after executing the notebook."""
    import os

    run = tmp_path / "r"
    run.mkdir()
    (run / "config.json").write_text("{}")
    real_access = os.access
    monkeypatch.setattr(
        os, "access", lambda path, mode: False if Path(path) == run else real_access(path, mode)
    )
    monkeypatch.setattr(notebook, "execute", lambda *a, **k: pytest.fail("the notebook ran"))
    assert notebook.main([str(run)]) == 2
    err = capsys.readouterr().err
    assert f"the run folder {run}: {run} is not writable" in err and err.count("\n") == 1


def test_ctrl_c_interrupts_the_cell_and_ends_in_one_line(tmp_path):
    """A Ctrl-C while a cell runs stops it, shuts the kernel down in order and ends the
    command with one line and status 130, writing nothing."""
    import signal
    import time

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "training.run_cli",
            "--run-name",
            "r",
            "--runs-dir",
            str(tmp_path),
            "--players",
            "2",
            *TINY,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    proc = subprocess.Popen(
        [sys.executable, "-m", "apps.notebook", str(tmp_path / "r"), "--no-progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout.readline().startswith("executing")
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err == "python -m apps.notebook: interrupted: nothing written\n", err
    assert not list((tmp_path / "r").glob("training-notebook*.html"))
