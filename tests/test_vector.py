"""The batched env: game for game the same as ThirtyOneEnv with the same seeds, the
Gymnasium vector and SB3 VecEnv interfaces, MaskablePPO on it, its errors."""

import numpy as np
import pytest

from thirtyone_env.envs.env import ThirtyOneEnv
from thirtyone_env.envs.vector import ThirtyOneVectorEnv, batchable, ended_game, sb3_vec_env
from thirtyone_env.game.policies import GreedyPolicy, RandomPolicy


def _single_envs(n_games, num_players, rules, opponents, seed, **kw):
    make = {"greedy": GreedyPolicy, "random": RandomPolicy}
    envs = [ThirtyOneEnv(num_players, rules, [make[o]() for o in opponents], **kw) for _ in range(n_games)]
    return envs, [e.reset(seed=seed + i) for i, e in enumerate(envs)]


@pytest.mark.parametrize(
    ("rules", "n", "opponents", "kw"),
    [
        ("standard", 4, ("greedy", "greedy", "greedy"), {}),
        ("standard", 4, ("random", "greedy", "random"), {}),
        ("pagat", 3, ("random", "random"), {"seat": 1}),  # reshuffles the pile
        ("blitz31", 4, ("greedy", "random", "greedy"), {"episode": "round"}),
        ("dutch", 6, ("greedy",) * 5, {"reward": "win"}),
        ("cut_throat", 2, ("random",), {}),
        ("standard", 4, ("random", "greedy", "greedy"), {"reward": "rate"}),
        ("standard", 4, ("greedy", "random", "greedy"), {"opponent_history": True}),
        ("pagat", 3, ("random", "greedy"), {"opponent_history": True}),
    ],
)
def test_batched_games_equal_single_envs_step_for_step(rules, n, opponents, kw):
    """Same seeds, same agent actions: every observation, mask, reward and episode end
    (the final observation too) equal, over many episodes."""
    games, seed = 6, 40
    vec = ThirtyOneVectorEnv(games, n, rules, opponents=list(opponents), **kw)
    assert vec.compiled
    obs, _ = vec.reset(seed=seed)
    envs, first = _single_envs(games, n, rules, opponents, seed, **kw)
    for i, (o, info) in enumerate(first):
        assert np.array_equal(obs[i], o)
        assert np.array_equal(vec.action_masks()[i], info["action_mask"])
    rng = np.random.default_rng(1)
    episodes = 0
    for _ in range(600):
        masks = vec.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, done, truncated, info = vec.step(actions)
        assert not truncated.any()
        for i, env in enumerate(envs):
            o, r, d, _, single_info = env.step(int(actions[i]))
            assert (bool(done[i]), float(rewards[i])) == (d, r)
            if d:
                assert np.array_equal(info["final_obs"][i], o)
                final = ended_game(info, i)  # where the game ended, as the single env says
                assert {k: final[k] for k in ("seat", "round", "lives")} == {
                    k: single_info[k] for k in ("seat", "round", "lives")
                }
                assert final["active"] == tuple(env.state.active)
                assert final["rounds_played"][final["seat"]] <= final["round"]
                o, single_info = env.reset()
                episodes += 1
            assert np.array_equal(obs[i], o)
            assert np.array_equal(vec.action_masks()[i], single_info["action_mask"])
    assert episodes > 20


@pytest.mark.parametrize("rules", ["stop_the_bus", "switch"])
def test_the_per_game_envs_say_where_a_game_ended_as_the_kernels_do(rules):
    """The variants the kernels do not play: a finished game's ``final_info`` has the
    same keys, its charges summed over the rounds the single env settled."""
    games, seed = 3, 7
    vec = ThirtyOneVectorEnv(games, 3, rules, opponents=["random", "random"])
    assert not vec.compiled
    vec.reset(seed=seed)
    envs, first = _single_envs(games, 3, rules, ("random", "random"), seed)
    charged = [np.zeros(3, dtype=int) for _ in range(games)]
    for i, (_, info) in enumerate(first):
        for r in info.get("skipped_rounds", ()):
            charged[i] += r.losses
    rng = np.random.default_rng(2)
    ended = 0
    while ended < 6:
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in vec.action_masks()])
        _, _, done, _, info = vec.step(actions)
        for i, env in enumerate(envs):
            _, _, d, _, single = env.step(int(actions[i]))
            for r in single.get("round_results", ()):
                charged[i] += r.losses
            if not d:
                continue
            ended += 1
            end = ended_game(info, i)
            assert end["seat"] == env.seat and end["round"] == env.state.round_no
            assert end["lives"] == tuple(env.state.lives) and end["active"] == tuple(env.state.active)
            assert end["lives_lost"] == tuple(charged[i].tolist()) and end["illegal_action"] is False
            assert end["rounds_played"][env.seat] <= end["round"]
            _, single = env.reset()
            charged[i] = np.zeros(3, dtype=int)
            for r in single.get("skipped_rounds", ()):
                charged[i] += r.losses


