"""Switch carry-over on stacked decks.

A player still in the game who ended the last round holding three cards of one suit
worth more than 21 is offered, at the start of the next round and in its order of play,
to lay that hand face up as the new face-up table hand; the first who accepts does, and
everybody gets a fresh hand from the round's deck without those three cards.

Who is asked: after a showdown (every hand shown) only the qualifying seats; after a
round whose hands were not all shown (void, blitz) every seat in order, one whose hand
does not qualify with ``DECLINE_CARRY`` alone, so whose turn it is tells nothing.

Round 1 below (3 players, dealer 2, so seat 0 plays first): the dealer keeps its first
hand, seat 0 knocks, seats 1 and 2 stand; round 2 is dealt by seat 0, so its order of
play is seat 1, seat 2, seat 0.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import agents
from thirtyone_env.envs import multiagent
from thirtyone_env.envs.env import ThirtyOneEnv
from thirtyone_env.game.actions import (
    CARRY_OVER,
    DECLINE_CARRY,
    KEEP_BASE,
    KNOCK,
    RENEW_BASE,
    STAND,
    action_name,
)
from thirtyone_env.game.cards import parse_cards
from thirtyone_env.game.encoding import ObsLayout, encode_flat
from thirtyone_env.game.engine import (
    CARRY,
    CHOOSE,
    DRAW,
    GAME_OVER,
    PHASE_NAMES,
    ROUND_OVER,
    IllegalActionError,
    apply_action,
    card_locations,
    carry_candidates,
    legal_actions,
    legal_mask,
    new_game,
    stacked_table_deck,
    start_round,
)
from thirtyone_env.game.rules import Rules
from thirtyone_env.game.table_strategy import carry_decision
from thirtyone_env.game.views import describe_view, player_view
from thirtyone_env.harness.records import game_lines, replay, round_record
from thirtyone_env.harness.replay import describe_event

SWITCH = Rules.preset("switch")
CLUBS23 = "Ac Kc 2c"  # one suit, 23
DIAMONDS26 = "Ad Kd 5d"  # one suit, 26
SPADES22 = "Qs Js 2s"  # one suit, 22
EXACT21 = "Ts 9s 2s"  # one suit, exactly 21: not enough
# Round 2: hands from the dealer's left (seats 1, 2, 0), the face-down hand, the stock.
HANDS2 = ["5c 6c 7c", "8d 9d 4h", "5s 6s 7s"]
DOWN2 = "8c 9c Tc"


def round_one(hands, rules=SWITCH, second="4s 5h 6d", down="2d 3d 4d"):
    """Round 1 on a stacked deck, played out (keep, knock, stand, stand); returns the
    settled state and its generator."""
    deck = stacked_table_deck(rules, hands, down, dealer=2, second_hand=second)
    rng = np.random.default_rng(0)
    s = new_game(rules, 3, rng, dealer=2, deck=deck)
    for action in (KEEP_BASE, KNOCK, STAND, STAND):
        apply_action(s, action, rng)
    assert s.result is not None and s.result.reason == "knock"
    return s, rng


SWITCH_CAP3 = SWITCH.replace(max_turns_per_round=3)


def void_round_one(hands, rules=SWITCH_CAP3):
    """Round 1 on a stacked deck ended void: the dealer keeps its first hand, then each
    seat renews the face-down table hand (its own hand unchanged) until the turn cap."""
    deck = stacked_table_deck(rules, hands, "2d 3d 4d", dealer=2, second_hand="4s 5h 6d")
    rng = np.random.default_rng(0)
    s = new_game(rules, 3, rng, dealer=2, deck=deck)
    apply_action(s, KEEP_BASE, rng)
    while s.phase < ROUND_OVER:
        apply_action(s, RENEW_BASE + 2, rng)  # renew table hand 1 face down
    assert (s.result.reason, s.result.detail) == ("void", "max_turns")
    return s, rng


def deck_two(carried=()):
    """Round 2's deck (dealer 0): with ``carried``, the carry-over layout."""
    hands = [HANDS2[2], HANDS2[0], HANDS2[1]]  # by seat
    if carried:
        return stacked_table_deck(SWITCH, hands, DOWN2, dealer=0, carried=carried)
    return stacked_table_deck(SWITCH, hands, DOWN2, dealer=0, second_hand="Jh Qh Kh")


def cards(text):
    return parse_cards(text)


# -- when the offer comes --------------------------------------------------------------


