"""The learning-curve benchmark: each model of a run measured on the same deals, and bad
input refused before any game."""

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import learning_curve  # noqa: E402

MODEL = str(ROOT / "agents" / "models" / "ppo_standard_4p-v5.zip")


def test_a_curve_of_two_points(tmp_path):
    out = tmp_path / "curve"
    args = ["30=" + MODEL, "10=" + MODEL, "--games", "8", "--workers", "1", "--out", str(out)]
    assert learning_curve.main(args) == 0
    rows = json.loads((out / "curve.json").read_text())
    assert [r["minutes"] for r in rows] == [10, 30]  # sorted by time
    # the same model on the same deals: the two points agree exactly
    assert rows[0]["greedy"] == rows[1]["greedy"] and rows[0]["expert"] == rows[1]["expert"]
    assert rows[0]["greedy"]["games"] >= 8
    assert "| 10 |" in (out / "curve.md").read_text()
    assert (out / "curve.png").stat().st_size > 5_000
    with pytest.raises(SystemExit) as e:  # never over a folder with results
        learning_curve.main(args)
    assert e.value.code == 2


@pytest.mark.parametrize("item", ["x=" + MODEL, "10", "nan=" + MODEL, "10=/nowhere/model.zip"])
def test_bad_points_are_refused(item, tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        learning_curve.main([item, "--out", str(tmp_path / "c")])
    assert e.value.code == 2
    assert repr(item) in capsys.readouterr().err
    assert not (tmp_path / "c").exists()
