"""External seats: players the kernels do not play, asked by the vector env for all the
games waiting on them at once, give the very games of one ThirtyOneEnv per game."""

import numpy as np
import pytest

from thirtyone_env.envs.env import ThirtyOneEnv
from thirtyone_env.envs.vector import ThirtyOneVectorEnv
from thirtyone_env.game.actions import IllegalActionError
from thirtyone_env.game.policies import GreedyPolicy, RandomPolicy
from thirtyone_env.game.view_batch import ViewBatch


class ViewGreedy(GreedyPolicy):
    """Greedy as a player the kernels do not know: a PlayerView each, one game at a time."""


class ViewRandom(RandomPolicy):
    """Random from the generator the env hands it (so the game's own draws interleave)."""


class FlatFirst:
    """Reads the flat observation: the lowest legal action, or the highest when the
    observation's first hand feature is set (so the observation matters)."""

    obs_encoding = "flat"

    def act(self, observation, action_mask):
        legal = np.flatnonzero(action_mask)
        return int(legal[-1] if observation[0] > 0 else legal[0])


class BatchedGreedy(GreedyPolicy):
    """Greedy through act_batch: each row back as a PlayerView (counts its calls)."""

    def __init__(self):
        super().__init__()
        self.calls = self.rows = 0

    def act_batch(self, observations, masks):
        assert isinstance(observations, ViewBatch) and len(observations) == len(masks)
        self.calls += 1
        self.rows += len(masks)
        return np.array([self.act(observations.view(k), masks[k]) for k in range(len(masks))])


class BatchedFlat(FlatFirst):
    def act_batch(self, observations, masks):
        assert observations.dtype == np.float32 and observations.ndim == 2
        return np.array([self.act(o, m) for o, m in zip(observations, masks, strict=True)])


def _play_both(n, rules, make, games=5, steps=400, seed=11, **kw):
    """The vector env (opponents made per game by ``make``) and one single env per game
    with the same seeds and actions: everything equal, step for step."""
    vec = ThirtyOneVectorEnv(games, n, rules, opponents=make, **kw)
    assert vec.compiled
    obs, _ = vec.reset(seed=seed)
    named = {"greedy": GreedyPolicy, "random": RandomPolicy}
    envs = [
        ThirtyOneEnv(n, rules, [named[o]() if isinstance(o, str) else o for o in make()], **kw)
        for _ in range(games)
    ]
    for i, env in enumerate(envs):
        o, info = env.reset(seed=seed + i)
        assert np.array_equal(obs[i], o)
    rng = np.random.default_rng(3)
    episodes = 0
    for _ in range(steps):
        masks = vec.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, done, _, info = vec.step(actions)
        for i, env in enumerate(envs):
            o, r, d, _, single = env.step(int(actions[i]))
            assert (bool(done[i]), float(rewards[i])) == (d, r), f"game {i}"
            if d:
                assert np.array_equal(info["final_obs"][i], o)
                o, single = env.reset()
                episodes += 1
            assert np.array_equal(obs[i], o), f"game {i}"
            assert np.array_equal(vec.action_masks()[i], single["action_mask"])
    return episodes


@pytest.mark.parametrize(
    ("rules", "n", "make", "kw"),
    [
        ("standard", 4, lambda: [ViewGreedy(), "greedy", FlatFirst()], {}),
        ("pagat", 3, lambda: [ViewRandom(), ViewGreedy()], {"seat": 1}),  # reshuffles
        ("blitz31", 4, lambda: [ViewRandom(), "random", ViewRandom()], {"episode": "round"}),
        ("dutch", 5, lambda: [FlatFirst(), ViewGreedy(), "greedy", ViewRandom()], {"reward": "win"}),
        ("cut_throat", 3, lambda: [BatchedGreedy(), BatchedFlat()], {}),
    ],
)
def test_external_seats_play_the_single_env_games(rules, n, make, kw):
    """Each game's own players (random ones drawing from that game's generator) at the
    seats the kernels do not play: the same games as the single env, over episodes."""
    assert _play_both(n, rules, make, **kw) > 10


def test_a_shared_batched_player_is_asked_once_per_round_of_waiting_games():
    """One player object for every game and seat: each call answers every game waiting
    on it (many rows a call), and the games are still the single env's."""
    shared = BatchedGreedy()
    games = 64
    vec = ThirtyOneVectorEnv(games, 4, "standard", opponents=shared, seat=0)
    vec.reset(seed=5)
    envs = [ThirtyOneEnv(4, "standard", [GreedyPolicy()] * 3, seat=0) for _ in range(games)]
    obs0 = [e.reset(seed=5 + i)[0] for i, e in enumerate(envs)]
    shared.calls = shared.rows = 0
    for _ in range(20):
        actions = vec.action_masks().argmax(axis=1)
        obs, rewards, done, _, _ = vec.step(actions)
        for i, env in enumerate(envs):
            o, r, d, _, _ = env.step(int(actions[i]))
            if d:
                o, _ = env.reset()
            assert np.array_equal(obs[i], o) and r == rewards[i]
    assert shared.rows / shared.calls > 10  # batched, not one game a call
    assert obs0  # (the first observations were checked equal by the step loop's start)


