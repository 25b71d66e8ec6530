"""Games that start at a standing (``new_game(lives=...)``, the env's ``lives`` reset
option): exact outcomes on stacked decks and the checks of a standing."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import card

from thirtyone_env import ThirtyOneEnv
from thirtyone_env.game.engine import GAME_OVER, ROUND_OVER, new_game, stacked_deck, start_round
from thirtyone_env.game.policies import RandomPolicy

H31 = "Ah Kh Qh"
H15 = "Tc 5c 2d"


def test_a_dealt_31_ends_a_heads_up_game_whose_other_seat_is_on_the_bike():
    """Seats 0 and 2 out, seat 1 on the bike (0 lives), seat 3 at 2: seat 3's dealt 31
    costs seat 1 its ride and ends the game; the seats out were dealt nothing."""
    deck = stacked_deck([None, H15, None, H31], upcard="5h", dealer=1)
    s = new_game("standard", 4, np.random.default_rng(0), dealer=1, deck=deck, lives=[None, 0, None, 2])
    assert s.hands[0] == [] and s.hands[2] == []
    assert s.hands[3] == [card(c) for c in H31.split()]
    assert (s.result.reason, s.result.detail, s.result.losses) == ("blitz", "dealt", (0, 1, 0, 0))
    assert s.phase == GAME_OVER and s.winners == (3,)
    assert s.active == [False, False, False, True]


def test_a_seat_losing_its_last_life_rides_free_and_the_deal_passes_to_a_seat_in():
    deck = stacked_deck([H15, None, H31, None], upcard="5h", dealer=0)
    rng = np.random.default_rng(0)
    s = new_game("standard", 4, rng, dealer=0, deck=deck, lives=[1, None, 1, None])
    assert s.phase == ROUND_OVER
    assert s.lives == [0, 0, 1, 0] and s.active == [True, False, True, False]  # seat 0 on the bike
    start_round(s, rng)
    assert s.dealer == 2
    assert [len(h) for h in s.hands] == [3, 0, 3, 0]
    assert s.current == 0  # the seat after the dealer that is still in


def test_the_drawn_dealer_is_a_seat_in_the_game():
    dealers = {
        new_game("standard", 4, np.random.default_rng(k), lives=[None, 3, None, 3]).dealer for k in range(40)
    }
    assert dealers == {1, 3}


@pytest.mark.parametrize(
    ("rules", "lives", "message"),
    [
        ("standard", [3, 3, 3], "3 entries for 4 seats"),
        ("standard", [True, 3, None, None], "seat 0 has True"),
        ("standard", [5, 3, None, None], "0..4 lives"),
        ("standard", [2.0, 3, None, None], "seat 0 has 2.0"),
        ("standard", [2, None, None, None], "two seats in"),
        ("standard", "3333", "one entry per seat"),
        ("cut_throat", [0, 2, 2, 2], "1..3 lives"),  # no free ride: 0 lives is out
        ("no_elimination", [2, 2, 2, 2], "these rules score points"),
    ],
)
def test_a_bad_standing_is_named(rules, lives, message):
    with pytest.raises(ValueError, match=message):
        new_game(rules, 4, np.random.default_rng(0), lives=lives)


def test_the_env_starts_at_a_standing_and_the_seats_out_never_play():
    env = ThirtyOneEnv(4, "standard", RandomPolicy(), seat=1)
    with pytest.raises(ValueError, match="agent's seat 1 must be in"):
        env.reset(seed=0, options={"lives": [2, None, 2, None]})
    obs, info = env.reset(seed=0, options={"lives": [None, 2, None, 1]})
    assert info["lives"] == (0, 2, 0, 1)
    lives = env.obs_layout.slices["lives"]
    assert obs[lives].tolist() == [0.5, 0.0, 0.25, 0.0]  # relative to the agent: self first
    rng = np.random.default_rng(3)
    done = False
    while not done:
        assert env.state.hands[0] == [] and env.state.hands[2] == []
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        _, _, done, _, info = env.step(action)
    assert env.state.phase == GAME_OVER and env.state.winners in ((1,), (3,))
    fast = ThirtyOneEnv(4, "standard", backend="compiled")
    with pytest.raises(ValueError, match="need backend='python'"):
        fast.reset(seed=0, options={"lives": [None, 2, None, 1]})