def test_an_illegal_action_ends_that_game_with_the_forfeit():
    vec = ThirtyOneVectorEnv(3, 4, "standard", seat=0)
    vec.reset(seed=0)
    masks = vec.action_masks()
    actions = masks.argmax(axis=1)
    bad = int(np.flatnonzero(masks[1] == 0)[0])
    actions[1] = bad
    _, rewards, done, _, info = vec.step(actions)
    assert done[1] and rewards[1] == -6.0 and ended_game(info, 1)["illegal_action"] is True
    final = info["final_info"]  # Gymnasium's dict of arrays over the games, with masks
    assert final["_illegal_action"].tolist() == [False, True, False] and final["illegal_action"][1]
    assert final["lives"].shape == (3, 4) and info["_final_obs"].tolist() == [False, True, False]
    with pytest.raises(KeyError, match="game 0 did not end"):
        ended_game(info, 0)  # game 0 played on
    assert not done[0] and not done[2]


def test_reset_seeds_reproduce_and_differ_between_games():
    a, b = ThirtyOneVectorEnv(4, 3), ThirtyOneVectorEnv(4, 3)
    oa, _ = a.reset(seed=7)
    ob, _ = b.reset(seed=7)
    assert np.array_equal(oa, ob)
    assert not np.array_equal(oa[0], oa[1])
    oc, _ = b.reset(seed=[7, 8, 9, 10])
    assert np.array_equal(oc, oa)


def test_variants_fall_back_to_one_env_per_game():
    """A variant (Switch) the kernels do not play: one ThirtyOneEnv per game, the same
    interface and results as those envs."""
    vec = ThirtyOneVectorEnv(2, 3, "switch", opponents="greedy")
    assert not vec.compiled and not batchable(vec.rules)
    obs, _ = vec.reset(seed=3)
    single = ThirtyOneEnv(3, "switch", [GreedyPolicy(), GreedyPolicy()])
    assert np.array_equal(obs[1], single.reset(seed=4)[0])
    for _ in range(30):
        vec.step(vec.action_masks().argmax(axis=1))


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="unknown player 'expret'"):
        ThirtyOneVectorEnv(2, 4, opponents="expret")
    with pytest.raises(ValueError, match="num_envs=0"):
        ThirtyOneVectorEnv(0)
    with pytest.raises(ValueError, match="episode='hand'"):
        ThirtyOneVectorEnv(2, episode="hand")
    with pytest.raises(RuntimeError, match="reset"):
        ThirtyOneVectorEnv(2).step(np.zeros(2, dtype=int))


def test_maskable_ppo_trains_on_the_sb3_vec_env():
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    venv = sb3_vec_env(16, 4, "standard", opponents="greedy")
    assert is_masking_supported(venv)
    venv.seed(0)
    obs = venv.reset()
    assert obs.shape == (16, venv.observation_space.shape[0])
    assert get_action_masks(venv).shape == (16, 56)
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=128, n_epochs=1, seed=0, verbose=0)
    model.learn(512)
    assert model.num_timesteps >= 512
    for _ in range(40):
        masks = get_action_masks(venv)
        actions, _ = model.predict(obs, action_masks=masks)
        assert masks[np.arange(16), actions].all()
        obs, _, done, infos = venv.step(actions)
        for i in np.flatnonzero(done):
            assert infos[i]["terminal_observation"].shape == obs[i].shape


@pytest.mark.parametrize(
    ("rules", "n", "opponent", "kw"),
    [
        ("standard", 4, GreedyPolicy, {}),
        ("pagat", 3, RandomPolicy, {}),
        ("standard", 3, GreedyPolicy, {"opponent_history": True}),
    ],
)
def test_compiled_single_env_plays_the_python_env_game(rules, n, opponent, kw):
    """``ThirtyOneEnv(backend="compiled")``: the same observations, masks, rewards,
    episode ends and info as the Python engine for the same seed and actions."""
    py = ThirtyOneEnv(n, rules, [opponent() for _ in range(n - 1)], **kw)
    fast = ThirtyOneEnv(n, rules, [opponent() for _ in range(n - 1)], backend="compiled", **kw)
    (oa, ia), (ob, ib) = py.reset(seed=5), fast.reset(seed=5)
    rng = np.random.default_rng(0)
    episodes = 0
    for _ in range(1500):
        assert np.array_equal(oa, ob) and np.array_equal(ia["action_mask"], ib["action_mask"])
        assert [ia[k] for k in ("seat", "round", "lives", "phase")] == [
            ib[k] for k in ("seat", "round", "lives", "phase")
        ]
        action = int(rng.choice(np.flatnonzero(ia["action_mask"])))
        oa, ra, da, _, ia = py.step(action)
        ob, rb, db, _, ib = fast.step(action)
        assert (ra, da) == (rb, db)
        if da:
            assert np.array_equal(oa, ob)
            (oa, ia), (ob, ib) = py.reset(), fast.reset()
            episodes += 1
    assert episodes > 30


