"""train.py end to end on tiny budgets: run folder, evaluation CSV, self-play, resume,
Ctrl-C, error paths; the learned player at a table."""

import ast
import csv
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import takes_history
from train_helpers import ROOT, TINY, WARM, run_train

import agents
from agents.ppo import SHIPPED_MODEL, NumpyPolicy, PPOPlayer, load_policy
from thirtyone_env import ThirtyOneEnv
from training import collection
from training.config import TrainConfig
from training.league import LeagueSeat, SnapshotPlayer


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """One tiny self-play run with an imitation warm start, then resumed further."""
    runs = tmp_path_factory.mktemp("runs")
    args = [
        "--run-name", "tiny", "--runs-dir", str(runs), *TINY, "--self-play", "0.5",
        "--snapshot-every", "128", "--pool-size", "2", *WARM,
    ]  # fmt: skip
    first = run_train(*args)
    assert first.returncode == 0, first.stderr
    run_dir = runs / "tiny"
    before = {p.name for p in (run_dir / "checkpoints").iterdir()}
    rows_before = list(csv.DictReader((run_dir / "evaluations.csv").open()))
    resumed = run_train("--resume", str(run_dir), "--total-timesteps", "1024")
    assert resumed.returncode == 0, resumed.stderr
    return run_dir, first, resumed, before, rows_before


def test_run_folder_holds_everything(tiny_run):
    run_dir, first, _, before, rows = tiny_run
    config = json.loads((run_dir / "config.json").read_text())
    assert config["self_play"] == 0.5 and config["opponents"] == "greedy,random"
    versions = json.loads((run_dir / "versions.json").read_text())
    assert {"numpy", "gymnasium", "stable_baselines3", "sb3_contrib", "torch"} <= set(versions)
    assert any(p.name.startswith("events.out.tfevents") for p in (run_dir / "logs").iterdir())
    assert (run_dir / "logs" / "progress.csv").stat().st_size > 0
    assert before == {"ckpt_000000000256.zip", "ckpt_000000000512.zip"}
    # evaluations at 0 (after the warm start), 256 and 512 steps, with intervals
    assert [int(r["timesteps"]) for r in rows] == [0, 256, 512]
    for r in rows:
        assert r["opponent"] == "greedy" and int(r["games"]) == 8
        assert float(r["win_low"]) <= float(r["win_rate"]) <= float(r["win_high"])
        assert float(r["lives_lost_per_round"]) >= 0
    assert "imitation of greedy: 300 decisions" in first.stdout
    assert "eval @ 256 vs 3x greedy" in first.stdout
    assert "steps/s" in first.stdout
    assert (run_dir / "best_model.zip").exists() and (run_dir / "final_model.zip").exists()
    # the self-play pool keeps the newest pool_size snapshots
    assert len(list((run_dir / "pool").glob("snap_*.npz"))) == 2


def test_resume_goes_on_counting(tiny_run):
    run_dir, _, resumed, before, _ = tiny_run
    after = {p.name for p in (run_dir / "checkpoints").iterdir()}
    assert after - before == {"ckpt_000000000768.zip", "ckpt_000000001024.zip"}
    rows = list(csv.DictReader((run_dir / "evaluations.csv").open()))
    assert [int(r["timesteps"]) for r in rows] == [0, 256, 512, 768, 1024]
    assert json.loads((run_dir / "config.json").read_text())["total_timesteps"] == 1024
    steps = [
        int(float(r["time/total_timesteps"])) for r in csv.DictReader((run_dir / "logs/progress.csv").open())
    ]
    assert steps[-1] == 1024
    # the earlier part of the log is kept beside it
    earlier = run_dir / "logs" / "progress_to_000000000512.csv"
    assert [int(float(r["time/total_timesteps"])) for r in csv.DictReader(earlier.open())][-1] == 512
    assert "imitation" not in resumed.stdout  # the warm start is for fresh runs only


