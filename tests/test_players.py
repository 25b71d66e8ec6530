"""Built-in players: legal play, reproducibility, the registry, whole games."""

import numpy as np
import pytest

import agents
from thirtyone_env.actions import KNOCK, TAKE_DISCARD
from thirtyone_env.engine import new_game, stacked_deck
from thirtyone_env.match import play_game
from thirtyone_env.policies import GreedyPolicy, RandomPolicy
from thirtyone_env.views import player_view


def test_registry_makes_players_and_rejects_unknown_names():
    assert isinstance(agents.make("random"), RandomPolicy)
    assert agents.make("greedy", knock_at=20).knock_at == 20
    with pytest.raises(ValueError, match=r"unknown player 'expertt'.*random"):
        agents.make("expertt")


def test_rule_player_knocks_high_and_takes_a_useful_discard():
    rng = np.random.default_rng(0)
    deck = stacked_deck(["As Ks 9d", "2c 3c 5h", "4d 6d 8h"], upcard="Qs", dealer=2)
    s = new_game(None, 3, rng, dealer=2, deck=deck)
    from thirtyone_env.engine import legal_mask

    rule = GreedyPolicy(knock_at=25)
    assert rule.act(player_view(s, 0), legal_mask(s)) == TAKE_DISCARD  # Qs makes 31
    deck = stacked_deck(["As Ks 9s", "2c 3c 5h", "4d 6d 8h"], upcard="2d", dealer=2)
    s = new_game(None, 3, rng, dealer=2, deck=deck)
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
