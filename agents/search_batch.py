"""Search's sampled worlds and their roll-outs on the compiled kernels.

:class:`agents.search.SearchPlayer` spends nearly all of its time playing sampled
worlds out with the expert in every seat. Where the kernels play the table (the stock
game with lives, :func:`~thirtyone_env.envs.kernel_rules.batchable`) and the expert
rolls out, :class:`CompiledRollouts` does a whole batch of worlds in one compiled call
(:func:`search_chunk`): each world is dealt into a row of
:class:`~thirtyone_env.envs.kernel_games.KernelGames` (a copy of the position, the
unseen cards dealt as ``SearchPlayer._sample_world`` deals them, from the same draws of
the searcher's generator), copied once per candidate action, and every row is played to
the end of the round by :func:`~agents.expert_batch.expert_kernel` in every seat, on
the kernels' engine. Each world's roll-outs draw (only to reshuffle an empty stock) from
a generator of their own, :func:`world_rng_row`, the same for every candidate (common
random numbers), so the searcher's own generator moves the same way whichever path
plays the worlds out. ``tests/test_search.py`` holds the two paths to the same
utilities, world for world.

Numba reads the constants imported here as compile-time constants and its cache checks
only this file: after changing one of them in its owner, clear the cache
(``agents/__pycache__/search_batch.*``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from agents.expert_batch import expert_kernel
from thirtyone_env.envs import batch_kernels as K
from thirtyone_env.envs.batch_kernels import ELIMINATED, G_OUTCOME, G_SLEN, G_STATUS, OVER, S_HLEN
from thirtyone_env.envs.batch_rng import ROW, load_row, next_uint64, shuffle, state_row
from thirtyone_env.envs.kernel_games import KernelGames
from thirtyone_env.game.actions import num_actions
from thirtyone_env.game.cards import NUM_CARDS, PAIR_STRIDE
from thirtyone_env.game.encoding import ObsLayout
from thirtyone_env.game.engine import GameState
from thirtyone_env.game.rules import Rules
from thirtyone_env.game.view_batch import empty_batch
from thirtyone_env.game.views import PlayerView

#: The increment of every world's roll-out generator (PCG64; odd, as it must be).
WORLD_INC = (0x5851F42D4C957F2D, 0x14057B7EF767814F)
#: Most candidate actions of one decision (four at a draw, four cards at a discard).
MAX_CANDIDATES = 4


def world_rng_row(raw: np.ndarray) -> np.ndarray:
    """The generator row (``batch_rng`` layout) of a world's roll-outs from two raw
    64-bit draws of the searcher's generator: state ``raw[0] * 2**64 + raw[1]``."""
    return np.array([raw[0], raw[1], *WORLD_INC, 0, 0], dtype=np.uint64)


def world_rng(row: np.ndarray) -> np.random.Generator:
    """A NumPy generator in the state of a world's roll-out row."""
    rng = np.random.Generator(np.random.PCG64())
    load_row(rng, row)
    return rng


class LazyWorldRng:
    """:func:`world_rng` of ``row``, made on first use: a roll-out draws only to
    reshuffle an empty stock, which most never do (none at a table game), and making a
    generator costs more than many a roll-out's moves. It draws what that generator
    would."""

    __slots__ = ("_row", "_rng")

    def __init__(self, row: np.ndarray) -> None:
        self._row = row
        self._rng: np.random.Generator | None = None

    def __getattr__(self, name: str):
        if self._rng is None:
            self._rng = world_rng(self._row)
        return getattr(self._rng, name)


@njit(cache=True)
def _copy_row(g, seat_i, hands, stock, pile, known, disc_seat, disc_order, disc_log, rew, pending, src, dst):
    g[dst] = g[src]
    seat_i[dst] = seat_i[src]
    hands[dst] = hands[src]
    stock[dst] = stock[src]
    pile[dst] = pile[src]
    known[dst] = known[src]
    disc_seat[dst] = disc_seat[src]
    disc_order[dst] = disc_order[src]
    disc_log[dst] = disc_log[src]
    rew[dst] = rew[src]
    pending[dst] = pending[src]


