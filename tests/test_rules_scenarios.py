"""Stacked-deck scenarios: one test per rule and per option value of docs/RULES.md.

Each test deals known hands (``stacked_deck``), plays a scripted sequence of actions and
checks the exact outcome: who acts next, which actions are legal, how the round ends,
who loses how many lives. Where the engine disagrees with docs/RULES.md the test keeps the
spec's expectation and is marked ``xfail(strict=True)``.

Seat conventions used below: with 3 players and ``dealer=2`` seat 0 plays first, then
1, then 2; with 2 players and ``dealer=1`` seat 0 plays first.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import card, deal, disc, play

from thirtyone_env.game.actions import DRAW_STOCK, KNOCK, STAND, TAKE_DISCARD, discard_action
from thirtyone_env.game.cards import DECKS, parse_card
from thirtyone_env.game.engine import (
    DISCARD,
    DRAW,
    GAME_OVER,
    ROUND_OVER,
    IllegalActionError,
    apply_action,
    card_locations,
    legal_actions,
    legal_mask,
    new_game,
    stacked_deck,
    start_round,
)
from thirtyone_env.game.rules import Rules

# Hands reused across scenarios, with their values in the standard game.
H15 = "Tc 5c 2d"  # clubs 15
H15B = "9h 6h 3s"  # hearts 15
H15C = "Td 5d 2h"  # diamonds 15
H13 = "8s 5s 4h"  # spades 13
H20 = "Ks Qs 4d"  # spades 20
H21 = "Ah Kh 2c"  # hearts 21: Qh makes 31
H31 = "As Js Ts"  # spades 31
H31B = "Ah Kh Jh"  # hearts 31


def legal(s):
    """The legal actions as a list (the engine may return any sequence)."""
    return list(legal_actions(s))


def hand_set(s, seat):
    return sorted(s.hands[seat])


def cards(text):
    return sorted(parse_card(t) for t in text.split())


def cycle_stock(s, rng, stop_at=0):
    """Every player draws the stock and discards the drawn card (hands never change)
    until ``stop_at`` cards are left in the stock; returns the number of turns."""
    turns = 0
    while len(s.stock) > stop_at:
        assert s.phase == DRAW
        top = s.stock[-1]
        apply_action(s, DRAW_STOCK, rng)
        apply_action(s, discard_action(top), rng)
        turns += 1
    return turns


def turn_seats_since(s, index):
    """Seats that started a turn action (draw, take, knock, stand) in history[index:]."""
    kinds = ("draw_stock", "take_discard", "knock", "stand")
    return [seat for kind, seat, _ in s.history[index:] if kind in kinds]


# --------------------------------------------------------------------------- the deal


def test_deal_order_one_card_at_a_time_from_dealers_left_then_upcard_then_stock():
    # Raw deck (not via stacked_deck): dealer 1 of 3 deals to seats 2, 0, 1, 2, 0, 1, ...
    deck = "2c 3c 4c 5c 6c 7c 8c 9c Tc Jc Qc Kc"
    s = new_game(Rules(), 3, np.random.default_rng(0), dealer=1, deck=deck)
    assert s.hands[2] == [card("2c"), card("5c"), card("8c")]
    assert s.hands[0] == [card("3c"), card("6c"), card("9c")]
    assert s.hands[1] == [card("4c"), card("7c"), card("Tc")]
    assert s.discard == [card("Jc")]
    assert s.stock[-1] == card("Qc")
    assert s.stock[-2] == card("Kc")
    assert len(s.stock) == 52 - 10
    assert s.current == 2  # the dealer's left plays first
    assert s.phase == DRAW
    assert legal(s) == [DRAW_STOCK, TAKE_DISCARD, KNOCK]


def test_legal_mask_matches_legal_actions():
    s, rng = deal([H20, H15, H13], "5h", "8h", dealer=2)
    assert legal_mask(s).tolist() == [1, 1, 1] + [0] * 53
    play(s, rng, KNOCK)
    mask = legal_mask(s)
    assert np.flatnonzero(mask).tolist() == [DRAW_STOCK, TAKE_DISCARD, STAND]
    play(s, rng, DRAW_STOCK)
    assert np.flatnonzero(legal_mask(s)).tolist() == sorted(disc(t) for t in (*H15.split(), "8h"))


# --------------------------------------------------------------------------- dealt 31


def test_dealt_31_one_player_blitz_others_lose_one():
    s, _ = deal([H31, H15, "Kd Qd Jd"], "5h", dealer=2)
    assert s.phase == ROUND_OVER
    r = s.result
    assert (r.reason, r.detail) == ("blitz", "dealt")
    assert r.blitzers == (0,)
    assert r.values == (31, 15, 30)
    assert r.losses == (0, 1, 1)  # 30 is not 31: it loses too
    assert s.lives == [4, 3, 3]
    assert legal(s) == []
    with pytest.raises(IllegalActionError):
        apply_action(s, DRAW_STOCK)


def test_dealt_31_two_players_both_safe_rest_lose_one():
    s, _ = deal([H31, H15, H31B], "5h", dealer=2)
    r = s.result
    assert (r.reason, r.detail) == ("blitz", "dealt")
    assert r.blitzers == (0, 2)
    assert [e for e in s.history if e[0] == "blitz"] == [("blitz", 0, "dealt"), ("blitz", 2, "dealt")]
    assert r.losses == (0, 1, 0)
    assert s.lives == [4, 3, 4]
    assert s.phase == ROUND_OVER


# --------------------------------------------------------------------------- blitz


def test_blitz_mid_round_ends_round_at_once():
    s, rng = deal(["Ac Kc 2h", H15, H20], "5h", "Qc", dealer=2)
    play(s, rng, DRAW_STOCK, disc("2h"))
    r = s.result
    assert s.phase == ROUND_OVER
    assert (r.reason, r.detail) == ("blitz", "turn")
    assert r.blitzers == (0,)
    assert r.losses == (0, 1, 1)
    assert s.lives == [4, 3, 3]
    assert turn_seats_since(s, 0) == [0]  # seats 1 and 2 never played
    assert legal(s) == []


# --------------------------------------------------------------------------- showdown


@pytest.mark.parametrize(
    ("knocker_tie", "losses"),
    [("knocker_pays", (1, 0, 0)), ("knocker_safe", (0, 1, 0)), ("all_lose", (1, 1, 0))],
)
def test_knocker_tied_for_lowest(knocker_tie, losses):
    s, rng = deal([H15, H15B, H20], "5h", dealer=2, rules=Rules(knocker_tie=knocker_tie))
    assert legal(s) == [DRAW_STOCK, TAKE_DISCARD, KNOCK]  # knock on turn 1 (default)
    play(s, rng, KNOCK, STAND, STAND)
    r = s.result
    assert s.phase == ROUND_OVER
    assert r.reason == "knock"
    assert r.knocker == 0
    assert r.values == (15, 15, 20)
    assert r.losses == losses
    assert s.lives == [4 - x for x in losses]


def test_knocker_tie_default_is_knocker_pays():
    assert Rules().knocker_tie == "knocker_pays"
    s, rng = deal([H15, H15B, H20], "5h", dealer=2)
    play(s, rng, KNOCK, STAND, STAND)
    assert s.result.losses == (1, 0, 0)


def test_knocker_strictly_lowest_pays_penalty_two():
    s, rng = deal([H13, H15, H20], "5h", dealer=2)
    play(s, rng, KNOCK, STAND, STAND)
    assert s.result.values == (13, 15, 20)
    assert s.result.losses == (2, 0, 0)
    assert s.lives == [2, 4, 4]


def test_knocker_penalty_option_three():
    s, rng = deal([H13, H15, H20], "5h", dealer=2, rules=Rules(knocker_penalty=3))
    play(s, rng, KNOCK, STAND, STAND)
    assert s.result.losses == (3, 0, 0)
    assert s.lives == [1, 4, 4]


def test_single_lowest_non_knocker_loses_one():
    s, rng = deal([H20, H13, H15], "5h", dealer=2)
    play(s, rng, KNOCK, STAND, STAND)
    assert s.result.losses == (0, 1, 0)
    assert s.lives == [4, 3, 4]


def test_several_tied_for_lowest_all_lose_one():
    s, rng = deal([H20, H15, H15C], "5h", dealer=2)
    play(s, rng, KNOCK, STAND, STAND)
    assert s.result.values == (20, 15, 15)
    assert s.result.losses == (0, 1, 1)
    assert s.lives == [4, 3, 3]


# --------------------------------------------------------------------------- after a knock


def test_stand_after_knock_true_stand_is_legal_and_keeps_hand():
    s, rng = deal([H20, H15, H13], "5h", dealer=2, rules=Rules(stand_after_knock=True))
    play(s, rng, KNOCK)
    assert s.current == 1
    assert legal(s) == [DRAW_STOCK, TAKE_DISCARD, STAND]
    before = list(s.hands[1])
    stock_before, discard_before = list(s.stock), list(s.discard)
    play(s, rng, STAND)
    assert s.hands[1] == before
    assert (s.stock, s.discard) == (stock_before, discard_before)
    assert s.current == 2
    assert legal(s) == [DRAW_STOCK, TAKE_DISCARD, STAND]
    assert KNOCK not in legal_actions(s)  # only one knock per round


def test_stand_after_knock_false_stand_is_illegal():
    s, rng = deal([H20, H15, H13], "5h", "8h", dealer=2, rules=Rules(stand_after_knock=False))
    play(s, rng, KNOCK)
    assert s.current == 1
    assert legal(s) == [DRAW_STOCK, TAKE_DISCARD]
    with pytest.raises(IllegalActionError):
        apply_action(s, STAND, rng)
    assert (s.current, s.phase) == (1, DRAW)
    play(s, rng, DRAW_STOCK, disc("8h"))
    assert s.current == 2
    assert legal(s) == [DRAW_STOCK, TAKE_DISCARD]


def test_round_ends_after_knockers_right_each_other_player_one_turn():
    # 4 players, dealer 0: seat 1 plays first; seat 2 knocks on its first turn.
    hands = [H20, H15, "9h 8h 3s", "Jd 7d 2s"]
    s, rng = deal(hands, "5h", "3h 4c 5s 6c", dealer=0)
    assert s.current == 1
    play(s, rng, DRAW_STOCK, disc("3h"))
    assert s.current == 2
    mark = len(s.history)
    play(s, rng, KNOCK)
    assert s.current == 3
    play(s, rng, DRAW_STOCK, disc("4c"))
    assert s.current == 0
    play(s, rng, STAND)
    assert s.current == 1  # the knocker's right: the last turn
    assert s.phase == DRAW
    play(s, rng, DRAW_STOCK, disc("5s"))
    assert s.phase == ROUND_OVER
    assert turn_seats_since(s, mark) == [2, 3, 0, 1]  # knocker once, then each other once
    r = s.result
    assert r.reason == "knock"
    assert r.knocker == 2
    assert r.values == (20, 15, 17, 17)
    assert r.losses == (0, 1, 0, 0)


def test_knocker_never_acts_again_two_players():
    s, rng = deal([H15, H20], "5h", "8h", dealer=1)
    play(s, rng, DRAW_STOCK, disc("8h"))
    assert s.current == 1
    play(s, rng, KNOCK)
    assert s.current == 0
    play(s, rng, STAND)
    assert s.phase == ROUND_OVER  # the knocker (1) gets no further turn
    assert turn_seats_since(s, 0) == [0, 1, 0]
    assert s.result.losses == (1, 0)


def test_two_players_may_take_back_own_discard_after_knock():
    s, rng = deal([H15, H20], "3h", "9c", dealer=1)
    play(s, rng, DRAW_STOCK, disc("5c"))  # seat 0: Tc 2d 9c = 19
    play(s, rng, KNOCK)  # seat 1 knocks with 20
    assert s.current == 0
    assert s.discard[-1] == card("5c")  # seat 0's own last discard
    assert legal(s) == [DRAW_STOCK, TAKE_DISCARD, STAND]
    play(s, rng, TAKE_DISCARD)
    assert s.phase == DISCARD
    play(s, rng, disc("2d"))  # Tc 9c 5c = 24
    assert s.phase == ROUND_OVER
    r = s.result
    assert r.values == (24, 20)
    assert r.losses == (0, 2)  # knocker strictly lowest


# --------------------------------------------------------------------------- discard return


def test_allow_discard_return_false_card_taken_cannot_be_discarded():
    s, rng = deal([H15, H20, H13], "9c", dealer=2, rules=Rules(allow_discard_return=False))
    play(s, rng, TAKE_DISCARD)
    assert s.phase == DISCARD
    assert legal(s) == sorted(disc(t) for t in H15.split())
    with pytest.raises(IllegalActionError):
        apply_action(s, disc("9c"), rng)
    assert (s.phase, s.current, len(s.hands[0])) == (DISCARD, 0, 4)
    play(s, rng, disc("2d"))
    assert hand_set(s, 0) == cards("Tc 5c 9c")
    assert s.discard[-1] == card("2d")
    assert s.current == 1


def test_allow_discard_return_true_card_taken_can_be_discarded():
    s, rng = deal([H15, H20, H13], "9c", dealer=2, rules=Rules(allow_discard_return=True))
    play(s, rng, TAKE_DISCARD)
    assert legal(s) == sorted(disc(t) for t in (*H15.split(), "9c"))
    play(s, rng, disc("9c"))
    assert hand_set(s, 0) == cards(H15)
    assert s.discard == [card("9c")]
    assert s.current == 1


@pytest.mark.parametrize("allow", [False, True])
def test_stock_card_can_always_be_discarded_at_once(allow):
    s, rng = deal([H15, H20, H13], "9c", "8h", dealer=2, rules=Rules(allow_discard_return=allow))
    play(s, rng, DRAW_STOCK)
    assert legal(s) == sorted(disc(t) for t in (*H15.split(), "8h"))
    play(s, rng, disc("8h"))
    assert s.discard[-1] == card("8h")
    assert hand_set(s, 0) == cards(H15)
    assert s.current == 1


# --------------------------------------------------------------------------- knock_from_turn


def test_knock_from_turn_two_no_knock_on_first_turn():
    s, rng = deal([H15, H20], "5h", "8h 7h", dealer=1, rules=Rules(knock_from_turn=2))
    assert legal(s) == [DRAW_STOCK, TAKE_DISCARD]
    with pytest.raises(IllegalActionError):
        apply_action(s, KNOCK, rng)
    play(s, rng, DRAW_STOCK, disc("8h"))
    assert s.current == 1
    assert legal(s) == [DRAW_STOCK, TAKE_DISCARD]  # seat 1's first turn too
    play(s, rng, DRAW_STOCK, disc("7h"))
    assert s.current == 0
    assert legal(s) == [DRAW_STOCK, TAKE_DISCARD, KNOCK]  # seat 0's second turn
    play(s, rng, KNOCK)
    assert s.knocker == 0
    assert s.current == 1


# --------------------------------------------------------------------------- blitz after knock


def test_blitz_after_knock_false_31_scores_at_showdown():
    s, rng = deal([H20, H21, H15], "5h", "Qh", dealer=2, rules=Rules(blitz_after_knock=False))
    play(s, rng, KNOCK, DRAW_STOCK, disc("2c"))  # seat 1 now holds Ah Kh Qh = 31
    assert s.phase == DRAW  # no blitz: the round goes on
    assert s.current == 2
    play(s, rng, STAND)
    r = s.result
    assert r.reason == "knock"
    assert r.blitzers == ()
    assert r.values == (20, 31, 15)
    assert r.losses == (0, 0, 1)


def test_blitz_after_knock_true_31_ends_round_as_blitz():
    s, rng = deal([H20, H21, H15], "5h", "Qh", dealer=2, rules=Rules(blitz_after_knock=True))
    play(s, rng, KNOCK, DRAW_STOCK, disc("2c"))
    assert s.phase == ROUND_OVER
    r = s.result
    assert (r.reason, r.detail) == ("blitz", "turn")
    assert r.blitzers == (1,)
    assert r.losses == (1, 0, 1)  # the knocker loses 1 like every other non-31 hand
    assert turn_seats_since(s, 0) == [0, 1]  # seat 2 never gets its last turn


# --------------------------------------------------------------------------- empty stock


def test_stock_exhausted_void_nobody_loses():
    s, rng = deal([H15, H20], "3h", dealer=1, rules=Rules(stock_exhausted="void"))
    assert len(s.stock) == 45
    assert cycle_stock(s, rng) == 45
    assert s.phase == ROUND_OVER
    r = s.result
    assert (r.reason, r.detail) == ("void", "stock_exhausted")
    assert r.losses == (0, 0)
    assert s.lives == [4, 4]


def test_stock_exhausted_default_is_void():
    s, rng = deal([H15, H20], "3h", dealer=1)
    cycle_stock(s, rng)
    assert (s.result.reason, s.result.losses) == ("void", (0, 0))


def _play_to_reshuffle(seed):
    """Two players cycle the whole stock under "reshuffle"; the 45th turn is played by
    hand to record the discard pile just before the reshuffle."""
    s, rng = deal([H15, H20], "3h", dealer=1, rules=Rules(stock_exhausted="reshuffle"), seed=seed)
    assert cycle_stock(s, rng, stop_at=1) == 44
    last = s.stock[-1]
    seat = s.current
    play(s, rng, DRAW_STOCK)
    pile = list(s.discard)
    play(s, rng, discard_action(last))
    return s, pile, last, seat


def test_stock_exhausted_reshuffle_discard_pile_but_top_becomes_stock():
    s, pile, last, seat = _play_to_reshuffle(seed=0)
    assert len(pile) == 45  # upcard + 44 discards; the 45th discard is the new top
    assert s.phase == DRAW  # play goes on
    assert s.current == 1 - seat
    assert s.discard == [last]
    assert sorted(s.stock) == sorted(pile)
    assert s.history[-1] == ("reshuffle", -1, 45)
    assert legal(s) == [DRAW_STOCK, TAKE_DISCARD, KNOCK]
    assert s.result is None
    card_locations(s)  # every card in exactly one place


def test_stock_exhausted_reshuffle_shuffles_with_game_generator():
    s, pile, _, _ = _play_to_reshuffle(seed=3)
    assert s.stock not in (pile, pile[::-1])  # shuffled, not just turned over
    again, _, _, _ = _play_to_reshuffle(seed=3)
    assert again.stock == s.stock  # the same seed gives the same new stock
    other, _, _, _ = _play_to_reshuffle(seed=4)
    assert other.stock != s.stock


def test_stock_exhausted_showdown_lowest_loses_no_knocker():
    s, rng = deal([H15, H20], "3h", dealer=1, rules=Rules(stock_exhausted="showdown"))
    cycle_stock(s, rng)
    assert s.phase == ROUND_OVER
    r = s.result
    assert r.reason == "stock_exhausted"
    assert r.knocker is None
    assert r.values == (15, 20)
    assert r.losses == (1, 0)
    assert s.lives == [3, 4]


def test_stock_exhausted_showdown_lowest_strictly_pays_one_not_penalty():
    # No knocker: a lone lowest hand loses 1, never knocker_penalty.
    s, rng = deal([H20, H13], "3h", dealer=1, rules=Rules(stock_exhausted="showdown"))
    cycle_stock(s, rng)
    assert s.result.losses == (0, 1)


@pytest.mark.parametrize(("stand", "expected"), [(True, [TAKE_DISCARD, STAND]), (False, [TAKE_DISCARD])])
def test_knock_pending_empty_stock_only_take_discard_or_stand(stand, expected):
    rules = Rules(stand_after_knock=stand, stock_exhausted="void")
    s, rng = deal([H20, H15, H13], "3h", dealer=2, rules=rules)
    cycle_stock(s, rng, stop_at=1)
    knocker = s.current
    play(s, rng, KNOCK)
    top = s.stock[-1]
    play(s, rng, DRAW_STOCK, discard_action(top))  # empties the stock
    assert s.stock == []
    assert s.phase == DRAW  # knock pending: no void
    assert (knocker, s.current) == (2, 1)  # seat 1 is the knocker's right
    assert legal(s) == expected
    with pytest.raises(IllegalActionError):
        apply_action(s, DRAW_STOCK, rng)
    play(s, rng, TAKE_DISCARD)
    assert s.hands[1][-1] == top
    play(s, rng, disc("2d"))
    assert s.phase == ROUND_OVER
    r = s.result
    assert (r.reason, r.knocker) == ("knock", 2)
    assert r.losses == (0, 0, 2)  # the knocker's 13 is strictly lowest


def test_max_turns_per_round_ends_round_as_void():
    s, rng = deal([H15, H20, H13], "3h", "8h 7h 6h 4s", dealer=2, rules=Rules(max_turns_per_round=3))
    play(s, rng, DRAW_STOCK, disc("8h"), DRAW_STOCK, disc("7h"))
    assert s.phase == DRAW  # 2 turns: still going
    play(s, rng, DRAW_STOCK, disc("6h"))
    assert s.phase == ROUND_OVER
    r = s.result
    assert (r.reason, r.detail) == ("void", "max_turns")
    assert r.losses == (0, 0, 0)
    assert s.lives == [4, 4, 4]


def test_max_turns_per_round_reached_by_a_knock_still_ends_round_as_void():
    s, rng = deal([H15, H20, H13], "3h", "8h 7h", dealer=2, rules=Rules(max_turns_per_round=2))
    play(s, rng, DRAW_STOCK, disc("8h"))  # turn 1
    play(s, rng, KNOCK)  # turn 2: the round has now run max_turns_per_round turns
    assert s.phase == ROUND_OVER
    assert (s.result.reason, s.result.losses) == ("void", (0, 0, 0))
    assert s.lives == [4, 4, 4]


# --------------------------------------------------------------------------- lives


def test_free_ride_player_at_zero_keeps_playing_then_out_on_next_loss():
    s, rng = deal([H20, H13, H15], "5h", dealer=2, rules=Rules(free_ride=True))
    s.lives[1] = 1
    play(s, rng, KNOCK, STAND, STAND)
    assert s.result.losses == (0, 1, 0)
    assert s.lives == [4, 0, 4]
    assert s.active == [True, True, True]  # on the bike
    assert s.result.eliminated == ()
    assert s.phase == ROUND_OVER
    # Next round (dealer passes to 0): seat 1 is dealt in and plays first.
    deck = stacked_deck([H20, H13, H15], upcard="5h", dealer=0)
    start_round(s, rng, deck=deck)
    assert s.dealer == 0
    assert hand_set(s, 1) == cards(H13)
    assert s.current == 1
    play(s, rng, KNOCK, STAND, STAND)
    assert s.result.losses == (0, 2, 0)  # seat 1 knocked and is strictly lowest
    assert s.active == [True, False, True]
    assert s.result.eliminated == (1,)


def test_free_ride_player_at_zero_out_on_loss():
    s, rng = deal([H20, H13, H15], "5h", dealer=2, rules=Rules(free_ride=True))
    s.lives[1] = 0
    play(s, rng, KNOCK, STAND, STAND)
    assert s.result.eliminated == (1,)
    assert s.active == [True, False, True]
    assert s.lives == [4, 0, 4]
    assert s.phase == ROUND_OVER


def test_free_ride_false_out_on_reaching_zero():
    s, rng = deal([H20, H13, H15], "5h", dealer=2, rules=Rules(free_ride=False))
    s.lives[1] = 1
    play(s, rng, KNOCK, STAND, STAND)
    assert s.result.losses == (0, 1, 0)
    assert s.lives == [4, 0, 4]
    assert s.active == [True, False, True]
    assert s.result.eliminated == (1,)


def test_eliminated_player_not_dealt_in_and_deal_skips_them():
    # Round 1, dealer 0: seat 1 (first to play, at 0 lives) is lowest and goes out.
    s, rng = deal([H20, H13, H15], "5h", "8h", dealer=0)
    s.lives[1] = 0
    assert s.current == 1
    play(s, rng, DRAW_STOCK, disc("8h"))
    play(s, rng, KNOCK, STAND, STAND)  # seat 2 knocks, seats 0 and 1 stand
    assert s.result.losses == (0, 1, 0)
    assert s.active == [True, False, True]
    # Round 2: the deal passes from 0 to the next player still in: seat 2, not seat 1.
    deck = stacked_deck([H20, None, H15], upcard="5h", dealer=2)
    start_round(s, rng, deck=deck)
    assert s.dealer == 2
    assert s.hands[1] == []
    assert hand_set(s, 0) == cards(H20)
    assert hand_set(s, 2) == cards(H15)
    assert len(s.stock) == 52 - 7
    assert s.current == 0
    play(s, rng, KNOCK)
    assert s.current == 2  # seat 1 is skipped
    play(s, rng, STAND)
    assert s.phase == ROUND_OVER  # seat 2 was the knocker's right
    r = s.result
    assert r.values == (20, None, 15)
    assert r.losses == (0, 0, 1)
    assert 1 not in turn_seats_since(s, 0)


def test_game_ends_with_one_player_left():
    s, rng = deal([H20, H13], "5h", dealer=1)
    s.lives[1] = 0
    play(s, rng, KNOCK, STAND)
    assert s.phase == GAME_OVER
    assert s.winners == (0,)
    assert s.active == [True, False]
    assert legal(s) == []
    with pytest.raises(ValueError):
        start_round(s, rng)


@pytest.mark.parametrize(("free_ride", "start", "floor"), [(True, 0, 0), (False, 1, 1)])
def test_settlement_putting_everyone_out_leaves_all_in_at_lowest_count(free_ride, start, floor):
    rules = Rules(free_ride=free_ride, knocker_tie="all_lose")
    s, rng = deal([H15, H15B], "5h", dealer=1, rules=rules)
    s.lives[:] = [start, start]
    play(s, rng, KNOCK, STAND)
    r = s.result
    assert r.losses == (0, 0)  # the lives actually lost: all stay at the floor
    assert r.eliminated == ()
    assert s.active == [True, True]
    assert s.lives == [floor, floor]
    assert s.phase == ROUND_OVER  # the game goes on
    assert s.winners == ()


def test_settlement_putting_everyone_out_three_players():
    rules = Rules(knocker_tie="all_lose")
    s, rng = deal([H15, H15B, H15C], "5h", dealer=2, rules=rules)
    s.lives[:] = [0, 0, 0]
    play(s, rng, KNOCK, STAND, STAND)
    assert s.result.losses == (0, 0, 0)  # nobody could lose a life and stay in
    assert s.result.eliminated == ()
    assert s.lives == [0, 0, 0]
    assert s.active == [True, True, True]
    assert s.phase == ROUND_OVER


def test_max_rounds_most_lives_share_first_place():
    s, rng = deal([H20, H13, H15], "5h", dealer=2, rules=Rules(max_rounds=1))
    play(s, rng, KNOCK, STAND, STAND)
    assert s.lives == [4, 3, 4]
    assert s.phase == GAME_OVER
    assert s.winners == (0, 2)


def test_max_rounds_not_yet_reached_game_goes_on():
    s, rng = deal([H20, H13, H15], "5h", dealer=2, rules=Rules(max_rounds=2))
    play(s, rng, KNOCK, STAND, STAND)
    assert s.phase == ROUND_OVER
    start_round(s, rng, deck=stacked_deck([H20, H13, H15], upcard="5h", dealer=0))
    play(s, rng, KNOCK, STAND, STAND)  # seat 1 knocks, strictly lowest
    assert s.lives == [4, 1, 4]
    assert s.phase == GAME_OVER
    assert s.winners == (0, 2)


# --------------------------------------------------------------------------- hand values


def test_three_of_a_kind_30_5_beats_30():
    s, rng = deal(["7c 7d 7h", "Ks Qs Js"], "5h", dealer=1, rules=Rules(three_of_a_kind=30.5))
    play(s, rng, KNOCK, STAND)
    r = s.result
    assert r.values == (30.5, 30)
    assert r.losses == (0, 1)


def test_three_of_a_kind_30_5_loses_to_31():
    rules = Rules(three_of_a_kind=30.5)
    s, rng = deal(["7c 7d 7h", "Ks Qs 2d"], "5h", "As", dealer=1, rules=rules)
    play(s, rng, KNOCK, DRAW_STOCK, disc("2d"))  # seat 1 reaches 31 after the knock
    r = s.result
    assert r.reason == "knock"
    assert r.values == (30.5, 31)
    assert r.losses == (2, 0)  # the knocker is strictly lowest


def test_three_of_a_kind_none_scores_one_card():
    s, rng = deal(["7c 7d 7h", H13], "5h", dealer=1)
    play(s, rng, KNOCK, STAND)
    assert s.result.values == (7, 13)
    assert s.result.losses == (2, 0)


def test_three_of_a_kind_30_ties_with_30():
    s, rng = deal(["7c 7d 7h", "Ks Qs Js"], "5h", dealer=1, rules=Rules(three_of_a_kind=30))
    play(s, rng, KNOCK, STAND)
    r = s.result
    assert r.values == (30, 30)
    assert r.losses == (1, 0)  # knocker tied for lowest: knocker_pays


def test_three_of_a_kind_hands_are_all_equal():
    rules = Rules(three_of_a_kind=30.5, knocker_tie="all_lose")
    s, rng = deal(["7c 7d 7h", "Ac Ad Ah", H20], "5h", dealer=2, rules=rules)
    play(s, rng, KNOCK, STAND, STAND)
    r = s.result
    assert r.values == (30.5, 30.5, 20)
    assert r.losses == (0, 0, 1)


def test_dutch_preset_uses_32_card_deck():
    rules = Rules.preset("dutch")
    assert rules.deck == "piquet32"
    assert rules.three_of_a_kind == 30.5
    assert rules.max_players == 7
    s = new_game(rules, 4, np.random.default_rng(5), dealer=0)
    dealt = [c for h in s.hands for c in h] + s.discard + s.stock
    assert sorted(dealt) == sorted(DECKS["piquet32"])
    assert len(DECKS["piquet32"]) == 32
    assert all(c % 13 >= 5 for c in dealt)  # 7 and up
    assert len(s.stock) == 32 - 13
    deck = stacked_deck(["2c 7d 8h", "9c Td Jh"], upcard="Qs", dealer=1)
    with pytest.raises(ValueError, match="not in the piquet32 deck"):
        new_game(rules, 2, np.random.default_rng(0), dealer=1, deck=deck)


def test_presets_match_spec_table():
    pagat = Rules.preset("pagat")
    assert (pagat.lives, pagat.free_ride, pagat.knocker_tie) == (3, True, "knocker_safe")
    assert (pagat.allow_discard_return, pagat.stock_exhausted) == (False, "reshuffle")
    b31 = Rules.preset("blitz31")
    assert (b31.seats, b31.lives, b31.free_ride, b31.knocker_tie) == (4, 4, True, "knocker_safe")
    assert (b31.blitz_after_knock, b31.stock_exhausted) == (True, "showdown")
    assert Rules.preset("standard") == Rules()


@pytest.mark.parametrize("name", ["cut_throat", "no_elimination", "banking", "switch", "stop_the_bus"])
def test_variant_presets_of_the_spec_exist(name):
    assert isinstance(Rules.preset(name), Rules)


def test_cut_throat_preset_fields():
    rules = Rules.preset("cut_throat")
    assert (rules.lives, rules.free_ride, rules.three_of_a_kind) == (3, False, 30.5)


# --------------------------------------------------------------------------- the seed's points


def test_no_elimination_a_31_on_the_last_turn_after_a_knock_is_a_blitz():
    """The seed's points game: after a knock each other player's last turn may
    "possibly get a blitz". Seat 0 knocks on 20, seat 1 stands on 15, seat 2 draws the
    Qh to Ah Kh for 31 on the very last turn: a blitz (6), the highest hand, and the
    others ranked below it (the knocker middle: 1; seat 1 low: 1)."""
    rules = Rules.preset("no_elimination")
    assert rules.blitz_after_knock
    s, rng = deal([H20, H15, H21], "5h", "Qh", dealer=2, rules=rules)
    play(s, rng, KNOCK, STAND, DRAW_STOCK, disc("2c"))
    r = s.result
    assert (r.reason, r.detail, r.blitzers, r.knocker) == ("blitz", "turn", (2,), 0)
    assert r.values == (20, 15, 31)
    assert r.gains == (1, 1, 6)
    assert s.score == [1, 1, 6] and s.phase == ROUND_OVER


# --------------------------------------------------------------------------- Stop the Bus ranking


def test_stop_the_bus_pair_first_kk2_beats_qqa_and_the_loser_loses_a_life():
    """The seed: within a class by the highest card or the pair, then the kicker. Seat 0
    makes K-K-2 and stops the bus; seat 1 makes Q-Q-A on its last turn and loses the
    showdown (1 of its 3 lives)."""
    from thirtyone_env.game.actions import bus_one_action
    from thirtyone_env.game.engine import stacked_table_deck

    rules = Rules.preset("stop_the_bus")
    deck = stacked_table_deck(rules, ["Kh Kd 9c", "Qh Qd 5s"], "2s As 7d", dealer=1)
    s = new_game(rules, 2, np.random.default_rng(0), dealer=1, deck=deck)
    rng = np.random.default_rng(0)
    play(s, rng, bus_one_action(2, 0), KNOCK)  # seat 0: 9c <-> 2s, holds Kh Kd 2s, stops the bus
    play(s, rng, bus_one_action(2, 1))  # seat 1: 5s <-> As, holds Qh Qd As
    assert sorted(s.hands[0]) == cards("Kh Kd 2s") and sorted(s.hands[1]) == cards("Qh Qd As")
    r = s.result
    assert (r.reason, r.knocker) == ("knock", 0)
    assert r.values[0] > r.values[1]
    assert r.losses == (0, 1) and s.lives == [3, 2]


# --------------------------------------------------------------------------- stacked deck types


@pytest.mark.parametrize("bad", [2.0, True, np.float64(3.0), np.bool_(True), None, [1]])
def test_stacked_deck_element_that_is_not_a_card_is_refused_by_name(bad):
    whole = list(DECKS["standard52"])
    whole[5] = bad  # a whole deck of ids but one (2.0 and True even compare equal to ids)
    for deck in (whole, [0, 1, bad]):
        with pytest.raises(ValueError, match=r"stacked deck: element \d \(.*\) is not a card"):
            new_game(Rules(), 3, np.random.default_rng(0), dealer=2, deck=deck)


def test_stacked_deck_that_is_not_a_sequence_is_refused():
    with pytest.raises(ValueError, match="not a sequence of cards"):
        new_game(Rules(), 3, np.random.default_rng(0), dealer=2, deck=5)


@pytest.mark.parametrize("bad", [2.5, False])
def test_both_envs_refuse_a_reset_deck_with_an_element_that_is_not_a_card(bad):
    from thirtyone_env.envs import multiagent
    from thirtyone_env.envs.env import ThirtyOneEnv

    deck = [0, 1, 2, bad]
    with pytest.raises(ValueError, match=r"stacked deck: element 3 \(.*\) is not a card"):
        ThirtyOneEnv(3).reset(seed=0, options={"deck": deck})
    with pytest.raises(ValueError, match=r"stacked deck: element 3 \(.*\) is not a card"):
        multiagent.raw_env(num_players=3).reset(seed=0, options={"deck": deck})


def test_ones_own_discard_is_taken_back_only_by_two_players_after_a_knock():
    """The seed: "there is one case when you may take back your own discard: when only
    two players are left in the game and one of them knocks". With three at the table,
    a player whose discard the others left on top (one knocked, one stood) may not
    take it; heads-up after a knock, it may."""
    s, rng = deal(["Kh Qh 2c", "Ks Qs 2d", "Td 9d 3h"], "5c", "7c 8c 9c", dealer=2)
    play(s, rng, DRAW_STOCK, disc("2c"), KNOCK, STAND)
    assert s.current == 0 and s.discard[-1] == card("2c")
    assert legal_actions(s) == [DRAW_STOCK, STAND]
    assert legal_mask(s)[TAKE_DISCARD] == 0
    with pytest.raises(IllegalActionError):
        apply_action(s, TAKE_DISCARD, rng)
    assert s.discard[-1] == card("2c") and s.hands[0] == [card("Kh"), card("Qh"), card("7c")]
    # the same with two players: the knock leaves seat 0's discard on top, and it may take it
    s, rng = deal(["Kh Qh 2c", "Ks Qs 2d"], "5c", "7c 8c 9c", dealer=1)
    play(s, rng, DRAW_STOCK, disc("2c"), KNOCK)
    assert s.current == 0 and TAKE_DISCARD in legal_actions(s)
    play(s, rng, TAKE_DISCARD)
    assert card("2c") in s.hands[0]
    # two players left of four (two out of lives): the one case too
    s4 = new_game(Rules(), 4, np.random.default_rng(0), dealer=2, lives=[2, None, 2, None])
    assert sum(s4.active) == 2
    seats = [p for p in range(4) if s4.active[p]]
    first = s4.current
    other = seats[1] if first == seats[0] else seats[0]
    play(s4, rng, DRAW_STOCK, discard_action(s4.hands[first][0]), KNOCK)
    assert s4.current == first and s4.knocker == other and TAKE_DISCARD in legal_actions(s4)
