"""Players that travel by content (``agents.portable``): the files a spec reads are
found, carried inside a picklable reader and written on the other side under their
digest; the players built there play the games of the originals. (On a real Ray
cluster: tests/test_ray.py.)"""

import hashlib
import os
import pickle
import re
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

import agents
from agents.portable import CACHE_ENV, CarriedFile, PortableReader, cache_dir, reader
from thirtyone_env.harness.evaluation import TournamentConfig, run_tournament
from thirtyone_env.harness.parallel import Backend

ROOT = Path(__file__).resolve().parents[1]
ZOO_4P = ROOT / "agents" / "models" / "ppo_standard_4p-v5.zip"

BOT = """
import numpy as np

from thirtyone_env.game.actions import KNOCK


class Knocker:
    obs_encoding = "view"

    def __init__(self, at: int = 25) -> None:
        self.at = at

    def act(self, view, action_mask):
        from thirtyone_env.game.cards import hand_value

        if action_mask[KNOCK] and len(view.hand) == 3 and hand_value(view.hand, view.rules) >= self.at:
            return KNOCK
        return int(np.flatnonzero(action_mask)[-1])
"""


@pytest.fixture
def files(tmp_path, monkeypatch):
    """A model and a player file in a folder of their own, and an empty cache."""
    src = tmp_path / "mine"
    src.mkdir()
    shutil.copy(ZOO_4P, src / "model.zip")
    (src / "bot.py").write_text(BOT)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    return src


def test_the_files_a_spec_reads(files):
    model, bot = files / "model.zip", files / "bot.py"
    assert agents.spec_files(f"ppo:path={model},deterministic=false") == [str(model)]
    assert agents.spec_files(f"{bot}:Knocker:at=27") == [str(bot)]
    assert agents.spec_files("expert") == []
    assert agents.spec_files("ppo") == []  # the zoo's model is installed everywhere
    assert agents.spec_files("greedy:knock_at=27") == []


def test_relocate_moves_only_the_file_paths(files):
    model, bot = files / "model.zip", files / "bot.py"
    moved = agents.relocate(f"ppo:deterministic=false, path={model}", {str(model): "/x/m.zip"})
    assert moved == "ppo:deterministic=false,path=/x/m.zip"
    assert agents.relocate(f"{bot}:Knocker:at=27", {str(bot): "/y/b.py"}) == "/y/b.py:Knocker:at=27"
    assert agents.relocate("greedy:knock_at=27", {"27": "28"}) == "greedy:knock_at=27"


def test_players_built_from_carried_files_play_the_same_games(files, tmp_path):
    """The reader is pickled with the files' bytes, the originals are removed, and
    the players it builds (from copies under the digest) play the same games."""
    model, bot = files / "model.zip", files / "bot.py"
    players = (f"ppo:path={model}", f"{bot}:Knocker:at=26", "expert", "greedy")
    config = TournamentConfig(players, 8, "standard", 4, 1)
    here = run_tournament(config, agents.from_spec, chunk=1)
    carried = pickle.loads(pickle.dumps(PortableReader(players)))
    shutil.rmtree(files)
    there = run_tournament(config, carried, chunk=1)
    assert [(g.deal, g.rotation, g.places, g.rounds) for g in there] == [
        (g.deal, g.rotation, g.places, g.rounds) for g in here
    ]
    placed = sorted(p.relative_to(tmp_path / "cache").parts[1] for p in (tmp_path / "cache").rglob("*.*"))
    assert placed == ["bot.py", "model.zip"]


def test_a_model_without_a_description_carries_its_run_config(tmp_path, monkeypatch):
    """A snapshot (``.npz``) says its table only through its run's ``config.json``:
    that file travels beside it, and the carried copy is checked against the table."""
    from agents.ppo import PPOPlayer, load_policy
    from thirtyone_env.game.rules import Rules

    run = tmp_path / "run"
    (run / "pool").mkdir(parents=True)
    (run / "config.json").write_text('{"rules": "standard", "players": 4}')
    load_policy(ZOO_4P).save(run / "pool" / "snap.npz")
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    spec = f"ppo:path={run / 'pool' / 'snap.npz'}"
    carried = PortableReader([spec])
    shutil.rmtree(run)
    player = carried(spec)
    player.check_table(4, Rules.preset("standard"))  # knows its table from the carried config
    with pytest.raises(ValueError, match="trained for"):
        carried(spec).check_table(3, Rules.preset("standard"))
    assert isinstance(player, PPOPlayer)


