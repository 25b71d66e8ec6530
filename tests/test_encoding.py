"""The observation encoding (``thirtyone_env.game.encoding``) on its own: the flat layout's
named parts tile the vector as its module table documents, ``part`` returns those
slices, a stacked position encodes exactly what the seat may see (its hand, the top
discard, the cards known in other hands, face-up table cards) and nothing hidden, and
the dict encoding is the flat one cut into its parts, for the stock game and each
table variant."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import card, deal, disc, play, random_moves, swap_hidden, switch_deal

from thirtyone_env.envs.spaces import dict_space, flat_space
from thirtyone_env.game import encoding
from thirtyone_env.game.actions import (
    DRAW_STOCK,
    KEEP_BASE,
    KNOCK,
    TAKE_DISCARD,
    bus_one_action,
    widow_action,
)
from thirtyone_env.game.cards import parse_cards
from thirtyone_env.game.encoding import PART_ORDER, TURN_SCALE, ObsLayout, encode_dict, encode_flat
from thirtyone_env.game.engine import clone_state, new_game
from thirtyone_env.game.rules import PRESETS, Rules

#: One preset per layout: the stock game, each table variant and the scored games.
LAYOUT_PRESETS = ("standard", "banking", "switch", "stop_the_bus", "no_elimination")
TABLE_HANDS = {"widow": 1, "switch": 2, "bus": 1}
#: A row of the module doc's part tables: ``| ``name`` | shape | meaning |``.
PART_ROW = re.compile(r"^\| ``(\w+)``\s*\|\s*([^|]*?)\s*\|", re.M)


def documented_shapes(n: int, rules: Rules, history: bool = False) -> dict[str, tuple[int, ...]]:
    """The parts and shapes that the encoding module's doc tables give for ``n`` players
    under ``rules``, in their order: the first table always, the second's ``score`` and
    ``pot`` with points or chips, its other parts with a table variant, the third's
    with ``history`` (the opt-in opponent history)."""
    stock_doc, variant_doc = encoding.__doc__.split("The variants add parts", 1)
    variant_doc, history_doc = variant_doc.split("opponent_history=True", 1)
    t = TABLE_HANDS.get(rules.table, 0)

    def dims(text: str) -> tuple[int, ...]:
        out = []
        for d in text.split(" x "):
            d = d.strip("()")
            if d in ("n", "n-1"):
                out.append(n if d == "n" else n - 1)
            elif d.endswith("T"):
                out.append(int(d[:-1] or 1) * t)
            else:
                out.append(int(d))
        return tuple(out)

    shapes = {name: dims(shape) for name, shape in PART_ROW.findall(stock_doc)}
    for name, shape in PART_ROW.findall(variant_doc):
        if (rules.scoring != "lives") if name in ("score", "pot") else (rules.table != "stock"):
            shapes[name] = dims(shape)
    if history:
        shapes.update({name: dims(shape) for name, shape in PART_ROW.findall(history_doc)})
    return shapes


def cards_in(row: np.ndarray) -> set[int]:
    """The card ids set in a 52-wide row."""
    return set(np.flatnonzero(row).tolist())


# -- the layout --------------------------------------------------------------------------


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("history", [False, True])
def test_named_parts_tile_the_vector_once_with_the_documented_shapes(preset, history):
    rules = Rules.preset(preset)
    for n in range(2, rules.max_players + 1):
        layout = ObsLayout(n, rules, opponent_history=history)
        assert layout.shapes == documented_shapes(n, rules, history)
        assert list(layout.shapes) == list(documented_shapes(n, rules, history))  # in the documented order
        if history:  # the layout without the history is its head, part for part
            head = ObsLayout(n, rules)
            assert {k: layout.slices[k] for k in head.slices} == head.slices
            assert list(layout.shapes)[-1] == "opponent_history"
        covered = np.zeros(layout.size, dtype=int)
        end = 0
        for name, sl in layout.slices.items():
            assert sl.start == end == layout.offsets[name]  # no gap
            assert sl.stop - sl.start == int(np.prod(layout.shapes[name]))
            covered[sl] += 1
            end = sl.stop
        assert end == layout.size and (covered == 1).all()  # every feature in one part exactly
        assert flat_space(layout).shape == (layout.size,)


def test_the_stock_game_at_four_seats_has_650_features():
    """The documented figure (and the compiled backend's buffer size)."""
    assert ObsLayout(4).size == 650
    assert ObsLayout(4, Rules.preset("pagat")).size == 650  # options do not change the layout


@pytest.mark.parametrize("preset", LAYOUT_PRESETS)
def test_part_returns_the_documented_slice_in_its_shape(preset):
    layout = ObsLayout(3, Rules.preset(preset))
    obs = np.arange(layout.size, dtype=np.float32)
    for name, shape in layout.shapes.items():
        part = layout.part(obs, name)
        start = layout.offsets[name]
        assert part.shape == shape
        assert np.array_equal(part.ravel(), np.arange(start, start + part.size))
        assert np.shares_memory(part, obs)  # a view, not a copy
    parts = layout.split(obs)
    assert list(parts) == list(layout.shapes)
    assert all(np.array_equal(parts[k], layout.part(obs, k)) for k in parts)
    with pytest.raises(KeyError, match="unknown observation part 'hands'"):
        layout.part(obs, "hands")


# -- a stacked position, stock game ------------------------------------------------------


def stock_position():
    """3 players, dealer 2 (seat 0 plays first). Seat 0 takes the upcard Kh and throws
    2c; seat 1 draws As and throws 7c; seat 2 takes the 7c and throws 2s. Seat 0 to
    draw, holding Ah 9h Kh (hearts 30)."""
    s, rng = deal(["Ah 9h 2c", "5d 6d 7c", "2s 3s 4s"], "Kh", "As Ks Qs", dealer=2)
    play(s, rng, TAKE_DISCARD, disc("2c"), DRAW_STOCK, disc("7c"), TAKE_DISCARD, disc("2s"))
    return s, rng


def test_a_stacked_position_encodes_what_the_seat_sees():
    s, _ = stock_position()
    layout = ObsLayout(3)
    obs = encode_flat(s, 0, layout)
    part = lambda name: layout.part(obs, name)  # noqa: E731
    assert cards_in(part("hand")) == set(parse_cards("Ah 9h Kh"))
    assert not part("drawn").any()
    assert cards_in(part("top_discard")) == {card("2s")}
    assert cards_in(part("dead_cards")) == {card("2c")}  # the 7c was taken back up
    known = part("known_cards")  # row 0: seat 1, row 1: seat 2
    assert not known[0].any() and cards_in(known[1]) == {card("7c")}
    history = part("discard_history")  # relative rows, weighted 1 / (1 + later discards)
    assert history[0, card("2c")] == pytest.approx(1 / 3)
    assert history[1, card("7c")] == pytest.approx(1 / 2)
    assert history[2, card("2s")] == 1.0
    assert np.count_nonzero(history) == 3
    assert part("phase").tolist() == [1, 0, 0, 0]  # to draw
    assert not part("knocker").any()
    assert part("dealer").tolist() == [0, 0, 1]  # the dealer sits two seats on
    assert part("lives").tolist() == [1, 1, 1] and part("active").tolist() == [1, 1, 1]
    assert part("stock_size")[0] == pytest.approx(41 / 52)  # 52 - 9 dealt - upcard - 1 drawn
    assert part("turn")[0] == pytest.approx(2 / TURN_SCALE)
    assert part("hand_values")[0] == pytest.approx(30 / 31)
    assert part("hand_values")[1] == pytest.approx(21 / 31)  # taken, the 2s must stay: Ah Kh 2s
    assert not part("discard_values").any()


def test_a_seat_not_to_act_sees_the_table_from_its_own_place():
    s, _ = stock_position()
    layout = ObsLayout(3)
    obs = encode_flat(s, 1, layout)
    known = layout.part(obs, "known_cards")  # row 0: seat 2, row 1: seat 0
    assert cards_in(known[0]) == {card("7c")} and cards_in(known[1]) == {card("Kh")}
    assert cards_in(layout.part(obs, "hand")) == set(parse_cards("5d 6d As"))
    assert not layout.part(obs, "phase").any()  # not its turn
    assert layout.part(obs, "dealer").tolist() == [0, 1, 0]
    assert layout.part(obs, "discard_history")[2, card("2c")] == pytest.approx(1 / 3)  # seat 0's


def test_discarding_shows_the_drawn_card_and_the_value_each_discard_keeps():
    s, rng = stock_position()
    play(s, rng, DRAW_STOCK)  # seat 0 draws the Ks
    layout = ObsLayout(3)
    obs = encode_flat(s, 0, layout)
    assert cards_in(layout.part(obs, "drawn")) == {card("Ks")}
    assert layout.part(obs, "phase").tolist() == [0, 1, 0, 0]
    kept = layout.part(obs, "discard_values") * 31
    expect = {"Ah": 19, "9h": 21, "Kh": 20, "Ks": 30}  # the value of the three kept
    assert {c: kept[card(c)] for c in expect} == pytest.approx(expect)
    assert np.count_nonzero(kept) == 4
    assert layout.part(obs, "hand_values").tolist() == pytest.approx([30 / 31, 0, 0, 0])
    other = encode_flat(s, 1, layout)
    assert not layout.part(other, "drawn").any() and card("Ks") not in cards_in(layout.part(other, "hand"))


def test_a_stacked_position_hides_every_card_the_seat_cannot_see():
    s, rng = stock_position()
    play(s, rng, DRAW_STOCK)  # seat 0 holds the drawn Ks: hidden from the others
    layout = ObsLayout(3)
    for seat in range(3):
        base = encode_flat(s, seat, layout)
        t = swap_hidden(s, seat, rng)
        assert any(t.hands[p] != s.hands[p] for p in range(3) if p != seat)  # something changed
        assert np.array_equal(encode_flat(t, seat, layout), base)
        t = clone_state(s)
        t.stock.reverse()  # the stock's order never enters
        assert np.array_equal(encode_flat(t, seat, layout), base)


# -- the table variants on stacked decks -------------------------------------------------


def test_banking_shows_given_cards_and_hides_the_widow_and_what_was_taken():
    s, rng = deal(["2c 3d 4s", "Ks Qs 4d", "Tc 2d 3h"], "9c", table="Ah Kh Qh", dealer=2, rules="banking")
    layout = ObsLayout(3, s.rules)
    obs = encode_flat(s, 0, layout)
    slots = layout.part(obs, "hand_slots")
    assert [cards_in(r) for r in slots] == [{card("2c")}, {card("3d")}, {card("4s")}]
    assert not layout.part(obs, "table_cards").any()  # the widow lies face down
    assert layout.part(obs, "table_hidden").tolist() == [1, 1, 1]
    assert cards_in(layout.part(obs, "top_discard")) == {card("9c")}
    assert layout.part(obs, "score").tolist() == pytest.approx([19 / 60] * 3)
    assert layout.part(obs, "pot")[0] == pytest.approx(3 / 60)
    play(s, rng, widow_action((0, 1), (0, 1)))  # seat 0: 2c 3d for the face-down Ah Kh
    other = encode_flat(s, 1, layout)
    table = layout.part(other, "table_cards")
    assert [cards_in(r) for r in table] == [{card("2c")}, {card("3d")}, set()]
    assert layout.part(other, "table_hidden").tolist() == [0, 0, 1]
    assert not layout.part(other, "known_cards").any()  # the Ah Kh went to seat 0 unseen
    mine = encode_flat(s, 0, layout)
    assert [cards_in(r) for r in layout.part(mine, "hand_slots")] == [
        {card("Ah")},
        {card("Kh")},
        {card("4s")},
    ]


def test_switch_choice_is_shown_to_the_dealer_only_and_the_kept_away_hand_to_all():
    s, rng = switch_deal()
    layout = ObsLayout(3, s.rules)
    dealer = encode_flat(s, 2, layout)
    choice = layout.part(dealer, "choice")
    assert [cards_in(r) for r in choice] == [set(parse_cards("Kd Qd 2s")), set(parse_cards("9h 8h 7h"))]
    assert layout.part(dealer, "variant_phase").tolist() == [1, 0, 0]
    for seat in (0, 1):
        obs = encode_flat(s, seat, layout)
        assert not layout.part(obs, "choice").any() and not layout.part(obs, "table_cards").any()
        assert layout.part(obs, "table_hidden").tolist() == [0, 0, 0, 1, 1, 1]
    play(s, rng, KEEP_BASE)  # the dealer keeps Kd Qd 2s; 9h 8h 7h lie face up
    obs = encode_flat(s, 0, layout)
    rows = [cards_in(r) for r in layout.part(obs, "table_cards")]
    assert rows == [{card("9h")}, {card("8h")}, {card("7h")}, set(), set(), set()]
    assert not layout.part(obs, "choice").any()


def test_stop_the_bus_shows_the_three_table_cards_and_the_continue_phase():
    s, rng = deal(["2c 7d 9h", "Ks Kd 4c", "5h 6s 8c"], table="Ah Qh Kh", dealer=2, rules="stop_the_bus")
    layout = ObsLayout(3, s.rules)
    play(s, rng, bus_one_action(0, 0))  # seat 0: 2c <-> Ah, may now stop the bus
    obs = encode_flat(s, 0, layout)
    assert [cards_in(r) for r in layout.part(obs, "table_cards")] == [
        {card("2c")},
        {card("Qh")},
        {card("Kh")},
    ]
    assert not layout.part(obs, "table_hidden").any()
    assert layout.part(obs, "variant_phase").tolist() == [0, 1, 0]
    play(s, rng, KNOCK)
    other = encode_flat(s, 1, layout)
    assert layout.part(other, "knocker").tolist() == [0, 0, 1]  # seat 0 sits two on from seat 1
    assert cards_in(layout.part(other, "known_cards")[1]) == {card("Ah")}  # taken face up


# -- random positions of every layout ----------------------------------------------------


def swap_face_down(s, rng):
    """A copy of ``s`` with each face-down table card exchanged with a random stock card."""
    t = clone_state(s)
    for cards, ups in zip(t.table, t.table_up, strict=True):
        for j, (c, up) in enumerate(zip(cards, ups, strict=True)):
            if c >= 0 and not up and t.stock:
                k = int(rng.integers(len(t.stock)))
                cards[j], t.stock[k] = t.stock[k], cards[j]
    return t


def positions(preset: str, n: int, count: int, seed: int):
    """Positions reached by random play from fresh deals."""
    rng = np.random.default_rng(seed)
    return [random_moves(new_game(preset, n, rng), rng, 25) for _ in range(count)], rng


@pytest.mark.parametrize("preset", LAYOUT_PRESETS)
def test_no_seat_sees_a_hidden_card_and_dict_agrees_with_flat(preset):
    n = 3
    layout = ObsLayout(n, Rules.preset(preset))
    space = dict_space(layout)
    states, rng = positions(preset, n, 15, seed=7)
    for s in states:
        for seat in range(n):
            if not s.active[seat]:
                continue
            flat = encode_flat(s, seat, layout)
            assert flat.dtype == np.float32 and flat.min() >= 0 and flat.max() <= 1
            assert np.array_equal(encode_flat(swap_hidden(s, seat, rng), seat, layout), flat)
            assert np.array_equal(encode_flat(swap_face_down(s, rng), seat, layout), flat)
            d = encode_dict(s, seat, layout)
            assert list(d) == list(layout.shapes)
            for name, value in d.items():
                assert value.shape == space[name].shape
                assert np.array_equal(value, layout.part(flat, name).ravel())


def test_move_values_score_each_exchange_with_face_up_cards_and_leave_hidden_ones_at_zero():
    """Stop the Bus: hand 2c 7d 9h, table Ah Qh Kh face up: each bus move's entry is
    the Brag value of the hand it leaves (the whole-table swap, A-K-Q of hearts, the
    best); Switch before the choice: every table card is face down, so all are 0."""
    from thirtyone_env.game.actions import BUS_ALL, NUM_ACTIONS_ALL
    from thirtyone_env.game.cards import NUM_CARDS, PAIR_STRIDE, hand_table

    s, _ = deal(["2c 7d 9h", "Ks Kd 4c", "5h 6s 8c"], table="Ah Qh Kh", dealer=2, rules="stop_the_bus")
    layout = ObsLayout(3, s.rules)
    values = hand_table(s.rules)
    scale = float(max(values))

    def worth(text: str) -> float:
        a, b, c = parse_cards(text)
        return values[a * PAIR_STRIDE + b * NUM_CARDS + c] / scale

    moves = layout.part(encode_flat(s, 0, layout), "move_values")
    assert moves.shape == (NUM_ACTIONS_ALL,)
    assert moves[bus_one_action(0, 0)] == pytest.approx(worth("Ah 7d 9h"))
    assert moves[bus_one_action(2, 1)] == pytest.approx(worth("2c 7d Qh"))
    assert moves[BUS_ALL] == pytest.approx(worth("Ah Qh Kh")) and moves.argmax() == BUS_ALL
    assert np.count_nonzero(moves) == 10  # the nine single exchanges and the whole hand
    other = layout.part(encode_flat(s, 1, layout), "move_values")  # every seat sees its own
    assert other[BUS_ALL] == pytest.approx(worth("Ah Qh Kh"))
    assert other[bus_one_action(2, 0)] == pytest.approx(worth("Ks Kd Ah"))
    t, _ = switch_deal()
    switch_layout = ObsLayout(3, t.rules)
    assert not switch_layout.part(encode_flat(t, 0, switch_layout), "move_values").any()


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("history", [False, True])
def test_every_layout_holds_its_parts_in_the_one_part_order(preset, history):
    """A dict-encoding network is played on the flat encoding by putting its inputs in
    :data:`PART_ORDER`: every layout's flat encoding must hold its parts in that order."""
    rules = Rules.preset(preset)
    layout = ObsLayout(rules.seats or 3, rules, opponent_history=history)
    parts = list(layout.shapes)
    assert parts == [p for p in PART_ORDER if p in layout.shapes]
    assert set(parts) <= set(PART_ORDER)
