"""Players draw from their own generator, never the one that deals: a player that
copies what it is handed cannot deal the table's cards from it, and the cards dealt
under a seed are the same whatever the players draw."""

import copy

import numpy as np

from thirtyone_env import ThirtyOneEnv
from thirtyone_env.envs.vector import ThirtyOneVectorEnv
from thirtyone_env.game.engine import new_game
from thirtyone_env.game.player_stream import players_generator
from thirtyone_env.game.policies import GreedyPolicy, RandomPolicy
from thirtyone_env.harness.match import play_game


class Spy(GreedyPolicy):
    """Plays greedy; keeps a copy of each generator it is handed and draws from it
    ``burn`` times (as a sampling player would)."""

    def __init__(self, burn: int = 0) -> None:
        super().__init__()
        self.burn = burn
        self.copies: list[np.random.Generator] = []

    def reset(self, rng: np.random.Generator) -> None:
        self.copies.append(copy.deepcopy(rng))
        rng.integers(1000, size=self.burn)


def test_the_players_generator_matches_its_numba_derivation():
    from thirtyone_env.envs.batch_rng import ROW, derive_players, state_row

    for seed in range(20):
        rng = np.random.default_rng(seed)
        rng.integers(7, size=seed)  # (any state, the 32-bit buffer too)
        rows = np.zeros((2, ROW), dtype=np.uint64)
        rows[0] = state_row(rng)
        derive_players(rows, 0, 1)
        players = players_generator(rng)
        np.testing.assert_array_equal(rows[0], state_row(rng))  # the table's is not advanced
        np.testing.assert_array_equal(rows[1], state_row(players))
        assert players.integers(1 << 30, size=8).tolist() != rng.integers(1 << 30, size=8).tolist()


def test_any_table_generator_gives_the_players_their_own():
    for bits in (np.random.Philox, np.random.MT19937, np.random.SFC64):
        table = np.random.Generator(bits(3))
        ahead = np.random.Generator(bits(3)).integers(1 << 30, size=4).tolist()
        players = players_generator(table).integers(1 << 30, size=4).tolist()
        assert table.integers(1 << 30, size=4).tolist() == ahead  # not advanced
        assert players != ahead
        again = players_generator(np.random.Generator(bits(3))).integers(1 << 30, size=4).tolist()
        other = players_generator(np.random.Generator(bits(4))).integers(1 << 30, size=4).tolist()
        assert players == again and players != other


def test_a_player_cannot_deal_the_tables_cards_from_its_generator():
    spy = Spy()
    env = ThirtyOneEnv(4, "standard", [spy, GreedyPolicy(), GreedyPolicy()], seat=0)
    env.reset(seed=3)
    dealt = env.unwrapped._table.state
    (mine,) = spy.copies
    assert mine is not env.np_random
    guess = new_game(env.rules, 4, mine)
    assert guess.hands != dealt.hands and guess.stock != dealt.stock


def test_the_deal_does_not_depend_on_what_the_players_draw():
    """(The compiled backend plays the Python env's games, random opponents included:
    ``test_kernel_mirror``, ``test_vector``.)"""

    def first_observation(opponents):
        env = ThirtyOneEnv(4, "standard", opponents, seat="random")
        obs, info = env.reset(seed=11)
        return obs, info["seat"]

    quiet = first_observation([GreedyPolicy(), GreedyPolicy(), GreedyPolicy()])
    busy = first_observation([Spy(burn=997), Spy(burn=3), GreedyPolicy()])
    assert np.array_equal(quiet[0], busy[0]) and quiet[1] == busy[1]


def test_the_batched_games_hand_their_own_players_the_single_envs_generator():
    """A game's own player in the batched env gets the generator a single env with the
    same seed hands it, and neither holds the generator that deals."""
    single, batched = Spy(), Spy()
    ThirtyOneEnv(3, "standard", [single, GreedyPolicy()], seat=0).reset(seed=7)
    rows = iter([[batched, GreedyPolicy()], [RandomPolicy(), GreedyPolicy()]])
    venv = ThirtyOneVectorEnv(2, 3, "standard", lambda: next(rows), seat=0)
    venv.reset(seed=[7, 8])
    assert single.copies[0].bit_generator.state == batched.copies[0].bit_generator.state
    assert single.copies[0].bit_generator.state != np.random.default_rng(7).bit_generator.state


def test_random_players_change_no_card_of_the_game_record():
    """Two games from one seed, one with random players in two seats: every deal's
    hands of round 1 are the same (later rounds follow the play)."""

    def game(players):
        return play_game(players, np.random.default_rng(5), "standard", keep_history=True)

    a = game([GreedyPolicy(), GreedyPolicy(), GreedyPolicy()])
    b = game([GreedyPolicy(), RandomPolicy(), RandomPolicy()])
    assert a.histories[0][0] == b.histories[0][0]  # the first deal