@njit(cache=True)
def sample_world(
    st,
    unseen,
    known_cards,
    known_len,
    draws,
    dealt,
    me,
    stock_size,
    t,
    max_improve,
    hands,
    seat_i,
    stock,
    g,
    r,
):
    """Deal the unseen cards into row ``r`` as ``SearchPlayer._sample_world`` does:
    a permutation of ``unseen`` from row 0 of ``st`` is the pool; each other seat
    still in (``dealt``) gets its known cards, then cards from the pool's end, then
    ``min(draws, max_improve)`` greedy-collector draws (cards let go go to the pool's
    front); the stock is the pool's front ``stock_size`` cards."""
    n = hands.shape[1]
    m = unseen.shape[0]
    perm = np.arange(m)
    shuffle(st, 0, perm, m)
    buf = np.empty(2 * NUM_CARDS, dtype=np.int64)
    head = NUM_CARDS
    tail = head + m
    for j in range(m):
        buf[head + j] = unseen[perm[j]]
    hand = np.empty(3, dtype=np.int64)
    for p in range(n):
        if p == me or not dealt[p]:
            continue
        kl = known_len[p]
        for j in range(kl):
            hand[j] = known_cards[p, j]
        for j in range(kl, 3):
            tail -= 1
            hand[j] = buf[tail]
        best = t[hand[0] * PAIR_STRIDE + hand[1] * NUM_CARDS + hand[2]]
        for _ in range(min(draws[p], max_improve)):
            if tail == head:
                break
            tail -= 1
            card = buf[tail]
            drop = -1
            for i in range(kl, 3):
                a = card if i == 0 else hand[0]
                b = card if i == 1 else hand[1]
                c = card if i == 2 else hand[2]
                trial = t[a * PAIR_STRIDE + b * NUM_CARDS + c]
                if trial > best:
                    best = trial
                    drop = i
            head -= 1
            if drop >= 0:
                buf[head] = hand[drop]
                hand[drop] = card
            else:
                buf[head] = card
        for j in range(3):
            hands[r, p, j] = hand[j]
        hands[r, p, 3] = -1
        seat_i[r, p, S_HLEN] = 3
    for j in range(stock_size):
        stock[r, j] = buf[head + j]
    g[r, G_SLEN] = stock_size