def test_the_offer_is_a_phase_with_a_seat_to_act():
    assert CARRY < ROUND_OVER < GAME_OVER and PHASE_NAMES[CARRY] == "carry"
    assert SWITCH.carry_over and not Rules(table="switch").carry_over
    with pytest.raises(ValueError, match=r"Rules\.carry_over=True is not allowed with table='stock'"):
        Rules(carry_over=True)
    with pytest.raises(ValueError, match=r"Rules\.carry_over='yes'"):
        Rules(table="switch", carry_over="yes")


def test_one_suit_over_21_is_offered_the_carry_over_in_the_next_round():
    s, rng = round_one([CLUBS23, "Td 9h 5s", "8h 7h 3s"])
    assert s.hands[0] == cards(CLUBS23) and s.phase == ROUND_OVER
    start_round(s, rng, deck=deck_two())
    assert (s.phase, s.current, s.carry_seats, s.dealer, s.round_no) == (CARRY, 0, [0], 0, 2)
    assert legal_actions(s) == [CARRY_OVER, DECLINE_CARRY]
    assert np.flatnonzero(legal_mask(s)).tolist() == [CARRY_OVER, DECLINE_CARRY]
    assert [action_name(a) for a in legal_actions(s)] == ["carry over", "decline carry"]
    card_locations(s)  # the cards stay where round 1 left them until the deal
    with pytest.raises(IllegalActionError, match="carry over"):
        apply_action(s, KNOCK, rng)


@pytest.mark.parametrize(
    ("rules", "hand"),
    [
        (SWITCH, EXACT21),  # exactly 21 is not more than 21
        (SWITCH, "Ac Kc 9d"),  # two suits
        (Rules(table="switch"), CLUBS23),  # the rule is off
    ],
)
def test_no_offer_unless_the_rule_holds(rules, hand):
    s, rng = round_one([hand, "Td 9h 5s", "8h 7h 3s"], rules=rules)
    start_round(s, rng, deck=deck_two())
    assert (s.phase, s.current) == (CHOOSE, 0)  # the usual deal: dealer 0 chooses
    assert s.carry_seats == []


def test_a_player_out_of_the_game_is_not_offered_and_several_are_asked_in_order():
    rules = SWITCH.replace(lives=1, free_ride=False)
    # seat 2 (lowest, 22) goes out; seats 0 (23) and 1 (26) qualify
    s, rng = round_one([CLUBS23, DIAMONDS26, SPADES22], rules=rules)
    assert s.result.eliminated == (2,) and s.phase == ROUND_OVER
    start_round(s, rng)
    assert (s.phase, s.dealer, s.carry_seats) == (CARRY, 0, [1, 0])  # seat 1 plays first, 0 deals
    assert s.current == 1
    apply_action(s, DECLINE_CARRY, rng)
    assert (s.phase, s.current, s.carry_seats) == (CARRY, 0, [0])
    apply_action(s, CARRY_OVER, rng)
    assert s.table[0] == cards(CLUBS23) and s.phase == DRAW and s.current == 1
    kinds = [(k, p) for k, p, _ in s.history]
    assert kinds[:3] == [("deal", 0), ("decline_carry", 1), ("carry_over", 0)]


def test_game_over_no_offer():
    rules = SWITCH.replace(lives=1, free_ride=False)
    deck = stacked_table_deck(rules, [CLUBS23, "Td 9h 5s"], "2d 3d 4d", dealer=1, second_hand="4s 5h 6d")
    rng = np.random.default_rng(0)
    s = new_game(rules, 2, rng, dealer=1, deck=deck)
    for action in (KEEP_BASE, KNOCK, STAND):
        apply_action(s, action, rng)
    assert s.phase == GAME_OVER and s.winners == (0,) and s.hands[0] == cards(CLUBS23)
    assert legal_actions(s) == []
    with pytest.raises(ValueError, match="start_round needs a finished round"):
        start_round(s, rng)


# -- accept and decline ------------------------------------------------------------------