class Wrong:
    obs_encoding = "view"

    def __init__(self, answer):
        self.answer = answer

    def act(self, observation, action_mask):
        return self.answer(np.asarray([action_mask]))[0]

    def act_batch(self, observations, masks):
        return self.answer(masks)


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (lambda m: np.zeros(len(m) + 1, dtype=np.int64), r"shape \(\d+,\)"),
        (lambda m: np.zeros(len(m), dtype=np.float64), "dtype float64"),
        (lambda m: np.full(len(m), 57, dtype=np.int64), "chose 57: not a legal action"),
        (lambda m: (m == 0).argmax(axis=1), "not a legal action"),
    ],
)
def test_an_act_batch_answer_of_the_wrong_shape_or_illegal_names_the_player_and_game(answer, message):
    vec = ThirtyOneVectorEnv(8, 3, "standard", opponents=[Wrong(answer), "greedy"], seat=0)
    with pytest.raises(IllegalActionError, match=message) as err:
        vec.reset(seed=0)
        for _ in range(5):
            vec.step(vec.action_masks().argmax(axis=1))
    assert "Wrong" in str(err.value) and "game" in str(err.value)


def test_a_plain_act_that_answers_illegally_names_the_player_game_and_legal_actions():
    class Bad:
        obs_encoding = "flat"

        def act(self, observation, action_mask):
            return 55  # a discard id no hand holds at the start

    vec = ThirtyOneVectorEnv(4, 3, "standard", opponents=lambda: [Bad(), "greedy"], seat=0)
    with pytest.raises(
        IllegalActionError, match=r"opponent Bad in game \d \(seat 1, draw phase\) chose 55.*legal: 0"
    ):
        vec.reset(seed=0)
        for _ in range(4):
            vec.step(vec.action_masks().argmax(axis=1))


def test_bad_opponents_are_named_before_any_game():
    with pytest.raises(ValueError, match=r"opponents\[1\]: .* has no act"):
        ThirtyOneVectorEnv(2, 3, opponents=["greedy", object()])
    with pytest.raises(ValueError, match="game 0 got"):
        ThirtyOneVectorEnv(2, 3, opponents=lambda: ["greedy"])

    class Odd(GreedyPolicy):
        obs_encoding = "pixels"

    with pytest.raises(ValueError, match="obs_encoding='pixels'"):
        ThirtyOneVectorEnv(2, 3, opponents=Odd())


class LeagueLike:
    """A seat that becomes another player each episode (drawn from the game's
    generator) and says which (``delegate``): greedy ones then run in the kernels and
    the shared batched one is asked for all its games at once."""

    obs_encoding = "view"

    def __init__(self, pool):
        self.pool = pool
        self.current = pool[0]

    def reset(self, rng):
        self.current = self.pool[int(rng.integers(len(self.pool)))]
        if hasattr(self.current, "reset"):
            self.current.reset(rng)

    def delegate(self):
        return self.current

    def act(self, observation, action_mask):
        return self.current.act(observation, action_mask)


def test_delegating_seats_play_the_single_env_games_and_batch_their_shared_players():
    shared = BatchedGreedy()

    def pool():
        return [shared, GreedyPolicy(knock_at=22), RandomPolicy(), ViewRandom()]

    def make():
        return [LeagueLike(pool()), LeagueLike(pool())]

    assert _play_both(3, "standard", make, games=8, steps=300) > 10
    vec = ThirtyOneVectorEnv(64, 3, "standard", opponents=make, seat=0)
    vec.reset(seed=1)
    shared.calls = shared.rows = 0
    for _ in range(30):
        vec.step(vec.action_masks().argmax(axis=1))
    assert shared.rows / shared.calls > 4  # many games' seats in one call


class Recorder(GreedyPolicy):
    """Greedy that keeps every view it is shown (one game at a time or batched)."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def act(self, observation, action_mask):
        self.seen.append((observation, action_mask.tolist()))
        return super().act(observation, action_mask)


class BatchRecorder(Recorder):
    def act_batch(self, observations, masks):
        return np.array([self.act(observations.view(k), masks[k]) for k in range(len(masks))])


@pytest.mark.parametrize(("rules", "n"), [("standard", 4), ("pagat", 3), ("dutch", 6)])
def test_the_kernels_show_an_external_seat_exactly_the_engines_view(rules, n):
    """Every view (and mask) the kernels build for a seat equals the Python engine's
    PlayerView of that seat at that moment: own hand, public cards, discards, known
    cards, lives; nothing hidden, nothing missing."""
    games = 4
    made = []

    def make():
        made.append([BatchRecorder() for _ in range(n - 1)])
        return made[-1]

    _play_both(n, rules, make, games=games, steps=150)
    # made[:games] sat in the vector env, made[games:] in the single envs, game for game
    for vec_players, env_players in zip(made[:games], made[games:], strict=True):
        for a, b in zip(vec_players, env_players, strict=True):
            assert len(a.seen) == len(b.seen) > 20
            assert a.seen == b.seen


@pytest.mark.parametrize(("rules", "n"), [("standard", 4), ("blitz31", 4), ("cut_throat", 3), ("dutch", 5)])
def test_batched_expert_blitz31_and_network_seats_play_the_single_env_games(rules, n):
    """The batched players at external seats (one object for every game) play what
    their act plays in the single env: the same games, step for step."""
    from agents.blitz31 import Blitz31Player
    from agents.expert import ExpertPlayer

    players = [ExpertPlayer(), Blitz31Player(), ExpertPlayer(horizon=2)][: n - 1]
    players += [ExpertPlayer()] * (n - 1 - len(players))
    if (rules, n) == ("standard", 4):
        from agents.ppo import PPOPlayer

        players[2] = PPOPlayer()  # the shipped agent is for 4 players, standard rules
    assert _play_both(n, rules, lambda: players, games=6, steps=300) > 5
