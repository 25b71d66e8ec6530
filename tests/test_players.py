"""Built-in players: legal play, reproducibility, the registry, whole games."""

import numpy as np
import pytest
from conftest import deal, random_moves, swap_hidden

import agents
from thirtyone_env.game.actions import KNOCK, TAKE_DISCARD
from thirtyone_env.game.cards import parse_cards
from thirtyone_env.game.engine import legal_actions, legal_mask, new_game, stacked_deck
from thirtyone_env.game.policies import GreedyPolicy, RandomPolicy
from thirtyone_env.game.views import player_view
from thirtyone_env.harness.match import play_game


def test_registry_makes_players_and_rejects_unknown_names():
    assert isinstance(agents.make("random"), RandomPolicy)
    assert agents.make("greedy", knock_at=20).knock_at == 20
    with pytest.raises(ValueError, match=r"unknown player 'expertt'.*random"):
        agents.make("expertt")


def test_rule_player_knocks_high_and_takes_a_useful_discard():
    s, _ = deal(["As Ks 9d", "2c 3c 5h", "4d 6d 8h"], "Qs", dealer=2)
    rule = GreedyPolicy(knock_at=25)
    assert rule.act(player_view(s, 0), legal_mask(s)) == TAKE_DISCARD  # Qs makes 31
    s, _ = deal(["As Ks 9s", "2c 3c 5h", "4d 6d 8h"], "2d", dealer=2)
    assert rule.act(player_view(s, 0), legal_mask(s)) == KNOCK  # 30 >= 25


def test_games_between_players_are_reproducible_and_end():
    players = [GreedyPolicy(), RandomPolicy(), GreedyPolicy(knock_at=21), RandomPolicy()]
    a = play_game(players, np.random.default_rng(9), "pagat")
    b = play_game(players, np.random.default_rng(9), "pagat")
    assert a == b
    assert len(a.winners) >= 1 and all(a.lives[w] >= 0 for w in a.winners)


def test_game_records_account_for_every_life():
    rec = play_game([GreedyPolicy(), RandomPolicy(), GreedyPolicy()], np.random.default_rng(1), None)
    lives = [4, 4, 4]
    for r in rec.rounds:
        dealt = [p for p in range(3) if r.values[p] is not None]
        for p in range(3):
            if p in dealt:
                assert r.lives_after[p] == max(0, lives[p] - r.losses[p])
            else:
                assert r.losses[p] == 0 and r.lives_after[p] == lives[p]
        lives = list(r.lives_after)
    assert tuple(lives) == rec.lives


FAST = {"random": {}, "greedy": {}, "blitz31": {}, "expert": {}, "search": {"worlds": 3}}


@pytest.mark.parametrize("name", list(FAST))
@pytest.mark.parametrize(("rules", "n"), [("standard", 4), ("pagat", 2), ("dutch", 6), ("blitz31", 4)])
def test_every_player_plays_legally_and_reproducibly(name, rules, n):
    """play_game raises IllegalActionError on any illegal move; same seed, same game."""
    players = [agents.make(name, **FAST[name]) for _ in range(n)]
    a = play_game(players, np.random.default_rng(21), rules)
    players = [agents.make(name, **FAST[name]) for _ in range(n)]
    b = play_game(players, np.random.default_rng(21), rules)
    assert a == b


@pytest.mark.parametrize("name", list(FAST))
def test_players_choice_cannot_depend_on_unseen_cards(name):
    """Swap an opponent's unseen card with a stock card: same choice (same rng)."""
    rng = np.random.default_rng(8)
    checked = 0
    for _ in range(25):
        s = random_moves(new_game(None, 4, rng), rng, 14)
        if not legal_actions(s) or not s.stock:
            continue
        me = s.current
        t = swap_hidden(s, me, rng)
        assert player_view(s, me) == player_view(t, me)
        p1, p2 = agents.make(name, **FAST[name]), agents.make(name, **FAST[name])
        for p in (p1, p2):
            if hasattr(p, "reset"):
                p.reset(np.random.default_rng(5))
        assert p1.act(player_view(s, me), legal_mask(s)) == p2.act(player_view(t, me), legal_mask(t))
        checked += 1
    assert checked >= 10


def test_from_spec_parses_options_and_rejects_bad_ones():
    assert agents.from_spec("greedy:knock_at=27").knock_at == 27
    assert agents.from_spec("search:worlds=5,confidence=0.5").worlds == 5
    with pytest.raises(ValueError, match="expected key=value"):
        agents.from_spec("greedy:27")
    with pytest.raises(ValueError, match="bad options for player 'blitz31'"):
        agents.from_spec("blitz31:speed=3")


def test_blitz31_keeps_its_master_suit_and_knocks_by_stock():
    from agents.blitz31 import master_suit

    assert master_suit(tuple(parse_cards("Ah 9h 2c"))) == 2
    rng = np.random.default_rng(0)
    deck = stacked_deck(["Ks Qs 6s", "2c 3c 5h", "4d 6d 8h"], upcard="2d", dealer=2)
    s = new_game(None, 3, rng, dealer=2, deck=deck)
    b = agents.make("blitz31")
    assert b.act(player_view(s, 0), legal_mask(s)) == KNOCK  # 26 > 25 with a full stock
    s.stock = s.stock[-19:]  # fewer than 20 left: needs more than 29
    assert b.act(player_view(s, 0), legal_mask(s)) != KNOCK


@pytest.mark.parametrize("name", ["greedy", "expert", "blitz31", "search"])
def test_a_view_player_given_a_flat_observation_says_what_it_reads(name):
    import gymnasium as gym

    import thirtyone_env  # noqa: F401  (registers the env)

    obs, info = gym.make("ThirtyOne-v1").reset(seed=0)
    with pytest.raises(TypeError, match=r"reads a PlayerView \(its obs_encoding is 'view'\), not a ndarray"):
        agents.make(name).act(obs, info["action_mask"])


def test_the_tables_kept_for_option_values_are_bounded():
    """A server's players may ask for any value of an option: the tables built for each
    value (a few MB each) are kept for the most recent ones only, so memory stays bounded
    however many values come."""
    from agents import expert, populations

    for table in (expert._potential, expert._tables, expert._batch_tables, populations.member_params):
        assert table.cache_info().maxsize is not None, table.__name__
    assert expert._potential.cache_info().maxsize <= 16  # at most ~100 MB of triples
