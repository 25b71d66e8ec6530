"""Your own players by spec: a class or factory by import path, a file path, or an
installed package's entry point; options read from the real signature; clear errors;
worker processes under fork and spawn; the docs' example (docs/players.md), executed."""

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import agents
from thirtyone_env.harness.match import play_game

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "docs" / "players.md"
PACKAGE = "ownbots_t31"  #: a name no other test imports

BOTS = '''
import os

import numpy as np

from thirtyone_env.game.actions import DISCARD_BASE, DRAW_STOCK, KNOCK
from thirtyone_env.game.cards import hand_value


class EarlyKnocker:
    """Knocks once its hand is worth ``first``; draws from the stock otherwise."""

    obs_encoding = "view"

    def __init__(self, first: int = 20) -> None:
        self.first = first
        if os.environ.get("OWNBOTS_PIDS"):  # which processes built players
            open(os.path.join(os.environ["OWNBOTS_PIDS"], str(os.getpid())), "w").close()

    def act(self, view, action_mask):
        if len(view.hand) == 4:
            legal = [c for c in view.hand if action_mask[DISCARD_BASE + c]]
            out = max(legal, key=lambda c: hand_value([x for x in view.hand if x != c], view.rules))
            return DISCARD_BASE + out
        if action_mask[KNOCK] and hand_value(view.hand, view.rules) >= self.first:
            return KNOCK
        if action_mask[DRAW_STOCK]:
            return DRAW_STOCK
        return int(np.flatnonzero(action_mask)[0])


def cautious(knock_at: float = 30.5) -> EarlyKnocker:
    """A factory: a function that returns a player."""
    player = EarlyKnocker()
    player.first = knock_at
    return player


def not_a_player():
    return 42


def touches(path: str = "") -> EarlyKnocker:
    """A factory that says it makes a player, but first writes a file."""
    open(path, "w").close()
    return EarlyKnocker()


def touches_unannotated(path: str = ""):
    open(path, "w").close()
    return EarlyKnocker()


class NoAct:
    def __init__(self, x: int = 1) -> None:
        self.x = x
'''

#: A module WITHOUT ``from __future__ import annotations``: annotations are real types.
TYPED = """
from typing import Optional


class Typed:
    def __init__(
        self,
        knock_at: float = 25.0,
        first: int = 3,
        cautious: bool = False,
        name: str = "t",
        limit: Optional[float] = None,
        cap: int | None = None,
        untyped=7,
        rng: object = None,
    ) -> None:
        self.options = dict(knock_at=knock_at, first=first, cautious=cautious, name=name, limit=limit,
                            cap=cap, untyped=untyped)

    def act(self, observation, action_mask):
        return 0
"""

#: String annotations, one of them naming a type only imported for type checking.
LAZY = """
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from numpy.random import Generator


class Lazy:
    def __init__(self, rng: Generator | None = None, knock_at: float | None = None,
                 worlds: Optional[int] = 3) -> None:
        self.rng, self.knock_at, self.worlds = rng, knock_at, worlds

    def act(self, observation, action_mask):
        return 0
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A folder for sys.path: a package of players, a distribution that registers one
    under ``thirtyone.players`` (real metadata, as pip installs it), and loose files."""
    root = tmp_path_factory.mktemp("site")
    (root / PACKAGE).mkdir()
    (root / PACKAGE / "__init__.py").write_text("")
    (root / PACKAGE / "bots.py").write_text(BOTS)
    (root / PACKAGE / "typed.py").write_text(TYPED)
    (root / PACKAGE / "broken.py").write_text("raise RuntimeError('this module is broken')\n")
    info = root / "ownbots_t31-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ownbots-t31\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[thirtyone.players]\nearly-t31 = {PACKAGE}.bots:EarlyKnocker\nnoact-t31 = {PACKAGE}.bots:NoAct\n"
    )
    files = tmp_path_factory.mktemp("files")
    (files / "filebots.py").write_text(BOTS)
    (files / "lazy.py").write_text(LAZY)
    return root, files


@pytest.fixture
def on_path(site, monkeypatch):
    monkeypatch.syspath_prepend(str(site[0]))
    return site


def test_a_class_or_factory_by_import_path(on_path):
    player = agents.from_spec(f"{PACKAGE}.bots:EarlyKnocker:first=27")
    assert type(player).__name__ == "EarlyKnocker" and player.first == 27
    assert agents.from_spec(f"{PACKAGE}.bots:EarlyKnocker").first == 20
    assert agents.from_spec(f"{PACKAGE}.bots:cautious:knock_at=29.5").first == 29.5
    rec = play_game(
        [player, agents.make("greedy"), agents.make("expert")], np.random.default_rng(3), "standard"
    )
    assert rec.rounds  # a whole game of legal moves (play_game raises on an illegal one)


