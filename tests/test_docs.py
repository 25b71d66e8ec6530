"""The README's and the documentation's code blocks run as printed: every Python block
in its own interpreter, and every command with its sizes made small (fewer games,
decisions, steps and seconds, a folder of the test's own; those :data:`NOT_RUN` names
need a server, a cluster, a person or a run of the reader's); the site builds with
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
BLOCK = re.compile(r"^( *)```(python|sh|toml|json)\n(.*?)^\1```", re.S | re.M)
#: commands a test cannot run as printed: the two commands themselves, servers, the
#: terminal game (it waits for a person), make targets and exploiters that train for
#: minutes, a Ray cluster's or RLlib's own environment, placeholders for a run of the
#: reader's, and tools other than this project's
NOT_RUN = re.compile(
    r"^(make |python -m apps\.play|ray |export |tensorboard |\.venv-rllib/)"
    r"|<|--cluster ray|--resume|--sweep|--exploit|--card|benchmarks/learning\.py|=results/learning/runs/"
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


#: the sizes a command runs with here
SMALL = {"--games": "8", "--decisions": "20", "--time-limit": "2", "--total-timesteps": "256"}


def small(command: str, folder: Path) -> list[str]:
    """A command with its sizes made small and its output in ``folder``."""
    argv = shlex.split(command.split("  #")[0])
    out = []
    it = iter(argv)
    for arg in it:
        if arg in SMALL:
            next(it)
            out += [arg, SMALL[arg]]
        else:
            out.append(arg)
    tool = " ".join(out[:3]) if out[1] == "-m" else " ".join(out[:2])
    if "--help" in out or "--steps" in out:
        pass
    elif tool == "python train.py":
        out += ["--runs-dir", str(folder / "runs"), "--report-games", "0", "--workers", "1", "--no-progress"]
        out += [] if "--time-limit" in out else ["--time-limit", "2"]
    elif tool == "python -m training.run_cli":
        out += ["--runs-dir", str(folder / "runs"), "--report-games", "0", "--n-envs", "2", "--no-progress"]
        out += ["--eval-every", "0", "--workers", "1", "--n-steps", "128", "--batch-size", "128"]
    elif tool in ("python evaluate.py", "python -m thirtyone_env.research"):
        out += ["--out", str(folder / "out"), "--no-progress", "--workers", "1"]
        if tool == "python evaluate.py" and "--games" not in out:
            out += ["--games", "8"]
    return [sys.executable if out[0] == "python" else out[0], *out[1:]]


COMMANDS = [
    line.split("  #")[0].strip()
    for _, code in blocks("sh")
    for line in code.splitlines()
    if line.strip() and not line.startswith("#") and not NOT_RUN.search(line.split("  #")[0])
]


def test_the_commands_are_found():
    assert any("train.py" in c for c in COMMANDS) and any("evaluate.py" in c for c in COMMANDS)
    assert all(c.startswith("python ") for c in COMMANDS), COMMANDS


@pytest.mark.parametrize("command", sorted(set(COMMANDS)))
def test_a_command_runs_with_small_sizes(command, tmp_path):
    done = subprocess.run(small(command, tmp_path), capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, f"{command}\n{done.stderr[-3000:]}"


@pytest.mark.parametrize(("where", "text"), blocks("toml"), ids=[w for w, _ in blocks("toml")])
def test_a_recipe_block_is_a_recipe_that_passes_its_checks(where, text, tmp_path):
    from training.recipe import parse
    from training.recipe_run import Placement, check

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    check(parse(tomllib.loads(text), where), tmp_path / "run", Placement(workers=1))


@pytest.mark.parametrize(("where", "text"), blocks("json"), ids=[w for w, _ in blocks("json")])
def test_a_sweep_block_is_a_sweep_file_that_reads(where, text, tmp_path):
    from training.sweep import Sweep

    path = tmp_path / "sweep.json"
    path.write_text(text)
    assert Sweep.read(path).name


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
    assert (
        "<code>draw_stock</code>" in page and "opponent_history" in page and "[0, 52)" in page
    )  # tables made


def test_the_tables_written_into_the_pages_are_those_of_the_code():
    """The action, observation and route tables are written into the pages (they read
    on GitHub too) by ``python docs/hooks.py``: each must be what the code gives now."""
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import hooks
    finally:
        sys.path.remove(str(ROOT / "docs"))
    pages = hooks.pages()
    assert {p.name for p in pages} >= {"single.md", "vector.md", "pettingzoo.md", "web.md"}
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert text.count("<!-- end -->") == len(hooks.MARKER.findall(text)), page
        assert hooks.fill(text) == text, f"{page}: run python docs/hooks.py"
    stale = "<!-- actions: standard -->\n| id | action |\n|---:|---|\n| 0 | `old` |\n<!-- end -->\n"
    assert hooks.fill(stale) == f"<!-- actions: standard -->\n{hooks.actions_table('standard')}<!-- end -->\n"
