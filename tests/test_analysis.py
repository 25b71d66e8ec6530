"""Analytics on known rounds: turn records, suit switches, knock records."""

import json

import numpy as np
from analysis_fixture import FIXTURE, IDS, ROUNDS, games, unpack
from conftest import deal

from thirtyone_env.game.actions import BUS_ALL, DRAW_STOCK, KNOCK, STAND, TAKE_DISCARD, discard_action
from thirtyone_env.game.cards import parse_card, parse_cards, triple_index
from thirtyone_env.game.engine import new_game, stacked_deck
from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.analysis import (
    TurnRecorder,
    best_suit_masks,
    best_suits,
    knock_records,
    player_round_records,
    replay_rounds,
    suit_switch_records,
)
from thirtyone_env.harness.driver import Table
from thirtyone_env.harness.evaluation import ROUND_KEYS
from thirtyone_env.harness.records import game_lines, parse_line


def d(card: str) -> int:
    return discard_action(parse_card(card))


def test_best_suits_with_ties_and_table():
    assert best_suits(parse_cards("As Ks 2h")) == {3}
    assert best_suits(parse_cards("Ah Kd 2c")) == {2}
    assert best_suits(parse_cards("Kh Kd 2c")) == {1, 2}
    masks = best_suit_masks()
    for hand in (parse_cards("Kh Kd 2c"), parse_cards("9s 9c 3c"), parse_cards("2c 3d 4h")):
        mask = masks[triple_index(*hand)]
        assert {s for s in range(4) if mask >> s & 1} == best_suits(hand)


def scripted_round():
    """3 players, dealer 2 (seat 0 plays first); a round with one suit switch, played
    at a table with a :class:`TurnRecorder` watching. Returns the state, the recorder."""
    deck = stacked_deck(
        ["Kh 9h 2c", "5d 6d 7c", "2s 3s 4s"],
        upcard="8c",
        stock="As Ks Qs 3d",
        dealer=2,
    )
    rng = np.random.default_rng(0)
    s = new_game(Rules(), 3, rng, dealer=2, deck=deck)
    recorder = TurnRecorder()
    table = Table(s, [None] * 3, rng, observer=recorder)

    def apply_action(s, action, rng):
        table.play(action)

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
    return s, recorder


def test_turn_records_follow_the_round():
    s, recorder = scripted_round()
    turns = recorder.round_turns(s)
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
    assert len(suit_switch_records(turns)) == 1


def test_knock_and_player_round_records():
    s, recorder = scripted_round()
    turns = recorder.round_turns(s)
    (k,) = knock_records(s.history, turns)
    # the knocker holds 5d 6d 2c (diamonds 11); seat 2 has 3s 4s Ks (17); seat 0 21
    assert (k["seat"], k["value"], k["turn"], k["position"], k["num_in"], k["lives"]) == (1, 11, 2, 1, 3, 4)
    r = s.result
    assert r.values == (21, 11, 17)
    assert (k["lost"], k["success"], k["reason"]) == (2, False, "knock")
    rows = {row["seat"]: row for row in player_round_records(s.history, turns)}
    assert rows[1]["knocked"] and rows[1]["knock_value"] == 11 and rows[1]["knock_success"] is False
    assert rows[0]["knock_success"] is None and not rows[0]["lost_round"]
    assert rows[0]["switches"] == 1 and rows[0]["turns"] == 3
    assert sum(row["lost"] for row in rows.values()) == sum(r.losses)


def test_a_rounds_cost_is_lives_or_the_points_or_chips_it_scored_negative():
    """``lost`` counts in the table's standing: lives at a lives table; at a points or
    chips table what the round scored for the seat, negative (lower is better at every
    table), so the paired comparisons measure the standing that decides the game."""
    recorder = TurnRecorder()
    seen: dict[str, int] = {}

    def check(s):
        r = s.result
        for row in player_round_records(s.history, recorder.round_turns(s)):
            seat = row["seat"]
            want = r.losses[seat] if s.rules.scoring == "lives" else -r.gains[seat]
            assert row["lost"] == want and row["lost_round"] == (want > 0)
            seen[s.rules.scoring] = seen.get(s.rules.scoring, 0) + (want != 0)

    for _name, _n, _table in games(recorder, check):
        pass
    assert set(seen) == {"lives", "points", "chips"} and all(seen.values()), seen


#: The id keys records carry beyond the fixture's (which was captured before them).


def _records(rounds):
    """Turn, knock and player-round records of ``(history, turns)`` rounds, as JSON
    gives them back, less the id keys the fixture predates."""
    out = [
        {"turns": t, "knocks": knock_records(h, t), "players": player_round_records(h, t)}
        for h, t in rounds[:ROUNDS]
    ]
    out = [
        {
            kind: [{k: v for k, v in rec.items() if k not in IDS[kind]} for rec in recs]
            for kind, recs in r.items()
        }
        for r in out
    ]
    return json.loads(json.dumps(out))