def test_a_damaged_copy_in_the_cache_is_written_again(files, tmp_path):
    carried = CarriedFile.read(files / "bot.py")
    path = carried.place()
    path.write_text("broken")
    assert carried.place().read_bytes() == (files / "bot.py").read_bytes()


def test_local_work_reads_the_files_in_place(files):
    assert reader(["expert"], Backend("local", 2)) is agents.from_spec
    assert reader(["expert"]) is agents.from_spec
    with pytest.raises(ValueError, match="cannot read"):
        CarriedFile.read(files / "missing.zip")


def test_a_swapped_copy_of_the_same_size_and_time_is_written_again(files):
    """A copy in the cache is hashed on every use: other bytes of the same size,
    with the file's time put back, are replaced by the carried ones, not run."""
    carried = CarriedFile.read(files / "bot.py")
    path = carried.place()
    assert carried.place() == path  # the copy found there and checked
    before = path.stat()
    swapped = carried.data.replace(b"return KNOCK", b"return 0    ")
    assert len(swapped) == len(carried.data) and swapped != carried.data
    path.write_bytes(swapped)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    assert carried.place().read_bytes() == carried.data


def test_a_link_in_place_of_a_copy_is_replaced(files, tmp_path):
    """A symbolic link where the copy belongs is not followed, even to the right bytes."""
    carried = CarriedFile.read(files / "bot.py")
    path = carried.place()
    path.unlink()
    path.symlink_to(files / "bot.py")
    assert not carried.place().is_symlink()
    assert path.read_bytes() == carried.data


def test_a_new_cache_folder_is_private(files, tmp_path):
    """Made 0700 whatever the umask would give a new folder."""
    old = os.umask(0o000)
    try:
        assert cache_dir() == tmp_path / "cache"
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "cache").stat().st_mode) == 0o700


def test_the_default_cache_folder_and_its_parent_are_private(tmp_path, monkeypatch):
    monkeypatch.delenv(CACHE_ENV, raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    folder = cache_dir()
    assert folder == tmp_path / f"thirtyone-{os.getuid()}" / "carried"
    for made in (folder, folder.parent):
        assert stat.S_IMODE(made.stat().st_mode) == 0o700
    CarriedFile("bot.py", b"x = 1\n", hashlib.sha256(b"x = 1\n").hexdigest()).place()
    folder.parent.chmod(0o755)
    with pytest.raises(
        ValueError, match=rf"cache folder {re.escape(str(folder.parent))}: it can be reached by other users"
    ):
        cache_dir()


@pytest.mark.parametrize(
    "spoil, problem",
    [
        (lambda d: d.chmod(0o777), "can be reached by other users (mode 0777"),
        (lambda d: d.chmod(0o750), "can be reached by other users (mode 0750"),
        (lambda d: os.chown(d, 65534, -1), "is owned by user id 65534"),
        (
            lambda d: (d.rmdir(), d.symlink_to(d.parent / "elsewhere", target_is_directory=True)),
            "is a symbolic link",
        ),
        (lambda d: (d.rmdir(), d.write_text("")), "is not a folder"),
    ],
    ids=["open-to-all", "open-to-group", "someone-else's", "link", "file"],
)
def test_a_cache_folder_that_is_not_private_is_refused(files, tmp_path, spoil, problem):
    """The cache must be the user's own (0700, owned, a real folder): a folder another
    user made or can write is refused, by name, and nothing is written there."""
    if problem.startswith("is owned") and os.getuid() != 0:
        pytest.skip("giving a folder to another user needs root")
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    spoil(cache)
    carried = CarriedFile.read(files / "bot.py")
    with pytest.raises(ValueError, match=rf"cache folder {re.escape(str(cache))}: it {re.escape(problem)}"):
        carried.place()
    with pytest.raises(ValueError, match="cache folder"):
        PortableReader([f"{files / 'bot.py'}:Knocker"])(f"{files / 'bot.py'}:Knocker")
    assert not any((tmp_path / "elsewhere").iterdir())