def test_learned_player_never_plays_illegal(tiny_run):
    run_dir = tiny_run[0]
    for deterministic in (True, False):
        player = agents.from_spec(f"ppo:path={run_dir / 'final_model.zip'},deterministic={deterministic}")
        env = ThirtyOneEnv(opponents=player, illegal_action="raise")
        obs, info = env.reset(seed=3)
        rng = np.random.default_rng(0)
        for _ in range(1000):
            mask = info["action_mask"]
            a = player.act(obs, mask)
            assert mask[a]
            obs, _, term, _, info = env.step(
                int(rng.choice(np.flatnonzero(mask))) if rng.random() < 0.5 else a
            )
            if term:
                obs, info = env.reset()


def test_numpy_policy_matches_sb3(tiny_run):
    import torch
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(tiny_run[0] / "final_model.zip", device="cpu")
    fast = NumpyPolicy.from_sb3(model.policy)
    player = PPOPlayer(str(tiny_run[0] / "final_model.zip"))
    env = ThirtyOneEnv()
    obs, info = env.reset(seed=0)
    for _ in range(200):
        mask = info["action_mask"].astype(bool)
        ref, _ = model.predict(obs, action_masks=mask, deterministic=True)
        assert player.act(obs, mask) == int(ref)
        with torch.no_grad():
            dist = model.policy.get_distribution(model.policy.obs_to_tensor(obs)[0])
            probs = dist.distribution.probs[0].numpy()
        z = fast.logits(obs)
        p = np.exp(z - z.max())
        np.testing.assert_allclose(p / p.sum(), probs, rtol=1e-4, atol=1e-6)
        obs, _, term, _, info = env.step(int(ref))
        if term:
            obs, info = env.reset()


def test_snapshot_round_trip_and_league(tmp_path, tiny_run):
    policy = load_policy(tiny_run[0] / "final_model.zip")
    policy.save(tmp_path / "snap_000000000001.npz")
    again = load_policy(tmp_path / "snap_000000000001.npz")
    x = np.random.default_rng(0).random(policy.input_size).astype(np.float32)
    np.testing.assert_array_equal(policy.logits(x), again.logits(x))
    seat = LeagueSeat(["greedy"], str(tmp_path), self_play=1.0)
    seat.reset(np.random.default_rng(0))
    assert isinstance(seat.current, SnapshotPlayer) and seat.obs_encoding == "flat"
    seat = LeagueSeat(["greedy"], str(tmp_path), self_play=0.0)
    seat.reset(np.random.default_rng(0))
    assert type(seat.current).__name__ == "GreedyPolicy" and seat.obs_encoding == "view"
    # a mixed league draws both, reproducibly from the generator
    seat = LeagueSeat(["greedy"], str(tmp_path), self_play=0.5)
    draws = []
    rng = np.random.default_rng(1)
    for _ in range(40):
        seat.reset(rng)
        draws.append(type(seat.current).__name__)
    assert {"GreedyPolicy", "SnapshotPlayer"} == set(draws)
    rng = np.random.default_rng(1)
    replay = []
    for _ in range(40):
        seat.reset(rng)
        replay.append(type(seat.current).__name__)
    assert replay == draws


def test_model_file_errors_name_the_path(tmp_path):
    with pytest.raises(ValueError, match="model file not found: .*nothere.zip"):
        PPOPlayer(str(tmp_path / "nothere.zip"))
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"this is not a model")
    with pytest.raises(ValueError, match="cannot load model .*bad.zip"):
        agents.from_spec(f"ppo:path={bad}")


def test_wrong_table_size_is_named(tiny_run):
    player = PPOPlayer(str(tiny_run[0] / "final_model.zip"))
    env = ThirtyOneEnv(num_players=3)
    obs, info = env.reset(seed=0)
    with pytest.raises(ValueError, match="another table size"):
        player.act(obs, info["action_mask"])


@pytest.mark.parametrize(
    "args, message",
    [
        (["--opponents", "nobody"], "unknown player 'nobody'"),
        (["--opponents", "greedy:knock_at=x"], "knock_at"),
        (["--rules", "nope"], "nope"),
        (["--players", "12"], "players"),
        (["--seat", "7"], "seat"),
        (["--net-arch", "wide"], "net_arch"),
        (["--self-play", "1.5"], "self_play"),
        (["--resume", "no/such/run"], "no/such/run"),
    ],
)
def test_bad_input_exits_2_with_a_message(args, message, tmp_path):
    r = run_train("--runs-dir", str(tmp_path), *args, timeout=120)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr
    assert "Traceback" not in r.stderr


