"""The table driver (``thirtyone_env.harness.driver``) and the settled-round reward
(``thirtyone_env.game.rewards``) on stacked decks and crafted results."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import deal, heads_up_known

from agents.expert import ExpertPlayer
from thirtyone_env.envs.env import ThirtyOneEnv
from thirtyone_env.game.actions import DRAW_STOCK, KNOCK, IllegalActionError, discard_action
from thirtyone_env.game.cards import parse_card
from thirtyone_env.game.engine import (
    DRAW,
    GAME_OVER,
    ROUND_OVER,
    RoundResult,
    apply_action,
    legal_mask,
    new_game,
)
from thirtyone_env.game.policies import GreedyPolicy
from thirtyone_env.game.rewards import LIVES, RATE, WIN, seat_reward, settled_reward
from thirtyone_env.game.rules import Rules
from thirtyone_env.game.views import player_view
from thirtyone_env.harness.driver import NOBODY, Table, reset_players, rollout_value, round_value
from thirtyone_env.research.oracle import measure
from training.imitation import _table_move


class Scripted:
    """A player that plays a fixed list of moves and notes which seats it was asked for."""

    obs_encoding = "view"

    def __init__(self, moves: list[int]) -> None:
        self.moves = list(moves)
        self.asked: list[int] = []

    def act(self, observation, action_mask) -> int:
        self.asked.append(observation.seat)
        return self.moves.pop(0)


class Resettable:
    """A player that notes the generators it is reset with."""

    def __init__(self, log: list) -> None:
        self.log = log

    def reset(self, rng) -> None:
        self.log.append((self, rng))

    def act(self, observation, action_mask) -> int:
        return int(np.flatnonzero(action_mask)[0])


def _blitz_deal(lives: int = 4, free_ride: bool = True):
    """Three seats, seat 1 dealt a 31 (a blitz at the deal), dealer 2."""
    rules = Rules(lives=lives, free_ride=free_ride)
    return deal(["2c 3d 5h", "Ah Kh Qh", "4c 6d 8s"], "9c", dealer=2, rules=rules)


def test_advance_stops_at_the_chosen_seats_decision():
    """Dealer 2: seats 0 and 1 take their turns (draw, discard) and the table stops
    when seat 2 must draw, with nothing settled."""
    s, rng = deal(["2c 3d 5h", "4c 6d 8s", "7c 9d Js"], "Th", "2h 3h", dealer=2)
    p0 = Scripted([DRAW_STOCK, discard_action(parse_card("2c"))])
    p1 = Scripted([DRAW_STOCK, discard_action(parse_card("4c"))])
    table = Table(s, [p0, p1, None], rng, keep_history=True)
    assert table.advance(2) is False
    assert (s.current, s.phase) == (2, DRAW)
    assert p0.asked == [0, 0] and p1.asked == [1, 1]
    assert table.results == [] and table.histories == [] and not table.ended
    assert s.hands[0] == [parse_card(c) for c in ("3d", "5h", "2h")]
    assert s.hands[1] == [parse_card(c) for c in ("6d", "8s", "3h")]


def test_settled_rounds_are_reported_and_the_next_round_dealt():
    """A dealt 31 settles before anyone moves: the table reports it (results,
    histories, on_settle at the settlement, on_deal after the new deal) and stops at
    seat 0's first decision of round 2."""
    s, rng = _blitz_deal()
    seen = []
    table = Table(
        s,
        [None, GreedyPolicy(), GreedyPolicy()],
        rng,
        keep_history=True,
        on_settle=lambda st: seen.append(("settle", st.round_no, st.phase, st.result.reason)),
        on_deal=lambda st: seen.append(("deal", st.round_no, st.phase, None)),
    )
    assert table.advance(0) is False
    assert [r.reason for r in table.results] == ["blitz"]
    assert table.results[0].losses == (1, 0, 1)
    assert len(table.histories) == 1 and table.histories[0][-1][0] == "settle"
    assert seen[0] == ("settle", 1, ROUND_OVER, "blitz")
    assert seen[1][:2] == ("deal", 2) and seen[1][2] < ROUND_OVER
    assert s.round_no >= 2 and s.current == 0 and s.phase < ROUND_OVER


