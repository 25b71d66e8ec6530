"""The compiled kernels as a declared mirror of the engine: every ``Rules`` field is
decided in ``kernel_rules.MIRROR`` (packed, in the arrays, only some values, or
irrelevant), the kernels hold their owners' constants, and both backends play the same
games over random stock-game rules (hypothesis)."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thirtyone_env.envs import batch_kernels as K
from thirtyone_env.envs import kernel_rules as KR
from thirtyone_env.envs.env import ThirtyOneEnv
from thirtyone_env.envs.vector import ThirtyOneVectorEnv, batchable
from thirtyone_env.game import rewards
from thirtyone_env.game.policies import GreedyPolicy, RandomPolicy
from thirtyone_env.game.rules import (
    KNOCKER_TIES,
    PRESETS,
    STOCK_EXHAUSTED,
    THREE_OF_A_KIND,
    Rules,
    field_names,
)

#: A strategy for every ``Rules`` field the kernels play (packed or in their arrays).
PLAYED_OPTIONS = {
    "deck": st.sampled_from(["standard52", "piquet32"]),
    "lives": st.integers(1, 5),
    "free_ride": st.booleans(),
    "three_of_a_kind": st.sampled_from(THREE_OF_A_KIND),
    "knock_from_turn": st.integers(1, 4),
    "allow_discard_return": st.booleans(),
    "stand_after_knock": st.booleans(),
    "blitz_after_knock": st.booleans(),
    "knocker_penalty": st.integers(1, 3),
    "knocker_tie": st.sampled_from(KNOCKER_TIES),
    "stock_exhausted": st.sampled_from(STOCK_EXHAUSTED),
    "max_turns_per_round": st.sampled_from([1, 2, 3, 8, 30, 200]),
    "max_rounds": st.sampled_from([1, 2, 3, 1000]),
    "hand_ranking": st.sampled_from(["points", "brag"]),
    "ace_low_run": st.booleans(),
}


def test_every_rules_field_is_decided_for_the_kernels():
    """A ``Rules`` field missing from the mirror fails here: decide whether the kernels
    pack it, play only some of its values, or may ignore it."""
    missing = KR.undecided(field_names())
    assert not missing, (
        f"Rules field(s) {missing} are not in kernel_rules.MIRROR: decide what the compiled "
        "kernels do with them (Packed, InArrays, Only or Irrelevant)"
    )
    assert set(KR.MIRROR) == set(field_names()), "MIRROR names fields Rules no longer has"


def test_a_new_rules_field_is_caught_undecided():
    @dataclasses.dataclass(frozen=True)
    class NewRules(Rules):
        jokers: bool = False

    assert KR.undecided([f.name for f in dataclasses.fields(NewRules)]) == ["jokers"]


def test_every_rules_slot_is_packed_once_and_every_played_field_is_in_the_property_test():
    assert sorted(KR.packed_slots()) == list(range(KR.NUM_R))
    played = {name for name, m in KR.MIRROR.items() if isinstance(m, KR.Packed | KR.InArrays)}
    assert set(PLAYED_OPTIONS) == played, "the property test below must draw every field the kernels play"


def test_pack_writes_each_option_in_its_slot():
    R = KR.pack(Rules.preset("blitz31").replace(knock_from_turn=3, max_turns_per_round=77), "round", "win")
    assert R[KR.R_KFT] == 3 and R[KR.R_MAX_TURNS] == 77 and R[KR.R_BLITZ_LATE] == 1
    assert R[KR.R_EXHAUSTED] == KR.EXHAUSTED_SHOWDOWN and R[KR.R_TIE] == KR.TIE_KNOCKER_SAFE
    assert R[KR.R_BLITZ2] == 62 and R[KR.R_LIVES] == 4 and R[KR.R_FREE_RIDE] == 1
    assert R[KR.R_EPISODE] == KR.EPISODE_ROUND and R[KR.R_REWARD] == rewards.WIN
    assert KR.pack(Rules(hand_ranking="brag"), "game", "lives")[KR.R_BLITZ2] == -2  # no 31 in Brag
    assert KR.pack(Rules(three_of_a_kind=30.5), "game", "lives")[KR.R_BLITZ2] == 62


def test_the_kernels_hold_their_owners_constants():
    """Numba bakes imported constants in and caches by this file only: a constant
    changed in its owner leaves a stale cache, which this names."""
    assert K.baked_constants() == K.baked_constants.py_func(), (
        "the numba cache of batch_kernels is stale: delete thirtyone_env/__pycache__/batch_kernels.*"
    )


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_batchable_follows_the_mirror_and_the_compiled_backend_refuses_the_rest(name):
    rules = Rules.preset(name)
    n = rules.seats or 3
    expected = rules.table == "stock" and rules.scoring == "lives"
    assert batchable(rules) is expected
    assert ThirtyOneVectorEnv(1, n, rules).compiled is expected
    if expected:
        ThirtyOneEnv(n, rules, backend="compiled")
        return
    refused = KR.refusals(rules)
    assert refused and all(line.split("=")[0] in ("table", "scoring", "carry_over") for line in refused)
    with pytest.raises(ValueError, match="backend='compiled' plays the stock game"):
        ThirtyOneEnv(n, rules, backend="compiled")
    with pytest.raises(ValueError, match=f"do not play {refused[0].split('=')[0]}="):
        KR.pack(rules, "game", "lives")


def test_every_value_outside_only_makes_the_rules_unbatchable():
    cases = {
        "table": [Rules(table=t) for t in ("widow", "switch", "bus")],
        "scoring": [Rules(scoring=s) for s in ("points", "chips")],
        "carry_over": [Rules(table="switch", carry_over=True)],
    }
    assert set(cases) == {name for name, m in KR.MIRROR.items() if isinstance(m, KR.Only)}
    for name, examples in cases.items():
        for rules in examples:
            assert not batchable(rules)
            assert any(line.startswith(f"{name}=") for line in KR.refusals(rules))


def _opponents(kinds: str) -> list:
    return [
        GreedyPolicy(knock_at=27) if k == "G" else GreedyPolicy() if k == "g" else RandomPolicy()
        for k in kinds
    ]


@st.composite
def stock_games(draw):
    """Random stock-game rules, table size, opponents and env options."""
    rules = Rules(**{name: draw(s) for name, s in PLAYED_OPTIONS.items()})
    n = draw(st.integers(2, rules.max_players))
    opponents = draw(st.text("gGr", min_size=n - 1, max_size=n - 1))
    seat = draw(st.sampled_from(["random", *range(n)]))
    episode = draw(st.sampled_from(["game", "round"]))
    reward = draw(st.sampled_from(["lives", "win", "rate"]))
    return rules, n, opponents, {"seat": seat, "episode": episode, "reward": reward}


@settings(max_examples=60, deadline=None)
@given(game=stock_games(), seed=st.integers(0, 2**32 - 1))
def test_both_backends_play_the_same_games_over_random_stock_rules(game, seed):
    """Same rules, seed and random legal actions: ``backend="python"`` and
    ``backend="compiled"`` give identical observations, masks, rewards, episode ends
    and info, episode after episode."""
    rules, n, opponents, kw = game
    assert batchable(rules)
    py = ThirtyOneEnv(n, rules, _opponents(opponents), **kw)
    fast = ThirtyOneEnv(n, rules, _opponents(opponents), backend="compiled", **kw)
    (oa, ia), (ob, ib) = py.reset(seed=seed), fast.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for step in range(300):
        assert np.array_equal(oa, ob), f"step {step}: observations differ"
        assert np.array_equal(ia["action_mask"], ib["action_mask"]), f"step {step}: masks differ"
        assert [ia[k] for k in ("seat", "round", "lives", "phase")] == [
            ib[k] for k in ("seat", "round", "lives", "phase")
        ]
        action = int(rng.choice(np.flatnonzero(ia["action_mask"])))
        oa, ra, da, ta, ia = py.step(action)
        ob, rb, db, tb, ib = fast.step(action)
        assert (ra, da, ta) == (rb, db, tb), f"step {step}: reward or episode end differ"
        if da:
            assert np.array_equal(oa, ob), f"step {step}: final observations differ"
            (oa, ia), (ob, ib) = py.reset(), fast.reset()
