"""Populations of heuristic players: each habit decides as documented on
stacked deals, ``act_batch`` plays ``act``'s moves on thousands of real views, the
training and held-out ranges are disjoint, draws are deterministic in the seed, and
members differ in when they knock and what they pick up."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import deal, disc, play
from test_batched_players import TABLES, Recorder, _crafted
from test_external_seats import _play_both

import agents
from agents.expert import ExpertPlayer
from agents.populations import (
    FIELDS,
    HELD_OUT_RANGES,
    TRAIN_RANGES,
    PopulationMember,
    PopulationParams,
    PopulationPlayer,
    draw_members,
)
from thirtyone_env.game.actions import DRAW_STOCK, KNOCK, STAND, TAKE_DISCARD
from thirtyone_env.game.cards import parse_card
from thirtyone_env.game.engine import legal_mask
from thirtyone_env.game.policies import RandomPolicy, best_discard
from thirtyone_env.game.rules import PRESETS
from thirtyone_env.game.view_batch import ViewBatch
from thirtyone_env.game.views import player_view
from thirtyone_env.harness.match import play_game

#: A plain member: knocks at 25, takes any gain, no discard habits, never stands.
PLAIN = PopulationParams(
    knock_1=25,
    knock_2=25,
    knock_3=25,
    knock_4=25,
    late_stock=0,
    late_shift=0,
    take_gain=1,
    off_suit_gain=0,
    keep_margin=0,
    keep_suit=0,
    keep_high=0,
    feed_care=0,
    stand_at=99,
)
MEMBERS = draw_members(TRAIN_RANGES, 4, seed=1) + draw_members(HELD_OUT_RANGES, 4, seed=2)
VIEWS_PER_TABLE = 300


def move(params: PopulationParams, s, **changes) -> int:
    """The move of a member with ``params`` (and ``changes``) for the seat to act."""
    player = PopulationPlayer(dataclasses.replace(params, **changes))
    return player.act(player_view(s, s.current), legal_mask(s))


# -- each habit on a stacked deal ----------------------------------------------------


def test_knock_threshold_by_turn_and_late_stock():
    s, rng = deal(["As Ks 3s", "2c 3c 5h", "4d 6d 8h"], "7c", "2d 9c 9h 2h", dealer=2)  # 24 on turn 1
    assert move(PLAIN, s, knock_1=24) == KNOCK
    assert move(PLAIN, s, knock_1=24.5) == DRAW_STOCK
    assert move(PLAIN, s, knock_1=24.5, late_stock=99, late_shift=-0.5) == KNOCK  # the stock counts as low
    assert move(PLAIN, s, knock_1=24, late_stock=99, late_shift=0.5) == DRAW_STOCK
    play(s, rng, DRAW_STOCK, disc("2d"), DRAW_STOCK, disc("9c"), DRAW_STOCK, disc("9h"))
    assert player_view(s, 0).turn == 2
    assert move(PLAIN, s, knock_1=20, knock_2=24) == KNOCK
    assert move(PLAIN, s, knock_1=20, knock_2=24.5) != KNOCK


def test_pickup_needs_take_gain_and_more_off_the_master_suit():
    s, _ = deal(["As Ks 3d", "2c 3c 5h", "4d 6d 8h"], "Qs", dealer=2)  # Qs makes 31: gain 10
    assert move(PLAIN, s, take_gain=10) == TAKE_DISCARD
    assert move(PLAIN, s, take_gain=10.5) == DRAW_STOCK
    s, _ = deal(["Ac 9s 8s", "2c 3c 5h", "4d 6d 8h"], "Kc", dealer=2)  # master s (17); Kc: 21 in clubs
    assert move(PLAIN, s, take_gain=2, off_suit_gain=2) == TAKE_DISCARD
    assert move(PLAIN, s, take_gain=2, off_suit_gain=2.5) == DRAW_STOCK


def test_discard_habits_inside_the_margin():
    s, rng = deal(["Ah Kh 2h", "2c 3c 5h", "4d 6d 8h"], "7c", "9s", dealer=2)
    play(s, rng, DRAW_STOCK)  # Ah Kh 2h 9s: throwing 9s keeps 23, throwing 2h keeps 21
    assert move(PLAIN, s) == disc("9s")
    assert move(PLAIN, s, keep_margin=1.5, keep_high=0.6) == disc("9s")  # 21 is outside the margin
    assert move(PLAIN, s, keep_margin=2.5, keep_high=0.6) == disc("2h")  # inside: keeps the high 9
    assert move(PLAIN, s, keep_margin=2.5, keep_high=0.6, keep_suit=5) == disc("9s")  # keeps hearts


def test_feed_care_spares_the_suit_the_next_player_took():
    s, rng = deal(["Kh 9s 8s", "2c 3c 5h", "4d 6d 8h"], "7c", "Ah", dealer=2)
    play(s, rng, DRAW_STOCK)  # Kh 9s 8s Ah: throwing a spade keeps 21, a heart 17
    v, mask = player_view(s, 0), legal_mask(s)
    known = list(v.known_masks)
    known[1] = 1 << parse_card("Qs")  # the next seat took the Qs from the pile
    fed = v._replace(known_masks=tuple(known))
    player = PopulationPlayer(dataclasses.replace(PLAIN, keep_margin=4, feed_care=3))
    assert player.act(v, mask) == disc("8s")
    assert player.act(fed, mask) == disc("Kh")  # a heart: the first card of the margin it may throw
    assert PopulationPlayer(dataclasses.replace(PLAIN, feed_care=3)).act(fed, mask) == disc("8s")


def test_last_turn_after_a_knock_stands_at_stand_at():
    s, rng = deal(["As Ks 9s", "Ah Kh 3h"], "2c", "5d", dealer=1)
    play(s, rng, KNOCK)  # seat 1 (24) has one last turn
    assert move(PLAIN, s, stand_at=24) == STAND
    assert move(PLAIN, s, stand_at=24.5) == DRAW_STOCK
    rules = PRESETS["standard"].replace(stand_after_knock=False)
    s, rng = deal(["As Ks 9s", "Ah Kh 3h"], "2c", "5d", dealer=1, rules=rules)
    play(s, rng, KNOCK)
    assert move(PLAIN, s, stand_at=0) == DRAW_STOCK  # standing not allowed: draws


# -- act_batch plays act's moves -----------------------------------------------------


def _collect(rules, n: int, seed: int) -> list:
    """Every seat's (view, mask) from games of population members, experts and random
    players at this table, about VIEWS_PER_TABLE."""
    rng = np.random.default_rng(seed)
    log: list = []
    game = 0
    while len(log) < VIEWS_PER_TABLE:
        kinds = [PopulationPlayer(MEMBERS[(game + s) % len(MEMBERS)]) for s in range(n)]
        kinds[game % n] = ExpertPlayer() if game % 3 else RandomPolicy()
        play_game([Recorder(p, log) for p in kinds], rng, rules)
        game += 1
    return log


@pytest.fixture(scope="module")
def pools() -> list[tuple[str, list]]:
    """(label, recorded views): real games at the batched players' test tables, and
    their views with the next seat or the knocker known to hold other cards."""
    out = []
    for t, (rules, sizes) in enumerate(TABLES):
        for n in sizes:
            log = _collect(rules, n, seed=1000 + 10 * t + n)
            out.append((f"table {t} ({n} seats)", log))
            out.append((f"table {t} ({n} seats), crafted", _crafted(log)))
    return out


def test_act_batch_plays_acts_moves(pools):
    assert sum(len(log) for _, log in pools) >= 5000
    played = []
    for params in MEMBERS:
        player = PopulationPlayer(params)
        for label, log in pools:
            views = [v for v, _ in log]
            masks = np.stack([m for _, m in log])
            want = np.array([player.act(v, m) for v, m in log])
            got = player.act_batch(ViewBatch.from_views(views), masks)
            wrong = np.flatnonzero(got != want)
            assert wrong.size == 0, f"{params} on {label}: {wrong.size} of {len(log)} decisions differ"
            played.append(want)
    moves = np.concatenate(played)
    for action in (DRAW_STOCK, TAKE_DISCARD, KNOCK, STAND):
        assert (moves == action).sum() >= 20, f"action {action} chosen only {(moves == action).sum()} times"


def test_the_sample_reaches_the_habits(pools):
    """Discards where a habit overrules the best hand, and fed suits, occur often."""
    habit = fed = 0
    for params in MEMBERS:
        player = PopulationPlayer(params)
        for _, log in pools:
            for v, m in log:
                if len(v.hand) == 4:
                    habit += player.act(v, m) != best_discard(v.hand, player._values, m)[1]
                    fed += player._fed_suits(v) != 0
    assert habit >= 200 and fed >= 200, (habit, fed)


def test_act_batch_refuses_bad_input(pools):
    _, log = pools[0]
    batch = ViewBatch.from_views([v for v, _ in log[:5]])
    masks = np.stack([m for _, m in log[:5]])
    player = PopulationPlayer(PLAIN)
    with pytest.raises(ValueError, match=r"PopulationPlayer.act_batch: masks of shape \(4, 56\)"):
        player.act_batch(batch, masks[:4])
    with pytest.raises(ValueError, match="PopulationPlayer.act_batch: the stock game only"):
        player.act_batch(dataclasses.replace(batch, rules=PRESETS["banking"]), masks)
    empty = masks.copy()
    empty[2] = 0
    with pytest.raises(ValueError, match="PopulationPlayer.act_batch: row 2 of masks allows no action"):
        player.act_batch(batch, empty)


# -- ranges and draws ----------------------------------------------------------------


def test_training_and_held_out_ranges_are_disjoint_intervals():
    assert set(TRAIN_RANGES) == set(HELD_OUT_RANGES) == set(FIELDS)
    for name in FIELDS:
        (a, b), (c, d) = TRAIN_RANGES[name], HELD_OUT_RANGES[name]
        assert a <= b and c <= d, name
        assert b < c or d < a, (
            f"{name}: training {TRAIN_RANGES[name]} overlaps held out {HELD_OUT_RANGES[name]}"
        )


@pytest.mark.parametrize("ranges", [TRAIN_RANGES, HELD_OUT_RANGES], ids=["train", "held_out"])
def test_draws_are_deterministic_in_the_seed_and_inside_their_ranges(ranges):
    members = draw_members(ranges, 20, seed=7)
    assert members == draw_members(ranges, 20, seed=7)
    assert draw_members(ranges, 5, seed=7) == members[:5]  # member k does not depend on the count
    other = draw_members(ranges, 20, seed=8)
    assert all(a != b for a, b in zip(members, other, strict=True))
    assert len(set(members)) == 20
    for m in members:
        for name in FIELDS:
            low, high = ranges[name]
            assert low <= getattr(m, name) <= high, (name, m)


def test_the_population_spec_builds_a_drawn_member():
    p = agents.from_spec("population:split=held_out,seed=7,member=3")
    assert isinstance(p, PopulationPlayer)
    assert p.params == draw_members(HELD_OUT_RANGES, 4, seed=7)[3]
    assert agents.from_spec("population").params == draw_members(TRAIN_RANGES, 1, seed=0)[0]
    for spec, message in (
        ("population:split=test", r"split='test': use one of \['held_out', 'train'\]"),
        ("population:seed=-1", "seed=-1: use a non-negative integer"),
        ("population:member=-2", "member=-2: use a non-negative integer"),
        ("population:member=x", "option 'member' takes an integer"),
    ):
        with pytest.raises(ValueError, match=message):
            agents.check_spec(spec)
        with pytest.raises(ValueError, match=message):
            agents.from_spec(spec)
    with pytest.raises(ValueError, match=r"PopulationParams.knock_1=nan: expected a finite number"):
        dataclasses.replace(PLAIN, knock_1=float("nan"))
    assert isinstance(PopulationMember(), PopulationPlayer)


# -- members differ ------------------------------------------------------------------


def _rates(params: PopulationParams, pools) -> tuple[float, float]:
    """(knocks where a knock is legal, pickups where a pickup is legal) over the pool."""
    player = PopulationPlayer(params)
    knocks = could_knock = takes = could_take = 0
    for _, log in pools:
        for v, m in log:
            if len(v.hand) != 3:
                continue
            a = player.act(v, m)
            could_knock += bool(m[KNOCK])
            knocks += a == KNOCK
            could_take += bool(m[TAKE_DISCARD] and m[DRAW_STOCK] and v.knocker < 0)
            takes += a == TAKE_DISCARD and v.knocker < 0
    return knocks / could_knock, takes / could_take


def test_members_differ_in_knocks_and_pickups(pools):
    """Members of one population knock and switch measurably differently on the same
    views; the held-out members knock more on a first turn before the stock runs low
    (their thresholds there are lower than every training member's)."""
    train = [_rates(m, pools) for m in draw_members(TRAIN_RANGES, 6, seed=3)]
    held = [_rates(m, pools) for m in draw_members(HELD_OUT_RANGES, 6, seed=3)]
    for rates in (train, held):
        knock, take = zip(*rates, strict=True)
        assert max(knock) > 1.2 * min(knock), knock
        assert max(take) > 1.2 * min(take), take
        assert len(set(rates)) == len(rates)
    first_turn = [
        (v, m)
        for _, log in pools
        for v, m in log
        if len(v.hand) == 3 and m[KNOCK] and v.turn == 1 and v.stock_size >= 26
    ]
    assert len(first_turn) >= 200

    def knocks(params: PopulationParams) -> int:
        player = PopulationPlayer(params)
        return sum(player.act(v, m) == KNOCK for v, m in first_turn)

    fewest_held = min(knocks(m) for m in draw_members(HELD_OUT_RANGES, 6, seed=3))
    most_train = max(knocks(m) for m in draw_members(TRAIN_RANGES, 6, seed=3))
    assert fewest_held > most_train


def test_members_play_legally_at_the_variants_tables():
    """On the table variants (table moves by the shared heuristic) every member plays
    whole games legally (play_game refuses an illegal move)."""
    for preset in ("banking", "switch", "stop_the_bus"):
        players = [PopulationPlayer(m) for m in MEMBERS[2:6]]
        record = play_game(players, np.random.default_rng(5), preset)
        assert record.rounds


def test_the_docs_document_the_ranges():
    """The evaluation page's population table gives every parameter's two intervals as the
    code has them."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "evaluation.md").read_text()
    documented: dict[str, tuple] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        names = re.findall(r"`(\w+)`", cells[0]) if len(cells) == 4 else []
        if names and all(n in FIELDS for n in names):
            train, held = (re.findall(r"\[([-\d.]+), ([-\d.]+)\]", c) for c in cells[2:])
            for name, t, h in zip(names, train, held, strict=True):
                documented[name] = (tuple(map(float, t)), tuple(map(float, h)))
    assert documented == {n: (TRAIN_RANGES[n], HELD_OUT_RANGES[n]) for n in FIELDS}


def test_members_at_the_vector_envs_external_seats_play_the_single_envs_games():
    """Shared members (one object for every game, asked with act_batch) at the batched
    env: the very games of one single env per game."""
    players = [PopulationPlayer(m) for m in MEMBERS[3:6]]
    assert _play_both(4, "standard", lambda: players, games=6, steps=300) > 5
