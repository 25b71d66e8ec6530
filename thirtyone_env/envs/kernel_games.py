"""Games on the compiled kernels: the arrays N games live in and the calls on them.

:class:`KernelGames` holds N stock games (one learning seat each) in the flat arrays of
:mod:`thirtyone_env.envs.batch_kernels` and steps, encodes and masks them with one kernel
call each; :class:`~thirtyone_env.envs.vector.ThirtyOneVectorEnv` is the Gymnasium face of
it and :class:`CompiledGame` the single env's (``ThirtyOneEnv(backend="compiled")``).
Whether the kernels can play a table is decided here, once (:func:`kernel_opponents`
and :func:`~thirtyone_env.envs.kernel_rules.batchable`): this module imports neither env
module, so the single env and the vector env both build on it without a cycle.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.utils import seeding

from thirtyone_env.envs import batch_kernels as K
from thirtyone_env.envs import kernel_rules
from thirtyone_env.envs.batch_rng import ROW, state_row
from thirtyone_env.game.actions import num_actions
from thirtyone_env.game.cards import hand_table
from thirtyone_env.game.encoding import ObsLayout
from thirtyone_env.game.engine import PHASE_NAMES
from thirtyone_env.game.policies import GreedyPolicy, RandomPolicy
from thirtyone_env.game.rules import Rules

#: Opponents the kernels play, by name.
KERNEL_OPPONENTS = ("greedy", "random")


def opponent_kind(opponent: Any) -> tuple[int, float] | None:
    """(kernel kind, knock level) of an opponent the kernels can play, else None."""
    if opponent == "greedy" or type(opponent) is GreedyPolicy:
        return K.OPP_GREEDY, float(getattr(opponent, "knock_at", GreedyPolicy().knock_at))
    if opponent == "random" or type(opponent) is RandomPolicy:
        return K.OPP_RANDOM, 0.0
    return None


def kernel_opponents(opponents: Any, k: int) -> list[tuple[int, float]] | None:
    """The kernel kinds of ``k`` opponents (one, a list of ``k``, or a callable that
    makes the list), or None where one of them is not a kernel player; an unknown name
    or a list of the wrong length raises ``ValueError``."""
    if callable(opponents) and not hasattr(opponents, "act"):
        return None
    if isinstance(opponents, str) or hasattr(opponents, "act"):
        opponents = [opponents] * k
    if not isinstance(opponents, Sequence) or len(opponents) != k:
        raise ValueError(f"opponents: give one opponent, a list of {k}, or a callable making the list")
    for o in opponents:
        if isinstance(o, str) and opponent_kind(o) is None:
            raise ValueError(f"unknown opponent {o!r}; by name: {list(KERNEL_OPPONENTS)} (or pass a policy)")
    kinds = [opponent_kind(o) for o in opponents]
    return None if any(x is None for x in kinds) else kinds  # type: ignore[return-value]


class KernelGames:
    """``num_envs`` compiled games of one learning seat each.

    The arrays are public for the kernels' callers (the two envs and benchmarks); the
    methods are the steps every caller takes: :meth:`seed`, :meth:`reset_games`,
    :meth:`encode`, :meth:`update_masks`, :meth:`step`.
    """

    def __init__(
        self,
        num_envs: int,
        layout: ObsLayout,
        rules: Rules,
        kinds: list[tuple[int, float]],
        seat: int | str,
        episode: str,
        reward: str,
    ) -> None:
        N, n = num_envs, layout.num_players
        self.num_envs = N
        self.seat = -1 if seat == "random" else int(seat)
        self.g = np.zeros((N, K.NUM_G), dtype=np.int32)
        self.seat_i = np.zeros((N, n, K.NUM_S), dtype=np.int32)
        self.hands = np.full((N, n, 4), -1, dtype=np.int64)
        self.stock = np.zeros((N, K.NUM_CARDS), dtype=np.int64)
        self.pile = np.zeros((N, K.NUM_CARDS), dtype=np.int64)
        self.known = np.zeros((N, n), dtype=np.int64)
        self.disc_seat = np.full((N, K.NUM_CARDS), -1, dtype=np.int32)
        self.disc_order = np.full((N, K.NUM_CARDS), -1, dtype=np.int32)
        self.rs = np.zeros((N, ROW), dtype=np.uint64)  # each game's PCG64 generator
        self.rew = np.zeros(N, dtype=np.float64)
        self.pending = np.zeros(N, dtype=np.float64)
        self.values = np.asarray(hand_table(rules), dtype=np.float64)
        self.deck = np.asarray(rules.deck_cards, dtype=np.int64)
        self.R = kernel_rules.pack(rules, episode, reward)
        self.opp_kind = np.array([k for k, _ in kinds], dtype=np.int64)
        self.opp_knock2 = np.array([2 * x for _, x in kinds], dtype=np.float64)
        self.offsets = np.array([layout.offsets[p] for p in K.OFFSETS], dtype=np.int64)
        self.scale = float(layout.value_scale)
        self.illegal = np.zeros(N, dtype=np.bool_)
        self.done = np.zeros(N, dtype=np.bool_)
        self.all = np.arange(N, dtype=np.int64)
        self.masks = np.zeros((N, num_actions(rules)), dtype=np.int8)
        self.seeded = False
        self.args = (
            self.g,
            self.seat_i,
            self.hands,
            self.stock,
            self.pile,
            self.known,
            self.disc_seat,
            self.disc_order,
            self.R,
            self.rs,
            self.values,
            self.deck,
            self.opp_kind,
            self.opp_knock2,
            self.rew,
            self.pending,
        )  # fmt: skip  (the arrays every game kernel takes, in order)

    def seed(self, seeds: Sequence[int | None]) -> None:
        """Seed game ``i``'s generator as the single env seeds its own with ``seeds[i]``."""
        for i, sd in enumerate(seeds):
            self.rs[i] = state_row(seeding.np_random(sd)[0])
        self.seeded = True

    def reset_games(self, rows: np.ndarray) -> None:
        K.reset_games(*self.args, rows, self.seat)

    def encode(self, rows: np.ndarray, out: np.ndarray) -> None:
        K.encode(
            self.g, self.seat_i, self.hands, self.stock, self.pile, self.known, self.disc_seat,
            self.disc_order, self.R, self.values, self.deck, self.offsets, self.scale, out, rows,
        )  # fmt: skip

    def update_masks(self) -> None:
        K.masks(self.g, self.seat_i, self.hands, self.R, self.masks)

    def step(self, actions: np.ndarray, obs: np.ndarray) -> None:
        """Play every game's action, the opponents' replies and settlements; writes
        ``rew``, ``illegal``, ``done``, the observations into ``obs`` and the masks."""
        K.step_encode(*self.args, actions, self.illegal, self.done, self.offsets, self.scale, obs, self.masks)