def test_accept_lays_the_hand_face_up_and_deals_fresh_hands_without_it():
    s, rng = round_one([CLUBS23, "Td 9h 5s", "8h 7h 3s"])
    start_round(s, rng, deck=deck_two(carried=CLUBS23))
    apply_action(s, CARRY_OVER, rng)
    assert s.table == [cards(CLUBS23), cards(DOWN2)]
    assert s.table_up == [[True] * 3, [False] * 3]
    assert [s.hands[p] for p in (1, 2, 0)] == [cards(h) for h in HANDS2]  # the carrier too
    assert not set(cards(CLUBS23)) & ({c for h in s.hands for c in h} | set(s.stock))
    assert len(s.stock) == 52 - 9 - 6 and s.dealt_pair is None
    assert (s.phase, s.current) == (DRAW, 1)  # no dealer's choice: play starts at its left
    card_locations(s)
    assert s.history[0] == (
        "deal",
        0,
        (
            tuple(tuple(h) for h in (cards(HANDS2[2]), cards(HANDS2[0]), cards(HANDS2[1]))),
            -1,
            tuple(s.lives),
            (tuple(cards(CLUBS23)), tuple(cards(DOWN2))),
            None,
        ),
    )
    assert s.history[1] == ("carry_over", 0, tuple(cards(CLUBS23)))
    view = player_view(s, 2)
    assert view.table[0] == tuple(cards(CLUBS23)) and view.table[1] == (None, None, None)


def test_accept_deals_from_the_rounds_order_less_the_carried_cards():
    """The carried cards anywhere in the round's deck: the deal skips them."""
    s, rng = round_one([CLUBS23, "Td 9h 5s", "8h 7h 3s"])
    layout = deck_two(carried=CLUBS23)[:-3]
    deck = layout[:]
    for where, c in zip((0, 4, 9), cards(CLUBS23), strict=True):
        deck.insert(where, c)
    start_round(s, rng, deck=deck)
    apply_action(s, CARRY_OVER, rng)
    assert [s.hands[p] for p in (1, 2, 0)] == [cards(h) for h in HANDS2]
    assert s.table == [cards(CLUBS23), cards(DOWN2)]


def test_decline_is_the_usual_deal_with_the_dealers_choice():
    s, rng = round_one([CLUBS23, "Td 9h 5s", "8h 7h 3s"])
    start_round(s, rng, deck=deck_two())
    apply_action(s, DECLINE_CARRY, rng)
    assert (s.phase, s.current) == (CHOOSE, 0)
    assert [s.hands[p] for p in (1, 2, 0)] == [cards(h) for h in HANDS2]
    assert s.dealt_pair[1] == cards("Jh Qh Kh") and s.table[1] == cards(DOWN2)
    assert [(k, p) for k, p, _ in s.history] == [("deal", 0), ("decline_carry", 0)]
    card_locations(s)


# -- the built-in players ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["greedy", "expert", "search", "blitz31"])
def test_builtin_players_carry_only_when_they_play_first(name):
    rules = SWITCH.replace(lives=1, free_ride=False)
    s, rng = round_one([CLUBS23, DIAMONDS26, SPADES22], rules=rules)
    start_round(s, rng)
    player = agents.make(name)
    if hasattr(player, "reset"):
        player.reset(np.random.default_rng(0))
    assert s.current == 1  # seat 1 plays first in round 2: it carries
    assert player.act(player_view(s, 1), legal_mask(s)) == CARRY_OVER
    apply_action(s, DECLINE_CARRY, rng)
    assert s.current == 0  # the dealer plays last: it declines
    assert player.act(player_view(s, 0), legal_mask(s)) == DECLINE_CARRY
    assert carry_decision(player_view(s, 0), legal_mask(s)) == DECLINE_CARRY


# -- who is asked ---------------------------------------------------------------------------


def asked_in_turn(s, rng):
    """Decline for every seat asked: ``(seat, legal actions)`` in the order asked."""
    asked = []
    while s.phase == CARRY:
        asked.append((s.current, legal_actions(s)))
        assert np.flatnonzero(legal_mask(s)).tolist() == asked[-1][1]
        apply_action(s, DECLINE_CARRY, rng)
    return asked


BOTH = [CARRY_OVER, DECLINE_CARRY]