def test_unknown_option_exits_2():
    r = run_train("--bogus-option", "3", timeout=120)
    assert r.returncode == 2 and "--bogus-option" in r.stderr


def test_resume_refuses_other_config_and_corrupt_checkpoint(tiny_run, tmp_path):
    run_dir = tiny_run[0]
    r = run_train("--resume", str(run_dir), "--seed", "9", timeout=120)
    assert r.returncode == 2 and "another config" in r.stderr and "seed" in r.stderr
    r = run_train("--run-name", "tiny", "--runs-dir", str(run_dir.parent), *TINY, timeout=120)
    assert r.returncode == 2 and "exists" in r.stderr
    # a damaged last checkpoint (copy the run so the other tests keep theirs)
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(run_dir, copy)
    last = sorted((copy / "checkpoints").glob("ckpt_*.zip"))[-1]
    last.write_bytes(last.read_bytes()[:100])
    r = run_train("--resume", str(copy), "--total-timesteps", "4096", timeout=120)
    assert r.returncode == 2, r.stderr
    assert "cannot load checkpoint" in r.stderr and last.name in r.stderr and "Traceback" not in r.stderr


def interrupted_run(tmp_path, name, stop):
    """Start a long tiny run, wait for its first log line, stop it with ``stop(proc)``."""
    args = [
        "--run-name", name, "--runs-dir", str(tmp_path), *TINY, "--total-timesteps", "10000000",
        "--eval-every", "0", "--checkpoint-every", "1000000",
    ]  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "training.run_cli", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    progress = tmp_path / name / "logs" / "progress.csv"
    deadline = time.time() + 120
    while time.time() < deadline and not (progress.exists() and progress.stat().st_size > 0):
        time.sleep(0.5)
    stop(proc)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err, list((tmp_path / name / "checkpoints").glob("ckpt_*.zip"))


def test_ctrl_c_saves_a_checkpoint(tmp_path):
    code, err, saved = interrupted_run(tmp_path, "cc", lambda p: os.kill(p.pid, signal.SIGINT))
    assert code == 130, err
    assert len(saved) == 1 and "checkpoint saved" in err
    assert f"go on with: python -m training.run_cli --resume {tmp_path / 'cc'}" in err
    assert int(saved[0].stem.split("_")[1]) >= 256


def test_shipped_agent_loads_by_name_and_plays_legally():
    player = agents.make("ppo")
    env = ThirtyOneEnv(
        opponents=[agents.make("expert"), agents.make("greedy"), player],
        illegal_action="raise",
        opponent_history=takes_history(SHIPPED_MODEL),
    )
    obs, info = env.reset(seed=5)
    for _ in range(300):
        a = player.act(obs, info["action_mask"])
        assert info["action_mask"][a]
        obs, _, term, _, info = env.step(a)
        if term:
            obs, info = env.reset()


def test_sigterm_saves_a_checkpoint_too(tmp_path):
    code, err, saved = interrupted_run(tmp_path, "tt", lambda p: p.terminate())
    assert code == 130, err
    assert len(saved) == 1


