"""The model zoo: ``agents.make("ppo")`` plays the zoo model of the
table it is seated at, picked when the table is named (the envs, the harness's tables
and tournaments, evaluate.py); a table the zoo has no model for is refused naming what
there is; an explicit path is still refused at a table it was not trained for; the
zoo's index is what the model files themselves say."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from conftest import takes_history

import agents
from agents import ppo
from agents.ppo import SHIPPED_MODEL, ZOO, PPOPlayer, load_policy, table_of, with_description, zoo, zoo_model
from thirtyone_env.envs.env import ThirtyOneEnv
from thirtyone_env.game.actions import num_actions
from thirtyone_env.game.encoding import ObsLayout
from thirtyone_env.game.policies import GreedyPolicy
from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.evaluation import TournamentConfig, run_tournament
from thirtyone_env.harness.match import play_game

STANDARD = Rules.preset("standard")
ROOT = Path(__file__).resolve().parents[1]


def sb3_zip(players: int, rules: str) -> bytes:
    """A small untrained MaskablePPO for a table, as SB3 itself saves it (no
    description, like a model trained before train.py wrote one)."""
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.wrappers import ActionMasker

    env = ActionMasker(ThirtyOneEnv(players, rules), lambda e: e.unwrapped.action_masks())
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, policy_kwargs={"net_arch": [8]}, seed=0)
    buf = io.BytesIO()
    model.save(buf)
    return buf.getvalue()


@pytest.fixture(scope="module")
def foreign() -> dict[str, bytes]:
    """Zips of small models for 3 players cut_throat and 4 players blitz31 (the latter
    takes the standard table's observations and actions: only its rules tell it apart)."""
    pytest.importorskip("sb3_contrib")
    return {"cut_throat": sb3_zip(3, "cut_throat"), "blitz31": sb3_zip(4, "blitz31")}


@pytest.fixture
def three_zoo(tmp_path, monkeypatch, foreign):
    """A zoo of three models (the shipped one, 3 players cut_throat, 4 players blitz31),
    made the one ``ppo`` reads."""
    folder = tmp_path / "zoo"
    folder.mkdir()
    shutil.copy(SHIPPED_MODEL, folder / SHIPPED_MODEL.name)
    (folder / "ct3.zip").write_bytes(
        with_description(foreign["cut_throat"], table_of(3, Rules.preset("cut_throat")))
    )
    (folder / "b4.zip").write_bytes(
        with_description(foreign["blitz31"], table_of(4, Rules.preset("blitz31")))
    )
    monkeypatch.setattr(ppo, "ZOO", folder)
    return folder


def test_the_default_ppo_picks_the_zoo_model_of_its_table(three_zoo):
    for players, rules, name in [
        (3, "cut_throat", "ct3"),
        (4, "blitz31", "b4"),
        (4, "standard", "ppo_standard_4p-v5"),
    ]:
        player = agents.make("ppo")
        player.check_table(players, Rules.preset(rules))
        assert player.path == str(three_zoo / f"{name}.zip")
        layout = ObsLayout(players, Rules.preset(rules))
        assert player.policy.input_size in (layout.size, layout.with_history().size)
    # one player seated at another table picks again
    player = agents.from_spec("ppo")
    player.check_table(3, Rules.preset("cut_throat"))
    player.check_table(4, STANDARD)
    assert player.path == str(three_zoo / "ppo_standard_4p-v5.zip")


def test_every_place_that_seats_a_player_tells_it_the_table(three_zoo):
    """The single env's opponents, a harness game, a tournament: each ``ppo`` plays the
    zoo model of its table there, with nothing but the spec given."""
    env = ThirtyOneEnv(3, "cut_throat", opponents=[agents.make("ppo"), GreedyPolicy()], seat=0)
    assert env.opponents[0].path == str(three_zoo / "ct3.zip")
    env.reset(seed=0)
    seated = [agents.make("ppo"), GreedyPolicy(), GreedyPolicy(), GreedyPolicy()]
    record = play_game(seated, np.random.default_rng(1), "blitz31")
    assert seated[0].path == str(three_zoo / "b4.zip") and record.rounds
    games = run_tournament(
        TournamentConfig(("ppo", "greedy", "greedy"), games=3, rules="cut_throat"), agents.from_spec
    )
    assert len(games) == 3


def test_the_zoo_player_plays_the_shipped_agents_decisions():
    zoo_player, shipped = agents.make("ppo"), PPOPlayer(str(SHIPPED_MODEL))
    with pytest.raises(ValueError, match=r"not told the table: call check_table\(num_players, rules\)"):
        zoo_player.act(np.zeros(650, dtype=np.float32), np.ones(56, dtype=np.int8))
    env = ThirtyOneEnv(
        4,
        "standard",
        opponents=[zoo_player, GreedyPolicy(), GreedyPolicy()],
        seat=0,
        opponent_history=takes_history(SHIPPED_MODEL),
    )
    obs, info = env.reset(seed=3)
    for _ in range(200):
        a = shipped.act(obs, info["action_mask"])
        assert zoo_player.act(obs, info["action_mask"]) == a
        obs, _, done, _, info = env.step(a)
        if done:
            obs, info = env.reset()


@pytest.mark.parametrize(
    "model", [m for m in zoo() if zoo_model(m.players, m.rules) == m], ids=lambda m: m.name
)
def test_every_zoo_model_is_what_the_zoo_player_plays_at_its_table(model):
    """At each zoo model's own table (a variant's table moves included), the default
    ``ppo`` player is that file (its newest version), decision for decision, and plays
    only legal moves."""
    zoo_player, direct = agents.make("ppo"), PPOPlayer(str(model.path))
    opponents = [GreedyPolicy() for _ in range(model.players - 1)]
    env = ThirtyOneEnv(
        model.players,
        model.rules,
        opponents=[zoo_player, *opponents[1:]],
        seat=0,
        opponent_history=takes_history(model.path, model.players, model.rules),
    )
    obs, info = env.reset(seed=5)
    for _ in range(150):
        a = direct.act(obs, info["action_mask"])
        assert info["action_mask"][a] and zoo_player.act(obs, info["action_mask"]) == a
        obs, _, done, _, info = env.step(a)
        if done:
            obs, info = env.reset()


def test_a_table_with_no_zoo_model_is_refused_naming_what_is_available(three_zoo):
    available = "4 players standard (ppo_standard_4p-v5); 4 players blitz31 (b4); 3 players cut_throat (ct3)"
    expected = "no zoo model for 3 players with rules 'pagat'; available: "
    assert {m.label() for m in zoo()} == set(available.split("; "))  # (the three-model zoo)
    player = agents.make("ppo")
    with pytest.raises(ValueError, match=re.escape(expected)) as err:
        player.check_table(3, Rules.preset("pagat"))
    assert sorted(str(err.value).split("available: ")[1].split("; ")) == sorted(available.split("; "))
    with pytest.raises(ValueError, match=re.escape(expected)):
        ThirtyOneEnv(3, "pagat", opponents=agents.make("ppo"))
    with pytest.raises(ValueError, match=re.escape(expected)):
        play_game([agents.make("ppo"), GreedyPolicy(), GreedyPolicy()], np.random.default_rng(0), "pagat")
    with pytest.raises(ValueError, match=re.escape(expected)):
        run_tournament(
            TournamentConfig(("greedy", "ppo", "greedy"), games=3, rules="pagat"), agents.from_spec
        )


def test_the_shipped_zoo_refuses_a_table_it_has_no_model_for():
    player = agents.make("ppo")
    with pytest.raises(ValueError) as err:
        player.check_table(3, Rules.preset("pagat"))
    message = str(err.value)
    assert message.startswith("no zoo model for 3 players with rules 'pagat'; available: ")
    assert "4 players standard (ppo_standard_4p-v5)" in message and "-v4" not in message
    assert player.policy is None  # and it still refuses to play
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "evaluate.py"),
            "--players",
            "ppo",
            "greedy",
            "greedy",
            "--rules",
            "pagat",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"evaluate.py: error: {message}" in done.stderr