@pytest.mark.parametrize(
    ("hands", "legal"),
    [
        # seat 0 qualifies (23), seat 2 too (22): both may carry, seat 1 only declines
        ([CLUBS23, "Td 9h 5s", SPADES22], {1: [DECLINE_CARRY], 2: BOTH, 0: BOTH}),
        # nobody qualifies: every seat is still asked, and may only decline
        (["Ac Kc 9d", "Td 9h 5s", EXACT21], {1: [DECLINE_CARRY], 2: [DECLINE_CARRY], 0: [DECLINE_CARRY]}),
    ],
)
def test_after_a_void_round_every_seat_is_asked_in_order(hands, legal):
    """No hand was shown: who is asked must not tell whose hand qualifies."""
    s, rng = void_round_one(hands)
    assert s.hands == [cards(h) for h in hands]
    start_round(s, rng, deck=deck_two())
    assert (s.phase, s.dealer, s.current, s.carry_seats) == (CARRY, 0, 1, [1, 2, 0])
    with pytest.raises(IllegalActionError):
        if legal[1] == [DECLINE_CARRY]:
            apply_action(s, CARRY_OVER, rng)
    assert asked_in_turn(s, rng) == list(legal.items())
    # all declined: the usual deal, the declines after it in the order asked
    assert (s.phase, s.current) == (CHOOSE, 0)
    assert [s.hands[p] for p in (1, 2, 0)] == [cards(h) for h in HANDS2]
    assert [(k, p) for k, p, _ in s.history] == [("deal", 0)] + [("decline_carry", p) for p in (1, 2, 0)]
    card_locations(s)


def test_the_table_text_tells_a_non_qualifier_it_may_only_decline():
    s, rng = void_round_one(["Td 9h 5s", "8h 7h 3s", SPADES22])
    start_round(s, rng, deck=deck_two(carried=SPADES22))
    assert "does not qualify: decline" in describe_view(player_view(s, 1))
    assert "not dealt yet (carry-over offer)" in describe_view(player_view(s, 1))  # no stale stock size
    apply_action(s, DECLINE_CARRY, rng)
    text = describe_view(player_view(s, 2))
    assert "face up as the new face-up table hand?" in text and "does not qualify" not in text


def test_after_a_void_round_a_later_qualifier_may_still_carry():
    s, rng = void_round_one(["Td 9h 5s", "8h 7h 3s", SPADES22])
    start_round(s, rng, deck=deck_two(carried=SPADES22))
    assert (s.current, legal_actions(s)) == (1, [DECLINE_CARRY])
    apply_action(s, DECLINE_CARRY, rng)
    assert (s.current, legal_actions(s)) == (2, BOTH)
    apply_action(s, CARRY_OVER, rng)
    assert s.table[0] == cards(SPADES22) and (s.phase, s.current) == (DRAW, 1)
    assert [(k, p) for k, p, _ in s.history[:3]] == [("deal", 0), ("decline_carry", 1), ("carry_over", 2)]


def test_after_a_blitz_every_seat_is_asked():
    """A dealt 31 (seat 1) ends round 1 at once: only the blitzer's 31 is shown, so the
    others are asked too (seat 0's 23 may carry, seat 2's low hand only declines)."""
    deck = stacked_table_deck(
        SWITCH, [CLUBS23, "Ah Kh Qh", "2d 3h 4s"], "5s 6d 7h", dealer=2, second_hand="2h 3s 4d"
    )
    rng = np.random.default_rng(0)
    s = new_game(SWITCH, 3, rng, dealer=2, deck=deck)
    apply_action(s, KEEP_BASE, rng)
    assert (s.phase, s.result.reason, s.result.blitzers) == (ROUND_OVER, "blitz", (1,))
    start_round(s, rng, deck=deck_two())
    assert asked_in_turn(s, rng) == [(1, BOTH), (2, [DECLINE_CARRY]), (0, BOTH)]


def test_after_a_knock_showdown_only_qualifiers_are_asked():
    """Every hand was shown: seat 1 (first to play, 22 in two suits) and seat 2 are not
    asked; seat 0 (23) is."""
    s, rng = round_one([CLUBS23, "Td 9h 5s", "8h 7h 3s"])
    start_round(s, rng, deck=deck_two())
    assert asked_in_turn(s, rng) == [(0, BOTH)]
    s, rng = round_one(["Ac Kc 9d", "Td 9h 5s", "8h 7h 3s"])
    start_round(s, rng, deck=deck_two())
    assert s.phase == CHOOSE and asked_in_turn(s, rng) == []


@pytest.mark.parametrize("name", ["random", "greedy", "expert", "search", "blitz31"])
def test_builtin_players_decline_when_only_decline_is_legal(name):
    """Seat 1 plays first in round 2 (it would carry) but its hand does not qualify."""
    s, rng = void_round_one(["Td 9h 5s", "8h 7h 3s", SPADES22])
    start_round(s, rng, deck=deck_two())
    player = agents.make(name)
    if hasattr(player, "reset"):
        player.reset(np.random.default_rng(0))
    assert s.current == 1 and legal_actions(s) == [DECLINE_CARRY]
    assert player.act(player_view(s, 1), legal_mask(s)) == DECLINE_CARRY
    assert carry_decision(player_view(s, 1), legal_mask(s)) == DECLINE_CARRY


