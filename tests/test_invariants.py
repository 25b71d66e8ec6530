"""Invariants over random games with random options (hypothesis)."""

import numpy as np
from conftest import deal
from hypothesis import given, settings
from hypothesis import strategies as st

from thirtyone_env.game.engine import (
    DISCARD,
    DRAW,
    GAME_OVER,
    ROUND_OVER,
    apply_action,
    card_locations,
    clone_state,
    hand_values,
    legal_actions,
    legal_mask,
    new_game,
    start_round,
)
from thirtyone_env.game.rules import KNOCKER_TIES, STOCK_EXHAUSTED, Rules

rules_strategy = st.builds(
    Rules,
    deck=st.sampled_from(["standard52", "piquet32"]),
    lives=st.integers(1, 4),
    free_ride=st.booleans(),
    three_of_a_kind=st.sampled_from([None, 30, 30.5]),
    knock_from_turn=st.integers(1, 3),
    allow_discard_return=st.booleans(),
    stand_after_knock=st.booleans(),
    blitz_after_knock=st.booleans(),
    knocker_penalty=st.integers(1, 3),
    knocker_tie=st.sampled_from(KNOCKER_TIES),
    stock_exhausted=st.sampled_from(STOCK_EXHAUSTED),
    max_turns_per_round=st.integers(5, 200),
    max_rounds=st.integers(1, 1000),
)


def play_game(rules: Rules, n: int, seed: int, knock_weight: float):
    """Random legal play (knocks down-weighted so rounds also run long); checks
    invariants after every action and yields nothing. Returns the finished state."""
    rng = np.random.default_rng(seed)
    s = new_game(rules, n, rng)
    prev_lives = list(s.lives)
    prev_active = list(s.active)
    for _ in range(200_000):
        where = card_locations(s)  # every card in exactly one place
        assert len(where) == len(rules.deck_cards)
        assert all(lv >= 0 for lv in s.lives)
        assert all(a >= b for a, b in zip(prev_lives, s.lives, strict=True)), "lives increased"
        assert all(a or not b for a, b in zip(prev_active, s.active, strict=True)), "player came back"
        prev_lives, prev_active = list(s.lives), list(s.active)
        if s.phase == GAME_OVER:
            assert s.winners and all(s.active[w] for w in s.winners)
            return s
        if s.phase == ROUND_OVER:
            assert sum(s.active) >= 2
            start_round(s, rng)
            prev_lives = list(s.lives)
            continue
        for p in range(n):
            expected = 0 if not s.active[p] else (4 if s.phase == DISCARD and p == s.current else 3)
            assert len(s.hands[p]) == expected, (p, s)
        assert s.active[s.current]
        acts = legal_actions(s)
        assert acts and acts == sorted(acts)
        assert np.array_equal(np.flatnonzero(legal_mask(s)), acts)
        if s.phase == DRAW and s.knocker >= 0:
            assert s.current != s.knocker, "the knocker played again"
        weights = np.array([knock_weight if a == 2 else 1.0 for a in acts])
        apply_action(s, acts[rng.choice(len(acts), p=weights / weights.sum())], rng)
    raise AssertionError("game did not end")


@settings(max_examples=60, deadline=None)
@given(
    rules=rules_strategy, n=st.integers(2, 7), seed=st.integers(0, 2**32 - 1), kw=st.sampled_from([0.02, 1.0])
)
def test_random_games_keep_invariants_and_end(rules, n, seed, kw):
    n = min(n, rules.max_players)
    s = play_game(rules, n, seed, kw)
    assert s.phase == GAME_OVER


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_same_seed_same_game(seed):
    def record(seed):
        rng = np.random.default_rng(seed)
        s = new_game(Rules.preset("pagat"), 4, rng)
        events = []
        while s.phase != GAME_OVER:
            if s.phase == ROUND_OVER:
                events.extend(s.history)
                start_round(s, rng)
                continue
            acts = legal_actions(s)
            apply_action(s, acts[int(rng.integers(len(acts)))], rng)
        events.extend(s.history)
        return repr(events)

    assert record(seed) == record(seed)


def test_clone_is_independent():
    rng = np.random.default_rng(3)
    s = new_game(None, 4, rng)
    c = clone_state(s)
    before = repr(s.hands), list(s.stock), list(s.discard)
    apply_action(c, legal_actions(c)[0], rng)
    assert (repr(s.hands), list(s.stock), list(s.discard)) == before
    assert len(c.history) == len(s.history) + 1


def test_hand_values_reports_every_seat():
    s, _ = deal(["As Ks 2d", "2c 3c 4c", "Ah 9d 5s"], "7h", dealer=2)
    assert hand_values(s) == [21, 9, 11]