class CompiledGame:
    """One game on the compiled kernels, for ``ThirtyOneEnv(backend="compiled")``: the
    same seat, deals, opponents and observations as the Python engine, without the
    per-step Python of the engine and the encoder (no autoreset: the env resets)."""

    def __init__(self, num_players: int, rules: Rules, opponents: list, seat: Any, episode: str, reward: str):
        kinds = kernel_opponents(opponents, num_players - 1)
        if kinds is None or not kernel_rules.batchable(rules):
            why = (
                "; ".join(kernel_rules.refusals(rules))
                or "these opponents (not GreedyPolicy or RandomPolicy)"
            )
            raise ValueError(
                "backend='compiled' plays the stock game with lives against GreedyPolicy or RandomPolicy "
                f"opponents, not {why}: use backend='python'"
            )
        layout = ObsLayout(num_players, rules)
        self.games = games = KernelGames(1, layout, rules, kinds, seat, episode, reward)
        self.obs = np.zeros((1, layout.size), dtype=np.float32)
        self._actions = np.zeros(1, dtype=np.int64)
        # one step's kernel arguments, built once: a step is a few microseconds
        self._step_args = (
            *games.args, self._actions, games.illegal, games.done, games.offsets, games.scale, self.obs, games.masks,
        )  # fmt: skip

    @property
    def seeded(self) -> bool:
        """Whether the game's generator was ever seeded (by a first ``reset``)."""
        return self.games.seeded

    def reset(self, seed: int | None) -> np.ndarray:
        games = self.games
        if seed is not None or not games.seeded:
            games.seed([seed])
        games.reset_games(games.all)
        games.encode(games.all, self.obs)
        games.update_masks()
        return self.obs[0].copy()

    def legal(self, action: int) -> bool:
        return bool(self.games.masks[0, action])

    def step(self, action: int) -> tuple[np.ndarray, float, bool]:
        games = self.games
        self._actions[0] = action
        K.step_encode(*self._step_args)
        return self.obs[0].copy(), float(games.rew[0]), bool(games.done[0])

    def mask(self) -> np.ndarray:
        return self.games.masks[0].copy()

    def info(self) -> dict[str, Any]:
        games = self.games
        g = games.g[0]
        return {
            "action_mask": self.mask(),
            "seat": int(g[K.G_SEAT]),
            "round": int(g[K.G_ROUND]),
            "lives": tuple(games.seat_i[0, :, K.S_LIVES].tolist()),
            "phase": PHASE_NAMES[int(g[K.G_PHASE])],
        }