def test_the_table_ends_when_the_seat_waited_for_is_out():
    """One life and no free ride: the blitz puts seats 0 and 2 out, seat 1 wins; the
    table ends at once and stays ended."""
    s, rng = _blitz_deal(lives=1, free_ride=False)
    table = Table(s, [None, GreedyPolicy(), GreedyPolicy()], rng)
    assert table.advance(0) is True
    assert table.ended and s.phase == GAME_OVER and s.winners == (1,)
    assert table.results[0].eliminated == (0, 2)
    assert table.advance(0) is True and len(table.results) == 1


def test_one_round_ends_after_the_first_settlement():
    s, rng = _blitz_deal()
    table = Table(s, [None, GreedyPolicy(), GreedyPolicy()], rng, one_round=True)
    assert table.advance(0) is True
    assert s.phase == ROUND_OVER and s.round_no == 1 and len(table.results) == 1


def test_settle_only_settles_and_deals():
    """``settle`` moves no player: at a decision it changes nothing; after a settled
    round it deals the next and stops at the first decision, whoever's it is."""
    s, rng = deal(["2c 3d 5h", "4c 6d 8s", "7c 9d Js"], "Th", dealer=2)
    table = Table(s, [None] * 3, rng)
    assert table.settle() is False and s.current == 0 and s.phase == DRAW
    s, rng = _blitz_deal()
    table = Table(s, [None] * 3, rng)
    assert table.settle() is False
    assert len(table.results) == 1 and s.round_no == 2 and s.phase < ROUND_OVER
    assert table.histories == []  # kept only when asked


def test_nobody_plays_the_game_out_and_one_seed_gives_one_game():
    """``advance(NOBODY)`` plays to the game's end; the same seed gives the same rounds."""

    def game(seed: int):
        rng = np.random.default_rng(seed)
        table = Table(new_game(Rules(), 4, rng), [GreedyPolicy() for _ in range(4)], rng, keep_history=True)
        assert table.advance(NOBODY) is True
        return table

    a, b = game(5), game(5)
    assert a.state.phase == GAME_OVER
    assert len(a.results) == a.state.round_no == len(a.histories)
    assert a.results == b.results and a.state.winners == b.state.winners


class Watcher:
    """An observer that notes what every move saw: (when, seat, action, who acts,
    the seat's hand) before and after."""

    def __init__(self) -> None:
        self.log: list[tuple] = []

    def before(self, state, seat, action) -> bool:
        self.log.append(("before", seat, action, state.current, list(state.hands[seat])))
        return True

    def after(self, state, seat, action) -> None:
        self.log.append(("after", seat, action, state.current, list(state.hands[seat])))


def test_the_observer_sees_every_move_before_and_after():
    """Players' moves and moves played from outside are watched alike, with the state
    the seat decided in and the state the move left."""
    s, rng = deal(["2c 3d 5h", "4c 6d 8s", "7c 9d Js"], "Th", "2h 3h", dealer=2)
    p0 = Scripted([DRAW_STOCK, discard_action(parse_card("2c"))])
    watcher = Watcher()
    table = Table(s, [p0, None, None], rng, observer=watcher)
    assert table.advance(1) is False
    table.play(KNOCK)
    h0 = [parse_card(c) for c in ("2c", "3d", "5h")]
    h1 = [parse_card(c) for c in ("4c", "6d", "8s")]
    d2c = discard_action(parse_card("2c"))
    assert watcher.log == [
        ("before", 0, DRAW_STOCK, 0, h0),
        ("after", 0, DRAW_STOCK, 0, [*h0, parse_card("2h")]),
        ("before", 0, d2c, 0, [*h0, parse_card("2h")]),
        ("after", 0, d2c, 1, [*h0[1:], parse_card("2h")]),
        ("before", 1, KNOCK, 1, h1),
        ("after", 1, KNOCK, 2, h1),
    ]


