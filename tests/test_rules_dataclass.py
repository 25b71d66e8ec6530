"""The Rules dataclass: validation that names the field, presets, player counts."""

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from thirtyone_env.game.rules import PRESETS, Rules, field_names

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


def test_house_rules_are_a_preset_with_changes():
    """``PRESET:OPTION=VALUE,...`` is the preset with those fields replaced, each value
    read as its field's type, and checked as any Rules."""
    house = Rules.preset("cut_throat:lives=5,free_ride=true,three_of_a_kind=none,stock_exhausted=reshuffle")
    assert house == PRESETS["cut_throat"].replace(
        lives=5, free_ride=True, three_of_a_kind=None, stock_exhausted="reshuffle"
    )
    assert Rules.preset("dutch:three_of_a_kind=30").three_of_a_kind == 30
    assert Rules.preset("standard:seats=3,knock_from_turn=2") == Rules(seats=3, knock_from_turn=2)
    assert Rules.resolve("standard:lives=4") == Rules()  # a change to the default is the preset


def test_house_spec_reads_back_as_the_same_rules():
    """Messages name house rules by the shortest spec that reads back as them."""
    from thirtyone_env.game.rules import house_spec

    for name, preset in PRESETS.items():
        assert house_spec(preset) == name
    for spec in (
        "standard:lives=2,knock_from_turn=2",
        "cut_throat:three_of_a_kind=none",
        "banking:max_rounds=50",
    ):
        assert house_spec(Rules.preset(spec)) == spec
    odd = Rules(deck="piquet32", lives=7, free_ride=False, stock_exhausted="showdown")
    assert Rules.preset(house_spec(odd)) == odd


@pytest.mark.parametrize(
    ("spec", "named"),
    [
        ("standard:lifes=3", "unknown rules option 'lifes'"),
        ("standard:lives=3,lives=4", "'lives' is given twice"),
        ("standard:lives=three", "lives='three' must be int"),
        ("standard:lives=\uff13", "lives='\uff13' must be int"),  # a fullwidth 3: int() would read it
        ("standard:free_ride=yes", "free_ride='yes' must be true or false"),
        ("standard:lives", "'lives' is not OPTION=VALUE"),
        ("standard:", "'' is not OPTION=VALUE"),
        ("standard:lives=0", "Rules.lives=0 is not allowed"),
        ("standard:knocker_tie=nobody", "knocker_tie"),
        ("scat:lives=3", "unknown rules preset 'scat'"),
    ],
)
def test_bad_house_rules_name_the_part(spec, named):
    with pytest.raises(ValueError, match=re.escape(named)):
        Rules.preset(spec)


def test_player_counts():
    assert Rules().check_num_players(2) == 2
    assert Rules().check_num_players(7) == 7
    for bad in (1, 8, 10):  # the seed: "for two to seven players"
        with pytest.raises(ValueError, match="num_players"):
            Rules().check_num_players(bad)
    # 32 cards would deal (32 - 1) // 3 = 10: capped at the seed's 7
    assert Rules.preset("dutch").max_players == 7
    with pytest.raises(ValueError, match="seats=4"):
        Rules.preset("blitz31").check_num_players(3)


# -- bounds: every count option fits both backends ---------------------

COUNT_FIELDS = (
    "lives",
    "knock_from_turn",
    "knocker_penalty",
    "max_turns_per_round",
    "max_rounds",
    "num_rounds",
    "chips",
    "ante",
    "blitz_chips",
)


@pytest.mark.parametrize("field", COUNT_FIELDS)
def test_count_options_beyond_the_bound_are_refused_naming_the_range(field):
    from thirtyone_env.game.rules import MAX_COUNT

    assert getattr(Rules(**{field: MAX_COUNT}), field) == MAX_COUNT
    for bad in (MAX_COUNT + 1, 2**31, 2**63):
        with pytest.raises(ValueError, match=rf"Rules\.{field}={bad} .*integers \d+\.\.{MAX_COUNT}"):
            Rules(**{field: bad})


def test_lives_beyond_32_bits_refused():
    with pytest.raises(
        ValueError, match=r"Rules\.lives=2147483648 is not allowed; allowed values: integers 1\.\.1000000"
    ):
        Rules(lives=2**31)


def test_counts_at_the_bound_play_alike_on_both_backends():
    """Lives, penalty, turn and round limits at the bound: the compiled backend (32-bit
    state) plays the Python engine's game, reward for reward (a knocker caught lowest
    loses a million lives)."""
    import numpy as np

    from thirtyone_env.envs.env import ThirtyOneEnv
    from thirtyone_env.game.policies import RandomPolicy
    from thirtyone_env.game.rules import MAX_COUNT

    rules = Rules(
        lives=MAX_COUNT, knocker_penalty=MAX_COUNT, max_turns_per_round=MAX_COUNT, max_rounds=MAX_COUNT
    )
    py = ThirtyOneEnv(3, rules, [RandomPolicy(), RandomPolicy()])
    fast = ThirtyOneEnv(3, rules, [RandomPolicy(), RandomPolicy()], backend="compiled")
    (oa, ia), (ob, ib) = py.reset(seed=3), fast.reset(seed=3)
    rng = np.random.default_rng(0)
    rewards = []
    for _ in range(600):
        assert np.array_equal(oa, ob) and np.array_equal(ia["action_mask"], ib["action_mask"])
        assert (ia["round"], ia["lives"]) == (ib["round"], ib["lives"])
        action = int(rng.choice(np.flatnonzero(ia["action_mask"])))
        oa, ra, da, _, ia = py.step(action)
        ob, rb, db, _, ib = fast.step(action)
        assert (ra, da) == (rb, db)
        rewards.append(ra)
        if da:
            (oa, ia), (ob, ib) = py.reset(), fast.reset()
    assert -MAX_COUNT in rewards  # the agent knocked and was lowest: the penalty at the bound


# -- the rules document (docs/RULES.md) stays true to the code -------------------

RULES_DOC = Path(__file__).resolve().parent.parent / "docs" / "RULES.md"


def doc_table(heading: str) -> list[list[str]]:
    """The body rows of the first table under ``## heading`` in docs/RULES.md, as cells."""
    section = RULES_DOC.read_text(encoding="utf-8").split(f"\n## {heading}\n", 1)[1].split("\n#", 1)[0]
    rows = [line.strip().strip("|").split("|") for line in section.splitlines() if line.startswith("| `")]
    return [[cell.strip() for cell in row] for row in rows]


def test_rules_doc_lists_every_option_with_its_default():
    rows = doc_table("Options at a glance")
    assert [row[0].strip("`") for row in rows] == field_names()
    defaults = {row[0].strip("`"): ast.literal_eval(row[1].strip("`")) for row in rows}
    assert defaults == dataclasses.asdict(Rules())


def test_rules_doc_presets_are_the_presets():
    """The presets table names every preset with exactly the fields it changes."""
    documented = {
        row[0].strip("`"): {k: ast.literal_eval(v) for k, v in re.findall(r"`(\w+)=([^`]+)`", row[2])}
        for row in doc_table("Presets")
    }
    default = Rules()
    actual = {
        name: {
            f.name: getattr(rules, f.name)
            for f in dataclasses.fields(Rules)
            if getattr(rules, f.name) != getattr(default, f.name)
        }
        for name, rules in PRESETS.items()
    }
    assert documented == actual
