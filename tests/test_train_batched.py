"""Training and its evaluation on the batched env: --vec auto takes it for any
opponents the rules allow, league seats share the players they stand for, and the
batched evaluation counts exactly the games the single env plays."""

import csv
from pathlib import Path

import numpy as np
from conftest import takes_history
from train_helpers import TINY, run_train

from agents.ppo import SHIPPED_MODEL, PPOPlayer
from thirtyone_env.envs.env import ThirtyOneEnv
from thirtyone_env.game.policies import GreedyPolicy
from training.config import TrainConfig
from training.envs import make_vec
from training.evaluations import evaluate_batched


def test_vec_auto_is_batched_wherever_the_kernels_play_the_rules(tmp_path):
    def vec(**kw):
        return TrainConfig(runs_dir=str(tmp_path), **kw).vec

    assert vec(opponents="expert,expert,greedy,blitz31") == "batched"
    assert vec(opponents="expert", self_play=0.5) == "batched"
    assert vec(opponents="ppo", rules="cut_throat", players=3) == "batched"
    assert vec(opponents="expert", rules="switch") == "subproc"  # a table variant
    assert vec(opponents="expert", obs_encoding="dict") == "subproc"


def test_league_seats_share_their_players_so_each_is_asked_for_many_games(tmp_path):
    config = TrainConfig(runs_dir=str(tmp_path), opponents="expert,blitz31,greedy", n_envs=32, vec_env="auto")
    venv = make_vec(config)
    venv.reset()
    games = venv.venv.venv.games  # VecMonitor -> SB3 wrapper -> ThirtyOneVectorEnv
    names = sorted(type(p).__name__ for p in games.external)
    assert names == [
        "Blitz31Player",
        "ExpertPlayer",
    ]  # one each for 32 games x 3 seats; greedy in the kernels
    kinds = games.opp_kind
    assert (kinds == 0).any() and (kinds == 2).any()  # greedy seats compiled, the others external
    for _ in range(50):
        venv.step(np.array([np.flatnonzero(m)[0] for m in venv.env_method("action_masks")]))


def test_a_tiny_run_against_the_expert_and_its_own_snapshots_trains_batched(tmp_path):
    args = list(TINY)
    args[args.index("--opponents") + 1] = "expert,blitz31"
    args[args.index("--vec-env") + 1] = "auto"
    args[args.index("--eval-opponents") + 1] = "expert"
    done = run_train(
        "--run-name", "lb", "--runs-dir", str(tmp_path), *args, "--n-envs", "8", "--self-play", "0.5",
        "--snapshot-every", "128",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "batched env" in done.stdout
    rows = list(csv.DictReader((tmp_path / "lb" / "evaluations.csv").open()))
    assert len(rows) >= 2 and all(int(r["games"]) == 8 for r in rows)
    assert list((tmp_path / "lb" / "pool").glob("*.npz"))


def test_batched_evaluation_counts_the_single_env_games(tmp_path):
    """Game ``j`` seeded ``seed + j`` on the batched env is the single env's game: the
    same wins (shared ones 1/k) and lives lost per round, counted once, to the end."""
    history = takes_history(SHIPPED_MODEL)
    config = TrainConfig(runs_dir=str(tmp_path), opponent_history=history)
    games, seed = 24, 5
    row = evaluate_batched(Path(SHIPPED_MODEL), config, "greedy", games, seed)
    learner = PPOPlayer(str(SHIPPED_MODEL))
    won, lost, rounds = [], 0, 0
    for j in range(games):
        env = ThirtyOneEnv(4, "standard", [GreedyPolicy() for _ in range(3)], opponent_history=history)
        obs, info = env.reset(seed=seed + j)
        results = list(info.get("skipped_rounds", []))
        done = False
        while not done:
            obs, _, done, _, info = env.step(learner.act(obs, info["action_mask"]))
            results += info.get("round_results", [])
        me, s = env.seat, env.state
        winners = s.winners if s.active[me] else ()
        won.append(1 / len(winners) if me in winners else 0.0)
        lost += sum(r.losses[me] for r in results)
        rounds += len(results)
    assert row["games"] == games
    assert row["win_rate"] == np.mean(won)
    assert row["lives_lost_per_round"] == lost / rounds