def test_compiled_single_env_passes_the_checkers_and_names_what_it_lacks():
    import warnings

    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(ThirtyOneEnv(4, backend="compiled"))
        sb3_check_env(ThirtyOneEnv(4, backend="compiled"))
    env = ThirtyOneEnv(4, backend="compiled", illegal_action="raise")
    obs, info = env.reset(seed=1)
    from thirtyone_env.game.engine import IllegalActionError

    with pytest.raises(IllegalActionError, match="illegal action"):
        env.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
    with pytest.raises(RuntimeError, match="save_record needs backend='python'"):
        env.save_record("x.jsonl")
    with pytest.raises(ValueError, match="need backend='python'"):
        env.reset(options={"dealer": 0})
    with pytest.raises(ValueError, match="backend='compiled' plays the stock game"):
        ThirtyOneEnv(3, "switch", backend="compiled")
    with pytest.raises(ValueError, match="flat encoding"):
        ThirtyOneEnv(4, obs_encoding="dict", backend="compiled")
    with pytest.raises(ValueError, match="backend='rust'"):
        ThirtyOneEnv(4, backend="rust")


def test_compiled_generator_draws_exactly_as_numpy():
    """batch_rng replays NumPy's PCG64: integers(k), permutation of a deck and of
    range(m), raw draws, interleaved, on many seeds (the equivalence rests on it)."""
    from gymnasium.utils import seeding

    from thirtyone_env.envs.batch_rng import integers, load_row, next_uint64, shuffle, state_row

    for seed in range(60):
        ref = seeding.np_random(seed)[0]
        st = state_row(ref)[None, :].copy()
        for rep in range(12):
            k = 2 + (seed + rep) % 8
            assert ref.integers(k) == integers(st, 0, k)
            deck = np.arange(52)
            x = deck.copy()
            shuffle(st, 0, x, 52)
            assert np.array_equal(ref.permutation(deck), x)
            m = (seed * 7 + rep) % 40
            y = np.arange(m)
            shuffle(st, 0, y, m)
            assert np.array_equal(ref.permutation(m), y)
        assert ref.bit_generator.random_raw() == next_uint64(st, 0)
        back = seeding.np_random(0)[0]
        load_row(back, st[0])
        assert back.integers(1 << 30) == ref.integers(1 << 30)


@pytest.mark.parametrize(("rules", "opponents"), [("standard", "greedy"), ("switch", "random")])
def test_info_carries_every_games_mask_in_the_vector_convention(rules, opponents):
    """info["action_mask"] is each game's legal actions (the new game's after an
    autoreset), info["_action_mask"] marks every game; compiled and fallback alike."""
    env = ThirtyOneVectorEnv(6, 3, rules, opponents=opponents, seat=0)
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(3)
    ended = 0
    for _ in range(300):
        masks = info["action_mask"]
        assert masks.dtype == np.int8 and masks.shape == (6, env.single_action_space.n)
        assert info["_action_mask"].all() and (masks == env.action_masks()).all() and masks.any(axis=1).all()
        obs, _, done, _, info = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        ended += int(done.sum())
    assert ended > 0  # masks after autoresets were checked too


def test_make_vec_gives_the_batched_env_with_the_same_games():
    import gymnasium as gym

    import thirtyone_env  # noqa: F401  (registers ThirtyOne-v0)

    made = gym.make_vec(
        "ThirtyOne-v0", num_envs=4, vectorization_mode="vector_entry_point", opponents="greedy"
    )
    direct = ThirtyOneVectorEnv(4, opponents="greedy")
    assert isinstance(made, ThirtyOneVectorEnv)
    (a, ia), (b, ib) = made.reset(seed=11), direct.reset(seed=11)
    assert np.array_equal(a, b) and np.array_equal(ia["action_mask"], ib["action_mask"])


