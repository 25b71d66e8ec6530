"""The benchmark scripts refuse bad options as every command does: one line naming the
problem, exit status 2, no traceback, before any measurement and without writing."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def bench(script: str, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


@pytest.mark.parametrize(
    ("script", "args", "named"),
    [
        ("engine_speed.py", ["--players", "0"], "--players: must be at least 1, got 0"),
        ("engine_speed.py", ["--seconds", "nan"], "--seconds: must be a finite number above 0"),
        ("engine_speed.py", ["--seconds", "-1"], "--seconds: must be a finite number above 0"),
        ("engine_speed.py", ["--rules", "nosuch"], "unknown rules preset 'nosuch'"),
        ("engine_speed.py", ["--rules", "standard:lives=0"], "lives=0 is not allowed"),
        ("engine_speed.py", ["--players", "9"], "num_players=9 is not allowed"),
        ("engine_speed.py", ["--rules", "blitz31", "--players", "3"], "these rules fix seats=4"),
        ("harness_speed.py", ["--games", "0"], "--games: must be at least 1"),
        ("harness_speed.py", ["--workers", "0"], "--workers: must be at least 1"),
        ("harness_speed.py", ["--workers", "999"], "--workers: at most the"),
        ("harness_speed.py", ["--players", "nosuch", "nosuch"], "unknown player 'nosuch'"),
        ("harness_speed.py", ["--players", "greedy"], "num_players=1 is not allowed"),
        ("suite.py", ["--seconds", "inf"], "--seconds: must be a finite number above 0"),
        ("suite.py", ["--cases", "nosuch"], "unknown case(s) ['nosuch']"),
        ("cases.py", ["batched_env", "--seconds", "-1"], "--seconds: must be a finite number above 0"),
        ("cases.py", ["batched_env", "--num-envs", "0"], "--num-envs: must be at least 1"),
        ("learning.py", ["--minutes", "nan"], "--minutes: must be a finite number above 0"),
    ],
)
def test_a_bad_option_is_one_line_and_exit_2(script, args, named, tmp_path):
    before = sorted((ROOT / "benchmarks").rglob("*"))
    r = bench(script, *args, cwd=tmp_path)
    assert r.returncode == 2 and named in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert sorted((ROOT / "benchmarks").rglob("*")) == before and not any(tmp_path.iterdir())


def test_the_learning_benchmark_writes_only_into_a_folder_of_its_own(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("mine")
    r = bench("learning.py", "--out", str(afile))
    assert r.returncode == 2 and "is a file, not a folder" in r.stderr
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine")
    r = bench("learning.py", "--out", str(theirs))
    assert r.returncode == 2 and "holds files this benchmark did not write ('notes.txt')" in r.stderr
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["afile", "notes.txt", "theirs"]