@njit(cache=True)
def search_chunk(
    g, seat_i, hands, stock, pile, known, disc_seat, disc_order, disc_log, R, rs, t, deck, opp_kind, opp_knock2,
    rew, pending,
    template, worlds, cands, st, unseen, known_cards, known_len, draws, dealt, me, stock_size, max_improve,
    vseat, vphase, vhand, vhand_len, vdrawn, vtook, vpile, vpile_len, vknown, vdiscs, vlog, vndisc, vlives,
    vactive, vdealer, vknocker, vstock, vturn, vround, vturns,
    masks, deck_bits, pot, vbin, value, ge, fparams, iparams, penalty, out,
):  # fmt: skip
    """``worlds`` worlds dealt from the position in row ``template`` (rows
    ``w * C + c``, ``C = len(cands)``), candidate ``cands[c]`` played in each, then the
    expert in every seat to the end of the round: ``out[w, c]`` is the searching seat's
    utility (minus the lives the round cost it, and ``penalty`` more when they put it
    out). ``st`` (one row) is the searcher's generator, advanced as the engine path
    advances it."""
    C = cands.shape[0]
    N = worlds * C
    for w in range(worlds):
        r0 = w * C
        _copy_row(
            g, seat_i, hands, stock, pile, known, disc_seat, disc_order, disc_log, rew, pending, template, r0
        )
        sample_world(
            st, unseen, known_cards, known_len, draws, dealt, me, stock_size, t, max_improve, hands, seat_i, stock,
            g, r0,
        )  # fmt: skip
        rs[r0, 0] = next_uint64(st, 0)
        rs[r0, 1] = next_uint64(st, 0)
        rs[r0, 2] = np.uint64(WORLD_INC[0])
        rs[r0, 3] = np.uint64(WORLD_INC[1])
        rs[r0, 4] = 0
        rs[r0, 5] = 0
        for c in range(1, C):
            _copy_row(
                g,
                seat_i,
                hands,
                stock,
                pile,
                known,
                disc_seat,
                disc_order,
                disc_log,
                rew,
                pending,
                r0,
                r0 + c,
            )
            rs[r0 + c] = rs[r0]
    rows = np.arange(N)
    acts = np.empty(N, dtype=np.int64)
    for r in range(N):
        acts[r] = cands[r % C]
    K.play_external(
        g, seat_i, hands, stock, pile, known, disc_seat, disc_order, disc_log, R, rs, t, deck, opp_kind, opp_knock2,
        rew, pending, rows, acts,
    )  # fmt: skip
    wait = np.empty(N, dtype=np.int64)
    while True:
        k = 0
        for r in range(N):
            if g[r, G_STATUS] != OVER:
                wait[k] = r
                k += 1
        if k == 0:
            break
        wk = wait[:k]
        K.seat_masks(g, seat_i, hands, R, wk, masks)
        K.seat_views(
            g, seat_i, hands, stock, pile, known, disc_log, wk, vseat, vphase, vhand, vhand_len, vdrawn, vtook,
            vpile, vpile_len, vknown, vdiscs, vlog, vndisc, vlives, vactive, vdealer, vknocker, vstock, vturn,
            vround, vturns,
        )  # fmt: skip
        expert_kernel(
            vseat[:k], vhand[:k], vhand_len[:k], vpile[:k], vpile_len[:k], vknown[:k], vdiscs[:k], vlives[:k],
            vactive[:k], vknocker[:k], masks[:k], deck_bits, pot, vbin, value, ge, fparams, iparams, acts[:k],
        )  # fmt: skip
        K.play_external(
            g, seat_i, hands, stock, pile, known, disc_seat, disc_order, disc_log, R, rs, t, deck, opp_kind,
            opp_knock2, rew, pending, wk, acts[:k],
        )  # fmt: skip
    for r in range(N):
        u = rew[r]
        if u < 0 and (g[r, G_OUTCOME] & ELIMINATED) != 0:
            u -= penalty
        out[r // C, r % C] = u


class CompiledRollouts:
    """The compiled path of one searcher at one table size and rules: its games (one
    row per world and candidate, and the position's row), view and mask buffers.

    Args:
        rules: the table's rules (the kernels must play them).
        num_players: seats at the table.
        expert: the expert that rolls out (its kernel tables and parameters).
        batch: most worlds a chunk deals.
    """

    def __init__(self, rules: Rules, num_players: int, expert: Any, batch: int) -> None:
        n = num_players
        rows = batch * MAX_CANDIDATES + 1
        self.rules = rules
        self.num_players = n
        self.batch = batch
        self.template = rows - 1
        self.games = KernelGames(
            rows, ObsLayout(n, rules), rules, [[expert] * (n - 1)] * rows, 0, "round", "lives"
        )
        views = empty_batch(rules, n, rows, 0)
        self.views = tuple(
            getattr(views, f)
            for f in (
                "seat", "phase", "hand", "hand_len", "drawn", "took", "pile", "pile_len", "known",
                "discard_counts", "discard_log", "num_discards", "lives", "active", "dealer", "knocker",
                "stock_size", "turn", "round_no", "turns_played",
            )
        )  # fmt: skip
        self.masks = np.zeros((rows, num_actions(rules)), dtype=np.int8)
        self.expert_args = expert.kernel_tables(rules)
        self._position: tuple = ()

    def set_position(self, v: PlayerView, template: GameState, max_improve: int) -> None:
        """The decision to search: ``template`` is the position seen from ``v`` (the
        other seats' unseen cards and the stock are dealt per world)."""
        n = self.num_players
        self.games.load_state(self.template, template, v.seat)
        known_cards = np.full((n, 4), -1, dtype=np.int64)
        known_len = np.zeros(n, dtype=np.int64)
        draws = np.zeros(n, dtype=np.int64)
        for p in v.players_after():
            cards = v.known[p]
            known_len[p] = len(cards)
            known_cards[p, : len(cards)] = cards
        for seat, _card in v.discards:
            draws[seat] += 1
        in_play = v.phase in ("draw", "discard")
        dealt = np.array([in_play and bool(a) for a in v.active], dtype=np.bool_)
        unseen = np.asarray(v.unseen(), dtype=np.int64)
        self._position = (unseen, known_cards, known_len, draws, dealt, v.seat, v.stock_size, max_improve)

    def chunk(
        self, rng: np.random.Generator, worlds: int, candidates: list[int], penalty: float
    ) -> np.ndarray:
        """Utilities ``(worlds, len(candidates))`` of the next ``worlds`` worlds of the
        position, drawing the deals from ``rng`` (advanced as the engine path would)."""
        if not 1 <= worlds <= self.batch or not 1 <= len(candidates) <= MAX_CANDIDATES:
            raise ValueError(f"a chunk takes 1 to {self.batch} worlds and 1 to {MAX_CANDIDATES} candidates")
        out = np.empty((worlds, len(candidates)), dtype=np.float64)
        st = state_row(rng).reshape(1, ROW)
        search_chunk(
            *self.games.args, self.template, worlds, np.asarray(candidates, dtype=np.int64), st, *self._position,
            *self.views, self.masks, *self.expert_args, float(penalty), out,
        )  # fmt: skip
        load_row(rng, st[0])
        return out
