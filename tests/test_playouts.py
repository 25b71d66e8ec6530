"""Measured knocks on the compiled kernels: ``measure_many`` gives the engine's values
(``oracle.measure``) play-out for play-out, and the collector's demonstrations are the
same whichever of the two plays its knocks out."""

import numpy as np
import pytest
from conftest import random_moves

import agents
import training.imitation as imitation
from agents.expert import ExpertPlayer
from thirtyone_env import ThirtyOneEnv
from thirtyone_env.envs.kernel_games import KernelGames
from thirtyone_env.envs.playouts import compiled, measure_many
from thirtyone_env.game.actions import KNOCK
from thirtyone_env.game.encoding import ObsLayout
from thirtyone_env.game.engine import DRAW, clone_state, legal_mask, new_game
from thirtyone_env.harness.driver import encodings_of, player_move
from thirtyone_env.research.oracle import measure
from training.imitation import collect


def _knock_positions(rules: str, n: int, count: int, seed: int) -> list:
    """Positions at a draw where knocking is a choice (random moves into fresh games),
    each with a legal other move: (state, alternative)."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        s = random_moves(new_game(rules, n, rng), rng, 25)
        if s.phase != DRAW or s.knocker >= 0:
            continue
        mask = legal_mask(s)
        if not mask[KNOCK]:
            continue
        mask[KNOCK] = 0
        out.append((s, int(rng.choice(np.flatnonzero(mask)))))
    return out


@pytest.mark.parametrize(
    ("rules", "n", "objective", "penalty"),
    [
        ("standard", 4, "lives", 0.0),
        ("pagat", 3, "win", 0.0),
        ("cut_throat", 2, "lives", 2.0),
        ("dutch", 4, "win", 0.0),
    ],
)
def test_compiled_playouts_give_the_engines_values(rules, n, objective, penalty):
    """Every play-out of every action at every position: the same value as the engine's
    ``measure`` with the same seed, at tables of expert, greedy and Blitz31 players
    (asked in batches, or played inside the kernels)."""
    kinds = [ExpertPlayer(), agents.make("greedy"), agents.make("blitz31"), ExpertPlayer()]
    positions = _knock_positions(rules, n, 24, seed=n)
    tables = [tuple(kinds[(k + p) % 4] for p in range(n)) for k in range(len(positions))]
    entropy = [1000 + k for k in range(len(positions))]
    states = [clone_state(s) for s, _ in positions]
    assert all(compiled(s, t) for s, t in zip(states, tables, strict=True))
    got = measure_many(
        states,
        [(KNOCK, alt) for _, alt in positions],
        tables,
        [np.random.SeedSequence(e) for e in entropy],
        3,
        elimination_penalty=penalty,
        objective=objective,
    )
    assert got.shape == (len(positions), 2, 3)
    layout = ObsLayout(n, states[0].rules)
    for k, ((s, alt), table) in enumerate(zip(positions, tables, strict=True)):
        move = player_move(table, encodings_of(table, "flat"), layout, "rollout")
        want = measure(
            s,
            (KNOCK, alt),
            move,
            np.random.SeedSequence(entropy[k]),
            3,
            elimination_penalty=penalty,
            objective=objective,
        )
        np.testing.assert_array_equal(got[k], want)
        assert states[k].phase == DRAW and states[k].current == s.current  # the positions did not move
    # the knock and the other move are not valued alike everywhere: the play-outs differ
    assert not np.array_equal(got[:, 0], got[:, 1])


def test_compiled_playouts_refuse_what_they_cannot_play():
    """A points game and mismatched inputs are refused by name; the kernels' games
    play to their end by themselves only with a player in the agent's seat."""
    ((s, alt),) = _knock_positions("no_elimination", 3, 1, seed=0)
    table = (ExpertPlayer(),) * 3
    assert not compiled(s, table)
    with pytest.raises(ValueError, match="cannot play position 0 out"):
        measure_many([s], [(KNOCK, alt)], [table], [np.random.SeedSequence(0)], 2)
    ((s, alt),) = _knock_positions("standard", 3, 1, seed=0)
    with pytest.raises(ValueError, match="as many action lists, tables and seeds"):
        measure_many([s], [(KNOCK, alt)], [], [np.random.SeedSequence(0)], 2)
    with pytest.raises(ValueError, match="rollouts must be at least 1"):
        measure_many([s], [(KNOCK, alt)], [table], [np.random.SeedSequence(0)], 0)
    with pytest.raises(ValueError, match="objective='chips' is not allowed"):
        measure_many([s], [(KNOCK, alt)], [table], [np.random.SeedSequence(0)], 1, objective="chips")
    games = KernelGames(1, ObsLayout(3, s.rules), s.rules, [["greedy", "greedy"]], 0, "round", "lives")
    with pytest.raises(ValueError, match="needs a player in the agent's seat"):
        games.play_to_end()
    assert not compiled(s, ("greedy", *table[1:]))  # names: the engine's play-outs take players
    with pytest.raises(ValueError, match="agent seat takes a player object, not 'greedy'"):
        KernelGames(
            1, ObsLayout(3, s.rules), s.rules, [["greedy", "greedy"]], 0, "round", "lives", ["greedy"]
        )
    with pytest.raises(ValueError, match="one player per game"):
        KernelGames(
            2, ObsLayout(3, s.rules), s.rules, [["greedy", "greedy"]] * 2, 0, "round", "lives", [table[0]]
        )


def test_the_collection_is_the_same_with_the_knocks_played_out_in_the_engine(monkeypatch):
    """A DAgger collection (greedy plays, the expert labels and plays on) at a table
    of players that decide alone: the same demonstrations, measured gains included,
    whether its knocks run compiled (in batches smaller than the collection's) or in
    the engine one by one."""

    def run():
        env = ThirtyOneEnv(
            num_players=4, opponents=[agents.make(o) for o in ("expert", "greedy", "blitz31")], seat="random"
        )
        return collect(
            env, ExpertPlayer(), 500, 0.99, seed=5, behaviour=agents.make("greedy"), knock_rollouts=2
        )

    monkeypatch.setattr(imitation, "KNOCK_BATCH", 64)
    fast = run()
    measured = np.isfinite(fast.knock_gain)
    assert measured.sum() > 64  # more than one batch
    monkeypatch.setattr(imitation, "compiled", lambda state, table: False)
    slow = run()
    for field in ("obs", "masks", "actions", "returns", "alternatives"):
        assert np.array_equal(getattr(fast, field), getattr(slow, field))
    np.testing.assert_array_equal(fast.knock_gain, slow.knock_gain)