def test_an_explicit_path_is_still_refused_at_a_table_it_was_not_trained_for(three_zoo):
    shipped = agents.from_spec(f"ppo:path={SHIPPED_MODEL}")
    shipped.check_table(4, STANDARD)
    # the blitz31 table has the standard table's sizes: only the model's own table tells
    with pytest.raises(
        ValueError,
        match="trained for 4 players with rules 'standard'; this table has 4 players with rules 'blitz31'",
    ):
        shipped.check_table(4, Rules.preset("blitz31"))
    with pytest.raises(ValueError, match="was trained for another table"):
        shipped.check_table(3, Rules.preset("cut_throat"))
    # an explicit path is played even where the zoo has another model for the table
    b4 = agents.from_spec(f"ppo:path={three_zoo / 'b4.zip'}")
    b4.check_table(4, Rules.preset("blitz31"))
    with pytest.raises(ValueError, match="trained for 4 players with rules 'blitz31'"):
        ThirtyOneEnv(4, "standard", opponents=b4)


def test_the_zoo_index_matches_the_model_files():
    """Every zip in agents/models names its table, loads as a network of that table's
    sizes, has its card (one a model, for all its versions: it names the model and its
    table), no two models share a table, and a table's model is its newest version."""
    models = zoo()
    assert sorted(m.name for m in models) == sorted(p.stem for p in ZOO.glob("*.zip"))
    assert sorted(p.stem for p in ZOO.glob("*.md")) == sorted(
        {m.base for m in models}
    )  # no card without a model
    assert len({(m.players, m.rules) for m in models}) == len({m.base for m in models})
    assert {m.name for m in models} >= {f"ppo_standard_4p-v{k}" for k in range(1, 6)}
    for m in models:
        assert m.version >= 1 and m.name == f"{m.base}-v{m.version}"
        policy = load_policy(m.path)
        layout = ObsLayout(m.players, m.rules)  # the flat observation, with the history part or not
        assert policy.input_size in (layout.size, layout.with_history().size)
        assert policy.num_actions == num_actions(m.rules)
        newest = max((x for x in models if x.base == m.base), key=lambda x: x.version)
        assert zoo_model(m.players, m.rules) == newest
        card = (ZOO / f"{m.base}.md").read_text()
        title = card.splitlines()[0]
        assert title.startswith(
            f"# {m.base}: {m.players} players, {ppo.preset_of(m.rules) or 'custom'} rules"
        ), title
        assert f"`{m.name}`" in card  # every version is listed in its card


