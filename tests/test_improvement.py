"""Measured moves and the policy-improvement step (:mod:`training.measured_moves`): every
legal move of a decision valued by paired play-outs on copies of the true position,
and a fit that prefers the moves of higher measured value, held near where it started."""

import dataclasses

import numpy as np
import pytest
from conftest import heads_up_known

import agents
from agents.expert import ExpertPlayer
from thirtyone_env import ThirtyOneEnv
from thirtyone_env.game.actions import DRAW_STOCK, KNOCK, TAKE_DISCARD
from thirtyone_env.game.engine import legal_mask
from thirtyone_env.game.views import player_view
from thirtyone_env.research.oracle import measure
from training.imitation import Demonstrations, _move_of, _pending, _values, collect, knock_gain
from training.measured_moves import improve


def _env(opponents=("expert", "greedy", "expert")):
    return ThirtyOneEnv(num_players=4, opponents=[agents.make(o) for o in opponents], seat="random")


def test_measured_moves_value_every_legal_move_and_leave_the_game_alone():
    plain = collect(_env(), ExpertPlayer(), 300, 0.99, seed=3)
    measured = collect(_env(), ExpertPlayer(), 300, 0.99, seed=3, move_rollouts=2)
    for field in ("obs", "masks", "actions", "returns"):
        assert np.array_equal(getattr(plain, field), getattr(measured, field))
    measured.check(plain.obs.shape[1], plain.masks.shape[1])
    choices = 0
    for row in range(len(measured)):
        legal = np.flatnonzero(measured.masks[row])
        ids, values = measured.move_actions[row], measured.move_values[row]
        if len(legal) > 1:
            choices += 1
            assert ids[: len(legal)].tolist() == legal.tolist() and (ids[len(legal) :] == -1).all()
            assert np.isfinite(values[: len(legal)]).all() and np.isnan(values[len(legal) :]).all()
        else:
            assert (ids == -1).all() and np.isnan(values).all()
    assert choices >= 250
    # the same seed gives the same values; the mean of two play-outs is a multiple of a half-life
    again = collect(_env(), ExpertPlayer(), 300, 0.99, seed=3, move_rollouts=2)
    assert np.array_equal(again.move_values, measured.move_values, equal_nan=True)
    finite = measured.move_values[np.isfinite(measured.move_values)]
    assert np.array_equal(finite * 2, np.round(finite * 2))


def test_players_in_records_only_the_heads_up_decisions_of_games_played_whole():
    """``players_in=2`` keeps, of the same games, exactly the decisions taken with two
    in, with their returns and the opponent history those games showed by then."""

    def env():
        return ThirtyOneEnv(
            num_players=4, opponents=[agents.make(o) for o in ("greedy",) * 3], seat=0, opponent_history=True
        )

    layout = env().unwrapped.obs_layout
    every = collect(env(), ExpertPlayer(), 4000, 0.99, seed=4)
    heads_up = collect(env(), ExpertPlayer(), 150, 0.99, seed=4, players_in=2)
    two_in = np.flatnonzero(every.obs[:, layout.slices["active"]].sum(axis=1) == 2)[:150]
    assert len(two_in) == 150 and two_in[0] > 0  # the games before the heads-up end are played, not kept
    for field in ("obs", "masks", "actions", "returns"):
        assert np.array_equal(getattr(heads_up, field), getattr(every, field)[two_in])
    assert (heads_up.obs[:, layout.slices["opponent_history"]] != 0).any(axis=1).all()
    measured = collect(env(), ExpertPlayer(), 40, 0.99, seed=4, players_in=2, move_rollouts=2)
    assert np.array_equal(measured.obs, heads_up.obs[:40])
    assert np.isfinite(measured.move_values).any(axis=1).mean() > 0.5
    with pytest.raises(ValueError, match="players_in=1 must be 0"):
        collect(env(), ExpertPlayer(), 10, 0.99, seed=4, players_in=1)


def test_a_known_loss_is_measured_the_same_as_by_the_knock_gain():
    """Heads-up against a known 30 with a 4: knocking costs exactly one life more than
    the teacher's other move in every play-out, measured as moves or as a knock."""
    env = ThirtyOneEnv(num_players=2, opponents=ExpertPlayer(), seat=0)
    env.reset(seed=0)
    env.state = heads_up_known("2c 3d 4h", "Kh Qh Jh", lives=4)
    teacher = ExpertPlayer()
    mask = legal_mask(env.state)
    legal = np.flatnonzero(mask)
    values = _values(env, [_pending(env, teacher, 0, legal, np.random.default_rng(1))], 4, 2.0, "lives")[0]
    others = mask.copy()
    others[KNOCK] = 0
    alternative = teacher.act(player_view(env.state, 0), others)
    by_move = values[list(legal).index(KNOCK)] - values[list(legal).index(alternative)]
    gain = knock_gain(env, teacher, alternative, 4, np.random.default_rng(1), elimination_penalty=2.0)
    assert by_move == gain == -1.0


