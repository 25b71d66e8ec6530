"""The Ray backend on a real local cluster: two nodes of one CPU each on this machine
(``ray.cluster_utils.Cluster``, every node on 127.0.0.1), started once for the module.
Results equal those of one local process, byte for byte, even when a node is removed
while the tournament runs; players' files reach the workers by content; train.py's
collection and evaluations run there too."""

import os
import shutil
import threading
import time
from pathlib import Path

import pytest

# Every Ray address stays on the loopback interface (Ray otherwise advertises the
# machine's outward address); read by Ray when it is first imported.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
ray = pytest.importorskip("ray")
from conftest import takes_history  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

import agents  # noqa: E402
from agents.portable import CACHE_ENV, PortableReader  # noqa: E402
from thirtyone_env.harness.evaluation import TournamentConfig, run_tournament  # noqa: E402
from thirtyone_env.harness.parallel import Backend, ordered_map  # noqa: E402
from thirtyone_env.research.config import StudyConfig  # noqa: E402
from thirtyone_env.research.study import run_jobs  # noqa: E402
from training.collection import demonstrations  # noqa: E402
from training.config import TrainConfig  # noqa: E402
from training.evaluations import evaluate_all  # noqa: E402

NODE = {"num_cpus": 1, "node_ip_address": "127.0.0.1", "include_dashboard": False}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    # where the workers write the files that travel to them (they inherit it)
    os.environ[CACHE_ENV] = str(tmp_path_factory.mktemp("carried"))
    c = Cluster(initialize_head=True, head_node_args=NODE)
    c.add_node(**{k: v for k, v in NODE.items() if k != "include_dashboard"})
    c.wait_for_nodes()
    ray.init(address=c.address, log_to_driver=False)
    yield c
    ray.shutdown()
    c.shutdown()


def rows(games):
    return [(g.deal, g.rotation, g.seats, g.places, g.wins, g.rounds, g.rows) for g in games]


def test_ordered_map_keeps_the_task_order_on_both_backends(cluster):
    tasks = [(-1) ** k * k for k in range(40)]  # abs: importable on every worker
    expected = [abs(x) for x in tasks]
    assert list(ordered_map(abs, tasks, Backend("ray", 3))) == expected
    assert list(ordered_map(abs, tasks, Backend("local", 2))) == expected


def test_a_tournament_on_two_ray_nodes_equals_one_local_process(cluster):
    config = TournamentConfig(("expert", "greedy", "blitz31", "random"), 96, "standard", 3, 1)
    local = run_tournament(config, agents.from_spec, chunk=2)
    on_ray = run_tournament(config, agents.from_spec, chunk=2, backend=Backend("ray", 0))
    assert rows(on_ray) == rows(local)


def test_a_research_study_on_ray_equals_one_local_process(cluster):
    config = StudyConfig(question="knock", decisions=250, rollouts=4, seed=2)
    assert run_jobs(config, agents.from_spec, backend=Backend("ray", 0)) == run_jobs(config, agents.from_spec)


def test_a_node_lost_mid_run_costs_nothing(cluster):
    """A worker node is removed while the tournament runs: its tasks run again on the
    head node, and the games are exactly those of one local process (none lost, none
    counted twice)."""
    config = TournamentConfig(("expert", "expert", "greedy", "greedy"), 160, "standard", 5, 1)
    local = run_tournament(config, agents.from_spec, chunk=1)
    extra = cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1")
    cluster.wait_for_nodes()
    done = []

    def remove_soon():
        while len(done) < 8:
            time.sleep(0.05)
        cluster.remove_node(extra)

    killer = threading.Thread(target=remove_soon)
    killer.start()
    on_ray = run_tournament(
        config, agents.from_spec, chunk=1, backend=Backend("ray", 0), progress=done.append
    )
    killer.join()
    assert rows(on_ray) == rows(local)
    assert sum(done) == config.total_games


ZOO_4P = Path(__file__).resolve().parents[1] / "agents" / "models" / "ppo_standard_4p-v5.zip"
BOT = """
import numpy as np


class Last:
    obs_encoding = "view"

    def act(self, view, action_mask):
        return int(np.flatnonzero(action_mask)[-1])
"""


def own_files(folder: Path) -> tuple[Path, Path]:
    """A model and a player file of this test's own, in ``folder``."""
    folder.mkdir()
    shutil.copy(ZOO_4P, folder / "mine.zip")
    (folder / "last.py").write_text(BOT)
    return folder / "mine.zip", folder / "last.py"


def test_players_reach_the_workers_by_content(cluster, tmp_path):
    """The model and player files are removed before the tournament goes to Ray: the
    workers build the players from the bytes the reader carries."""
    model, bot = own_files(tmp_path / "mine")
    players = (f"ppo:path={model}", f"{bot}:Last", "expert", "greedy")
    config = TournamentConfig(players, 24, "standard", 6, 1)
    local = run_tournament(config, agents.from_spec, chunk=1)
    carried = PortableReader(players)
    shutil.rmtree(tmp_path / "mine")
    on_ray = run_tournament(config, carried, chunk=1, backend=Backend("ray", 0))
    assert rows(on_ray) == rows(local)
    placed = {p.name for p in Path(os.environ[CACHE_ENV]).rglob("*.*")}
    assert {"mine.zip", "last.py"} <= placed


def test_training_collection_and_evaluations_on_ray_equal_local(cluster, tmp_path):
    """train.py's warm-start collection (two jobs; a carried model among the
    opponents, a carried player file as the teacher) and its evaluations give the
    same data on Ray as in local processes."""
    model, bot = own_files(tmp_path / "mine")
    base = dict(
        runs_dir=str(tmp_path / "runs"),
        imitate=f"{bot}:Last",
        imitate_decisions=5_500,
        opponents=f"ppo:path={model},greedy",
        eval_opponents=f"greedy,{bot}:Last",
        eval_games=24,
        n_envs=2,
        opponent_history=takes_history(model),  # the learner evaluated is that model
    )
    local = demonstrations(TrainConfig(**base, workers=2))
    on_ray = demonstrations(TrainConfig(**base, cluster="ray"))
    assert len(on_ray) == len(local) == 5_500
    for name, array in local.arrays().items():
        assert (on_ray.arrays()[name] == array).all(), name
    config = TrainConfig(**base)
    here = evaluate_all(model, config, [3, 4])
    there = evaluate_all(model, TrainConfig(**base, cluster="ray"), [3, 4])
    assert here == there
    assert [r["opponent"] for r in there] == ["greedy", f"{bot}:Last"]
    assert all(r["games"] == 24 for r in there)