def test_an_earlier_version_plays_by_its_id_and_the_newest_by_default():
    standard = Rules.preset("standard")
    newest, older = agents.make("ppo"), agents.from_spec("ppo:model=ppo_standard_4p-v4")
    for player in (newest, older):
        player.check_table(4, standard)
    assert newest.path.endswith("ppo_standard_4p-v5.zip") and older.path.endswith("ppo_standard_4p-v4.zip")
    assert older.policy.input_size != newest.policy.input_size  # v4 reads no opponent history
    with pytest.raises(ValueError, match="no zoo model 'ppo_standard_4p-v9'; the zoo's ids are"):
        agents.from_spec("ppo:model=ppo_standard_4p-v9")
    with pytest.raises(ValueError, match="not both"):
        agents.from_spec(f"ppo:model=ppo_standard_4p-v4,path={SHIPPED_MODEL}")


def test_versions_of_one_model_may_share_a_table_two_models_may_not(tmp_path):
    folder = tmp_path / "zoo"
    folder.mkdir()
    raw = SHIPPED_MODEL.read_bytes()
    for name in ("mine-v1", "mine-v2"):
        (folder / f"{name}.zip").write_bytes(raw)
    assert zoo_model(4, Rules.preset("standard"), folder).name == "mine-v2"
    (folder / "other-v3.zip").write_bytes(raw)
    with pytest.raises(ValueError, match="are both for 4 players standard .*keep one"):
        zoo(folder)


def test_a_zoo_file_that_names_no_table_or_a_second_model_for_a_table_is_refused(tmp_path, foreign):
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "old.zip").write_bytes(foreign["cut_throat"])
    with pytest.raises(ValueError, match=f"zoo model {re.escape(str(bare / 'old.zip'))} names no table"):
        zoo(bare)
    twice = tmp_path / "twice"
    twice.mkdir()
    for name in ("a", "b"):
        (twice / f"{name}.zip").write_bytes(
            with_description(foreign["cut_throat"], table_of(3, Rules.preset("cut_throat")))
        )
    with pytest.raises(ValueError, match="zoo models .*a.zip and .*b.zip are both for 3 players cut_throat"):
        zoo(twice)
    with pytest.raises(ValueError, match="no zoo model for 4 players with rules 'standard'; available: none"):
        zoo_model(4, STANDARD, tmp_path)


def test_with_description_adds_the_table_and_keeps_every_entry(foreign):
    raw = foreign["cut_throat"]
    described = with_description(raw, table_of(3, Rules.preset("cut_throat")))
    before, after = zipfile.ZipFile(io.BytesIO(raw)), zipfile.ZipFile(io.BytesIO(described))
    assert after.namelist() == [*before.namelist(), ppo.DESCRIPTION]
    assert all(before.read(n) == after.read(n) for n in before.namelist())
    a, b = ppo.policy_from_zip(raw), ppo.policy_from_zip(described)
    assert all(np.array_equal(x, y) for (x, _), (y, _) in zip(a.layers, b.layers, strict=True))
    with pytest.raises(ValueError, match="already has a thirtyone.json"):
        with_description(described, table_of(3, Rules.preset("cut_throat")))


def test_the_vector_env_tells_its_players_the_table(three_zoo):
    """Shared players and players made per game, in the kernels' external seats."""
    from thirtyone_env.envs.vector import ThirtyOneVectorEnv

    shared = agents.make("ppo")
    vec = ThirtyOneVectorEnv(8, 4, "blitz31", opponents=[shared, "greedy", "greedy"], seat=0)
    assert vec.compiled and shared.path == str(three_zoo / "b4.zip")
    vec.reset(seed=0)
    for _ in range(30):
        vec.step(vec.action_masks().argmax(axis=1))
    made = ThirtyOneVectorEnv(4, 3, "cut_throat", opponents=lambda: [agents.make("ppo"), GreedyPolicy()])
    made.reset(seed=0)
    made.step(made.action_masks().argmax(axis=1))
    with pytest.raises(ValueError, match="no zoo model for 3 players with rules 'pagat'"):
        ThirtyOneVectorEnv(4, 3, "pagat", opponents=agents.make("ppo"))
