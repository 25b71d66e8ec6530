"""train.py's other warm start: ``--init-from`` (PPO from a saved model's networks, read
without unpickling, anchored to it with ``--kl-coef``)."""

import json
import math

import numpy as np
import pytest
from train_helpers import TINY, run_train

from agents.ppo import PPOPlayer, load_policy, policy_from_zip
from thirtyone_env.game.encoding import HISTORY_FEATURES, ObsLayout


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A tiny run whose final model the runs below start from."""
    runs = tmp_path_factory.mktemp("runs")
    done = run_train("--run-name", "src", "--runs-dir", str(runs), *TINY, "--total-timesteps", "256")
    assert done.returncode == 0, done.stderr
    return runs / "src" / "final_model.zip"


def test_a_run_starts_from_the_models_networks_and_is_anchored_to_them(source, tmp_path):
    done = run_train(
        "--run-name", "init", "--runs-dir", str(tmp_path), *TINY, "--init-from", str(source),
        "--kl-coef", "0.1",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    anchor = load_policy(tmp_path / "init" / "anchor_policy.npz")  # the policy PPO started from
    start = policy_from_zip(source.read_bytes())
    obs = np.random.default_rng(0).random((64, start.layers[0][0].shape[0]), dtype=np.float32)
    assert np.allclose(anchor.logits(obs), start.logits(obs), atol=1e-5)
    config = (tmp_path / "init" / "config.json").read_text()
    assert str(source) in config


def test_the_improvement_step_measures_the_models_moves_and_anchors_to_the_improved_policy(source, tmp_path):
    """``--improve-decisions``: the model's decisions at the run's tables with every
    legal move measured, saved in the run folder; its actor fitted to them, and PPO
    anchored to the improved policy, not the one it started from."""
    from training.imitation import Demonstrations

    done = run_train(
        "--run-name", "imp", "--runs-dir", str(tmp_path), *TINY, "--init-from", str(source),
        "--kl-coef", "0.1", "--improve-decisions", "150", "--improve-rollouts", "1",
        "--improve-epochs", "3", "--improve-lr", "0.01",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "improvement step: 150 decisions" in done.stdout
    demos = Demonstrations.load(tmp_path / "imp" / "improvement.npz")
    assert len(demos) == 150 and (demos.move_actions >= 0).sum(axis=1).min() >= 2
    step = json.loads((tmp_path / "imp" / "steps.json").read_text())["improvement"]  # as printed, kept
    assert step["rows"] + step["held_out"] == 150 and step["held_out"] > 0 and 0 <= step["changed"] <= 1
    assert demos.meta["model"] == str(source) and demos.meta["rollouts"] == 1
    anchor = load_policy(tmp_path / "imp" / "anchor_policy.npz")
    start = policy_from_zip(source.read_bytes())
    obs = demos.obs.astype(np.float32)
    assert not np.allclose(anchor.logits(obs), start.logits(obs), atol=1e-3)


def test_the_heads_up_teacher_step_refits_the_model_and_anchors_to_the_refitted_policy(source, tmp_path):
    """``--heads-up-teacher``: the model's own decisions at the run's tables, labelled by
    the teacher where two are in and by the model elsewhere, saved in the run folder; the
    model refitted to them, and PPO anchored to the refitted policy."""
    from training.imitation import Demonstrations

    done = run_train(
        "--run-name", "hu", "--runs-dir", str(tmp_path), *TINY, "--init-from", str(source),
        "--kl-coef", "0.1", "--heads-up-teacher", "expert", "--heads-up-decisions", "400",
        "--heads-up-epochs", "2", "--heads-up-lr", "0.01",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "heads-up teacher step: 400 decisions" in done.stdout
    demos = Demonstrations.load(tmp_path / "hu" / "heads_up.npz")
    assert len(demos) == 400 and demos.meta["teacher"] == "expert" and demos.meta["model"] == str(source)
    start = policy_from_zip(source.read_bytes())
    obs = demos.obs.astype(np.float32)
    own = np.where(demos.masks, start.logits(obs), -np.inf).argmax(axis=1)
    two_in = obs[:, ObsLayout(4).slices["active"]].sum(axis=1) == 2
    assert 0 < two_in.sum() < len(demos)
    assert np.array_equal(demos.actions[~two_in], own[~two_in])  # the model's own moves
    assert (demos.actions[two_in] != own[two_in]).any()  # the teacher's
    step = json.loads((tmp_path / "hu" / "steps.json").read_text())["heads_up_teacher"]  # as printed, kept
    assert step["rows"] == 400 and step["heads_up"] == two_in.sum()
    assert step["differ"] == (demos.actions[two_in] != own[two_in]).sum()
    anchor = load_policy(tmp_path / "hu" / "anchor_policy.npz")
    assert not np.allclose(anchor.logits(obs), start.logits(obs), atol=1e-3)


def test_heads_up_others_keeps_every_heads_up_decision_and_a_share_of_the_rest(source, tmp_path):
    """``--heads-up-others``: a job plays the same games and keeps, of its decisions,
    every one taken heads-up and a drawn share of the others, labels unchanged; the
    share is part of the collection's meta (absent at 1: older files still match)."""
    import agents
    from training.config import TrainConfig
    from training.heads_up import _heads_up_chunk, heads_up_meta, heads_up_rows

    def job(others):
        config = TrainConfig(
            runs_dir=str(tmp_path), init_from=str(source), heads_up_teacher="expert", opponents="greedy",
            heads_up_others=others, n_envs=1, vec_env="dummy",
        )  # fmt: skip
        return config, _heads_up_chunk((config, 11, 1500, agents.from_spec, math.inf))

    full_config, full = job(1.0)
    part_config, part = job(0.25)
    two_in = heads_up_rows(full.obs, full_config)
    kept, j = [], 0  # where each kept row sits among all the job's rows (in order)
    for row in part.obs:
        while not np.array_equal(full.obs[j], row):
            j += 1
        kept.append(j)
        j += 1
    kept = np.array(kept)
    assert set(np.flatnonzero(two_in)) <= set(kept)  # every heads-up decision
    others = len(kept) - two_in.sum()
    assert 0.15 * (~two_in).sum() < others < 0.35 * (~two_in).sum()
    assert np.array_equal(part.actions, full.actions[kept]) and np.array_equal(part.masks, full.masks[kept])
    assert heads_up_meta(part_config)["others"] == 0.25 and "others" not in heads_up_meta(full_config)


