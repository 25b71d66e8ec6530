"""The registered ids: ``ThirtyOne-v0`` as it always was, ``ThirtyOne-v1`` with a
default reward whose return varies with play (a lost game at a lives table no longer
returns the same total however it was played)."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env

import thirtyone_env  # noqa: F401  (registers the ids)
from thirtyone_env import GreedyPolicy
from thirtyone_env.envs.vector import ThirtyOneVectorEnv


def lost_game_returns(env_id, games=40):
    """The returns of the games a random seat lost (3 players, cut_throat)."""
    env = gym.make(env_id, num_players=3, rules="cut_throat", opponents=[GreedyPolicy(), GreedyPolicy()])
    rng = np.random.default_rng(0)
    returns = []
    for g in range(games):
        _, info = env.reset(seed=g)
        total, done = 0.0, False
        while not done:
            _, r, done, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            total += r
        if info["lives"][info["seat"]] <= 0:
            returns.append(round(total, 6))
    return returns


def test_v0_keeps_the_lives_reward_and_v1_makes_lost_games_differ():
    v0, v1 = lost_game_returns("ThirtyOne-v0"), lost_game_returns("ThirtyOne-v1")
    assert len(v0) > 10 and set(v0) <= {-3.0, -4.0}  # all lives, or a knocker's double charge
    assert len(v1) > 10 and len(set(v1)) > 3  # rounds played / 3 - 3: longer games return more


@pytest.mark.parametrize(
    ("rules", "reward"),
    [("standard", "rate"), ("cut_throat", "rate"), ("banking", "lives"), ("no_elimination", "lives")],
)
def test_v1_default_reward_by_scoring_and_an_explicit_one_taken_as_given(rules, reward):
    assert gym.make("ThirtyOne-v1", rules=rules).unwrapped.reward_kind == reward
    assert gym.make("ThirtyOne-v0", rules=rules).unwrapped.reward_kind == "lives"
    assert gym.make("ThirtyOne-v1", rules=rules, reward="win").unwrapped.reward_kind == "win"


def test_v1_passes_the_gymnasium_checker_and_its_vector_entry_matches():
    gym_check_env(gym.make("ThirtyOne-v1", render_mode="ansi").unwrapped, skip_render_check=False)
    made = gym.make_vec("ThirtyOne-v1", num_envs=3, vectorization_mode="vector_entry_point")
    direct = ThirtyOneVectorEnv(3, reward="rate")
    assert isinstance(made, ThirtyOneVectorEnv) and made.reward_kind == "rate"
    (a, _), (b, _) = made.reset(seed=4), direct.reset(seed=4)
    assert np.array_equal(a, b)


def test_rate_is_refused_where_rounds_settle_points_or_chips():
    with pytest.raises(ValueError, match="reward='rate' is for lives games"):
        ThirtyOneVectorEnv(2, rules="banking", reward="rate")


@pytest.mark.parametrize("env_id", ["ThirtyOne-v0", "ThirtyOne-v1"])
def test_make_vec_names_the_single_env_options_the_batched_env_lacks(env_id):
    """make_vec's default here is the batched env: a single env's option it has no use
    for is named with the modes that take it; ``opponents=None`` is greedy, as in the
    single env."""
    with pytest.raises(
        TypeError, match=r"takes no obs_encoding, render_mode: give vectorization_mode='sync'"
    ):
        gym.make_vec(env_id, num_envs=2, obs_encoding="dict", render_mode="ansi")
    synced = gym.make_vec(env_id, num_envs=2, obs_encoding="dict", vectorization_mode="sync")
    assert synced.num_envs == 2
    (a, _), (b, _) = (
        gym.make_vec(env_id, num_envs=2, opponents=o, vectorization_mode="vector_entry_point").reset(seed=1)
        for o in (None, "greedy")
    )
    assert np.array_equal(a, b)
