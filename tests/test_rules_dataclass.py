"""The Rules dataclass: validation that names the field, presets, player counts."""

import dataclasses

import pytest

from thirtyone_env.rules import PRESETS, Rules, field_names

SPEC_OPTIONS = {
    "deck",
    "lives",
    "free_ride",
    "three_of_a_kind",
    "knock_from_turn",
    "allow_discard_return",
    "stand_after_knock",
    "blitz_after_knock",
    "knocker_penalty",
    "knocker_tie",
    "stock_exhausted",
    "max_turns_per_round",
    "max_rounds",
}


def test_every_spec_option_is_a_field_and_rules_are_frozen():
    assert set(field_names()) >= SPEC_OPTIONS
    with pytest.raises(dataclasses.FrozenInstanceError):
        Rules().lives = 3  # type: ignore[misc]


def test_defaults_are_the_seed_rules():
    r = Rules()
    assert (r.deck, r.lives, r.free_ride, r.three_of_a_kind) == ("standard52", 4, True, None)
    assert (r.knock_from_turn, r.allow_discard_return, r.stand_after_knock) == (1, False, True)
    assert (r.blitz_after_knock, r.knocker_penalty, r.knocker_tie) == (False, 2, "knocker_pays")
    assert (r.stock_exhausted, r.max_turns_per_round, r.max_rounds) == ("void", 200, 1000)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("deck", "tarot78"),
        ("lives", 0),
        ("lives", "4"),
        ("free_ride", "yes"),
        ("three_of_a_kind", 29),
        ("three_of_a_kind", True),
        ("knock_from_turn", 0),
        ("knocker_penalty", 0),
        ("knocker_tie", "nobody"),
        ("stock_exhausted", "redeal"),
        ("max_turns_per_round", 0),
        ("max_rounds", 2.5),
        ("blitz_after_knock", 1),
        ("seats", 12),
    ],
)
def test_bad_value_raises_naming_field_and_allowed_values(field, value):
    with pytest.raises(ValueError, match=rf"Rules\.{field}=|num_players") as err:
        Rules(**{field: value})
    assert "allowed" in str(err.value)


def test_unknown_option_in_replace_is_named():
    with pytest.raises(ValueError, match="unknown rules option.*lifes"):
        Rules().replace(lifes=3)
    assert Rules().replace(lives=3).lives == 3


def test_presets():
    assert Rules.preset("standard") == Rules()
    pagat = Rules.preset("pagat")
    assert (pagat.lives, pagat.free_ride, pagat.knocker_tie) == (3, True, "knocker_safe")
    assert (pagat.allow_discard_return, pagat.stock_exhausted) == (False, "reshuffle")
    b = Rules.preset("blitz31")
    assert (b.seats, b.lives, b.knocker_tie, b.blitz_after_knock, b.stock_exhausted) == (
        4,
        4,
        "knocker_safe",
        True,
        "showdown",
    )
    d = Rules.preset("dutch")
    assert (d.deck, d.three_of_a_kind, len(d.deck_cards)) == ("piquet32", 30.5, 32)
    assert set(PRESETS) >= {"standard", "pagat", "blitz31", "dutch"}


def test_unknown_preset_lists_the_names():
    with pytest.raises(ValueError, match=r"unknown rules preset 'scat'.*pagat"):
        Rules.preset("scat")


def test_player_counts():
    assert Rules().check_num_players(2) == 2
    assert Rules().check_num_players(9) == 9
    for bad in (1, 10):
        with pytest.raises(ValueError, match="num_players"):
            Rules().check_num_players(bad)
    # 32 cards deal at most (32 - 1) // 3 = 10 -> capped at 9; 3*9+1 = 28 <= 32
    assert Rules.preset("dutch").max_players == 9
    with pytest.raises(ValueError, match="seats=4"):
        Rules.preset("blitz31").check_num_players(3)
