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
    rows = json.loads((out / "curve.json").read_text())["rows"]
    assert [r["minutes"] for r in rows] == [10, 30]  # sorted by time
    # the same model on the same deals: the two points agree exactly
    assert rows[0]["greedy"] == rows[1]["greedy"] and rows[0]["expert"] == rows[1]["expert"]
    assert rows[0]["greedy"]["games"] >= 8
    assert "| 10 |" in (out / "curve.md").read_text()
    assert (out / "curve.png").stat().st_size > 5_000
    # the same command goes on where it stopped: a point measured is not played again
    more = ["20=" + MODEL, *args]
    assert learning_curve.main(more) == 0
    again = json.loads((out / "curve.json").read_text())["rows"]
    assert [r["minutes"] for r in again] == [10, 20, 30] and again[0] == rows[0] and again[2] == rows[1]
    with pytest.raises(SystemExit) as e:  # other settings: not mixed into one curve
        learning_curve.main([*args, "--seed", "5"])
    assert e.value.code == 2


def test_a_folder_it_did_not_write_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(SystemExit) as e:
        learning_curve.main(["10=" + MODEL, "--out", str(tmp_path)])
    assert e.value.code == 2
    assert (tmp_path / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("item", ["x=" + MODEL, "10", "nan=" + MODEL, "10=/nowhere/model.zip"])
def test_bad_points_are_refused(item, tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        learning_curve.main([item, "--out", str(tmp_path / "c")])
    assert e.value.code == 2
    assert repr(item) in capsys.readouterr().err
    assert not (tmp_path / "c").exists()


def test_against_names_the_players_each_model_is_measured_against(tmp_path):
    out = tmp_path / "curve"
    args = ["5=" + MODEL, "--games", "8", "--workers", "1", "--out", str(out), "--against", "blitz31"]
    assert learning_curve.main(args) == 0
    saved = json.loads((out / "curve.json").read_text())
    assert saved["settings"]["against"] == ["blitz31"]
    assert set(saved["rows"][0]) == {"minutes", "model", "blitz31"}
    assert "minus blitz31 (wins)" in (out / "curve.md").read_text()
    with pytest.raises(SystemExit) as e:  # measured against others: not mixed into one curve
        learning_curve.main(args[:-2])
    assert e.value.code == 2


@pytest.mark.parametrize("against", ["", "expert,expert", "nobody"])
def test_bad_against_is_refused(against, tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        learning_curve.main(["5=" + MODEL, "--against", against, "--out", str(tmp_path / "c")])
    assert e.value.code == 2
    assert "--against" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()
