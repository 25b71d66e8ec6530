"""One action contract for the three envs: the single env (both
backends), the vector env (compiled and per-game) and the PettingZoo env (raw and
wrapped) accept an int id (Python, numpy, a size-1 int array) and refuse everything
else with the same IllegalActionError and message, never casting it."""

import re

import numpy as np
import pytest

from thirtyone_env import IllegalActionError
from thirtyone_env.envs import multiagent
from thirtyone_env.envs.env import ThirtyOneEnv
from thirtyone_env.envs.vector import ThirtyOneVectorEnv
from thirtyone_env.game.actions import KNOCK, check_action_id, num_actions
from thirtyone_env.game.rules import Rules

# At the first decision of a stock game KNOCK (2) is legal: a cast 2.7 or 2.0 would knock.
BAD = [
    True,
    False,
    2.7,
    2.0,
    np.float64(2.0),
    np.bool_(True),
    "0",
    None,
    -1,
    56,
    np.array([1, 2]),
    np.array([2.7]),
    np.array([True]),
]
BAD_IDS = [repr(x) for x in BAD]


def message(action, n=56):
    """The error text for a bad action: an int id out of Discrete(n)'s range, or what
    the action is instead of an int."""
    if isinstance(action, int | np.integer) and not isinstance(action, bool | np.bool_):
        return re.escape(f"action {action!r} is outside the action space Discrete({n})")
    kind = (
        f"an array of {action.dtype} and shape {action.shape}"
        if isinstance(action, np.ndarray)
        else f"a {type(action).__name__}"
    )
    return re.escape(
        f"action {action!r} is {kind}, not an integer id: actions are ints 0..{n - 1} (Discrete({n}))"
    )


@pytest.mark.parametrize("action", BAD, ids=BAD_IDS)
def test_check_action_id_refuses_what_is_not_an_int_id(action):
    with pytest.raises(IllegalActionError, match=message(action)):
        check_action_id(action, 56)


def test_check_action_id_accepts_int_ids_of_every_kind():
    for a in (2, np.int64(2), np.uint8(2), np.array(2), np.array([2]), np.array([[2]], dtype=np.int16)):
        got = check_action_id(a, 56)
        assert got == 2 and type(got) is int


@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_single_env_refuses_and_the_episode_goes_on(backend):
    env = ThirtyOneEnv(backend=backend, seat=0, illegal_action="raise")
    env.reset(seed=3)
    for action in BAD:
        with pytest.raises(IllegalActionError, match=message(action)):
            env.step(action)
    # nothing was played: the same first step as a fresh env
    fresh = ThirtyOneEnv(backend=backend, seat=0, illegal_action="raise")
    fresh.reset(seed=3)
    obs, reward, *_ = env.step(np.array([KNOCK]))
    obs2, reward2, *_ = fresh.step(KNOCK)
    assert np.array_equal(obs, obs2) and reward == reward2


@pytest.mark.parametrize("external", [False, True])
def test_vector_env_refuses_each_bad_action_and_names_the_game(external):
    """Kernel opponents, or players at external seats (asked outside the kernels)."""

    def make():
        opponents = (lambda: [RandomOpponent(), RandomOpponent(), RandomOpponent()]) if external else "greedy"
        vec = ThirtyOneVectorEnv(3, 4, "standard", opponents=opponents, seat=0)
        assert vec.compiled and bool(vec.games.external) == external
        vec.reset(seed=11)
        return vec

    vec = make()
    for action in BAD:
        with pytest.raises(IllegalActionError, match="^game 1: " + message(action) + "$"):
            vec.step([0, action, 0])
    # a float or bool array is refused, not cast to 2 (a knock) or 1
    with pytest.raises(IllegalActionError, match="game 0: " + message(np.float64(2.7))):
        vec.step(np.array([2.7, 2.7, 2.7]))
    with pytest.raises(IllegalActionError, match="game 0: " + message(np.float64(2.0))):
        vec.step(np.array([2.0, 0.0, 0.0]))
    with pytest.raises(IllegalActionError, match="game 2: " + message(np.int64(56))):
        vec.step(np.array([0, 1, 56]))
    with pytest.raises(IllegalActionError, match="game 0: " + message(np.True_)):
        vec.step(np.array([True, False, True]))
    for wrong in (0, np.array(0), [0, 0], np.zeros(4, dtype=int), "012"):
        with pytest.raises(ValueError, match=r"one action per game \(3 games\)"):
            vec.step(wrong)
    # every refusal left the games untouched: int arrays of any width, (N, 1) and lists
    # of numpy ints then play exactly as a fresh env's first step
    fresh = make()
    for actions in (np.array([2, 0, 2], dtype=np.int32), np.array([[1], [0], [0]]), [np.int64(0), 1, 0]):
        got, want = vec.step(actions), fresh.step(np.asarray(actions).reshape(3).astype(np.int64))
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


class RandomOpponent:
    """An opponent the kernels do not know (so the vector env steps one env per game)."""

    def reset(self, rng):
        self.rng = rng

    def act(self, obs, mask):
        return int(self.rng.choice(np.flatnonzero(mask)))


@pytest.mark.parametrize("wrapped", [False, True])
def test_pettingzoo_env_refuses_alike(wrapped):
    env = (multiagent.env if wrapped else multiagent.raw_env)(num_players=3)
    env.reset(seed=5)
    first = env.agent_selection
    for action in BAD:
        with pytest.raises(IllegalActionError, match=message(action)):
            env.step(action)
    assert env.agent_selection == first and not any(env.terminations.values())
    env.step(np.array([KNOCK]))  # a size-1 int array is an id here as in the single env
    assert env.agent_selection != first


@pytest.mark.parametrize("wrapped", [False, True])
def test_pettingzoo_dead_agents_still_step_none(wrapped):
    """The AEC API: an eliminated agent is stepped with None (any other action is an
    error), and the game plays to its end."""
    env = (multiagent.env if wrapped else multiagent.raw_env)(num_players=3, rules="cut_throat")
    env.reset(seed=2)
    rng = np.random.default_rng(2)
    dead_steps = 0
    for _ in env.agent_iter(10_000):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            if dead_steps == 0:
                with pytest.raises(ValueError, match="None"):
                    env.step(0)
            env.step(None)
            dead_steps += 1
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert dead_steps == 3 and env.agents == []


def test_table_games_use_their_wider_space_in_every_env():
    """The table games have more ids than the stock game's 56: one past the last is
    outside in all three envs, whatever the count."""
    n = num_actions(Rules.preset("switch"))
    assert n > 56
    single = ThirtyOneEnv(num_players=3, rules="switch", illegal_action="raise")
    single.reset(seed=0)
    vec = ThirtyOneVectorEnv(2, 3, "switch")
    vec.reset(seed=0)
    pz = multiagent.raw_env(num_players=3, rules="switch")
    pz.reset(seed=0)
    for step in (single.step, pz.step):
        with pytest.raises(IllegalActionError, match=message(n, n)):
            step(n)
        with pytest.raises(IllegalActionError, match=message(2.0, n)):
            step(2.0)
    with pytest.raises(IllegalActionError, match="game 1: " + message(n, n)):
        vec.step([0, n])
