"""The README's and the documentation's code blocks run as printed: every Python block
in its own interpreter, and the README's commands with their sizes made small (fewer
games, decisions and seconds, a folder of the test's own); the site builds with
``mkdocs build --strict`` (no broken link, no missing reference)."""

import os
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"^( *)```(python|sh)\n(.*?)^\1```", re.S | re.M)
#: commands a test cannot run as printed: the two commands themselves, a server, the
#: terminal game (it waits for a person), and make targets that run for minutes
NOT_RUN = re.compile(
    r"^(make (demo|test|web|docs|docs-serve|bench|bench-learning|agent-\S+|notebook)\b|python -m apps\.play)"
)


def blocks(kind: str, pages: list[Path] = PAGES) -> list[tuple[str, str]]:
    found = []
    for page in pages:
        for m in BLOCK.finditer(page.read_text(encoding="utf-8")):
            if m.group(2) == kind:
                found.append((f"{page.relative_to(ROOT)}:{m.group(0)[:40]!r}", textwrap.dedent(m.group(3))))
    return found


PYTHON = blocks("python")


def test_there_are_blocks_to_run():
    assert len(PYTHON) >= 10 and any("MaskablePPO" in code for _, code in PYTHON)


@pytest.mark.parametrize(("where", "code"), PYTHON, ids=[w for w, _ in PYTHON])
def test_a_python_block_runs_as_printed(where, code, tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )
    assert done.returncode == 0, f"{where}\n{done.stderr[-3000:]}"


def small(command: str, folder: Path) -> list[str]:
    """A README command with its sizes made small and its output in ``folder``."""
    argv = shlex.split(command.split("  #")[0])
    out = []
    it = iter(argv)
    for arg in it:
        if arg in ("--games", "--decisions", "--time-limit"):
            next(it)
            out += [arg, {"--games": "8", "--decisions": "20", "--time-limit": "2"}[arg]]
        else:
            out.append(arg)
    if out[:2] == ["python", "train.py"] and "--steps" not in out:
        out += ["--runs-dir", str(folder / "runs"), "--report-games", "0", "--workers", "1", "--no-progress"]
        if "--time-limit" not in out:
            out += ["--time-limit", "2"]
    elif (
        out[:2] == ["python", "evaluate.py"]
        or out[:3] == ["python", "-m", "thirtyone_env.research"]
        and "--help" not in out
    ):
        out += ["--out", str(folder / "out"), "--no-progress", "--workers", "1"]
    return [sys.executable if out[0] == "python" else out[0], *out[1:]]


README_COMMANDS = [
    line
    for _, code in blocks("sh", [ROOT / "README.md"])
    for line in code.splitlines()
    if line.strip() and not line.startswith("#") and not NOT_RUN.match(line)
]


def test_the_readme_commands_are_found():
    assert any("train.py" in c for c in README_COMMANDS) and any("evaluate.py" in c for c in README_COMMANDS)
    assert all(c.startswith("python ") for c in README_COMMANDS), README_COMMANDS


@pytest.mark.parametrize("command", README_COMMANDS)
def test_a_readme_command_runs_with_small_sizes(command, tmp_path):
    done = subprocess.run(small(command, tmp_path), capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, f"{command}\n{done.stderr[-3000:]}"


def test_the_site_builds_strict(tmp_path):
    mkdocs = Path(sys.executable).parent / "mkdocs"  # installed by make (the docs extra)
    done = subprocess.run(
        [str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path / "site")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    page = (tmp_path / "site" / "envs" / "single" / "index.html").read_text()
    assert "<!-- actions" not in page and "opponent_history" in page and "[0, 52)" in page  # tables made