def test_an_illegal_move_is_refused_before_the_observer_sees_it():
    s, rng = deal(["2c 3d 5h", "4c 6d 8s", "7c 9d Js"], "Th", "2h 3h", dealer=2)
    watcher = Watcher()
    table = Table(s, [Scripted([discard_action(parse_card("2c"))]), None, None], rng, observer=watcher)
    with pytest.raises(IllegalActionError, match=r"seat 0 .*chose .*legal: 0 \(draw_stock\), 1"):
        table.advance(1)
    for bad in (discard_action(parse_card("2c")), True, -1, 10_000):  # True would be id 1
        with pytest.raises(IllegalActionError, match=r"legal: 0 \(draw_stock\), 1"):
            table.play(bad)
    assert watcher.log == []
    assert s.hands[0] == [parse_card(c) for c in ("2c", "3d", "5h")]


@pytest.mark.parametrize("observed", [False, True])
@pytest.mark.parametrize("choice", [1.5, 1.0, True, "1", None, np.array([1])])
def test_a_player_choice_that_is_no_move_id_is_refused_not_rounded(choice, observed):
    """A player's 1.5 (or 1.0, True, "1") is no move: refused naming it, never read as
    move 1; a numpy integer or a 0-d integer array is a move."""
    s, rng = deal(["2c 3d 5h", "4c 6d 8s", "7c 9d Js"], "Th", "2h 3h", dealer=2)
    observer = Watcher() if observed else None
    table = Table(s, [Scripted([choice]), None, None], rng, observer=observer)
    with pytest.raises(IllegalActionError, match=r"seat 0 .*chose .*legal: 0 \(draw_stock\), 1"):
        table.advance(1)
    assert s.hands[0] == [parse_card(c) for c in ("2c", "3d", "5h")] and s.current == 0
    for good in (np.int64(DRAW_STOCK), np.array(DRAW_STOCK)):
        s, rng = deal(["2c 3d 5h", "4c 6d 8s", "7c 9d Js"], "Th", "2h 3h", dealer=2)
        Table(s, [Scripted([good, discard_action(parse_card("2c"))]), None, None], rng).advance(1)
        assert s.current == 1


def test_an_observed_game_is_the_same_game():
    """Watching changes nothing: the same seed gives the same rounds with an observer."""

    def game(observer):
        rng = np.random.default_rng(3)
        players = [GreedyPolicy() for _ in range(3)]
        table = Table(new_game("switch", 3, rng), players, rng, keep_history=True, observer=observer)
        table.advance(NOBODY)
        return table

    watcher = Watcher()
    a, b = game(None), game(watcher)
    assert a.histories == b.histories and a.results == b.results
    moves = sum(1 for h in a.histories for e in h if e[0] not in ("deal", "settle", "reshuffle", "blitz"))
    assert len(watcher.log) == 2 * moves


def test_a_table_needs_one_player_per_seat():
    s, rng = deal(["2c 3d 5h", "4c 6d 8s"], "Th", dealer=1)
    with pytest.raises(ValueError, match="2 seats needs 2 players, got 3"):
        Table(s, [None] * 3, rng)


def test_players_are_reset_in_order_with_one_generator_that_is_not_the_tables():
    log: list = []
    players = [Resettable(log), None, GreedyPolicy(), Resettable(log)]
    rng = np.random.default_rng(0)
    reset_players(players, rng)
    assert [p for p, _ in log] == [players[0], players[3]]
    given = log[0][1]
    assert log[1][1] is given and given is not rng
    # seeded from a hash of the table's generator, which is not advanced
    assert rng.bit_generator.state == np.random.default_rng(0).bit_generator.state
    # and the same seed hands the players the same generator
    other: list = []
    reset_players([Resettable(other)], np.random.default_rng(0))
    assert other[0][1].bit_generator.state == given.bit_generator.state


# -- the reward of a settled round ----------------------------------------------------------


def _result(losses, eliminated=(), gains=()) -> RoundResult:
    n = len(losses)
    return RoundResult(
        3, 0, "knock", "knock", tuple(losses), (0.0,) * n, 0, (), tuple(eliminated), (2,) * n, gains
    )


@pytest.mark.parametrize(
    ("kind", "gain", "eliminated", "won", "expected"),
    [
        (LIVES, -2.0, False, False, -2.0),
        (LIVES, 5.0, False, True, 5.0),
        (LIVES, -1.0, True, False, -1.0),
        (WIN, -1.0, True, False, -1.0),
        (WIN, 0.0, False, True, 1.0),
        (WIN, -1.0, False, False, 0.0),
        (RATE, -2.0, False, False, -1.75),
        (RATE, 0.0, False, True, 0.25),
        (RATE, -1.0, True, False, -0.75),
    ],
)
def test_settled_reward(kind, gain, eliminated, won, expected):
    """The share (here a 4-seat table's 1/4) counts for ``"rate"`` alone."""
    assert settled_reward(kind, gain, eliminated, won, 0.25) == expected


