"""The seed's variants on stacked decks: cut-throat knocking, no-elimination points,
banking's widow and pot, Switch's table hands, Stop the Bus and Brag ranking."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import card, deal, play, switch_deal
from hypothesis import given, settings
from hypothesis import strategies as st

from thirtyone_env.game.actions import (
    BUS_ALL,
    DRAW_STOCK,
    KEEP_BASE,
    KNOCK,
    RENEW_BASE,
    STAND,
    SWAP_HAND_BASE,
    bus_one_action,
    discard_action,
    swap_one_action,
    widow_action,
)
from thirtyone_env.game.cards import BRAG_CLASSES, brag_key, parse_cards
from thirtyone_env.game.engine import (
    CHOOSE,
    CONTINUE,
    DRAW,
    GAME_OVER,
    ROUND_OVER,
    IllegalActionError,
    apply_action,
    card_locations,
    legal_actions,
    legal_mask,
    new_game,
    start_round,
)
from thirtyone_env.game.rules import Rules
from thirtyone_env.game.state import T_SHOWDOWNS
from thirtyone_env.game.views import player_view, public_result

# -- cut throat ------------------------------------------------------------------------


def test_cut_throat_knocker_who_beats_nobody_pays_two_and_ties_are_safe():
    # dealer 2: seat 0 knocks on 10, seat 1 ties at 10, seat 2 holds 20
    s, rng = deal(["Tc 2d 3h", "Td 2h 3s", "Ks Qs 4d"], "9c", dealer=2, rules="cut_throat")
    play(s, rng, KNOCK, STAND, STAND)
    assert s.result.reason == "knock"
    assert s.result.losses == (2, 0, 0)


def test_cut_throat_knocker_who_beats_someone_lowest_loses_one():
    s, rng = deal(["Ks Qs 4d", "Td 2h 3s", "Tc 2d 3h"], "9c", dealer=2, rules="cut_throat")
    play(s, rng, KNOCK, STAND, STAND)
    assert s.result.losses == (0, 1, 1)  # two tied lowest, knocker beat them


def test_cut_throat_no_free_ride_and_trips():
    rules = Rules.preset("cut_throat")
    assert rules.three_of_a_kind == 30.5 and not rules.free_ride and rules.lives == 3
    s, rng = deal(["7c 7d 7h", "As Ks 2d"], "9c", dealer=1, rules=rules)
    assert s.phase == DRAW  # dealt trips are 30.5, not a blitz
    play(s, rng, KNOCK, STAND)
    assert s.result.values == (30.5, 21) and s.result.losses == (0, 1)


# -- no elimination (points) -----------------------------------------------------------


def test_points_30_27_27_27_is_one_high_and_three_middles():
    # dealer 3: seat 0 knocks holding 30 -> knocker high: 4; three 27s middle: 2 each
    hands = ["Kc Qc Tc", "Ad Kd 6d", "Ah Kh 6h", "As Ks 6s"]
    s, rng = deal(hands, "2d", dealer=3, rules="no_elimination")
    play(s, rng, KNOCK, STAND, STAND, STAND)
    assert s.result.values == (30, 27, 27, 27)
    assert s.result.gains == (4, 2, 2, 2)
    assert s.score == [4, 2, 2, 2] and s.phase == ROUND_OVER


def test_points_knocker_low_and_middle():
    # knocker (seat 0) lowest alone: 0; the middle 2; the high 3
    s, rng = deal(["Tc 2d 3h", "Ks Qs 4d", "Ah Kh 5s"], "9c", dealer=2, rules="no_elimination")
    play(s, rng, KNOCK, STAND, STAND)
    assert s.result.values == (10, 20, 21)
    assert s.result.gains == (0, 2, 3)
    # knocker in the middle scores 1
    s, rng = deal(["Ks Qs 4d", "Tc 2d 3h", "Ah Kh 5s"], "9c", dealer=2, rules="no_elimination")
    play(s, rng, KNOCK, STAND, STAND)
    assert s.result.gains == (1, 1, 3)


def test_points_blitz_scores_six_as_the_highest_hand():
    # the seed counts every hand after a blitz too: the 31 is the highest hand, so the
    # others are middle and lowest below it (20 middle: 2, 10 lowest: 1)
    s, _ = deal(["As Js Ts", "Tc 2d 3h", "Ks Qs 4d"], "9c", dealer=2, rules="no_elimination")
    assert s.result.reason == "blitz"
    assert s.result.gains == (6, 1, 2)
    # heads-up: the one hand below a dealt 31 is the lowest
    s, _ = deal(["As Ks Qs", "Tc 2d 3h"], "9c", dealer=1, rules="no_elimination")
    assert s.result.gains == (6, 1)


def test_points_blitz_lays_every_hand_down_and_a_lives_blitz_only_the_31():
    """The seed's points game: "whether a player knocks or shows a blitz, all players
    show their hands", and the points rank them: every seat sees every value, and the
    table's tally counts them as shown. After a lives game's blitz only the 31 is shown."""
    hands = ["As Js Ts", "Tc 2d 3h", "Ks Qs 4d"]
    s, _ = deal(hands, "9c", dealer=2, rules="no_elimination")
    for seat in range(3):
        assert public_result(s.result, seat, s.rules).values == (31, 10, 20)
    assert [t[T_SHOWDOWNS] for t in s.tally] == [1, 1, 1]
    s, _ = deal(hands, "9c", dealer=2, rules="standard")
    assert s.result.reason == "blitz"
    assert public_result(s.result, 1, s.rules).values == (31, 10, None)
    assert [t[T_SHOWDOWNS] for t in s.tally] == [0, 0, 0]


def test_points_knocker_blitzed_after_the_knock_is_lowest():
    # seat 0 knocks on 10; seat 1 draws the Qh to 31 on its last turn (a blitz in the
    # points game): the knocker beat nobody and scores the lowest knocker's 0
    s, rng = deal(["Tc 2d 3h", "Ah Kh 2c"], "9c", "Qh", dealer=1, rules="no_elimination")
    play(s, rng, KNOCK, DRAW_STOCK, discard_action(card("2c")))
    assert s.result.reason == "blitz" and s.result.values[1] == 31
    assert s.result.gains == (0, 6)
    # three seats: the knocker's 20 is middle below the 31 (knocker 1), the 10 lowest (1)
    s, rng = deal(["Ks Qs 4d", "Ah Kh 2c", "Tc 2d 3h"], "9c", "Qh", dealer=2, rules="no_elimination")
    play(s, rng, KNOCK, DRAW_STOCK, discard_action(card("2c")))
    assert s.result.gains == (1, 6, 1)


def test_points_game_lasts_num_rounds_and_nobody_is_out():
    rules = Rules.preset("no_elimination").replace(num_rounds=3)
    rng = np.random.default_rng(1)
    s = new_game(rules, 3, rng)
    while s.phase != GAME_OVER:
        if s.phase == ROUND_OVER:
            start_round(s, rng)
            continue
        acts = legal_actions(s)
        apply_action(s, acts[int(rng.integers(len(acts)))], rng)
    assert s.round_no == 3 and all(s.active)
    best = max(s.score)
    assert s.winners == tuple(p for p in range(3) if s.score[p] == best)


# -- banking ----------------------------------------------------------------------------


def test_banking_deals_the_widow_one_card_a_round():
    """The seed: after each player has received one card, the dealer lays one card face
    down, three rounds making the widow; then the upcard and the stock."""
    deck = parse_cards("2c 3c 4c 5c 6c 7c 8c 9c Tc Jc Qc Kc Ac 2d 3d")
    s = new_game(Rules.preset("banking"), 3, np.random.default_rng(0), dealer=2, deck=deck)
    assert s.hands == [parse_cards(h) for h in ("2c 6c Tc", "3c 7c Jc", "4c 8c Qc")]
    assert s.table == [parse_cards("5c 9c Kc")]
    assert s.discard == [card("Ac")] and s.stock[-1] == card("2d")  # the stock's top: next in the deck


def test_banking_ante_widow_exchange_and_pot():
    rules = Rules.preset("banking")
    # dealer 2: seat 0 plays first. Widow: Ah Kh Qh (face down at the deal).
    s, rng = deal(["2c 3d 4s", "Ks Qs 4d", "Tc 2d 3h"], "9c", table="Ah Kh Qh", dealer=2, rules=rules)
    assert s.pot == 3 and s.score == [19, 19, 19]
    assert s.table == [[card("Ah"), card("Kh"), card("Qh")]] and s.table_up == [[False] * 3]
    v1 = player_view(s, 1)
    assert all(x is None for x in v1.table[0])  # face down: nobody sees the widow
    legal = legal_actions(s)
    assert widow_action((0,), (0,)) in legal and widow_action((0, 1, 2), (0, 1, 2)) in legal
    # seat 0 gives its 2c (slot 0) and 3d (slot 1) for the Ah (slot 0) and Kh (slot 1)
    play(s, rng, widow_action((0, 1), (0, 1)))
    assert s.hands[0] == [card("Ah"), card("Kh"), card("4s")]
    assert s.table == [[card("2c"), card("3d"), card("Qh")]] and s.table_up == [[True, True, False]]
    v1 = player_view(s, 1)
    assert v1.table[0][:2] == (card("2c"), card("3d")) and v1.table[0][2] is None  # given cards public
    assert card("Ah") not in v1.known[0]  # taken face down: private to seat 0
    assert s.current == 1
    # seat 1 takes the public 2c for its 4d: now everyone knows seat 1 holds the 2c
    play(s, rng, widow_action((2,), (0,)))
    assert card("2c") in player_view(s, 2).known[1]
    # seat 2 knocks; everyone stands: seat 0 (Ah Kh = 21) takes the pot of 3
    play(s, rng, KNOCK, STAND, STAND)
    assert s.result.values == (21, 20, 10)
    assert s.score == [22, 19, 19] and s.pot == 0
    assert s.result.gains == (2, -1, -1)


def test_banking_tie_splits_and_remainder_stays():
    s, rng = deal(["Ks Qs 4d", "Kc Qc 4h", "Tc 2d 3h"], "9c", table="2h 3c 5d", dealer=2, rules="banking")
    play(s, rng, KNOCK, STAND, STAND)
    assert s.result.values == (20, 20, 10)
    assert s.score == [20, 20, 19] and s.pot == 1  # 3 chips: 1 each, 1 stays


def test_banking_blitz_bonus():
    s, _ = deal(["As Js Ts", "Kc Qc 4h", "Tc 2d 3h"], "9c", table="2h 3c 5d", dealer=2, rules="banking")
    assert s.result.reason == "blitz"
    # pot 3 (antes) + 1 from each other player = 5 to the blitzer
    assert s.score == [24, 18, 18] and s.result.gains == (4, -2, -2)


def test_banking_player_without_chips_is_out():
    rules = Rules.preset("banking").replace(chips=1)
    s, _ = deal(["As Js Ts", "Kc Qc 4h", "Tc 2d 3h"], "9c", table="2h 3c 5d", dealer=2, rules=rules)
    assert s.result.eliminated == (1, 2) and s.phase == GAME_OVER and s.winners == (0,)


# -- switch -------------------------------------------------------------------------------


def test_switch_dealer_chooses_a_hand_and_the_other_lies_face_up():
    s, rng = switch_deal()
    assert s.phase == CHOOSE and s.current == 2
    assert legal_actions(s) == [KEEP_BASE, KEEP_BASE + 1]
    assert legal_mask(s).shape == (113,)
    play(s, rng, KEEP_BASE + 1)
    assert s.hands[2] == parse_cards("9h 8h 7h")
    assert s.table[0] == parse_cards("Kd Qd 2s") and s.table_up[0] == [True] * 3
    assert s.table_up[1] == [False] * 3
    assert s.phase == DRAW and s.current == 0
    v = player_view(s, 0)
    assert v.table[0] == tuple(parse_cards("Kd Qd 2s")) and v.table[1] == (None, None, None)


def test_switch_swap_from_face_down_makes_the_given_card_face_up():
    s, rng = switch_deal()
    play(s, rng, KEEP_BASE)  # dealer keeps Kd Qd 2s; 9h 8h 7h face up
    play(s, rng, swap_one_action(0, 1, 0))  # seat 0: Tc <-> face-down As
    assert s.hands[0] == parse_cards("As 2d 3h")
    assert s.table[1] == parse_cards("Tc Ks Qs") and s.table_up[1] == [True, False, False]
    assert card("As") not in player_view(s, 1).known[0]  # only seat 0 saw it
    # seat 1 swaps its whole hand with the face-up table hand 0
    play(s, rng, SWAP_HAND_BASE + 0)
    assert s.hands[1] == parse_cards("9h 8h 7h")
    assert set(player_view(s, 0).known[1]) == set(parse_cards("9h 8h 7h"))


def test_switch_renew_face_up_continues_the_turn_and_face_down_ends_it():
    s, rng = switch_deal()
    play(s, rng, KEEP_BASE)
    play(s, rng, RENEW_BASE + 2 * 1 + 1)  # seat 0 renews table hand 1 face up
    assert s.table[1] == parse_cards("2c 3c 4c") and s.table_up[1] == [True] * 3
    assert s.phase == CONTINUE and s.current == 0
    assert STAND in legal_actions(s) and KNOCK not in legal_actions(s)
    assert RENEW_BASE not in legal_actions(s)
    play(s, rng, swap_one_action(0, 1, 2))  # Tc <-> 4c
    assert s.current == 1 and s.phase == DRAW
    play(s, rng, RENEW_BASE + 2 * 1 + 0)  # seat 1 renews face down: turn over
    assert s.table[1] == parse_cards("5c 6c 7c") and s.table_up[1] == [False] * 3
    assert s.current == 2
    assert set(s.muck) == set(parse_cards("As Ks Qs 2c 3c Tc"))
    assert set(player_view(s, 2).muck) == set(parse_cards("2c 3c Tc"))  # the face-up ones
    s.stock = s.stock[-2:]  # fewer than three cards left: no renewal
    assert not any(RENEW_BASE <= a < KEEP_BASE for a in legal_actions(s))


def test_switch_blitz_on_a_swap():
    s, rng = switch_deal()
    play(s, rng, KEEP_BASE)
    # seat 0 swaps its hand for the face-down As Ks Qs -> 31 blitz
    play(s, rng, SWAP_HAND_BASE + 1)
    assert s.result.reason == "blitz" and s.result.blitzers == (0,)


# -- stop the bus / brag ------------------------------------------------------------------


def test_brag_order_of_classes_and_known_pairs():
    key = lambda t: brag_key(parse_cards(t))  # noqa: E731
    ladder = ["Ah Kd 9c", "5h 5d 2c", "2h 7h 9h", "4c 5d 6h", "4h 5h 6h", "2c 2d 2h"]
    assert [BRAG_CLASSES[key(t) // 2197] for t in ladder] == list(BRAG_CLASSES)
    assert [key(t) for t in ladder] == sorted(key(t) for t in ladder)
    assert key("Qh Kd Ac") > key("Jh Qd Kc") > key("2c 3d 4h") > key("Ah 2d 3c")  # runs
    assert key("Ah 2d 3c") > key("Ah Kd 9c")  # A-2-3 is a run
    assert brag_key(parse_cards("Ah 2d 3c"), ace_low_run=False) < key("5h 5d 2c")  # not a run then
    # the seed: within a class by the highest card or the pair, then the middle card or
    # the kicker, then the lowest
    assert key("Kh Kd 2c") > key("Qh Qd Ac")  # pair first
    assert key("3h 3d 2c") > key("2h 2d Ac")
    assert key("Qh Qd Ac") > key("Qs Qc Kd")  # same pair: the kicker
    assert key("Qh Qd Ac") == key("Qs Qc Ad")
    assert key("Ah 9h 3h") > key("Kh Qh 9h")  # flush: highest card
    assert key("Ah Kd 9c") > key("Ah Kd 8c")  # high card: kickers
    assert key("Ah Kd 9c") == key("As Kh 9d")  # suits never rank


def test_stop_the_bus_exchange_one_then_stop_the_bus():
    s, rng = deal(["2c 7d 9h", "Ks Kd 4c", "5h 6s 8c"], table="Ah Qh Kh", dealer=2, rules="stop_the_bus")
    assert s.phase == DRAW and s.current == 0
    legal = legal_actions(s)
    assert KNOCK not in legal and len(legal) == 10  # 9 single exchanges + all three
    play(s, rng, bus_one_action(0, 0))  # 2c <-> Ah
    assert s.hands[0] == parse_cards("Ah 7d 9h") and s.table[0] == parse_cards("2c Qh Kh")
    assert s.phase == CONTINUE and legal_actions(s) == [KNOCK, STAND]
    play(s, rng, KNOCK)  # stop the bus
    assert s.current == 1
    assert STAND not in legal_actions(s)  # every turn exchanges, the last ones too
    play(s, rng, BUS_ALL)  # seat 1 takes 2c Qh Kh for Ks Kd 4c: last turn ends at once
    assert s.hands[1] == parse_cards("2c Qh Kh") and s.current == 2
    play(s, rng, bus_one_action(0, 0))  # seat 2: 5h <-> Ks
    # ranks: seat 0 A-9-7 high, seat 1 K-Q-2 high (weaker), seat 2 K-8-6 high (weakest)
    assert s.result.losses == (0, 0, 1)


def test_stop_the_bus_exchange_three_and_play_on():
    s, rng = deal(["2c 7d 9h", "Ks Kd 4c", "5h 6s 8c"], table="Ah Qh Kh", dealer=2, rules="stop_the_bus")
    play(s, rng, BUS_ALL, STAND)
    assert s.hands[0] == parse_cards("Ah Qh Kh") and s.table[0] == parse_cards("2c 7d 9h")
    assert s.current == 1 and s.knocker == -1
    with pytest.raises(IllegalActionError):
        apply_action(s, KNOCK, rng)  # the bus stops only after an exchange


def test_stop_the_bus_has_no_blitz_and_ties_all_lose():
    s, rng = deal(["Ac Kc Qc", "5h 5d 2c", "5s 5c 2d"], table="3c 2h 2s", dealer=2, rules="stop_the_bus")
    assert s.phase == DRAW  # A-K-Q of clubs: no 31 in Brag, no blitz
    play(s, rng, bus_one_action(0, 0), KNOCK)  # seat 0 trades its Ac for the 3c and stops
    play(s, rng, bus_one_action(2, 1), bus_one_action(2, 2))  # 2c <-> 2h, then 2d <-> 2s
    assert s.result.reason == "knock"
    # 3c Kc Qc (flush) beats the two tied pairs: both lose one
    assert s.result.losses == (0, 1, 1)


@pytest.mark.parametrize("name", ["cut_throat", "no_elimination", "banking", "switch", "stop_the_bus"])
def test_every_preset_finishes_games_under_random_play(name):
    rules = Rules.preset(name).replace(max_rounds=60)
    rng = np.random.default_rng(5)
    for n in (2, 3, 4):
        s = new_game(rules, n, rng)
        steps = 0
        while s.phase != GAME_OVER:
            if s.phase == ROUND_OVER:
                start_round(s, rng)
                continue
            acts = legal_actions(s)
            mask = legal_mask(s)
            assert sorted(np.flatnonzero(mask).tolist()) == sorted(acts)
            apply_action(s, acts[int(rng.integers(len(acts)))], rng)
            card_locations(s)
            steps += 1
        assert s.winners


# -- invariants, env checkers, hidden information ------------------------------------------

VARIANTS = ["cut_throat", "no_elimination", "banking", "switch", "stop_the_bus"]


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(VARIANTS), n=st.integers(2, 6), seed=st.integers(0, 2**32 - 1))
def test_variant_invariants_under_random_play(name, n, seed):
    rules = Rules.preset(name).replace(max_rounds=25)
    rng = np.random.default_rng(seed)
    s = new_game(rules, n, rng)
    total_chips = rules.chips * n
    prev_score, prev_lives = list(s.score), list(s.lives)
    for _ in range(100_000):
        card_locations(s)  # every card in exactly one place
        if rules.scoring == "chips":
            assert sum(s.score) + s.pot == total_chips and min(s.score) >= 0
        if rules.scoring == "points":
            assert all(a <= b for a, b in zip(prev_score, s.score, strict=True))
        assert all(a >= b for a, b in zip(prev_lives, s.lives, strict=True))
        prev_score, prev_lives = list(s.score), list(s.lives)
        if s.phase == GAME_OVER:
            assert s.winners
            return
        if s.phase == ROUND_OVER:
            start_round(s, rng)
            prev_score, prev_lives = list(s.score), list(s.lives)
            continue
        for p in range(n):
            if s.active[p]:
                assert len(s.hands[p]) in (3, 4)
        acts = legal_actions(s)
        assert acts and np.array_equal(np.flatnonzero(legal_mask(s)), sorted(acts))
        apply_action(s, acts[int(rng.integers(len(acts)))], rng)
    raise AssertionError("game did not end")


@pytest.mark.parametrize("name", VARIANTS)
def test_env_checkers_pass_for_every_variant(name):
    import warnings

    from gymnasium.utils.env_checker import check_env as gym_check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    from thirtyone_env import ThirtyOneEnv

    env = ThirtyOneEnv(num_players=3, rules=name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gym_check_env(env, skip_render_check=True)
    sb3_check_env(ThirtyOneEnv(num_players=3, rules=name, obs_encoding="dict"))
    obs, info = env.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(300):
        mask = info["action_mask"]
        assert mask.shape == env.action_space.shape or mask.shape == (env.action_space.n,)
        obs, _, term, _, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert env.observation_space.contains(obs)
        if term:
            obs, info = env.reset()


@pytest.mark.parametrize("name", ["banking", "switch"])
def test_face_down_table_cards_never_reach_an_observation(name):
    """Swap a face-down table card with a stock card: every seat's observation stays
    the same (nobody can see either)."""
    from thirtyone_env.game.encoding import ObsLayout, encode_flat
    from thirtyone_env.game.engine import clone_state

    rules = Rules.preset(name)
    layout = ObsLayout(4, rules)
    rng = np.random.default_rng(3)
    s = new_game(rules, 4, rng)
    checked = 0
    for _ in range(60):
        if s.phase >= ROUND_OVER:
            break
        hidden = [(t, j) for t, ups in enumerate(s.table_up) for j, up in enumerate(ups) if not up]
        if hidden and s.stock:
            t, j = hidden[0]
            other = clone_state(s)
            other.table[t][j], other.stock[0] = s.stock[0], s.table[t][j]
            for seat in range(4):
                np.testing.assert_array_equal(encode_flat(s, seat, layout), encode_flat(other, seat, layout))
            checked += 1
        acts = legal_actions(s)
        apply_action(s, acts[int(rng.integers(len(acts)))], rng)
    assert checked > 0


@pytest.mark.parametrize("name", VARIANTS)
def test_every_player_plays_every_variant_legally(name):
    """A short tournament (duplicate deals) of all built-in players on the preset:
    an illegal move would raise."""
    import agents
    from thirtyone_env.harness.evaluation import TournamentConfig, run_tournament, summarize

    players = (
        ("search:worlds=2", "expert", "blitz31", "greedy")
        if name != "banking"
        else ("expert", "greedy", "random")
    )
    rules = Rules.preset(name).replace(max_rounds=20)  # keep banking's long chip games short
    config = TournamentConfig(players, games=len(players), rules=rules, seed=1)
    games = run_tournament(config, agents.from_spec)
    assert len(games) == config.total_games
    summary = summarize(config, games)
    assert abs(sum(v["win_rate"][0] for v in summary.values()) - 1.0) < 1e-9


def test_banking_void_round_puts_the_broke_out():
    # chips 3: antes leave 2 each; seat 0's dealt blitz takes 3 + 2 -> [7, 1, 1]
    rules = Rules.preset("banking").replace(chips=3, max_turns_per_round=2)
    s, rng = deal(["As Js Ts", "Kc Qc 4h", "Tc 2d 3h"], "9c", table="2h 3c 5d", dealer=2, rules=rules)
    assert s.result.reason == "blitz" and s.score == [7, 1, 1] and all(s.active)
    start_round(s, rng)  # the antes leave seats 1 and 2 without chips
    assert s.score == [6, 0, 0] and s.pot == 3
    while s.phase < ROUND_OVER:  # draw and discard, never knock: the turn limit voids it
        play(s, rng, legal_actions(s)[0])
    assert s.result.reason == "void"
    assert s.result.eliminated == (1, 2) and s.phase == GAME_OVER and s.winners == (0,)
    assert s.pot == 3  # a void round keeps the pot


def test_banking_everyone_broke_after_a_void_round_stays_in():
    rules = Rules.preset("banking").replace(chips=1, max_turns_per_round=1)
    s, rng = deal(["Ks Qs 4d", "Kc Qc 4h", "Tc 2d 3h"], "9c", table="2h 3c 5d", dealer=2, rules=rules)
    while s.phase < ROUND_OVER:
        play(s, rng, legal_actions(s)[0])
    assert s.result.reason == "void" and s.score == [0, 0, 0] and s.pot == 3
    assert all(s.active)  # no game ends without a winner