def test_a_position_is_valued_the_same_in_any_batch_and_in_the_engine():
    """Positions with three and with four moves share one batch of compiled play-outs
    (the short ones padded): each gets the values it gets alone, and those the engine's
    play-outs give it (a position's seed spawns its play-outs: fresh copies each time)."""
    env = _env()
    env.reset(seed=5)
    base, teacher, rng = env.unwrapped, ExpertPlayer(), np.random.default_rng(2)
    pending = []
    while len(pending) < 8:
        mask = base.action_masks()
        if mask.sum() > 1:
            pending.append(_pending(base, teacher, len(pending), np.flatnonzero(mask), rng))
        _, _, done, _, _ = env.step(int(np.flatnonzero(mask)[0]))
        if done:
            env.reset()
    assert {len(p.actions) for p in pending} == {3, 4}

    def fresh(p):
        return dataclasses.replace(p, seed=np.random.SeedSequence(p.seed.entropy))

    together = _values(base, [fresh(p) for p in pending], 3, 0.0, "lives")
    for j, p in enumerate(pending):
        alone = _values(base, [fresh(p)], 3, 0.0, "lives")[0]
        engine = measure(p.state, p.actions, _move_of(base, p.table), fresh(p).seed, 3).mean(axis=1)
        assert np.array_equal(together[j, : len(p.actions)], alone)
        assert np.allclose(alone, engine, rtol=0, atol=1e-12)
    assert np.isnan(together[[len(p.actions) == 3 for p in pending], 3]).all()


def _model():
    from stable_baselines3.common.vec_env import DummyVecEnv

    from training.config import TrainConfig
    from training.envs import make_env_fn
    from training.models import build_model

    config = TrainConfig(net_arch="32,32", opponents="expert", n_envs=1, vec_env="dummy")
    return build_model(config, DummyVecEnv([make_env_fn(config, 0)]))


def _synthetic(rows: int = 1200) -> Demonstrations:
    """Three kinds of decision told apart by one input, each with its own best move
    among stock, pile and knock; the measured values are noisy (one play-out's worth)."""
    rng = np.random.default_rng(0)
    env = _env()
    size, actions = env.observation_space.shape[0], env.action_space.n
    kinds = rng.integers(3, size=rows)
    obs = np.zeros((rows, size), dtype=np.float16)
    obs[np.arange(rows), kinds] = 1.0
    masks = np.zeros((rows, actions), dtype=bool)
    moves = np.array([DRAW_STOCK, TAKE_DISCARD, KNOCK])
    masks[:, moves] = True
    values = rng.normal(0.0, 0.5, size=(rows, 3)).astype(np.float32)
    values[np.arange(rows), kinds] += 0.3  # kind k: move k is better by 0.3 on average
    return Demonstrations(
        obs, masks, np.full(rows, DRAW_STOCK), np.zeros(rows, np.float32),
        move_actions=np.tile(moves, (rows, 1)), move_values=values,
    )  # fmt: skip


def test_improve_prefers_the_moves_of_higher_measured_value():
    from agents.ppo import NumpyPolicy

    model = _model()
    demos = _synthetic()
    stats = improve(model, demos, epochs=40, lr=3e-3, kl_coef=0.0, batch_size=128)
    policy = NumpyPolicy.from_sb3(model.policy)
    probes = np.eye(demos.obs.shape[1], dtype=np.float32)[:3]
    logits = np.where(demos.masks[:3], policy.logits(probes), -1e9)
    assert logits.argmax(axis=1).tolist() == [DRAW_STOCK, TAKE_DISCARD, KNOCK]
    assert stats["held_out"] == 120 and stats["rows"] == 1080
    assert stats["gain"] > 0


def test_the_kl_term_holds_the_policy_where_it_started():
    from agents.ppo import NumpyPolicy

    model = _model()
    before = NumpyPolicy.from_sb3(model.policy)
    demos = _synthetic()
    stats = improve(model, demos, epochs=5, lr=1e-3, kl_coef=1000.0, batch_size=128)
    after = NumpyPolicy.from_sb3(model.policy)
    obs = demos.obs.astype(np.float32)
    same = np.where(demos.masks, before.logits(obs), -1e9).argmax(1) == np.where(
        demos.masks, after.logits(obs), -1e9
    ).argmax(1)
    assert same.mean() > 0.97 and stats["changed"] < 0.05


def test_saved_measured_moves_round_trip_concatenate_and_are_checked(tmp_path):
    measured = collect(_env(), ExpertPlayer(), 200, 0.99, seed=1, move_rollouts=1)
    plain = collect(_env(), ExpertPlayer(), 100, 0.99, seed=2)
    np.savez(tmp_path / "m.npz", **measured.arrays())
    loaded = Demonstrations.load(tmp_path / "m.npz")
    assert np.array_equal(loaded.move_values, measured.move_values, equal_nan=True)
    both = Demonstrations.concat([loaded, plain])
    assert len(both) == 300 and (both.move_actions[200:] == -1).all()
    both.check(plain.obs.shape[1], plain.masks.shape[1])
    row = int(np.flatnonzero(measured.move_actions[:, 0] >= 0)[0])
    bad = Demonstrations.load(tmp_path / "m.npz")
    bad.move_values[row, 0] = np.nan
    with pytest.raises(ValueError, match=rf"move_values\[{row}, 0\] is not a finite value"):
        bad.check(plain.obs.shape[1], plain.masks.shape[1])
    bad = Demonstrations.load(tmp_path / "m.npz")
    bad.move_actions[row, 0] = int(np.flatnonzero(~bad.masks[row])[0])
    with pytest.raises(ValueError, match=rf"move_actions\[{row}, 0\]=\d+ is not legal under its mask"):
        bad.check(plain.obs.shape[1], plain.masks.shape[1])
    with pytest.raises(ValueError, match="give one"):
        collect(_env(), ExpertPlayer(), 10, 0.99, seed=1, move_rollouts=1, knock_rollouts=1)


def test_improve_needs_measured_moves():
    with pytest.raises(ValueError, match="no measured moves"):
        improve(_model(), collect(_env(), ExpertPlayer(), 50, 0.99, seed=1), epochs=1)
