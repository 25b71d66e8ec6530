"""The search player: consistent sampled worlds, where it departs from the expert, and
a knock it finds that the expert's model misses."""

import numpy as np
import pytest
from conftest import heads_up_known, random_moves

import agents
from agents.expert import ExpertPlayer
from agents.search import SearchPlayer
from thirtyone_env.game.actions import DRAW_STOCK, KNOCK
from thirtyone_env.game.engine import (
    card_locations,
    legal_actions,
    legal_mask,
    new_game,
)
from thirtyone_env.game.views import player_view


def _positions(rules: str, n: int, count: int, seed: int):
    """Positions reached by random play, each with the seat to act."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        s = random_moves(new_game(rules, n, rng), rng, 16)
        if legal_actions(s):
            out.append(s)
    return out


@pytest.mark.parametrize(("rules", "n"), [("standard", 4), ("pagat", 3), ("switch", 4), ("stop_the_bus", 3)])
def test_sampled_worlds_keep_every_card_in_one_place_and_agree_with_the_view(rules, n):
    """A world deals only the unseen cards: what the view shows is where it was, and
    the sampled state looks the same from the searching seat."""
    search = SearchPlayer()
    search.reset(np.random.default_rng(1))
    for s in _positions(rules, n, 12, seed=4):
        me = s.current
        v = player_view(s, me)
        if v.phase == "choose":  # the Switch dealer's choice is never searched
            continue
        for _ in range(3):
            world = search._sample_world(v)
            card_locations(world)  # raises on a card missing or in two places
            assert world.hands[me] == list(v.hand)
            assert world.discard == list(v.discard_pile)
            assert len(world.stock) == v.stock_size
            for p in range(n):
                assert set(v.known_of(p)) <= set(world.hands[p])
            w = player_view(world, me)
            assert w == v


def test_knock_search_departs_from_the_expert_only_by_knocking():
    """With ``moves="knock"`` every other move is the expert's; the knocks it adds are
    on turns where knocking is legal."""
    search = SearchPlayer(worlds=8)
    search.reset(np.random.default_rng(2))
    expert = ExpertPlayer()
    departures = 0
    for s in _positions("standard", 4, 60, seed=5):
        v, mask = player_view(s, s.current), legal_mask(s)
        mine, theirs = search.act(v, mask), expert.act(v, mask)
        if mine != theirs:
            assert mine == KNOCK and mask[KNOCK]
            departures += 1
    assert departures < 60


def test_search_without_confidence_to_depart_plays_the_expert():
    strict = SearchPlayer(worlds=4, moves="all", confidence=float("inf"))
    strict.reset(np.random.default_rng(3))
    expert = ExpertPlayer()
    for s in _positions("standard", 3, 25, seed=6):
        v, mask = player_view(s, s.current), legal_mask(s)
        assert strict.act(v, mask) == expert.act(v, mask)


def _known_weak_opponent():
    """Heads-up: the opponent took 2c, 3d and 4h from the pile and still holds them
    (a 4; one more card makes 15 at most). My Kh 6h 3s is 16: a knock cannot lose."""
    return heads_up_known("Kh 6h 3s", "2c 3d 4h", lives=3)


@pytest.mark.parametrize("seed", range(4))
def test_search_knocks_a_hand_that_cannot_lose_where_the_expert_draws(seed):
    """The expert's opponent model only floors the known hand's value; the sampled
    worlds hold the known cards themselves, so search sees the knock is safe."""
    s = _known_weak_opponent()
    v, mask = player_view(s, 0), legal_mask(s)
    assert ExpertPlayer().act(v, mask) == DRAW_STOCK
    search = SearchPlayer()
    search.reset(np.random.default_rng(seed))
    assert search.act(v, mask) == KNOCK


def test_search_options_are_checked():
    with pytest.raises(ValueError, match="moves='some' is not allowed"):
        SearchPlayer(moves="some")
    with pytest.raises(ValueError, match="rollout='random' is not allowed"):
        agents.from_spec("search:rollout=random")
    with pytest.raises(ValueError, match="worlds must be at least 1"):
        SearchPlayer(worlds=0)
    assert agents.from_spec("search:moves=all,rollout=greedy").rollout == "greedy"


@pytest.mark.parametrize(("rules", "n"), [("standard", 4), ("standard", 2), ("pagat", 3), ("dutch", 4)])
def test_compiled_rollouts_score_every_world_as_the_engine_does(rules, n):
    """The kernels deal the same worlds from the same draws and play them out to the
    same utilities as the engine, candidate for candidate, and leave the searcher's
    generator where the engine path leaves it."""
    engine = SearchPlayer(moves="all", worlds=12, batch=5, backend="python")
    compiled = SearchPlayer(moves="all", worlds=12, batch=5, backend="compiled")
    nonzero = 0
    for k, s in enumerate(_positions(rules, n, 25, seed=8)):
        v, mask = player_view(s, s.current), legal_mask(s)
        legal = [int(a) for a in np.flatnonzero(mask)]
        if len(legal) < 2:
            continue
        baseline = ExpertPlayer().act(v, mask)
        engine.reset(np.random.default_rng(k))
        compiled.reset(np.random.default_rng(k))
        a = engine._evaluate(v, legal, baseline)
        b = compiled._evaluate(v, legal, baseline)
        np.testing.assert_array_equal(a, b)
        assert engine.rng.bit_generator.state == compiled.rng.bit_generator.state
        nonzero += int(np.any(a != 0))
    assert nonzero >= 5  # the utilities compared are not all trivially zero


def test_search_plays_the_same_games_on_either_backend():
    """Whole decisions, early stops included: the compiled path changes the speed only."""
    players = {b: SearchPlayer(worlds=16, backend=b) for b in ("python", "auto")}
    for k, s in enumerate(_positions("standard", 4, 40, seed=9)):
        v, mask = player_view(s, s.current), legal_mask(s)
        moves = set()
        for p in players.values():
            p.reset(np.random.default_rng(100 + k))
            moves.add(p.act(v, mask))
        assert len(moves) == 1


def test_the_compiled_backend_names_what_it_cannot_roll_out():
    s = _positions("switch", 4, 1, seed=3)[0]
    v, mask = player_view(s, s.current), legal_mask(s)
    legal = [int(a) for a in np.flatnonzero(mask)]
    with pytest.raises(ValueError, match=r"backend='compiled'\) cannot roll out table='switch'"):
        SearchPlayer(moves="all", backend="compiled")._evaluate(v, legal, legal[0])
    s = _positions("standard", 4, 1, seed=3)[0]
    v, mask = player_view(s, s.current), legal_mask(s)
    legal = [int(a) for a in np.flatnonzero(mask)]
    with pytest.raises(ValueError, match="rollout='greedy'"):
        SearchPlayer(moves="all", rollout="greedy", backend="compiled")._evaluate(v, legal, legal[0])
    with pytest.raises(ValueError, match="backend='numba' is not allowed"):
        agents.from_spec("search:backend=numba")


def test_a_lazy_world_generator_draws_what_the_world_generator_draws():
    """The engine's roll-outs get a world's generator made on first use: it is made
    only when a roll-out draws, and then draws exactly what the eager one would."""
    from agents.search_batch import LazyWorldRng, world_rng, world_rng_row

    row = world_rng_row(np.random.default_rng(5).bit_generator.random_raw(2))
    lazy = LazyWorldRng(row)
    assert lazy._rng is None
    eager = world_rng(row)
    assert lazy.permutation(30).tolist() == eager.permutation(30).tolist()
    assert lazy.integers(1 << 40, size=4).tolist() == eager.integers(1 << 40, size=4).tolist()
    other = world_rng(world_rng_row(np.random.default_rng(6).bit_generator.random_raw(2)))
    assert LazyWorldRng(row).permutation(30).tolist() != other.permutation(30).tolist()
