"""The training notebook reads any run's table from its ``config.json`` (issue 16, item
4): a tiny 3-player cut_throat run, where it once assumed 4 players and the standard
rules (its tournament refused the run's model at a 4-player standard table), with its
gauntlet curves."""

import shlex
import subprocess
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "training.ipynb"
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
    monkeypatch.setenv("THIRTYONE_RUN", str(tmp_path / "ct3"))
    monkeypatch.setenv("THIRTYONE_NOTEBOOK_SMALL", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    ).execute()
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
