"""Players that travel by content (``agents.portable``): the files a spec reads are
found, carried inside a picklable reader and written on the other side under their
digest; the players built there play the games of the originals. (On a real Ray
cluster: tests/test_ray.py.)"""

import pickle
import shutil
from pathlib import Path

import pytest

import agents
from agents.portable import CACHE_ENV, CarriedFile, PortableReader, reader
from thirtyone_env.harness.evaluation import TournamentConfig, run_tournament
from thirtyone_env.harness.parallel import Backend

ROOT = Path(__file__).resolve().parents[1]
ZOO_4P = ROOT / "agents" / "models" / "ppo_standard_4p.zip"

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
