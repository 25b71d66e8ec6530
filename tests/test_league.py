"""The training league: PFSP draws, OpenSkill ratings, league.json; the KL anchor."""

import json

import numpy as np
import pytest
import torch as th
from train_helpers import TINY, run_train

from agents.ppo import NumpyPolicy
from training.config import TrainConfig
from training.league import LEARNER, League, LeagueSeat


def test_pfsp_draws_the_members_the_learner_beats_less_more_often():
    league = League(["greedy", "expert", "blitz31"], pfsp_power=2.0)
    for _ in range(200):
        league.record(["greedy"], 0.6)  # beaten often
        league.record(["expert"], 0.05)  # rarely beaten
        league.record(["blitz31"], 0.3)
    rng = np.random.default_rng(0)
    counts = {"greedy": 0, "expert": 0, "blitz31": 0}
    for _ in range(6000):
        counts[league.draw(rng)[0]] += 1
    assert counts["expert"] > counts["blitz31"] > counts["greedy"] > 0
    expected = {k: league.weight(k) for k in counts}
    total = sum(expected.values())
    for k in counts:  # the draw follows the weights
        assert abs(counts[k] / 6000 - expected[k] / total) < 0.03
    # the same generator, the same draws
    a = [league.draw(np.random.default_rng(5))[0] for _ in range(3)]
    b = [league.draw(np.random.default_rng(5))[0] for _ in range(3)]
    assert a == b


def test_without_pfsp_a_seat_draws_uniformly_and_remembers_the_last_member():
    league = League(["greedy", "random"])
    seat = LeagueSeat(league=league)
    rng = np.random.default_rng(1)
    seen = []
    for _ in range(400):
        seat.reset(rng)
        seen.append(seat.label)
        assert seat.delegate() is seat.current
    assert abs(seen.count("greedy") - 200) < 45
    seat.reset(rng)
    assert seat.previous == seen[-1]


def test_ratings_follow_the_places():
    league = League(["greedy", "expert", "blitz31"])
    for _ in range(30):  # the expert always first, then the learner, blitz31, greedy
        league.rate([None, "greedy", "expert", "blitz31"], [1, 3, 0, 2])
    order = [row["label"] for row in league.table()]
    assert order == ["expert", LEARNER, "blitz31", "greedy"]
    league.rate(["expert", "expert", None, "greedy"], [0, 1, 2, 3])  # one member in two seats: rated once