def test_the_kernels_can_compile_the_same_reward():
    """numba compiles ``settled_reward`` as it is and agrees with Python."""
    numba = pytest.importorskip("numba")
    compiled = numba.njit(settled_reward)
    for kind in (LIVES, WIN, RATE):
        for eliminated in (False, True):
            for won in (False, True):
                args = (kind, -2.0, eliminated, won, 1 / 3)
                assert compiled(*args) == settled_reward(*args)


def test_seat_reward_of_a_result():
    lives_result = _result((0, 2, 1), eliminated=(1,), gains=(0, -2, -1))
    assert [seat_reward(LIVES, lives_result, p, ()) for p in range(3)] == [0.0, -2.0, -1.0]
    assert [seat_reward(WIN, lives_result, p, ()) for p in range(3)] == [0.0, -1.0, 0.0]
    assert [seat_reward(WIN, lives_result, p, (0,)) for p in range(3)] == [1.0, -1.0, 0.0]
    assert [seat_reward(RATE, lives_result, p, ()) for p in range(3)] == pytest.approx(
        [1 / 3, -5 / 3, -2 / 3]
    )
    points = _result((0, 0, 0), gains=(6, 0, 3))
    assert [seat_reward(LIVES, points, p, ()) for p in range(3)] == [6.0, 0.0, 3.0]
    legacy = _result((0, 1, 0))  # a result without gains: minus the lives lost
    assert seat_reward(LIVES, legacy, 1, ()) == -1.0


# -- the value of a round played out ---------------------------------------------------------


def test_a_settled_round_is_worth_its_loss_and_the_penalty_when_it_puts_the_seat_out():
    s, rng = _blitz_deal(lives=1, free_ride=False)
    assert round_value(s, 0, 2.0) == -3.0  # one life lost, and out
    assert round_value(s, 1, 2.0) == 0.0
    s, rng = _blitz_deal()
    assert round_value(s, 0, 2.0) == -1.0  # one life lost, still in


def test_imitation_and_search_value_a_rollout_alike():
    """Knocking a 4 on the bike against a known 30 loses the round and the game: both
    the imitation rollout and the driver's value say minus the loss and the penalty
    (the imitation rollout used to leave the penalty out)."""
    env = ThirtyOneEnv(num_players=2, opponents=ExpertPlayer(), seat=0)
    env.reset(seed=0)
    start = heads_up_known("2c 3d 4h", "Kh Qh Jh", lives=0)
    seed = np.random.SeedSequence(7)
    utility = measure(start, [KNOCK], _table_move(env, ExpertPlayer()), seed, 1, elimination_penalty=2.0)[
        0, 0
    ]
    expert = ExpertPlayer()

    def move(s, rng):
        apply_action(s, expert.act(player_view(s, s.current), legal_mask(s)), rng)

    value = rollout_value(start, KNOCK, move, np.random.default_rng(7), 0, 2.0)
    assert utility == value == -4.0  # the knocker strictly lowest loses 2, and is out


def test_a_players_refused_discard_does_not_show_its_hand():
    """The error about a player's illegal choice reaches the others at the table (the
    agent, a person at the web table): its discards are counted, never named; the
    draw-phase moves, which show no card, are named."""
    s, rng = deal(["2c 3d 5h", "4c 6d 8s", "7c 9d Js"], "Th", "2h 3h", dealer=2)
    table = Table(s, [Scripted([DRAW_STOCK, KNOCK]), None, None], rng)
    with pytest.raises(IllegalActionError) as refused:
        table.advance(1)
    message = str(refused.value)
    assert message.endswith("legal: 4 discards (not named: they would show its hand)"), message
    assert not any(card in message for card in ("2c", "3d", "5h", "2h"))
    with pytest.raises(IllegalActionError, match=r"legal: .*\(discard 2c\)"):  # one's own: named
        table.play(KNOCK)