def test_a_class_by_file_path(site, tmp_path, monkeypatch):
    files = site[1]
    monkeypatch.chdir(files)  # a relative path is read from the current folder
    a = agents.from_spec("filebots.py:EarlyKnocker:first=26")
    b = agents.from_spec(f"{files / 'filebots.py'}:EarlyKnocker")
    assert (a.first, b.first) == (26, 20)
    assert type(a) is type(b)  # the file runs once per process
    agents.check_spec("filebots.py:cautious:knock_at=31")


def test_an_entry_point_is_a_name_like_the_built_in_ones(on_path):
    assert "early-t31" in agents.names() and agents.names()[: len(agents.REGISTRY)] == list(agents.REGISTRY)
    assert agents.from_spec("early-t31:first=24").first == 24
    assert agents.make("early-t31", first=22).first == 22
    assert agents.from_spec("greedy:knock_at=27").knock_at == 27  # built-in names are unchanged
    with pytest.raises(
        ValueError, match=r"player 'noact-t31 .*has no act\(observation, action_mask\) method"
    ):
        agents.from_spec("noact-t31")


def test_entry_points_are_not_seen_without_their_package(site):
    assert "early-t31" not in agents.names()
    with pytest.raises(ValueError, match="unknown player 'early-t31'"):
        agents.from_spec("early-t31")


def test_a_function_that_does_not_say_it_makes_a_player_is_never_called(on_path, tmp_path):
    """The return annotation is checked before any call: the unannotated function's
    side effect never happens, the annotated factory's does."""
    marker = tmp_path / "called"
    with pytest.raises(ValueError, match="touches_unannotated is a function whose return annotation"):
        agents.from_spec(f"{PACKAGE}.bots:touches_unannotated:path={marker}")
    assert not marker.exists()
    agents.from_spec(f"{PACKAGE}.bots:touches:path={marker}")
    assert marker.exists()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nobody_t31.bots:Knocker", r"cannot import module 'nobody_t31.bots': no module named 'nobody_t31'"),
        (f"{PACKAGE}.broken:Bot", r"cannot import module .*broken.*RuntimeError: this module is broken"),
        (f"{PACKAGE}.bots:Nobody", r"bots.py has no attribute 'Nobody'"),
        (f"{PACKAGE}.bots:NoAct", r"class NoAct has no act\(observation, action_mask\) method"),
        (
            f"{PACKAGE}.bots:not_a_player",
            r"not_a_player is a function whose return annotation \(none\) is not",
        ),
        (
            f"{PACKAGE}.bots:DRAW_STOCK",
            r"DRAW_STOCK is not a player class or factory function \(it is of type int\)",
        ),
        (
            "os:abort",
            r"abort is not a player class or factory function \(it is of type builtin_function_or_method\)",
        ),
        (
            "thirtyone_env.harness.files:atomic_write:path=x,data=y",
            r"atomic_write is a function whose return annotation \(Path\) is not a player class",
        ),
        ("no/such/file.py:Bot", r"player file not found: no/such/file.py"),
        ("filebots.py", r"name the class in the file, as filebots.py:ClassName"),
        (f"{PACKAGE}.bots:EarlyKnocker:first=x", r"option 'first' takes an integer, got 'x'"),
        (f"{PACKAGE}.bots:EarlyKnocker:second=1", r"unknown option 'second'; options are \['first'\]"),
        ("nobody", r"unknown player 'nobody'; players are \[.*\], or a class by import path"),
        ("expert:horizon=99", r"player 'expert': horizon=99 is not allowed"),  # the constructor's own check
    ],
)
def test_clear_errors(on_path, spec, message):
    with pytest.raises(ValueError, match=message):
        agents.from_spec(spec)


BOOM = """
class Boom:
    def __init__(self):
        raise RuntimeError("boom in the constructor")

    def act(self, observation, action_mask):
        return 0
"""


