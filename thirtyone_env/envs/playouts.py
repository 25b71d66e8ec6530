"""Paired play-outs of many positions at once, on the compiled kernels.

:func:`~thirtyone_env.research.oracle.measure` values each of a few actions at one
position by playing the round out in the engine, move by move, one play-out after the
other: the DAgger collector's measured knocks spend most of a collection there.
:func:`measure_many` computes the same values for a batch of positions: every
(position, action, play-out) becomes one compiled game (:class:`KernelGames`), and the
players are asked once per turn for all the games waiting on them (``act_batch``), the
kernels playing greedy and random seats inside. Each play-out starts as ``measure``'s
does (the same generator, child ``r`` of the position's seed, shuffles the stock, and
the action is played in the engine), and the kernels draw from that generator's state
draw for draw as the engine would: with players that decide alone (no generator of
their own) the values are those of ``measure``, exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from thirtyone_env.envs import batch_kernels as K
from thirtyone_env.envs.kernel_games import KernelGames
from thirtyone_env.envs.kernel_rules import batchable
from thirtyone_env.game.encoding import ObsLayout
from thirtyone_env.game.engine import ROUND_OVER, GameState
from thirtyone_env.harness.driver import OBJECTIVES, round_value, settled_value, start_playout


def compiled(state: GameState, table: Sequence[Any]) -> bool:
    """Whether :func:`measure_many` plays out ``state`` with the players ``table`` (one
    per seat, objects with ``act``, as the engine's play-outs take them): a lives game
    the kernels play."""
    rules = state.rules
    return (
        rules.scoring == "lives"
        and batchable(rules)
        and len(table) == state.num_players
        and all(callable(getattr(p, "act", None)) for p in table)
    )


def measure_many(
    states: Sequence[GameState],
    actions: Sequence[Sequence[int]],
    tables: Sequence[Sequence[Any]],
    seeds: Sequence[np.random.SeedSequence],
    rollouts: int,
    elimination_penalty: float = 0.0,
    objective: str = "lives",
    shuffle_stock: bool = True,
) -> np.ndarray:
    """Values ``(len(states), A, rollouts)``: for position ``k`` (the seat to act in
    ``states[k]``, one of ``tables[k]``'s players per seat), each of its ``A`` actions
    ``actions[k]`` (all positions give as many) in each play-out, as
    :func:`~thirtyone_env.research.oracle.measure` with ``seeds[k]`` values it.
    Positions must share their rules and table size (:func:`compiled` true for each);
    the states are not changed."""
    if rollouts < 1:
        raise ValueError(f"rollouts must be at least 1, got {rollouts}")
    if objective not in OBJECTIVES:
        raise ValueError(f"objective={objective!r} is not allowed; allowed values: {list(OBJECTIVES)}")
    P = len(states)
    if not (len(actions) == len(tables) == len(seeds) == P):
        raise ValueError("measure_many: give as many action lists, tables and seeds as states")
    A = len(actions[0]) if P else 0
    out = np.empty((P, A, rollouts))
    if not P:
        return out
    rules, n = states[0].rules, states[0].num_players
    for k, (s, table) in enumerate(zip(states, tables, strict=True)):
        if s.rules != rules or s.num_players != n:
            raise ValueError(f"measure_many: position {k} is not at the first position's table and rules")
        if len(actions[k]) != A:
            raise ValueError(f"measure_many: position {k} gives {len(actions[k])} actions, the first {A}")
        if not compiled(s, table):
            raise ValueError(f"measure_many: the kernels cannot play position {k} out (see compiled())")
    started: list[tuple[int, int, int, GameState, np.random.Generator]] = []
    for k, s in enumerate(states):
        seat = s.current
        for r, child in enumerate(seeds[k].spawn(rollouts)):
            entropy = child.generate_state(4)
            for i, action in enumerate(actions[k]):
                rng = np.random.default_rng(entropy)
                c = start_playout(s, action, rng, shuffle_stock)
                if c.phase >= ROUND_OVER:  # settled by the action itself
                    out[k, i, r] = round_value(c, seat, elimination_penalty, objective)
                else:
                    started.append((k, i, r, c, rng))
    if started:
        _play_out(started, states, tables, out, elimination_penalty, objective)
    return out


def _play_out(
    started: list[tuple[int, int, int, GameState, np.random.Generator]],
    states: Sequence[GameState],
    tables: Sequence[Sequence[Any]],
    out: np.ndarray,
    elimination_penalty: float,
    objective: str,
) -> None:
    """The rounds of ``started`` (position, action, play-out, state, generator) played
    to their end in one set of compiled games; each one's value into ``out``."""
    rules, n = states[0].rules, states[0].num_players
    seats = [states[k].current for k, *_ in started]
    opponents = [
        [tables[k][(seats[row] + j) % n] for j in range(1, n)] for row, (k, *_) in enumerate(started)
    ]
    agents = [tables[k][seats[row]] for row, (k, *_) in enumerate(started)]
    games = KernelGames(len(started), ObsLayout(n, rules), rules, opponents, 0, "round", "lives", agents)
    for row, (_k, _i, _r, c, rng) in enumerate(started):
        games.load_state(row, c, seats[row], rng)
    games.advance(games.all)
    games.play_to_end()
    si, g = games.seat_i, games.g
    for row, (k, i, r, _c, _rng) in enumerate(started):
        seat = seats[row]
        lives = si[row, :, K.S_LIVES].tolist()
        active = (si[row, :, K.S_ACTIVE] != 0).tolist()
        out[k, i, r] = settled_value(
            rules, int(si[row, seat, K.S_LOST]), not active[seat], lives, active,
            _winners(g[row], si[row], n), seat, elimination_penalty, objective,
        )  # fmt: skip


def _winners(g: np.ndarray, si: np.ndarray, n: int) -> tuple[int, ...]:
    """The game's winners when the play-out's settlement ended it (the engine's rule:
    the last seat in, else at the round limit those still in with the most lives)."""
    if g[K.G_PHASE] != K.GAME_OVER:
        return ()
    remaining = [p for p in range(n) if si[p, K.S_HLEN] > 0 and si[p, K.S_ACTIVE] != 0]
    if len(remaining) == 1:
        return (remaining[0],)
    best = max(si[p, K.S_LIVES] for p in remaining)
    return tuple(p for p in remaining if si[p, K.S_LIVES] == best)