def test_train_runs_on_a_table_variant(tmp_path):
    r = run_train(
        "--run-name", "sw", "--runs-dir", str(tmp_path), *TINY, "--rules", "switch", "--players", "3",
        "--total-timesteps", "256", "--eval-every", "256", "--eval-games", "3",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    player = PPOPlayer(str(tmp_path / "sw" / "final_model.zip"))
    assert player.policy.num_actions == ThirtyOneEnv(num_players=3, rules="switch").action_space.n


def test_a_model_at_the_wrong_table_is_refused_before_play():
    r = subprocess.run(
        [sys.executable, str(ROOT / "evaluate.py"), "--players", f"ppo:path={SHIPPED_MODEL}", "expert", "expert", "--games", "3"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert r.returncode == 2 and "trained for another table" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "apps.play", "--opponents", "ppo", "expert", "expert"],
        input="", capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0  # four players: the shipped agent fits
    r = subprocess.run(
        [sys.executable, "-m", "apps.play", "--opponents", f"ppo:path={SHIPPED_MODEL}", "expert", "expert", "--rules", "switch"],
        input="", capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert r.returncode == 2 and "trained for another table" in r.stderr


def test_demonstrations_are_the_same_on_any_worker_count(tmp_path, monkeypatch):
    """Fixed-size collection jobs with their own child seeds: one process or two
    give the same teacher decisions, in the same order."""
    monkeypatch.setattr(collection, "IMITATION_CHUNK", 400)
    base = dict(runs_dir=str(tmp_path), imitate="greedy", imitate_decisions=1000, opponents="greedy,random")
    one = collection.demonstrations(TrainConfig(**base, n_envs=1, vec_env="dummy"))
    two = collection.demonstrations(TrainConfig(**base, n_envs=2, vec_env="subproc"))
    assert len(one) == 1000
    for field in ("obs", "masks", "actions", "returns"):
        assert np.array_equal(getattr(one, field), getattr(two, field))
    assert len(set(one.actions.tolist())) > 3  # draws, knocks and discards, not one move


def test_train_runs_on_the_batched_env(tmp_path):
    """``--vec batched``: the compiled env under MaskablePPO, same run folder."""
    args = list(TINY)
    i = args.index("--vec-env")
    args[i : i + 2] = ["--vec", "batched"]
    args[args.index("--opponents") + 1] = "greedy"
    done = run_train("--run-name", "vb", "--runs-dir", str(tmp_path), *args, "--n-envs", "16")
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader((tmp_path / "vb" / "evaluations.csv").open()))
    assert [int(r["timesteps"]) for r in rows][0] == 0 and len(rows) >= 2
    assert (tmp_path / "vb" / "final_model.zip").exists()


def test_a_run_on_the_dict_encoding_is_evaluated_and_its_model_played(tmp_path):
    """``--obs-encoding dict`` (``MultiInputPolicy``): its evaluations play the policy on
    the flat encoding (the same network), and evaluate.py plays its best model."""
    args = list(TINY)
    args[args.index("--opponents") + 1] = "greedy"
    done = run_train("--run-name", "d", "--runs-dir", str(tmp_path), *args, "--obs-encoding", "dict")
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader((tmp_path / "d" / "evaluations.csv").open()))
    assert [int(r["timesteps"]) for r in rows][0] == 0 and len(rows) >= 2
    model = tmp_path / "d" / "best_model.zip"
    played = subprocess.run(
        [sys.executable, "evaluate.py", "--players", f"ppo:path={model}", "greedy", "greedy", "greedy",
         "--games", "4", "--out", str(tmp_path / "ev")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    assert (tmp_path / "ev" / "results.json").exists()


def test_the_demonstrations_are_kept_in_the_run_folder(tiny_run):
    """The imitation data is saved (so other losses can be tried without collecting
    again): every teacher action is legal under its recorded mask."""
    run_dir = tiny_run[0]
    with np.load(run_dir / "demonstrations.npz") as demos:
        actions, masks = demos["actions"], demos["masks"]
        assert len(actions) == 300 and demos["obs"].shape[0] == 300
        assert masks[np.arange(300), actions].all()


def test_knock_weight_must_be_positive(tmp_path):
    done = run_train("--run-name", "kw", "--runs-dir", str(tmp_path), *TINY, "--imitate-knock-weight", "0")
    assert done.returncode == 2 and "imitate_knock_weight=0.0 must be positive" in done.stderr


def test_imitation_can_refit_saved_demonstrations(tiny_run, tmp_path):
    """``--imitate-from`` fits an earlier run's demonstrations (no collection); a
    damaged file is named."""
    source = tiny_run[0] / "demonstrations.npz"
    args = [*TINY, "--imitate", "greedy", "--imitate-epochs", "1", "--imitate-knock-weight", "3"]
    done = run_train("--run-name", "refit", "--runs-dir", str(tmp_path), *args, "--imitate-from", str(source))
    assert done.returncode == 0, done.stderr
    with np.load(source) as a, np.load(tmp_path / "refit" / "demonstrations.npz") as b:
        assert np.array_equal(a["actions"], b["actions"])
        n_rows = len(a["actions"])
    steps = json.loads((tmp_path / "refit" / "steps.json").read_text())  # what the fit reported, kept
    assert list(steps) == ["imitation"] and steps["imitation"]["decisions"] == n_rows
    assert 0 <= steps["imitation"]["accuracy"] <= 1 and steps["imitation"]["seconds"] >= 0
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    done = run_train("--run-name", "refit2", "--runs-dir", str(tmp_path), *args, "--imitate-from", str(bad))
    assert done.returncode == 2 and f"cannot read demonstrations {bad}" in done.stderr


def test_measured_knocks_and_dagger_behaviour_from_the_command_line(tiny_run, tmp_path):
    """``--imitate-knock-rollouts`` measures the knocks (here by the chance to win, in
    lives at the start) and keeps the gains with the demonstrations;
    ``--imitate-behaviour`` names the player that moves; two saved files (one measured
    in lives, one by the win objective) are fitted together."""
    from training.imitation import Demonstrations

    args = [*TINY, "--imitate", "expert", "--imitate-epochs", "1", "--imitate-decisions", "300"]
    done = run_train(
        "--run-name", "dagger", "--runs-dir", str(tmp_path), *args, "--imitate-behaviour", "greedy",
        "--imitate-knock-rollouts", "2", "--imitate-knock-objective", "win",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    demos = Demonstrations.load(tmp_path / "dagger" / "demonstrations.npz")
    assert len(demos) == 300 and np.isfinite(demos.knock_gain).any()
    assert demos.meta["objective"] == "win" and demos.meta["knock_rollouts"] == 2
    both = f"{tmp_path / 'dagger' / 'demonstrations.npz'},{tiny_run[0] / 'demonstrations.npz'}"
    done = run_train("--run-name", "both", "--runs-dir", str(tmp_path), *args, "--imitate-from", both)
    assert done.returncode == 0, done.stderr
    assert "imitation of expert: 600 decisions" in done.stdout


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--imitate-knock-rollouts", "2"], "need --imitate"),
        (["--imitate", "expert", "--imitate-knock-rollouts", "-1"], "imitate_knock_rollouts=-1 must be 0"),
        (["--imitate", "expert", "--imitate-behaviour", "nobody"], "unknown player 'nobody'"),
        (["--imitate", "expert", "--imitate-continuation", "behaviour"], "needs --imitate-behaviour"),
        (["--imitate", "expert", "--imitate-continuation", "me"], "imitate_continuation='me' is not allowed"),
        (
            ["--imitate", "expert", "--imitate-knock-objective", "wins"],
            "imitate_knock_objective='wins' is not",
        ),
        (["--imitate", "expert", "--imitate-knock-objective", "win"], "needs --imitate-knock-rollouts"),
        (
            [
                "--imitate",
                "expert",
                "--imitate-knock-rollouts",
                "2",
                "--imitate-knock-objective",
                "win",
                "--rules",
                "no_elimination",
            ],
            "the 'win' objective values lives games; these rules score 'points'",
        ),
    ],
)
def test_imitation_options_are_checked(tmp_path, extra, message):
    done = run_train("--run-name", "bad", "--runs-dir", str(tmp_path), *TINY, *extra)
    assert done.returncode == 2 and message in done.stderr, done.stderr


# -- the training package ----------------------------------------------------------


def test_every_option_is_a_config_field_with_its_own_help():
    """``--help`` is built from each ``TrainConfig`` field's metadata (no reading of
    source code): every field has help text, shown with its default under its flag."""
    from training.run_cli import build_parser

    fields = dataclasses.fields(TrainConfig)
    options = {a.dest: a for a in build_parser()._actions}
    assert {f.name for f in fields} <= set(options)  # every field is an option
    for f in fields:
        assert f.metadata["help"], f.name
        assert options[f.name].help == f"{f.metadata['help']} (default: {f.default})"
        assert "--" + f.name.replace("_", "-") in options[f.name].option_strings
    assert options["vec_env"].option_strings == ["--vec-env", "--vec"]


def test_train_py_is_a_thin_script_over_the_package():
    """train.py defines nothing: its docstring and ``main`` of ``training.cli``, the
    recipe command, whose ``--help`` lists at most 25 options; every option of a
    single run is in ``python -m training.run_cli --help``."""
    tree = ast.parse((ROOT / "train.py").read_text())
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef | ast.Assign)]
    assert any(isinstance(n, ast.ImportFrom) and n.module == "training.cli" for n in tree.body)
    r = subprocess.run(
        [sys.executable, str(ROOT / "train.py"), "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert r.returncode == 0 and r.stdout.startswith("usage: train.py ")
    from training.cli import build_parser as recipe_parser

    flags = [a for a in recipe_parser()._actions if a.option_strings]
    assert len(flags) <= 25, [a.option_strings for a in flags]
    r = run_train("--help", timeout=120)
    assert r.returncode == 0 and r.stdout.startswith("usage: python -m training.run_cli ")
    text = " ".join(r.stdout.split())
    for f in dataclasses.fields(TrainConfig):
        assert " ".join(f.metadata["help"].split()) in text, f.name


def test_one_seeding_scheme_derives_every_seed_of_a_run():
    """Every seed of a run derives from its ``seed`` by the rules the shipped model
    was trained under (pinned: changing one changes what a seed trains). Collection
    seeds are the children of ``SeedSequence(seed)``: the first jobs' seeds do not
    depend on how many jobs there are (an interrupted collection goes on with them)."""
    seeds = TrainConfig(seed=7).seeds
    assert (seeds.learner, seeds.envs) == (7, 7)
    assert [seeds.evaluation(k) for k in range(3)] == [1007, 1008, 1009]
    assert seeds.collection(3) == [1201125462, 3618983171, 3831650445]
    assert seeds.collection(2) == seeds.collection(3)[:2]
    config = TrainConfig(seed=7, imitate="greedy", imitate_decisions=2 * collection.IMITATION_CHUNK + 1)
    jobs = collection.collection_jobs(config)
    assert [(seed, size) for _, seed, size in jobs] == list(
        zip(seeds.collection(3), [collection.IMITATION_CHUNK] * 2 + [1], strict=True)
    )


def test_a_model_is_refused_at_a_table_of_other_rules_with_both_named(tmp_path):
    """A 3-player cut_throat model has the observation size of a 3-player pagat table:
    it used to play there silently. Its description (and its run's config.json) say
    what it was trained for; a copy outside the run folder still knows."""
    import shutil

    from thirtyone_env.game.rules import Rules

    runs = tmp_path / "runs"
    r = run_train(
        "--run-name", "ct", "--runs-dir", str(runs), *TINY, "--rules", "cut_throat", "--players", "3",
        "--eval-every", "0",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    copy = tmp_path / "elsewhere.zip"
    shutil.copy(runs / "ct" / "final_model.zip", copy)
    for path in (
        runs / "ct" / "final_model.zip",
        copy,
        runs / "ct" / "checkpoints" / "ckpt_000000000512.zip",
    ):
        player = PPOPlayer(str(path))
        player.check_table(3, Rules.preset("cut_throat"))  # its own table
        with pytest.raises(
            ValueError,
            match="trained for 3 players with rules 'cut_throat'; this table has 3 players with rules 'pagat'",
        ):
            player.check_table(3, Rules.preset("pagat"))
    out = subprocess.run(
        [sys.executable, str(ROOT / "evaluate.py"), "--players", f"ppo:path={copy}", "greedy", "greedy",
         "--rules", "pagat", "--games", "3", "--out", str(tmp_path / "res"), "--no-progress"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert out.returncode == 2 and "rules 'cut_throat'" in out.stderr and "rules 'pagat'" in out.stderr
