"""Analytics on known rounds: turn records, suit switches, knock records."""

import numpy as np

from thirtyone_env.game.actions import DRAW_STOCK, KNOCK, STAND, TAKE_DISCARD, discard_action
from thirtyone_env.game.cards import parse_card, parse_cards, triple_index
from thirtyone_env.game.engine import apply_action, new_game, stacked_deck
from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.analysis import (
    _best_suit_masks,
    best_suits,
    knock_records,
    player_round_records,
    suit_switch_records,
    turn_records,
)


def d(card: str) -> int:
    return discard_action(parse_card(card))


def test_best_suits_with_ties_and_table():
    assert best_suits(parse_cards("As Ks 2h")) == {3}
    assert best_suits(parse_cards("Ah Kd 2c")) == {2}
    assert best_suits(parse_cards("Kh Kd 2c")) == {1, 2}
    masks = _best_suit_masks()
    for hand in (parse_cards("Kh Kd 2c"), parse_cards("9s 9c 3c"), parse_cards("2c 3d 4h")):
        mask = masks[triple_index(*hand)]
        assert {s for s in range(4) if mask >> s & 1} == best_suits(hand)


def scripted_round():
    """3 players, dealer 2 (seat 0 plays first); a round with one suit switch."""
    deck = stacked_deck(
        ["Kh 9h 2c", "5d 6d 7c", "2s 3s 4s"],
        upcard="8c",
        stock="As Ks Qs 3d",
        dealer=2,
    )
    rng = np.random.default_rng(0)
    s = new_game(Rules(), 3, rng, dealer=2, deck=deck)
    # seat 0: draws As, throws 2c: Kh 9h As is hearts 19 (spades 11): no switch
    apply_action(s, DRAW_STOCK, rng)
    apply_action(s, d("2c"), rng)
    # seat 1: takes the 2c from the pile, throws 7c (diamonds stay best: no switch, first discard)
    apply_action(s, TAKE_DISCARD, rng)
    apply_action(s, d("7c"), rng)
    # seat 2: draws Ks, throws 2s -> spades 3+4+10=17 best, no switch
    apply_action(s, DRAW_STOCK, rng)
    apply_action(s, d("2s"), rng)
    # seat 0: draws Qs -> Kh 9h As Qs: throwing 9h keeps Kh As Qs: spades 21 > hearts 10 -> switch
    apply_action(s, DRAW_STOCK, rng)
    apply_action(s, d("9h"), rng)
    # seat 1 knocks; seat 2 stands; seat 0 draws 3d and throws it
    apply_action(s, KNOCK, rng)
    apply_action(s, STAND, rng)
    apply_action(s, DRAW_STOCK, rng)
    apply_action(s, d("3d"), rng)
    return s


def test_turn_records_follow_the_round():
    s = scripted_round()
    turns = turn_records(s.history, s.rules)
    assert [(t["seat"], t["kind"]) for t in turns] == [
        (0, "draw_stock"),
        (1, "take_discard"),
        (2, "draw_stock"),
        (0, "draw_stock"),
        (1, "knock"),
        (2, "stand"),
        (0, "draw_stock"),
    ]
    assert [t["turn"] for t in turns] == [1, 1, 1, 2, 2, 2, 3]
    assert [t["stock_left"] for t in turns] == [42, 41, 41, 40, 39, 39, 39]
    first = turns[0]
    assert (first["card_in"], first["card_out"]) == (parse_card("As"), parse_card("2c"))
    assert (first["value_before"], first["value_after"]) == (19, 19)
    assert (turns[3]["value_before"], turns[3]["value_after"]) == (19, 21)
    assert [t["switched"] for t in turns] == [False, False, False, True, False, False, False]
    # discard-suit change: seat 0 threw 2c (clubs) then 9h (hearts) then 3d (diamonds)
    assert [t["discard_suit_changed"] for t in turns if t["seat"] == 0] == [None, True, True]
    assert len(suit_switch_records(s.history, s.rules)) == 1


def test_knock_and_player_round_records():
    s = scripted_round()
    (k,) = knock_records(s.history, s.rules)
    # the knocker holds 5d 6d 2c (diamonds 11); seat 2 has 3s 4s Ks (17); seat 0 21
    assert (k["seat"], k["value"], k["turn"], k["position"], k["num_in"], k["lives"]) == (1, 11, 2, 1, 3, 4)
    r = s.result
    assert r.values == (21, 11, 17)
    assert (k["lost"], k["success"], k["reason"]) == (2, False, "knock")
    rows = {row["seat"]: row for row in player_round_records(s.history, s.rules)}
    assert rows[1]["knocked"] and rows[1]["knock_value"] == 11 and rows[1]["knock_success"] is False
    assert rows[0]["knock_success"] is None and not rows[0]["lost_round"]
    assert rows[0]["switches"] == 1 and rows[0]["turns"] == 3
    assert sum(row["lost"] for row in rows.values()) == sum(r.losses)