@pytest.mark.parametrize(("rules", "n"), [("standard", 4), ("pagat", 3)])
def test_a_loaded_engine_state_shows_the_same_view_and_moves(rules, n):
    """``KernelGames.load_state`` puts a round in progress into a row: the seat to act
    sees there the view and legal moves the engine gives it, and the round counts as
    dealt to every seat still in."""
    from conftest import random_moves

    from thirtyone_env.envs import batch_kernels as K
    from thirtyone_env.envs.kernel_games import KernelGames
    from thirtyone_env.game.encoding import ObsLayout
    from thirtyone_env.game.engine import legal_mask, new_game
    from thirtyone_env.game.view_batch import batch_rows
    from thirtyone_env.game.views import player_view

    class ViewPlayer:
        obs_encoding = "view"

        def act(self, observation, action_mask):
            return int(np.flatnonzero(action_mask)[0])

    rng = np.random.default_rng(3)
    s0 = new_game(rules, n, rng)
    games = KernelGames(1, ObsLayout(n, s0.rules), s0.rules, [[ViewPlayer()] * (n - 1)], 0, "round", "lives")
    seen = 0
    for _ in range(30):
        s = random_moves(new_game(rules, n, rng), rng, int(rng.integers(1, 30)))
        if s.phase > 1:
            continue
        games.load_state(0, s, s.current)
        loaded = games.summary(0)
        assert loaded["rounds_played"] == tuple(int(a) for a in s.active) and not any(loaded["lives_lost"])
        rows = np.zeros(1, dtype=np.int64)
        K.seat_masks(games.g, games.seat_i, games.hands, games.R, rows, games.ext_masks)
        K.seat_views(
            games.g, games.seat_i, games.hands, games.stock, games.pile, games.known, games.disc_log, rows,
            *games._view_arrays,
        )  # fmt: skip
        assert batch_rows(games.ext_views, 0, 1).view(0) == player_view(s, s.current)
        np.testing.assert_array_equal(games.ext_masks[0], legal_mask(s))
        seen += 1
    assert seen >= 10
    with pytest.raises(ValueError, match="does not fit"):
        games.load_state(0, new_game("dutch", n, rng), 0)


class _Holder:
    """A batched player that notes whether anything it is handed is a view into a bigger
    array (through whose ``base`` it could read other seats' rows), and plays the first
    legal move."""

    def __init__(self, encoding: str) -> None:
        self.obs_encoding = encoding
        self.views = 0
        self.calls = 0

    def _note(self, *arrays) -> None:
        self.calls += 1
        self.views += sum(isinstance(a, np.ndarray) and a.base is not None for a in arrays)

    def act(self, obs, mask):
        self._note(mask, *(obs if isinstance(obs, np.ndarray) else ()))
        return int(np.flatnonzero(mask)[0])

    def act_batch(self, obs, masks):
        fields = [obs] if isinstance(obs, np.ndarray) else list(vars(obs).values())
        self._note(masks, *fields)
        return np.array([int(np.flatnonzero(m)[0]) for m in masks])


@pytest.mark.parametrize("encoding", ["view", "flat"])
def test_an_external_player_is_handed_copies_never_views_of_the_shared_buffers(encoding):
    """Every external seat's rows are written into buffers all of them share: a player
    gets its own copies, so no ``base`` leads it to another seat's hand."""
    spies = [_Holder(encoding) for _ in range(3)]
    vec = ThirtyOneVectorEnv(8, 4, "standard", opponents=spies)
    obs, info = vec.reset(seed=3)
    for _ in range(60):
        actions = np.array([int(np.flatnonzero(m)[0]) for m in info["action_mask"]])
        obs, _, _, _, info = vec.step(actions)
    assert sum(s.calls for s in spies) > 20 and sum(s.views for s in spies) == 0


def test_the_sb3_vec_env_rewards_as_thirtyone_v1_unless_told():
    assert sb3_vec_env(2, 4, "standard").venv.reward_kind == "rate"
    assert sb3_vec_env(2, 4, "banking").venv.reward_kind == "lives"  # rounds settle chips there
    assert sb3_vec_env(2, 4, "standard", reward="lives").venv.reward_kind == "lives"