def test_pettingzoo_turn_after_a_void_round_is_the_same_whatever_the_hidden_hands():
    """Two void rounds differing only in hidden hands: the agent asked first (the first to
    play, whose own hand differs) and then every other agent are asked in the same order,
    each seeing the same observation; only the asked agent's mask says whether it may carry."""
    seen = []
    for hands in ([CLUBS23, "Td 9h 5s", SPADES22], ["Ac Kc 9d", "Td 9h 5s", EXACT21]):
        rules = SWITCH_CAP3
        deck = stacked_table_deck(rules, hands, "2d 3d 4d", dealer=2, second_hand="4s 5h 6d")
        env = multiagent.raw_env(num_players=3, rules=rules)
        env.reset(seed=0, options={"deck": deck, "dealer": 2})
        env.step(KEEP_BASE)
        while env.state_.round_no == 1:  # (the env deals the next round at once)
            env.step(RENEW_BASE + 2)
        assert env.state_.result.reason == "void"
        order = []
        while env.state_.phase == CARRY:
            order.append((env.agent_selection, env.observe("player_1")["observation"].tolist()))
            env.step(DECLINE_CARRY)
        seen.append(order)
    assert [a for a, _ in seen[0]] == ["player_1", "player_2", "player_0"]
    assert seen[0] == seen[1]


# -- both envs ----------------------------------------------------------------------------

ROUND1_LOW = stacked_table_deck(
    SWITCH, [CLUBS23, "2d 3h 4s", "5d 6h 7s"], "5s 6d 7h", dealer=2, second_hand="2h 3s 4d"
)


def test_single_env_learner_is_offered_with_exactly_the_two_actions():
    """The learner (seat 0) knocks on 23 clubs; the greedy opponents' low cards can make
    no hand over 21, so round 2 offers the carry-over to the learner alone."""
    env = ThirtyOneEnv(3, "switch", seat=0)
    obs, info = env.reset(seed=0, options={"deck": ROUND1_LOW, "dealer": 2})
    assert info["phase"] == "draw" and KNOCK in np.flatnonzero(info["action_mask"])
    obs, reward, done, _, info = env.step(KNOCK)
    assert not done and info["phase"] == "carry" and env.state.round_no == 2
    assert np.flatnonzero(info["action_mask"]).tolist() == [CARRY_OVER, DECLINE_CARRY]
    assert env.obs_layout.part(obs, "variant_phase").tolist() == [0, 0, 1]
    obs, reward, done, _, info = env.step(CARRY_OVER)  # (the others then play to the learner's turn)
    deal, carry = env.state.history[:2]
    assert deal[2][3][0] == tuple(cards(CLUBS23)) and carry == ("carry_over", 0, tuple(cards(CLUBS23)))
    assert env.obs_layout.part(obs, "variant_phase")[2] == 0


def test_pettingzoo_env_plays_the_decision():
    env = multiagent.raw_env(num_players=3, rules="switch")
    env.reset(seed=0, options={"deck": ROUND1_LOW, "dealer": 2})
    for action in (KEEP_BASE, KNOCK, STAND, STAND):
        env.step(action)
    assert env.agent_selection == "player_0" and env.state_.phase == CARRY
    got = env.observe("player_0")
    assert np.flatnonzero(got["action_mask"]).tolist() == [CARRY_OVER, DECLINE_CARRY]
    assert not env.observe("player_1")["action_mask"].any()
    env.step(DECLINE_CARRY)
    assert env.state_.phase == CHOOSE and env.agent_selection == "player_0"  # seat 0 deals round 2


def test_the_offer_shows_only_the_offered_seat_its_own_hand():
    s, rng = round_one([CLUBS23, "Td 9h 5s", "8h 7h 3s"])
    start_round(s, rng, deck=deck_two())
    layout = ObsLayout(3, SWITCH)
    mine, other = encode_flat(s, 0, layout), encode_flat(s, 1, layout)
    assert layout.part(mine, "variant_phase").tolist() == [0, 0, 1]
    assert layout.part(other, "variant_phase").tolist() == [0, 0, 0]
    assert not layout.part(other, "table_cards").any() and not layout.part(other, "known_cards").any()
    view = player_view(s, 0)
    assert (view.phase, view.my_turn, view.hand, view.table) == ("carry", True, tuple(cards(CLUBS23)), ())