@pytest.mark.parametrize(
    "command",
    [
        ["evaluate.py", "--players", "greedy", "boom.py:Boom", "--games", "2", "--no-progress"],
        ["-m", "apps.play", "--opponents", "boom.py:Boom"],
        ["train.py", "--opponents", "boom.py:Boom"],
        [
            "-m",
            "training.run_cli",
            "--opponents",
            "boom.py:Boom",
            "--total-timesteps",
            "64",
            "--vec-env",
            "dummy",
        ],
    ],
)
def test_a_player_whose_constructor_fails_is_named_without_a_traceback(tmp_path, command):
    (tmp_path / "boom.py").write_text(BOOM)
    if command[0].endswith(".py"):
        command = [str(ROOT / command[0]), *command[1:]]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run(
        [sys.executable, *command],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    assert r.returncode == 2, r.stderr
    assert "player 'boom.py:Boom' could not be built: RuntimeError: boom in the constructor" in r.stderr
    assert "Traceback" not in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["boom.py"]  # no run, results or record folder


def test_options_are_read_from_the_real_signature(on_path):
    """Item 16: a module without the future import has real types as annotations."""
    player = agents.from_spec(
        f"{PACKAGE}.typed:Typed:knock_at=26.5,first=4,cautious=true,name=bob,limit=0.5,cap=none,untyped=9"
    )
    assert player.options == {
        "knock_at": 26.5, "first": 4, "cautious": True, "name": "bob", "limit": 0.5, "cap": None, "untyped": 9,
    }  # fmt: skip
    assert agents.from_spec(f"{PACKAGE}.typed:Typed:limit=none,cap=3").options["cap"] == 3
    for bad, message in [
        ("knock_at=high", "takes a finite number"),
        ("first=2.5", "takes an integer"),
        ("cautious=1", "takes true or false"),
        ("cap=x", "takes an integer"),
        ("knock_at=nan", "takes a finite number, got 'nan'"),
        ("knock_at=inf", "takes a finite number, got 'inf'"),
        ("knock_at=-inf", "takes a finite number, got '-inf'"),
        ("rng=1", "option 'rng' cannot be set from a spec"),
    ]:
        with pytest.raises(ValueError, match=message):
            agents.check_spec(f"{PACKAGE}.typed:Typed:{bad}")


def test_string_annotations_that_cannot_be_resolved_are_read_as_text(site, monkeypatch):
    monkeypatch.chdir(site[1])
    player = agents.from_spec("lazy.py:Lazy:knock_at=27,worlds=none,rng=none")
    assert (player.knock_at, player.worlds, player.rng) == (27.0, None, None)
    assert agents.from_spec("lazy.py:Lazy:worlds=5").worlds == 5
    with pytest.raises(ValueError, match="option 'rng' cannot be set from a spec"):
        agents.from_spec("lazy.py:Lazy:rng=3")


TOURNAMENT = """
import json, multiprocessing as mp, os, sys

import agents
from thirtyone_env.harness.evaluation import TournamentConfig, run_tournament

if __name__ == "__main__":
    mp.set_start_method(sys.argv[1])
    workers = int(sys.argv[2])
    config = TournamentConfig(tuple(sys.argv[3:]), games=8, seed=5, workers=workers)
    games = run_tournament(config, agents.from_spec, chunk=1)
    print(json.dumps({"pid": os.getpid(), "games": [[g.deal, g.rotation, list(g.wins), g.rounds] for g in games]}))
"""


def test_own_players_in_tournaments_with_workers_under_fork_and_spawn(site, tmp_path):
    """Each worker process builds the players from the spec strings: a file player, a
    module player and an entry point player, with 2 workers under spawn and fork,
    play the same games as in one process."""
    root, files = site
    script = tmp_path / "tournament.py"
    script.write_text(TOURNAMENT)
    specs = [
        f"{files / 'filebots.py'}:EarlyKnocker:first=24",
        f"{PACKAGE}.bots:cautious",
        "early-t31",
        "greedy",
    ]
    results = {}
    for method, workers in (("spawn", 2), ("fork", 2), ("fork", 1)):
        pids = tmp_path / f"pids-{method}-{workers}"
        pids.mkdir()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(ROOT)]), "OWNBOTS_PIDS": str(pids)}
        r = subprocess.run(
            [sys.executable, str(script), method, str(workers), *specs],
            capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        built = {int(p.name) for p in pids.iterdir()}
        if workers > 1:
            assert built and out["pid"] not in built  # only the workers built players
        results[method, workers] = out["games"]
    assert len(results["spawn", 2]) == 8
    assert results["spawn", 2] == results["fork", 2] == results["fork", 1]


def readme_block() -> str:
    text = README.read_text()
    blocks = re.findall(r"```python\n(# Your own player.*?)```", text, re.DOTALL)
    assert len(blocks) == 1, "docs/players.md needs one ```python block that begins with '# Your own player'"
    return blocks[0]


def test_the_readme_example_of_your_own_player_runs(tmp_path):
    """The docs' block: saved under the file name it gives, imported, played in a
    game, then run by the evaluate.py command its comment gives."""
    block = readme_block()
    name = re.search(r"save (?:this|it) as (\w+\.py)", block)
    command = re.search(r"^#\s+(python evaluate\.py .*)$", block, re.MULTILINE)
    assert name and command, "the block names its file ('save this as NAME.py') and the evaluate.py command"
    (tmp_path / name.group(1)).write_text(block)
    args = shlex.split(command.group(1))
    spec = next(a for a in args if a.startswith(name.group(1) + ":"))
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        player = agents.from_spec(spec)
        play_game(
            [player, agents.make("greedy"), agents.make("greedy")], np.random.default_rng(0), "standard"
        )
    finally:
        os.chdir(cwd)
    args = [
        sys.executable,
        str(ROOT / "evaluate.py"),
        *args[2:],
        "--out",
        str(tmp_path / "out"),
        "--no-progress",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert spec in json.dumps(results)
