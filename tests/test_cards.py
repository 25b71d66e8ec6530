"""Card ids, text form and hand values, checked against docs/RULES.md's exact numbers."""

from fractions import Fraction
from itertools import combinations

import pytest

from thirtyone_env.game.cards import (
    DECKS,
    format_card,
    format_cards,
    hand_value,
    parse_card,
    parse_cards,
    triple_index,
    value_table,
)
from thirtyone_env.game.rules import Rules


def test_card_ids_follow_suit_times_13_plus_rank():
    assert parse_card("2c") == 0
    assert parse_card("As") == 51
    assert parse_card("Td") == 1 * 13 + 8
    assert parse_card("10h") == parse_card("Th") == 2 * 13 + 8
    assert parse_card("ah") == parse_card("AH") == 2 * 13 + 12


def test_format_round_trips_every_card():
    for c in range(52):
        assert parse_card(format_card(c)) == c
    assert format_cards([51, 0]) == "As 2c"


@pytest.mark.parametrize("bad", ["", "1s", "Ax", "Zs", "AsK", "11h", "10"])
def test_unknown_card_text_raises_naming_it(bad):
    with pytest.raises(ValueError, match="unknown card"):
        parse_card(bad)


def test_parse_cards_rejects_out_of_range_ids():
    assert parse_cards("As Kd") == [51, 11 + 13]
    with pytest.raises(ValueError, match="52"):
        parse_cards([52])
    with pytest.raises(ValueError):
        format_card(-1)


@pytest.mark.parametrize(
    ("hand", "value"),
    [
        ("As Ks Qs", 31),
        ("As Kd Qh", 11),
        ("2c 3c 4c", 9),
        ("Ah Kh 2c", 21),
        ("7d 7h 7s", 7),
        ("Tc Jc 9d", 20),
    ],
)
def test_hand_value_is_best_single_suit_sum(hand, value):
    assert hand_value(parse_cards(hand)) == value


def test_three_of_a_kind_option():
    trips = parse_cards("7d 7h 7s")
    assert hand_value(trips, Rules(three_of_a_kind=30.5)) == 30.5
    assert hand_value(trips, Rules(three_of_a_kind=30)) == 30
    assert hand_value(parse_cards("2c 2d 2h"), Rules(three_of_a_kind=30.5)) == 30.5
    assert hand_value(parse_cards("As Ks Qs"), Rules(three_of_a_kind=30.5)) == 31


def _enumerate(deck):
    hands = list(combinations(deck, 3))
    values = [hand_value(h) for h in hands]
    return len(hands), Fraction(sum(values), len(hands)), values.count(31)


def test_exact_enumeration_standard52():
    count, mean, thirty_ones = _enumerate(DECKS["standard52"])
    assert count == 22100
    assert mean == Fraction(72311, 5525)
    assert thirty_ones == 24


def test_exact_enumeration_piquet32():
    count, mean, thirty_ones = _enumerate(DECKS["piquet32"])
    assert count == 4960
    assert mean == Fraction(4857, 310)
    assert thirty_ones == 24


def test_lookup_table_agrees_with_reference_scoring_in_any_order():
    table = value_table(30.5)
    rules = Rules(three_of_a_kind=30.5)
    for a, b, c in list(combinations(range(52), 3))[::37]:
        for x, y, z in ((a, b, c), (c, a, b), (b, c, a)):
            assert table[triple_index(x, y, z)] == hand_value([a, b, c], rules)


def test_action_names_round_trip():
    from thirtyone_env.game.actions import NUM_ACTIONS, action_card, action_name, parse_action

    for a in range(NUM_ACTIONS):
        assert parse_action(action_name(a)) == a
    assert action_card(parse_action("discard Qh")) == parse_card("Qh") and action_card(2) == -1
    with pytest.raises(ValueError, match="unknown action 'fold'"):
        parse_action("fold")