def test_records_are_those_of_the_round_histories_for_every_preset():
    """For every preset (and reshuffled stocks), at 2 to 4 seats, the records built from
    the engine's states, at the table and in the replay of the saved game, are exactly
    those the round-history reading gave before (``tests/data``, see
    ``analysis_fixture.py``)."""
    expected = unpack(json.loads(FIXTURE.read_text()))
    recorder = TurnRecorder()
    rounds: list = []
    seen = []
    for name, n, table in games(recorder, lambda s: rounds.append((s.history, recorder.round_turns(s)))):
        key = f"{name}/{n}"
        seen.append(key)
        assert _records(rounds) == expected[key], key
        s = table.state
        lines = game_lines(s.rules, n, table.histories, s.winners, s.lives, s.score)
        replayed = replay_rounds([parse_line(line, key) for line in lines])
        assert _records(replayed) == expected[key], key
        rounds.clear()
    assert sorted(seen) == sorted(expected)


def test_a_round_nobody_moved_in_has_no_turns():
    """A dealt 31 settles at once: no turn records, not the last round's."""
    s, rng = deal(["2c 3d 5h", "Ah Kh Qh", "4c 6d 8s"], "9c", dealer=2)
    recorder = TurnRecorder()
    assert recorder.round_turns(s) == []
    rows = player_round_records(s.history, recorder.round_turns(s))
    assert [(r["seat"], r["blitz"], r["turns"]) for r in rows] == [(0, False, 0), (1, True, 0), (2, False, 0)]


def test_the_knock_after_a_bus_exchange_shares_its_turn():
    """Stop the Bus: seat 0 exchanges its hand with the table and knocks in the same
    turn: the knock record goes on the exchange's turn (``continues``)."""
    s, rng = deal(["2c 3d 9s", "4c 6d 8s"], stock="9c 9d", dealer=1, rules="stop_the_bus", table="Ah Kh Qh")
    recorder = TurnRecorder()
    table = Table(s, [None, None], rng, observer=recorder)
    table.play(BUS_ALL)
    table.play(KNOCK)
    bus, knock = recorder.round_turns(s)
    dealt, taken = (s.hand_values[triple_index(*parse_cards(h))] for h in ("2c 3d 9s", "Ah Kh Qh"))
    assert (bus["kind"], bus["turn"], bus["value_before"], bus["value_after"]) == ("bus", 1, dealt, taken)
    assert (bus["card_in"], bus["card_out"], bus["switched"]) == (parse_card("Ah"), parse_card("2c"), True)
    assert (knock["kind"], knock["turn"], knock["round_turn"], knock["continues"]) == ("knock", 1, 1, True)
    assert (knock["value_before"], knock["value_after"], knock["switched"]) == (taken, taken, False)
    assert knock_records(s.history, [bus, knock])[0]["value"] == taken


def test_tournament_rows_follow_the_player_round_keys():
    """A tournament row takes a player-round record's values in order (ROUND_KEYS)."""
    s, recorder = scripted_round()
    for row in player_round_records(s.history, recorder.round_turns(s)):
        assert [k for k in row if k in ROUND_KEYS] == list(ROUND_KEYS)
        assert set(row) - set(ROUND_KEYS) == {"game", "player"}


def test_records_carry_game_round_seat_and_player_ids():
    """Every record names its game, round, seat and player, so that turn, knock and
    player-round records join on them with no hand-work: at a table (the recorder's
    ids) and in a replayed record (the record's seed and player names)."""
    import pandas as pd

    from thirtyone_env.game.policies import GreedyPolicy, RandomPolicy
    from thirtyone_env.harness.driver import NOBODY, reset_players

    names = ["greedy", "random", "greedy"]
    rng = np.random.default_rng(5)
    players = [GreedyPolicy() if n == "greedy" else RandomPolicy() for n in names]
    reset_players(players, rng)
    recorder = TurnRecorder(game=17, players=names)
    rounds = []
    table = Table(
        new_game(None, 3, rng, dealer=2),
        players,
        rng,
        keep_history=True,
        observer=recorder,
        on_settle=lambda s: rounds.append((s.history, recorder.round_turns(s), s.round_no)),
    )
    table.advance(NOBODY)
    assert len(rounds) >= 2
    turns = pd.DataFrame([t for _, ts, _ in rounds for t in ts])
    people = pd.DataFrame([r for h, ts, _ in rounds for r in player_round_records(h, ts, 17, names)])
    # without the labels, a seat that took no turn in a round is not named
    quiet = [r for h, ts, _ in rounds for r in player_round_records(h, ts) if r["turns"] == 0]
    assert all(r["player"] is None for r in quiet)
    knocks = pd.DataFrame([k for h, ts, _ in rounds for k in knock_records(h, ts)])
    for frame in (turns, people, knocks):
        assert set(frame["game"]) == {17}
        assert all(frame["player"] == [names[s] for s in frame["seat"]])
    for _h, ts, r in rounds:
        assert all(t["round_no"] == r for t in ts)
    joined = turns.merge(people, on=["game", "round_no", "seat", "player"], validate="many_to_one")
    assert len(joined) == len(turns)
    assert (
        joined.groupby(["round_no", "seat"])["switched"].sum()
        == joined.groupby(["round_no", "seat"])["switches"].first()
    ).all()
    s = table.state
    lines = game_lines(s.rules, 3, table.histories, s.winners, s.lives, s.score, names, [9, 4, 1])
    replayed = replay_rounds([parse_line(line, "game") for line in lines])
    again = [t for _, ts in replayed for t in ts]
    assert {t["game"] for t in again} == {"9-4-1"}
    assert [(t["round_no"], t["seat"], t["player"], t["kind"]) for t in again] == [
        (t["round_no"], t["seat"], t["player"], t["kind"]) for _, ts, _ in rounds for t in ts
    ]