def test_a_run_with_the_opponent_history_starts_from_a_model_without_it(source, tmp_path):
    """The model's input layers take the new inputs with zero weights: the run starts
    (and its anchor stays) where the model played, whatever the history says; the run's
    models then ask the table for the observation with the history."""
    done = run_train(
        "--run-name", "hist", "--runs-dir", str(tmp_path), *TINY, "--init-from", str(source),
        "--kl-coef", "0.1", "--opponent-history",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    start = policy_from_zip(source.read_bytes())
    width = start.input_size
    anchor = load_policy(tmp_path / "hist" / "anchor_policy.npz")
    assert anchor.input_size == width + 3 * HISTORY_FEATURES  # four players: three opponents
    obs = np.random.default_rng(0).random((64, anchor.input_size), dtype=np.float32)
    assert np.allclose(anchor.logits(obs), start.logits(obs[:, :width]), atol=1e-5)
    assert '"opponent_history": true' in (tmp_path / "hist" / "config.json").read_text()
    player = PPOPlayer(str(tmp_path / "hist" / "final_model.zip"))
    player.check_table(4, "standard")
    assert player.obs_encoding == "flat+history"
    player = PPOPlayer(str(source))
    player.check_table(4, "standard")
    assert player.obs_encoding == "flat"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--net-arch", "64,64"], "the model's hidden is [32, 32], this run's [64, 64]"),
        (["--players", "2"], "the model's table is players=4, this run's players=2 "),
        (["--imitate", "greedy"], "two warm starts"),
    ],
)
def test_a_model_that_does_not_fit_the_run_is_refused_before_the_run_folder(source, tmp_path, extra, message):
    args = ["--run-name", "bad", "--runs-dir", str(tmp_path), *TINY, "--init-from", str(source), *extra]
    done = run_train(*args)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "bad").exists()


def test_a_refusal_names_only_the_fields_of_the_table_that_differ():
    from training.models import differing

    theirs = {"players": 4, "rules": {"lives": 4, "table": "widow", "deck": "standard52"}}
    ours = {"players": 4, "rules": {"lives": 3, "table": "widow", "deck": "standard52"}}
    assert differing(theirs, ours) == ("rules.lives=4", "rules.lives=3")
    assert differing([32, 32], [64, 64]) == ("[32, 32]", "[64, 64]")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--init-from", "no/such/model.zip"], "init_from: cannot read no/such/model.zip"),
        (["--kl-coef", "0.1"], "it needs --imitate or --init-from"),
        (["--improve-decisions", "100"], "improve_decisions improves a trained model: it needs --init-from"),
        (["--heads-up-teacher", "expert"], "heads_up_teacher refits a trained model: it needs --init-from"),
        (["--heads-up-teacher", "nosuchplayer"], "nosuchplayer"),
        (["--heads-up-weight", "0"], "heads_up_weight=0.0 must be positive"),
        (["--heads-up-against", "greedy"], "heads_up_against narrows the heads-up teacher's labels"),
        (
            ["--heads-up-teacher", "expert", "--heads-up-against", "blitz31"],
            "['blitz31'], not among the run's",
        ),
        (["--heads-up-decisions", "0"], "heads_up_decisions=0 must be at least 1"),
        (["--heads-up-others", "1.5"], "heads_up_others=1.5 must be a share in (0, 1]"),
    ],
)
def test_bad_warm_start_options_exit_2(tmp_path, extra, message):
    done = run_train("--run-name", "bad", "--runs-dir", str(tmp_path), *TINY, *extra)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert not (tmp_path / "bad").exists()