# -- records ------------------------------------------------------------------------------


@pytest.mark.parametrize("decision", [CARRY_OVER, DECLINE_CARRY])
def test_record_round_trip_replays_the_decision(decision):
    s, rng = round_one([CLUBS23, "Td 9h 5s", "8h 7h 3s"])
    histories = [s.history]
    start_round(s, rng)
    apply_action(s, decision, rng)
    while s.phase < ROUND_OVER:
        acts = legal_actions(s)
        apply_action(s, acts[int(rng.integers(len(acts)))], rng)
    histories.append(s.history)
    line = round_record(s.history, SWITCH)
    assert line["actions"][0] == [0, decision, action_name(decision)]
    assert sorted(line["deck"]) == list(range(52))
    game = [json.loads(x) for x in game_lines(SWITCH, 3, histories)]
    replayed = [state for state, _seat, _action in replay(game)][-1]
    assert replayed.history == s.history and replayed.hands == s.hands and replayed.table == s.table
    assert replayed.lives == s.lives
    text = describe_event(*s.history[1])
    assert text == (
        "seat 0 carries the hand Ac Kc 2c over: it lies face up as table hand 0"
        if decision == CARRY_OVER
        else "seat 0 declines to carry the last hand over"
    )
    # at the table a carry is seen by all, a decline by nobody else (it would tell that
    # the unshown hand qualified)
    assert describe_event(*s.history[1], viewer=0) == text.replace("seat 0", "seat 0 (you)")
    assert describe_event(*s.history[1], viewer=1) == (text if decision == CARRY_OVER else None)


def test_replay_prints_a_game_where_several_seats_declined(tmp_path):
    """The declines wait for the deal (phase CARRY has no history yet): the printer
    must not take the offer for the round's start."""
    import subprocess
    import sys

    from thirtyone_env.harness.match import play_game
    from thirtyone_env.harness.records import write_lines

    for seed in range(50):  # the case: several seats asked before one deal
        rec = play_game(
            [agents.make("random") for _ in range(3)], np.random.default_rng(seed), SWITCH, keep_history=True
        )
        declines = [sum(e[0] == "decline_carry" for e in h) for h in rec.histories]
        if max(declines) >= 2:
            break
    assert max(declines) >= 2, "no seed of 50 gave a round with two declines"
    path = write_lines(
        tmp_path / "switch.jsonl", game_lines(SWITCH, 3, rec.histories, rec.winners, rec.lives)
    )
    r = subprocess.run(
        [sys.executable, "-m", "thirtyone_env.harness.replay", str(path)], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("declines to carry the last hand over") == sum(declines)
    assert r.stdout.count("\n-- round ") == len(rec.histories)


@pytest.mark.parametrize("max_turns", [200, 3])
def test_switch_games_where_every_offer_is_declined_are_the_games_of_before(max_turns):
    """Greedy play on both rule books, same seeds, every seat asked declining: round for
    round the same history but for the declines (the carry-over changes nothing else).
    A short turn cap makes void rounds, after which every seat is asked (qualifying or
    not); after a showdown only qualifiers are."""
    compared = 0
    asked = {True: 0, False: 0}  # after a showdown: seats asked, all qualifying; after none: all seats
    for seed in range(6):
        games = []
        for rules in (
            Rules(table="switch", max_turns_per_round=max_turns),
            SWITCH.replace(max_turns_per_round=max_turns),
        ):
            rng = np.random.default_rng(seed)
            s = new_game(rules, 3, rng)
            player = agents.make("greedy")
            rounds = []
            while s.phase != GAME_OVER and len(rounds) < 8:
                if s.phase == ROUND_OVER:
                    rounds.append([e for e in s.history if e[0] != "decline_carry"])
                    showdown = s.result.reason in ("knock", "stock_exhausted")
                    start_round(s, rng)
                    if s.phase == CARRY:
                        seats = s.carry_seats[:]
                        qualify = carry_candidates(s, seats)
                        assert seats == qualify if showdown else len(seats) == sum(s.active)
                        assert [p for p, _ in asked_in_turn(s, rng)] == seats
                        asked[showdown] += len(seats)
                    continue
                apply_action(s, player.act(player_view(s, s.current), legal_mask(s)), rng)
            games.append(rounds)
        plain, carry = games
        assert carry == plain
        compared += len(carry)
    assert compared >= 40 and asked[True] > 0
    assert asked[False] > 0 or max_turns == 200