def _same_step_trajectories(rules, steps, seed):
    """Per game, from a same-step run with random legal actions: the actions played and
    what each step returned (observation, reward, done, the finished game's last one)."""
    vec = ThirtyOneVectorEnv(3, 3, rules, opponents=["greedy", "random"], seat=0)
    obs, _ = vec.reset(seed=seed)
    rng = np.random.default_rng(seed)
    actions = [[] for _ in range(3)]
    seen = [[] for _ in range(3)]
    for _ in range(steps):
        chosen = np.array([rng.choice(np.flatnonzero(m)) for m in vec.action_masks()])
        obs, rewards, done, _, info = vec.step(chosen)
        for i in range(3):
            actions[i].append(int(chosen[i]))
            last = info["final_obs"][i] if done[i] else obs[i]
            seen[i].append(
                (last.copy(), float(rewards[i]), bool(done[i]), obs[i].copy() if done[i] else None)
            )
    return actions, seen


@pytest.mark.parametrize("rules", ["standard", "stop_the_bus"])
def test_next_step_autoreset_plays_the_same_games_one_step_later(rules):
    """The games of a next-step run are those of a same-step run: the step that ends a
    game returns its last observation (and where it ended as the info's keys), the next
    one deals the new game, whatever action it is given, with reward 0."""
    from gymnasium.vector import AutoresetMode

    actions, seen = _same_step_trajectories(rules, 150, seed=5)
    vec = ThirtyOneVectorEnv(3, 3, rules, opponents=["greedy", "random"], seat=0, autoreset_mode="NextStep")
    assert vec.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert ThirtyOneVectorEnv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    vec.reset(seed=5)
    queue = [list(zip(a, s, strict=True)) for a, s in zip(actions, seen, strict=True)]
    restart = np.zeros(3, dtype=bool)
    expected_restart: list = [None] * 3
    ended = 0
    while all(queue):
        chosen = np.array([0 if restart[i] else queue[i][0][0] for i in range(3)])
        obs, rewards, done, _, info = vec.step(chosen)
        for i in range(3):
            if restart[i]:
                assert np.array_equal(obs[i], expected_restart[i]) and rewards[i] == 0.0 and not done[i]
                continue
            _, (last, reward, was_done, first) = queue[i].pop(0)
            assert np.array_equal(obs[i], last) and rewards[i] == reward and done[i] == was_done
            if was_done:
                ended += 1
                assert info["_seat"][i] and info["seat"][i] == 0 and info["lives"].shape == (3, 3)
                expected_restart[i] = first
        restart = done.copy()
    assert ended >= 3


def test_gymnasiums_vector_wrappers_take_the_next_step_env_and_a_closed_env_refuses():
    import gymnasium as gym
    from gymnasium.vector import AutoresetMode

    env = gym.make_vec("ThirtyOne-v1", num_envs=2, autoreset_mode=AutoresetMode.NEXT_STEP)
    env = gym.wrappers.vector.NormalizeObservation(env)
    obs, info = env.reset(seed=0)
    for _ in range(50):
        masks = info["action_mask"]
        obs, _, _, _, info = env.step(np.array([np.flatnonzero(m)[0] if m.any() else 0 for m in masks]))
    assert obs.shape == (2, env.single_observation_space.shape[0]) and np.isfinite(obs).all()
    env.close()
    with pytest.raises(gym.error.ClosedEnvironmentError):
        env.unwrapped.step(np.zeros(2, dtype=np.int64))
    with pytest.raises(ValueError, match="autoreset_mode='Disabled' is not allowed"):
        ThirtyOneVectorEnv(2, autoreset_mode="Disabled")


def test_an_illegal_first_move_counts_the_round_dealt_on_both_paths():
    """The kernels count a round when it is dealt; the per-game envs' tally counts it
    when it settles, so a round an illegal action cut short is added there too."""
    for rules in ("standard", "stop_the_bus"):
        vec = ThirtyOneVectorEnv(2, 3, rules, seat=0)
        vec.reset(seed=1)
        bad = np.array([int(np.flatnonzero(m == 0)[0]) for m in vec.action_masks()])
        _, _, done, _, info = vec.step(bad)
        assert done.all()
        for i in range(2):
            end = ended_game(info, i)
            assert end["illegal_action"] and end["rounds_played"] == (1, 1, 1), (rules, vec.compiled, end)


def test_a_scored_tables_final_info_gives_the_score_and_sb3_takes_same_step_only():
    vec = ThirtyOneVectorEnv(2, 3, "banking", seat=0)
    vec.reset(seed=1)
    bad = np.array([int(np.flatnonzero(m == 0)[0]) for m in vec.action_masks()])
    _, _, _, _, info = vec.step(bad)
    end = ended_game(info, 0)
    assert "lives" not in end and "lives_lost" not in end and len(end["score"]) == 3
    with pytest.raises(ValueError, match="autoreset_mode='NextStep' is not allowed here"):
        sb3_vec_env(2, 4, autoreset_mode="NextStep")