def test_a_league_run_writes_its_ratings_and_scores(tmp_path):
    args = list(TINY)
    args[args.index("--vec-env") + 1] = "auto"
    done = run_train(
        "--run-name", "lg", "--runs-dir", str(tmp_path), *args, "--n-envs", "16", "--league",
        "--league-population", "2", "--opponents", "greedy,expert", "--self-play", "0.3", "--snapshot-every", "128",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    members = json.loads((tmp_path / "lg" / "league.json").read_text())["members"]
    kinds = {m["kind"] for m in members}
    assert {"builtin", "population", "learner"} <= kinds
    assert all(m["games"] > 0 for m in members if m["kind"] != "learner")
    assert "league/learner_ordinal" in (tmp_path / "lg" / "logs" / "progress.csv").read_text()


def test_league_and_anchor_options_are_checked(tmp_path):
    with pytest.raises(ValueError, match="--league plays on the batched env"):
        TrainConfig(runs_dir=str(tmp_path), league=True, rules="switch")
    with pytest.raises(ValueError, match="needs --imitate or --init-from, and ent_coef > 0"):
        TrainConfig(runs_dir=str(tmp_path), kl_coef=0.1)
    with pytest.raises(ValueError, match="needs --imitate or --init-from, and ent_coef > 0"):
        TrainConfig(runs_dir=str(tmp_path), kl_coef=0.1, imitate="expert", ent_coef=0.0)


def anchored_batch():
    """A small anchored PPO policy on a 4-seat greedy table and one batch of 8 first
    positions: (policy, observations, masks, legal actions)."""
    from sb3_contrib import MaskablePPO

    from thirtyone_env.envs.vector import sb3_vec_env
    from training.anchor import AnchoredPolicy

    env = sb3_vec_env(8, 4, "standard", opponents="greedy")
    model = MaskablePPO(
        AnchoredPolicy, env, n_steps=16, batch_size=64, policy_kwargs={"net_arch": [16]}, seed=0
    )
    env.seed(0)
    obs = th.as_tensor(env.reset())
    masks = th.as_tensor(env.action_masks())
    return model.policy, obs, masks, th.as_tensor(masks.float().argmax(dim=1))


def test_an_anchored_model_is_saved_as_sb3_contribs_policy(tmp_path):
    """The anchor is a training-time subclass with sb3-contrib's weights: the saved zip
    names sb3-contrib's class, so ``MaskablePPO.load`` needs no code of ours."""
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from agents.ppo import model_bytes
    from thirtyone_env.envs.vector import sb3_vec_env
    from training.anchor import AnchoredPolicy

    env = sb3_vec_env(2, 4, "standard", opponents="greedy")
    model = MaskablePPO(
        AnchoredPolicy, env, n_steps=16, batch_size=32, policy_kwargs={"net_arch": [16]}, seed=0
    )
    path = tmp_path / "anchored.zip"
    path.write_bytes(model_bytes(model))
    assert model.policy_class is AnchoredPolicy  # the run's own model keeps its class
    again = MaskablePPO.load(path, device="cpu")
    assert type(again.policy) is MaskableActorCriticPolicy
    for name, tensor in model.policy.state_dict().items():
        assert th.equal(again.policy.state_dict()[name], tensor)


def test_the_anchor_adds_exactly_its_weight_times_the_kl_to_the_loss():
    policy, obs, masks, actions = anchored_batch()
    policy.set_anchor(NumpyPolicy.from_sb3(policy))
    policy.entropy_scale = 2.0
    _, _, same = policy.evaluate_actions(obs, actions, masks)
    policy.entropy_scale = 0.0
    _, _, plain = policy.evaluate_actions(obs, actions, masks)
    assert th.allclose(same, plain, atol=1e-5)  # the anchor is the policy: no KL
    with th.no_grad():
        for p in policy.action_net.parameters():
            p.add_(0.3 * th.randn_like(p))
    _, _, plain = policy.evaluate_actions(obs, actions, masks)
    policy.entropy_scale = 2.0
    _, _, anchored = policy.evaluate_actions(obs, actions, masks)
    kl = (plain - anchored) / 2.0
    assert (kl > 0).all() and abs(float(kl.mean().detach()) - policy.last_kl) < 1e-5


def test_learning_curves_are_a_gauntlet_every_k_steps(tmp_path):
    from training.curves import curve_tables, read_curves

    args = list(TINY)
    args[args.index("--eval-every") + 1] = "0"
    done = run_train(
        "--run-name", "cv", "--runs-dir", str(tmp_path), *args, "--gauntlet-every", "256", "--gauntlet-games", "4",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = read_curves(tmp_path / "cv")
    tables = curve_tables(4)
    assert "search" not in tables and {"expert", "held_out_a"} <= set(tables)
    points = sorted({r["timesteps"] for r in rows})
    assert points[0] == 0 and points[-1] >= 512 and len(points) >= 3
    for step in points:  # every table at every point, the same deals each time
        assert sorted(r["table"] for r in rows if r["timesteps"] == step) == sorted(tables)
    assert (tmp_path / "cv" / "learning_curves.png").stat().st_size > 10_000
    assert "gauntlet/expert_wins_diff" in (tmp_path / "cv" / "logs" / "progress.csv").read_text()
    curves = tmp_path / "cv" / "gauntlet.csv"
    header = curves.read_text().splitlines()[0]
    for damaged in (f"{header}\n{'9' * 200_000}\n".encode(), f"{header}\n".encode() + b"\xff\xfe\n"):
        curves.write_bytes(damaged)
        with pytest.raises(ValueError, match=f"{curves} is not a gauntlet curve file"):
            read_curves(tmp_path / "cv")


def test_population_share_splits_the_heuristic_draws_between_the_two_kinds():
    """Sixteen population members beside one built-in: by head count the built-in sits
    in 1 seat of 17; with ``population_share`` 0.25 it takes three draws in four."""
    population = [(f"pop{k}", object()) for k in range(16)]
    rng = np.random.default_rng(3)
    plain = League(["expert"], population=population)
    share = sum(plain.draw(rng)[0] == "expert" for _ in range(3400)) / 3400
    assert abs(share - 1 / 17) < 0.02
    split = League(["expert"], population=population, population_share=0.25)
    share = sum(split.draw(rng)[0] == "expert" for _ in range(4000)) / 4000
    assert abs(share - 0.75) < 0.03
    only = League(["expert", "greedy"], population_share=0.9)  # one kind: the share does not apply
    assert {only.draw(rng)[0] for _ in range(50)} == {"expert", "greedy"}
    with pytest.raises(ValueError, match="population_share"):
        League(["expert"], population=population, population_share=1.5)
    with pytest.raises(ValueError, match="league_population_share"):
        TrainConfig(league_population_share=-0.1)
    with pytest.raises(ValueError, match="vf_warmup"):
        TrainConfig(vf_warmup=-1)


def test_the_value_warm_up_trains_the_critic_and_leaves_the_actor_as_it_was(tmp_path):
    """``--vf-warmup`` beyond the run's steps: the saved actor is the initial one (the
    warm start's), the critic has moved."""
    from agents.ppo import load_policy
    from training.anchor import freeze_actor, policy_parameters

    args = list(TINY)
    args[args.index("--eval-every") + 1] = "0"
    done = run_train("--run-name", "vw", "--runs-dir", str(tmp_path), *args, "--vf-warmup", "100000")
    assert done.returncode == 0, done.stderr
    first = load_policy(tmp_path / "vw" / "checkpoints" / "ckpt_000000000256.zip")
    last = load_policy(tmp_path / "vw" / "final_model.zip")
    for (w0, b0), (w1, b1) in zip([*first.layers, first.head], [*last.layers, last.head], strict=True):
        assert np.array_equal(w0, w1) and np.array_equal(b0, b1)
    from sb3_contrib import MaskablePPO

    a = MaskablePPO.load(tmp_path / "vw" / "checkpoints" / "ckpt_000000000256.zip", device="cpu")
    b = MaskablePPO.load(tmp_path / "vw" / "final_model.zip", device="cpu")
    va, vb = (m.policy.value_net.weight.detach() for m in (a, b))
    assert not th.equal(va, vb)  # the critic learned
    log = (tmp_path / "vw" / "logs" / "progress.csv").read_text()
    assert "train/actor_frozen" in log
    freeze_actor(b.policy, False)
    assert all(p.requires_grad for p in policy_parameters(b.policy))


def test_a_sharpened_warm_start_is_the_imitation_with_its_logits_scaled(tmp_path):
    """``--imitate-sharpen 3``: the anchor (the warm start PPO begins from) is the plain
    run's imitation with its action head times 3: the same argmax, a lower temperature."""
    from train_helpers import WARM

    args = list(TINY)
    args[args.index("--eval-every") + 1] = "0"
    anchors = {}
    for name, extra in (("plain", []), ("sharp", ["--imitate-sharpen", "3"])):
        done = run_train(
            "--run-name", name, "--runs-dir", str(tmp_path), *args, *WARM, "--kl-coef", "0.1", *extra,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        anchors[name] = NumpyPolicy.load_npz(tmp_path / name / "anchor_policy.npz")
    plain, sharp = anchors["plain"], anchors["sharp"]
    for (w0, b0), (w1, b1) in zip(plain.layers, sharp.layers, strict=True):
        assert np.array_equal(w0, w1) and np.array_equal(b0, b1)
    assert np.allclose(sharp.head[0], 3 * plain.head[0]) and np.allclose(sharp.head[1], 3 * plain.head[1])
    with pytest.raises(ValueError, match="imitate_sharpen"):
        TrainConfig(imitate="expert", imitate_sharpen=0.0)
    with pytest.raises(ValueError, match="needs --imitate"):
        TrainConfig(imitate_sharpen=2.0)


def test_env_workers_read_a_new_snapshot_when_the_trainer_says_so_not_on_a_timer(tmp_path):
    """Each slot of a dummy or subprocess vector env has its own league: it reads the
    snapshot folder on first use and again only when the trainer calls
    ``refresh_league`` after a snapshot (between two steps), so when a snapshot joins
    the draws follows from the steps, never from the clock."""
    from training.config import TrainConfig
    from training.envs import make_vec

    config = TrainConfig(
        runs_dir=str(tmp_path), run_name="sp", n_envs=2, vec_env="dummy", self_play=0.5, opponents="greedy"
    )
    vec = make_vec(config)
    vec.reset()
    pool = config.run_dir / "pool"
    pool.mkdir(parents=True)
    (pool / "snap_000000000256.npz").write_bytes(b"")
    leagues = vec.get_attr("league")
    assert len({id(league) for league in leagues}) == 2 and all(league.pool() == [] for league in leagues)
    vec.env_method("refresh_league")
    assert [[p.name for p in league.pool()] for league in leagues] == [["snap_000000000256.npz"]] * 2
    vec.close()


def test_a_dict_observation_model_keeps_its_multi_input_policy_when_saved(tmp_path):
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableMultiInputActorCriticPolicy

    from agents.ppo import model_bytes
    from thirtyone_env.envs.env import ThirtyOneEnv

    env = ThirtyOneEnv(obs_encoding="dict")
    model = MaskablePPO(
        "MultiInputPolicy", env, n_steps=16, batch_size=16, policy_kwargs={"net_arch": [8]}, seed=0
    )
    path = tmp_path / "dict.zip"
    path.write_bytes(model_bytes(model))
    again = MaskablePPO.load(path, device="cpu")
    assert type(again.policy) is MaskableMultiInputActorCriticPolicy
    obs, info = env.reset(seed=0)
    action, _ = again.predict(obs, action_masks=info["action_mask"].astype(bool), deterministic=True)
    assert info["action_mask"][int(action)]
