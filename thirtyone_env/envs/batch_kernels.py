"""The stock game's engine as numba kernels over N games held in arrays.

The same transitions as :mod:`thirtyone_env.game.engine` (the stock table, lives scoring),
written as loops over plain arrays so numba compiles them: :mod:`thirtyone_env.envs.vector`
steps thousands of games in one call. Each game carries the state of its own NumPy
generator (``rs``, see :mod:`thirtyone_env.envs.batch_rng`) and draws from it exactly where
and as the engine and the env do (the seat, the dealer, every deal and reshuffle); its
players' generator, seeded from a hash of it at each new game, is row ``N + i`` of
``rs`` (``rs`` has ``2N`` rows) and draws each random opponent's move. So a
batched game and a
:class:`~thirtyone_env.envs.env.ThirtyOneEnv` with the same seed play the same cards.

State layout (``N`` games, ``n`` seats): ``g[N, G_*]`` int32 scalars per game (column
constants below), ``seat_i[N, n, S_*]`` int32 per seat, ``hands[N, n, 4]``,
``stock[N, 52]`` (top card last, ``g[:, G_SLEN]`` long), ``pile[N, 52]`` (the discard
pile, top last), ``known[N, n]`` int64 bitmasks, ``disc_seat`` / ``disc_order``
``[N, 52]``. Rule values travel in one int64 array (slots ``R_*``) and the value table:
:mod:`thirtyone_env.envs.kernel_rules` declares, for every ``Rules`` field, how it reaches
the kernels or why it need not (and so which rules they play at all).

Every number another module owns is imported from it, never restated: the phases
(engine), the action ids (actions), the card count and lookup stride (cards), the
turn scale (encoding), the rules slots and option codes (kernel_rules). Numba reads
such module globals as compile-time constants, and its cache checks only this file:
after changing one of them in its owner, clear the cache
(``thirtyone_env/__pycache__/batch_kernels.*``; ``tests/test_kernel_mirror.py`` fails
on a stale one).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from thirtyone_env.envs.batch_rng import derive_players, integers, shuffle
from thirtyone_env.envs.kernel_rules import (
    EPISODE_ROUND,
    EXHAUSTED_RESHUFFLE,
    EXHAUSTED_SHOWDOWN,
    R_BLITZ2,
    R_BLITZ_LATE,
    R_EPISODE,
    R_EXHAUSTED,
    R_FREE_RIDE,
    R_KFT,
    R_LIVES,
    R_MAX_ROUNDS,
    R_MAX_TURNS,
    R_PENALTY,
    R_RETURN,
    R_REWARD,
    R_STAND,
    R_TIE,
    TIE_KNOCKER_PAYS,
    TIE_KNOCKER_PAYS_PENALTY,
    TIE_KNOCKER_SAFE,
)
from thirtyone_env.game.actions import DISCARD_BASE, DRAW_STOCK, KNOCK, NUM_ACTIONS, STAND, TAKE_DISCARD
from thirtyone_env.game.cards import NUM_CARDS, PAIR_STRIDE
from thirtyone_env.game.encoding import TURN_SCALE, history_features
from thirtyone_env.game.engine import DISCARD, DRAW, GAME_OVER, ROUND_OVER
from thirtyone_env.game.rewards import LIVES, RATE, WIN, forfeit_reward, settled_reward
from thirtyone_env.game.state import (
    NUM_TALLY,
    T_DRAWS,
    T_KNOCK_TURNS,
    T_KNOCK_VALUE2,
    T_KNOCKS,
    T_KNOCKS_SHOWN,
    T_PICKUPS,
    T_ROUNDS,
    T_SHOWDOWNS,
    T_SHOWN_VALUE2,
)

# per game scalars
G_DEALER, G_CUR, G_PHASE, G_KNOCKER, G_FINAL, G_TURN, G_DRAWN, G_TOOK = range(8)
G_ROUND, G_SLEN, G_PLEN, G_NDISC, G_SEAT, G_STATUS, G_OUTCOME, G_RESET = range(8, 16)
G_TOPSEAT = 16  #: who discarded the pile's top card (-1: the upcard)
NUM_G = 17
# per seat
S_LIVES, S_ACTIVE, S_TURNS, S_HLEN, S_LOSS, S_CHARGE, S_DISCS, S_ROUNDS, S_LOST = range(9)
S_TALLY = 9  #: the seat's public tally (``GameState.tally``) in columns S_TALLY + T_*
NUM_S = S_TALLY + NUM_TALLY
#: The envs' reward of a settled round (``rewards.settled_reward``), compiled.
reward_of = njit(cache=True, inline="always")(settled_reward)
#: The envs' reward of an illegal action (``rewards.forfeit_reward``), compiled.
forfeit_of = njit(cache=True, inline="always")(forfeit_reward)
#: A seat's ``opponent_history`` row (``encoding.history_features``), compiled.
history_row = njit(cache=True, inline="always")(history_features)

# statuses: what a game waits for (EXTERNAL: a seat the kernels do not play, ``G_CUR``)
AGENT, EXTERNAL, OVER = 0, 1, 3
# outcome bits of a finished settlement, for the "win" reward
WON, ELIMINATED = 1, 2
# opponent kinds (EXTERNAL: decided outside the kernels, see ``advance``)
OPP_GREEDY, OPP_RANDOM, OPP_EXTERNAL = 0, 1, 2


@njit(cache=True, inline="always")
def value(t, a, b, c):
    return t[a * PAIR_STRIDE + b * NUM_CARDS + c]


@njit(cache=True, inline="always")
def hand_value(t, hands, i, p):
    return t[hands[i, p, 0] * PAIR_STRIDE + hands[i, p, 1] * NUM_CARDS + hands[i, p, 2]]


@njit(cache=True, inline="always")
def next_active(seat_i, i, p, n):
    p = (p + 1) % n
    while seat_i[i, p, S_ACTIVE] == 0:
        p = (p + 1) % n
    return p


@njit(cache=True, inline="always")
def clear_charges(seat_i, i, n):
    for p in range(n):
        seat_i[i, p, S_CHARGE] = 0


@njit(cache=True, inline="always")
def tally_round(g, seat_i, hands, i, n, t, shown):
    """Count the settled round into the seats' tallies (``settle._tally_round``):
    ``shown``, the hands were shown (a showdown)."""
    k = g[i, G_KNOCKER]
    for p in range(n):
        if seat_i[i, p, S_HLEN] > 0:
            seat_i[i, p, S_TALLY + T_ROUNDS] += 1
            if shown:
                v2 = int(2 * hand_value(t, hands, i, p))
                seat_i[i, p, S_TALLY + T_SHOWDOWNS] += 1
                seat_i[i, p, S_TALLY + T_SHOWN_VALUE2] += v2
                if p == k:
                    seat_i[i, p, S_TALLY + T_KNOCKS_SHOWN] += 1
                    seat_i[i, p, S_TALLY + T_KNOCK_VALUE2] += v2
    if k >= 0:
        seat_i[i, k, S_TALLY + T_KNOCKS] += 1
        seat_i[i, k, S_TALLY + T_KNOCK_TURNS] += seat_i[i, k, S_TURNS]


@njit(cache=True)
def settle(g, seat_i, hands, R, i, n, t, shown):
    """Count the round (``shown``: at a showdown), apply the lives charged (column
    S_CHARGE), eliminate, and end the round or the game (no allocation: this runs every
    round)."""
    tally_round(g, seat_i, hands, i, n, t, shown)
    floor = 0 if R[R_FREE_RIDE] else 1
    n_players = 0
    n_out = 0
    for p in range(n):
        if seat_i[i, p, S_HLEN] > 0:
            n_players += 1
            if seat_i[i, p, S_LIVES] - seat_i[i, p, S_CHARGE] < floor:
                n_out += 1
    if n_out > 0 and n_out == n_players:
        for p in range(n):
            if seat_i[i, p, S_HLEN] > 0:
                new = max(floor, seat_i[i, p, S_LIVES] - seat_i[i, p, S_CHARGE])
                seat_i[i, p, S_CHARGE] = seat_i[i, p, S_LIVES] - new
                seat_i[i, p, S_LIVES] = new
        n_out = 0
    else:
        for p in range(n):
            if seat_i[i, p, S_HLEN] > 0:
                out = seat_i[i, p, S_LIVES] - seat_i[i, p, S_CHARGE] < floor
                if seat_i[i, p, S_CHARGE]:
                    seat_i[i, p, S_LIVES] = max(0, seat_i[i, p, S_LIVES] - seat_i[i, p, S_CHARGE])
                if out:
                    seat_i[i, p, S_ACTIVE] = 0
    me = g[i, G_SEAT]
    outcome = 0
    if seat_i[i, me, S_HLEN] > 0 and seat_i[i, me, S_ACTIVE] == 0:
        outcome = ELIMINATED
    for p in range(n):
        seat_i[i, p, S_LOSS] += seat_i[i, p, S_CHARGE]
        seat_i[i, p, S_LOST] += seat_i[i, p, S_CHARGE]
    g[i, G_DRAWN] = -1
    g[i, G_TOOK] = -1
    remaining = 0
    last = -1
    best = -1
    for p in range(n):
        if (seat_i[i, p, S_HLEN] > 0) & (seat_i[i, p, S_ACTIVE] != 0):
            remaining += 1
            last = p
            best = max(best, seat_i[i, p, S_LIVES])
    if remaining == 1:
        g[i, G_PHASE] = GAME_OVER
        if last == me:
            outcome |= WON
    elif g[i, G_ROUND] >= R[R_MAX_ROUNDS]:
        g[i, G_PHASE] = GAME_OVER
        if (seat_i[i, me, S_HLEN] > 0) & (seat_i[i, me, S_ACTIVE] != 0) & (seat_i[i, me, S_LIVES] == best):
            outcome |= WON
    else:
        g[i, G_PHASE] = ROUND_OVER
    g[i, G_OUTCOME] = outcome


@njit(cache=True)
def settle_blitz(g, seat_i, hands, R, i, n, t):
    clear_charges(seat_i, i, n)
    for p in range(n):
        if (
            (seat_i[i, p, S_ACTIVE] != 0)
            & (seat_i[i, p, S_HLEN] == 3)
            & (2 * hand_value(t, hands, i, p) != R[R_BLITZ2])
        ):
            seat_i[i, p, S_CHARGE] = 1
    settle(g, seat_i, hands, R, i, n, t, False)


@njit(cache=True)
def settle_showdown(g, seat_i, hands, R, i, n, knocker, t):
    low = 1e9
    for p in range(n):
        if seat_i[i, p, S_HLEN] == 3:
            low = min(low, hand_value(t, hands, i, p))
    clear_charges(seat_i, i, n)
    n_tied = 0
    knocker_tied = False
    for p in range(n):
        if (seat_i[i, p, S_HLEN] == 3) & (hand_value(t, hands, i, p) == low):
            n_tied += 1
            if p == knocker:
                knocker_tied = True
    tie = R[R_TIE]
    for p in range(n):
        if seat_i[i, p, S_HLEN] != 3 or hand_value(t, hands, i, p) != low:
            continue
        if knocker_tied:
            if n_tied == 1 or tie == TIE_KNOCKER_PAYS_PENALTY:
                if p == knocker:
                    seat_i[i, p, S_CHARGE] = R[R_PENALTY]
            elif tie == TIE_KNOCKER_PAYS:
                if p == knocker:
                    seat_i[i, p, S_CHARGE] = 1
            elif tie == TIE_KNOCKER_SAFE:
                if p != knocker:
                    seat_i[i, p, S_CHARGE] = 1
            else:  # all_lose
                seat_i[i, p, S_CHARGE] = 1
        else:
            seat_i[i, p, S_CHARGE] = 1
    settle(g, seat_i, hands, R, i, n, t, True)


@njit(cache=True, inline="always")
def begin_turn(g, seat_i, hands, stock, pile, R, rs, i, n, p, t):
    """Start ``p``'s turn, first applying the turn-limit and empty-stock rules (a
    reshuffle draws its permutation from the game's generator, as the engine does)."""
    if g[i, G_TURN] >= R[R_MAX_TURNS]:
        clear_charges(seat_i, i, n)
        settle(g, seat_i, hands, R, i, n, t, False)
        return
    if g[i, G_KNOCKER] < 0 and g[i, G_SLEN] == 0:
        mode = R[R_EXHAUSTED]
        if mode == EXHAUSTED_SHOWDOWN:
            settle_showdown(g, seat_i, hands, R, i, n, -1, t)
            return
        if mode == EXHAUSTED_RESHUFFLE:
            m = g[i, G_PLEN] - 1
            perm = np.arange(m)
            shuffle(rs, i, perm, m)
            for j in range(m):
                stock[i, j] = pile[i, perm[j]]
            pile[i, 0] = pile[i, m]
            g[i, G_PLEN] = 1
            g[i, G_SLEN] = m
        if g[i, G_SLEN] == 0:
            clear_charges(seat_i, i, n)
            settle(g, seat_i, hands, R, i, n, t, False)
            return
    g[i, G_CUR] = p
    g[i, G_PHASE] = DRAW
    g[i, G_TURN] += 1
    seat_i[i, p, S_TURNS] += 1
    g[i, G_DRAWN] = -1
    g[i, G_TOOK] = -1


@njit(cache=True, inline="always")
def end_turn(g, seat_i, hands, stock, pile, R, rs, i, n, p, t):
    k = g[i, G_KNOCKER]
    if (k >= 0) & (p != k):
        g[i, G_FINAL] -= 1
        if g[i, G_FINAL] == 0:
            settle_showdown(g, seat_i, hands, R, i, n, k, t)
            return
    begin_turn(g, seat_i, hands, stock, pile, R, rs, i, n, next_active(seat_i, i, p, n), t)


@njit(cache=True, inline="always")
def may_take(g, seat_i, R, i, p):
    """``engine.play.may_take``: not one's own discard, but with two players left after
    a knock, or where no other move is left."""
    if g[i, G_TOPSEAT] != p:
        return True
    if g[i, G_KNOCKER] >= 0:
        active = 0
        for q in range(seat_i.shape[1]):
            active += seat_i[i, q, S_ACTIVE]
        if active == 2:
            return True
        return (g[i, G_SLEN] == 0) & (R[R_STAND] == 0)
    return (g[i, G_SLEN] == 0) & (seat_i[i, p, S_TURNS] < R[R_KFT])


@njit(cache=True, inline="always")
def is_legal(g, seat_i, hands, R, i, a):
    """Whether action ``a`` is legal for the seat to act."""
    phase = g[i, G_PHASE]
    p = g[i, G_CUR]
    if phase == DRAW:
        if a == DRAW_STOCK:
            return g[i, G_SLEN] > 0
        if a == TAKE_DISCARD:
            return may_take(g, seat_i, R, i, p)
        if a == KNOCK:
            return (g[i, G_KNOCKER] < 0) & (seat_i[i, p, S_TURNS] >= R[R_KFT])
        if a == STAND:
            return (g[i, G_KNOCKER] >= 0) & (R[R_STAND] != 0)
        return False
    if (phase == DISCARD) & (a >= DISCARD_BASE):
        c = a - DISCARD_BASE
        if (c == g[i, G_TOOK]) & (R[R_RETURN] == 0):
            return False
        for k in range(4):
            if hands[i, p, k] == c:
                return True
    return False


@njit(cache=True, inline="always")
def apply(g, seat_i, hands, stock, pile, known, disc_seat, disc_order, disc_log, R, rs, i, n, a, t):
    """Play legal action ``a`` for the seat to act (see ``engine.apply_action``)."""
    p = g[i, G_CUR]
    if g[i, G_PHASE] == DRAW:
        if (a == DRAW_STOCK) | (a == TAKE_DISCARD):
            if a == DRAW_STOCK:
                g[i, G_SLEN] -= 1
                card = stock[i, g[i, G_SLEN]]
            else:
                g[i, G_PLEN] -= 1
                card = pile[i, g[i, G_PLEN]]
                g[i, G_TOOK] = card
                g[i, G_TOPSEAT] = disc_seat[i, pile[i, g[i, G_PLEN] - 1]] if g[i, G_PLEN] > 0 else -1
                known[i, p] |= np.int64(1) << card
                seat_i[i, p, S_TALLY + T_PICKUPS] += 1
            seat_i[i, p, S_TALLY + T_DRAWS] += 1
            hands[i, p, 3] = card
            seat_i[i, p, S_HLEN] = 4
            g[i, G_DRAWN] = card
            g[i, G_PHASE] = DISCARD
            return
        if a == KNOCK:
            g[i, G_KNOCKER] = p
            active = 0
            for q in range(n):
                active += seat_i[i, q, S_ACTIVE]
            g[i, G_FINAL] = active - 1
            end_turn(g, seat_i, hands, stock, pile, R, rs, i, n, p, t)
            return
        # STAND
        if (R[R_BLITZ_LATE] != 0) & (2 * hand_value(t, hands, i, p) == R[R_BLITZ2]):
            settle_blitz(g, seat_i, hands, R, i, n, t)
            return
        end_turn(g, seat_i, hands, stock, pile, R, rs, i, n, p, t)
        return
    card = a - DISCARD_BASE
    k = 0
    while hands[i, p, k] != card:
        k += 1
    for j in range(k, 3):
        hands[i, p, j] = hands[i, p, j + 1]
    hands[i, p, 3] = -1
    seat_i[i, p, S_HLEN] = 3
    pile[i, g[i, G_PLEN]] = card
    g[i, G_PLEN] += 1
    known[i, p] &= ~(np.int64(1) << card)
    disc_seat[i, card] = p
    g[i, G_TOPSEAT] = p
    disc_order[i, card] = g[i, G_NDISC]
    if g[i, G_NDISC] < disc_log.shape[1]:
        disc_log[i, g[i, G_NDISC]] = p * NUM_CARDS + card
    g[i, G_NDISC] += 1
    seat_i[i, p, S_DISCS] += 1
    if (2 * hand_value(t, hands, i, p) == R[R_BLITZ2]) & ((g[i, G_KNOCKER] < 0) | (R[R_BLITZ_LATE] != 0)):
        settle_blitz(g, seat_i, hands, R, i, n, t)
        return
    end_turn(g, seat_i, hands, stock, pile, R, rs, i, n, p, t)


@njit(cache=True, inline="always")
def greedy_action(g, seat_i, hands, pile, R, i, knock_at2, t):
    """:class:`~thirtyone_env.game.policies.GreedyPolicy` (``knock_at2`` is twice its
    ``knock_at``)."""
    p = g[i, G_CUR]
    if g[i, G_PHASE] == DISCARD:
        best = -1.0
        best_card = 99
        for k in range(4):
            c = hands[i, p, k]
            idx = 0
            for j in range(4):
                if j != k:
                    idx = idx * NUM_CARDS + hands[i, p, j]
            v = t[idx]
            if ((v > best) | ((v == best) & (c < best_card))) & is_legal(
                g, seat_i, hands, R, i, DISCARD_BASE + c
            ):
                best = v
                best_card = c
        return DISCARD_BASE + best_card
    a, b, c = hands[i, p, 0], hands[i, p, 1], hands[i, p, 2]
    now = value(t, a, b, c)
    if is_legal(g, seat_i, hands, R, i, KNOCK) & (2 * now >= knock_at2):
        return KNOCK
    can_draw = g[i, G_SLEN] > 0
    if (g[i, G_PLEN] > 0) & may_take(g, seat_i, R, i, p):
        top = pile[i, g[i, G_PLEN] - 1]
        with_top = max(value(t, b, c, top), value(t, a, c, top), value(t, a, b, top))
        if with_top > now or not can_draw:
            return TAKE_DISCARD
    if can_draw:
        return DRAW_STOCK
    return STAND


@njit(cache=True, inline="always")
def random_action(g, seat_i, hands, R, i, rs):
    """:class:`~thirtyone_env.game.policies.RandomPolicy`: ``legal[rng.integers(len(legal))]``
    over the ascending legal actions, from the game's players' generator (row ``N + i``)."""
    p = g[i, G_CUR]
    if g[i, G_PHASE] == DRAW:
        ok0 = g[i, G_SLEN] > 0
        ok1 = may_take(g, seat_i, R, i, p)
        ok2 = (g[i, G_KNOCKER] < 0) & (seat_i[i, p, S_TURNS] >= R[R_KFT])
        ok3 = (g[i, G_KNOCKER] >= 0) & (R[R_STAND] != 0)
        k = integers(rs, g.shape[0] + i, ok0 + ok1 + ok2 + ok3)
        if ok0:
            if k == 0:
                return DRAW_STOCK
            k -= 1
        if ok1:
            if k == 0:
                return TAKE_DISCARD
            k -= 1
        if ok2 & (k == 0):
            return KNOCK
        return STAND
    took = g[i, G_TOOK] if R[R_RETURN] == 0 else -1
    m = 0
    for j in range(4):
        if hands[i, p, j] != took:
            m += 1
    k = integers(rs, g.shape[0] + i, m)
    for j in range(4):  # the k-th smallest legal card
        c = hands[i, p, j]
        if c == took:
            continue
        below = 0
        for jj in range(4):
            d = hands[i, p, jj]
            if d < c and d != took:
                below += 1
        if below == k:
            return DISCARD_BASE + c
    return -1


@njit(cache=True)
def deal(g, seat_i, hands, stock, pile, known, disc_seat, disc_order, R, rs, t, deck, i, dealer):
    """Deal a round (``engine.start_round``): the deck shuffled by the game's generator,
    ``dealer`` dealing (-1: the next seat still in after the last dealer). The deck is
    shuffled in the stock's row, which then keeps the undealt cards, top last."""
    n = hands.shape[1]
    if dealer < 0:
        dealer = next_active(seat_i, i, g[i, G_DEALER], n)
    size = len(deck)
    row = stock[i]
    for j in range(size):
        row[j] = deck[j]
    shuffle(rs, i, row, size)
    g[i, G_DEALER] = dealer
    g[i, G_OUTCOME] = 0
    g[i, G_ROUND] += 1
    k = 0
    for p in range(n):
        seat_i[i, p, S_HLEN] = 0
        seat_i[i, p, S_TURNS] = 0
        seat_i[i, p, S_LOSS] = 0
        seat_i[i, p, S_DISCS] = 0
        known[i, p] = 0
        for j in range(4):
            hands[i, p, j] = -1
        k += seat_i[i, p, S_ACTIVE]
    first = next_active(seat_i, i, dealer, n)
    p = first
    for j in range(k):
        seat_i[i, p, S_ROUNDS] += 1
        hands[i, p, 0] = row[j]
        hands[i, p, 1] = row[j + k]
        hands[i, p, 2] = row[j + 2 * k]
        seat_i[i, p, S_HLEN] = 3
        p = next_active(seat_i, i, p, n)
    pile[i, 0] = row[3 * k]
    g[i, G_PLEN] = 1
    g[i, G_TOPSEAT] = -1
    lo, hi = 3 * k + 1, size - 1
    while lo < hi:  # the undealt cards, reversed, then moved to the front
        x = row[lo]
        row[lo] = row[hi]
        row[hi] = x
        lo += 1
        hi -= 1
    m = size - 3 * k - 1
    for j in range(m):
        row[j] = row[3 * k + 1 + j]
    g[i, G_SLEN] = m
    g[i, G_KNOCKER] = -1
    g[i, G_FINAL] = 0
    g[i, G_TURN] = 0
    g[i, G_NDISC] = 0
    g[i, G_DRAWN] = -1
    g[i, G_TOOK] = -1
    g[i, G_CUR] = -1
    for c in range(NUM_CARDS):
        disc_seat[i, c] = -1
        disc_order[i, c] = -1
    for p in range(n):
        if (seat_i[i, p, S_HLEN] == 3) & (2 * hand_value(t, hands, i, p) == R[R_BLITZ2]):
            settle_blitz(g, seat_i, hands, R, i, n, t)
            return
    g[i, G_PHASE] = DRAW
    begin_turn(g, seat_i, hands, stock, pile, R, rs, i, n, first, t)


@njit(cache=True)
def play_opponents(
    g, seat_i, hands, stock, pile, known, disc_seat, disc_order, disc_log, R, rs, t, deck, opp_kind, opp_knock2,
    rew, i,
):  # fmt: skip
    """``ThirtyOneEnv._play_others`` for game ``i``: opponents move (new rounds are
    dealt) until the agent must act (status AGENT), a seat the kernels do not play must
    (EXTERNAL) or the episode ends (OVER); settlements add the agent's reward to ``rew[i]``."""
    n = hands.shape[1]
    me = g[i, G_SEAT]
    while True:
        phase = g[i, G_PHASE]
        if phase >= ROUND_OVER:
            outcome = g[i, G_OUTCOME]
            loss = seat_i[i, me, S_LOSS]
            rew[i] += reward_of(
                R[R_REWARD], -float(loss), (outcome & ELIMINATED) != 0, (outcome & WON) != 0, 1.0 / n
            )
            for p in range(n):
                seat_i[i, p, S_LOSS] = 0
            if phase == GAME_OVER or seat_i[i, me, S_ACTIVE] == 0 or R[R_EPISODE] == EPISODE_ROUND:
                g[i, G_STATUS] = OVER
                return
            deal(g, seat_i, hands, stock, pile, known, disc_seat, disc_order, R, rs, t, deck, i, -1)
            continue
        p = g[i, G_CUR]
        if p == me:
            g[i, G_STATUS] = AGENT
            return
        rel = (p - me) % n - 1
        kind = opp_kind[i, rel]
        if kind == OPP_EXTERNAL:
            g[i, G_STATUS] = EXTERNAL
            return
        if kind == OPP_GREEDY:
            a = greedy_action(g, seat_i, hands, pile, R, i, opp_knock2[i, rel], t)
        else:
            a = random_action(g, seat_i, hands, R, i, rs)
        apply(g, seat_i, hands, stock, pile, known, disc_seat, disc_order, disc_log, R, rs, i, n, a, t)


@njit(cache=True)
def start_game(g, seat_i, hands, stock, pile, known, disc_seat, disc_order, R, rs, t, deck, rew, i, seat):
    """A new game for game ``i`` with the agent in ``seat``: full lives, the dealer
    drawn, the first deal; ``G_RESET`` marks it as not yet at the agent's first decision."""
    n = hands.shape[1]
    for p in range(n):
        seat_i[i, p, S_LIVES] = R[R_LIVES]
        seat_i[i, p, S_ACTIVE] = 1
        seat_i[i, p, S_ROUNDS] = 0
        seat_i[i, p, S_LOST] = 0
        for k in range(NUM_TALLY):
            seat_i[i, p, S_TALLY + k] = 0
    g[i, G_ROUND] = 0
    g[i, G_SEAT] = seat
    g[i, G_PHASE] = ROUND_OVER
    g[i, G_RESET] = 1
    dealer = integers(rs, i, n)
    deal(g, seat_i, hands, stock, pile, known, disc_seat, disc_order, R, rs, t, deck, i, dealer)
    rew[i] = 0.0


@njit(cache=True)
def advance(
    g, seat_i, hands, stock, pile, known, disc_seat, disc_order, disc_log, R, rs, t, deck, opp_kind, opp_knock2,
    rew, pending, i,
):  # fmt: skip
    """Play game ``i`` on until it waits on the agent or an external seat, or is over.

    A game still being reset (``G_RESET``, see :func:`new_game`) that ends before the
    agent's first decision starts again (same seat); on reaching that decision, what
    settled on the way becomes the next step's reward in game episodes (as
    ``ThirtyOneEnv.reset`` does)."""
    while True:
        play_opponents(
            g, seat_i, hands, stock, pile, known, disc_seat, disc_order, disc_log, R, rs, t, deck, opp_kind,
            opp_knock2, rew, i,
        )  # fmt: skip
        if g[i, G_RESET] == 0 or g[i, G_STATUS] == EXTERNAL:
            return
        if g[i, G_STATUS] == AGENT:
            g[i, G_RESET] = 0
            pending[i] = rew[i] if R[R_EPISODE] != EPISODE_ROUND else 0.0
            return
        start_game(
            g, seat_i, hands, stock, pile, known, disc_seat, disc_order, R, rs, t, deck, rew, i, g[i, G_SEAT]
        )


@njit(cache=True)
def advance_rows(
    g, seat_i, hands, stock, pile, known, disc_seat, disc_order, disc_log, R, rs, t, deck, opp_kind, opp_knock2,
    rew, pending, rows,
):  # fmt: skip
    """:func:`advance` for each game of ``rows`` (a position loaded into it)."""
    for i in rows:
        advance(
            g, seat_i, hands, stock, pile, known, disc_seat, disc_order, disc_log, R, rs, t, deck, opp_kind,
            opp_knock2, rew, pending, i,
        )  # fmt: skip


@njit(cache=True)
def draw_seats(g, rs, rows, seat, n):
    """The agent's seat in each new game ``rows`` (``seat`` -1: drawn from the game's
    generator, as ``ThirtyOneEnv.reset`` draws it, before anything else), then the
    game's players' generator (row ``N + i``), seeded from the game's as
    ``ThirtyOneEnv.reset`` seeds its opponents'."""
    for i in rows:
        g[i, G_SEAT] = integers(rs, i, n) if seat < 0 else seat
        derive_players(rs, i, g.shape[0] + i)


@njit(cache=True)
def reset_games(
    g, seat_i, hands, stock, pile, known, disc_seat, disc_order, disc_log, R, rs, t, deck, opp_kind, opp_knock2,
    rew, pending, rows,
):  # fmt: skip
    """``ThirtyOneEnv.reset`` for games ``rows`` after :func:`draw_seats`: each game
    started and played on to the agent's first decision or an external seat's."""
    for i in rows:
        start_game(
            g, seat_i, hands, stock, pile, known, disc_seat, disc_order, R, rs, t, deck, rew, i, g[i, G_SEAT]
        )
        pending[i] = 0.0
        advance(
            g, seat_i, hands, stock, pile, known, disc_seat, disc_order, disc_log, R, rs, t, deck, opp_kind,
            opp_knock2, rew, pending, i,
        )  # fmt: skip


@njit(cache=True)
def step_games(
    g, seat_i, hands, stock, pile, known, disc_seat, disc_order, disc_log, R, rs, t, deck, opp_kind, opp_knock2,
    rew, pending, actions, illegal, done,
):  # fmt: skip
    """One agent action per game, the opponents' replies; ``rew`` gets each game's
    reward (for an illegal action, which ends the game, ``illegal`` and the
    ``rewards.forfeit_reward`` of the lives games) and
    ``done`` whether its episode ended (a game waiting on an external seat is not
    done: :func:`play_external` goes on with it). Finished games are not reset here,
    and a game already finished is left as it is (reward 0, still done)."""
    n = hands.shape[1]
    for i in range(g.shape[0]):
        if g[i, G_STATUS] == OVER:  # a finished game waiting for its reset (next-step autoreset)
            rew[i] = 0.0
            illegal[i] = False
            done[i] = True
            continue
        rew[i] = pending[i]
        pending[i] = 0.0
        a = actions[i]
        if a < 0 or a >= NUM_ACTIONS or not is_legal(g, seat_i, hands, R, i, a):
            illegal[i] = True
            cost = float(max(1, R[R_PENALTY]))
            lives = float(seat_i[i, g[i, G_SEAT], S_LIVES])
            rew[i] += forfeit_of(R[R_REWARD], lives, cost, R[R_EPISODE] == EPISODE_ROUND)
            g[i, G_STATUS] = OVER
            done[i] = True
            continue
        illegal[i] = False
        apply(g, seat_i, hands, stock, pile, known, disc_seat, disc_order, disc_log, R, rs, i, n, a, t)
        advance(
            g, seat_i, hands, stock, pile, known, disc_seat, disc_order, disc_log, R, rs, t, deck, opp_kind,
            opp_knock2, rew, pending, i,
        )  # fmt: skip
        done[i] = g[i, G_STATUS] == OVER


@njit(cache=True)
def play_external(
    g, seat_i, hands, stock, pile, known, disc_seat, disc_order, disc_log, R, rs, t, deck, opp_kind, opp_knock2,
    rew, pending, rows, actions,
):  # fmt: skip
    """The external seats' actions (legal: the caller checked them against
    :func:`seat_masks`) in games ``rows``, each game then played on (:func:`advance`)."""
    n = hands.shape[1]
    for k in range(len(rows)):
        i = rows[k]
        apply(
            g, seat_i, hands, stock, pile, known, disc_seat, disc_order, disc_log, R, rs, i, n, actions[k], t
        )
        advance(
            g, seat_i, hands, stock, pile, known, disc_seat, disc_order, disc_log, R, rs, t, deck, opp_kind,
            opp_knock2, rew, pending, i,
        )  # fmt: skip


@njit(cache=True, inline="always")
def legal_row(g, seat_i, hands, R, i, out):
    """The legal actions of the seat to act in game ``i``, into the zeroed ``out``."""
    if g[i, G_PHASE] == DRAW:
        for a in (DRAW_STOCK, TAKE_DISCARD, KNOCK, STAND):
            if is_legal(g, seat_i, hands, R, i, a):
                out[a] = 1
    elif g[i, G_PHASE] == DISCARD:
        p = g[i, G_CUR]
        for k in range(4):
            c = hands[i, p, k]
            if is_legal(g, seat_i, hands, R, i, DISCARD_BASE + c):
                out[DISCARD_BASE + c] = 1


@njit(cache=True)
def masks(g, seat_i, hands, R, out):
    """The agent's legal actions per game (zeros unless it is to act)."""
    out[:] = 0
    for i in range(g.shape[0]):
        if g[i, G_STATUS] == AGENT and g[i, G_PHASE] < ROUND_OVER:
            legal_row(g, seat_i, hands, R, i, out[i])


@njit(cache=True)
def seat_masks(g, seat_i, hands, R, rows, out):
    """The legal actions of the seat to act in games ``rows``, into ``out[k]``."""
    for k in range(len(rows)):
        out[k] = 0
        legal_row(g, seat_i, hands, R, rows[k], out[k])


@njit(cache=True)
def seat_views(
    g, seat_i, hands, stock, pile, known, disc_log, rows,
    seat, phase, hand, hand_len, drawn, took, pile_out, pile_len, known_out, discs, log, ndisc, lives, active,
    dealer, knocker, stock_size, turn, round_no, turns_played,
):  # fmt: skip
    """The views of the seats to act in games ``rows`` into the arrays of a
    :class:`~thirtyone_env.game.view_batch.ViewBatch` (row ``k``): that seat's own hand
    and what is face up or was seen, nothing else."""
    n = hands.shape[1]
    cap = min(log.shape[1], disc_log.shape[1])
    for k in range(len(rows)):
        i = rows[k]
        p = g[i, G_CUR]
        seat[k] = p
        phase[k] = g[i, G_PHASE]
        h = seat_i[i, p, S_HLEN]
        hand_len[k] = h
        for j in range(4):
            hand[k, j] = hands[i, p, j] if j < h else -1
        drawn[k] = g[i, G_DRAWN] if g[i, G_PHASE] == DISCARD else -1
        took[k] = g[i, G_TOOK]
        m = g[i, G_PLEN]
        pile_len[k] = m
        for j in range(m):
            pile_out[k, j] = pile[i, j]
        nd = g[i, G_NDISC]
        ndisc[k] = nd
        for j in range(min(nd, cap)):
            log[k, j] = disc_log[i, j]
        for q in range(n):
            known_out[k, q] = known[i, q]
            discs[k, q] = seat_i[i, q, S_DISCS]
            lives[k, q] = seat_i[i, q, S_LIVES]
            active[k, q] = seat_i[i, q, S_ACTIVE] != 0
        dealer[k] = g[i, G_DEALER]
        knocker[k] = g[i, G_KNOCKER]
        stock_size[k] = g[i, G_SLEN]
        turn[k] = seat_i[i, p, S_TURNS]
        round_no[k] = g[i, G_ROUND]
        turns_played[k] = g[i, G_TURN]


@njit(cache=True, inline="always")
def encode_row(g, seat_i, hands, pile, known, disc_seat, disc_order, R, t, deck, off, scale, i, me, o):
    """The flat observation (``encoding.encode_flat``) of seat ``me`` in game ``i``,
    into ``o``; ``off`` holds the layout offsets in the order of :data:`OFFSETS`."""
    n = hands.shape[1]
    o_hand, o_drawn, o_top, o_dead, o_hist, o_known, o_phase = (
        off[0],
        off[1],
        off[2],
        off[3],
        off[4],
        off[5],
        off[6],
    )
    o_knocker, o_dealer, o_lives, o_active, o_stock, o_turn, o_hv, o_dv, o_opp = (
        off[7], off[8], off[9], off[10], off[11], off[12], off[13], off[14], off[15],
    )  # fmt: skip
    deck_size = len(deck)
    o[:] = 0.0
    phase = g[i, G_PHASE]
    mine = (g[i, G_CUR] == me) & (phase < ROUND_OVER)
    h = seat_i[i, me, S_HLEN]
    for k in range(h):
        o[o_hand + hands[i, me, k]] = 1.0
    if mine and phase == DISCARD:
        o[o_drawn + g[i, G_DRAWN]] = 1.0
    plen = g[i, G_PLEN]
    if plen > 0:
        o[o_top + pile[i, plen - 1]] = 1.0
        for j in range(plen - 1):
            o[o_dead + pile[i, j]] = 1.0
    for p in range(n):
        m = known[i, p]
        if (m != 0) & (p != me):
            row = o_known + ((p - me) % n - 1) * NUM_CARDS
            while m:
                low = m & -m
                c = 0
                while (np.int64(1) << c) != low:
                    c += 1
                o[row + c] = 1.0
                m ^= low
    if mine and phase == DRAW:
        o[o_phase] = 1.0
    elif mine and phase == DISCARD:
        o[o_phase + 1] = 1.0
    if g[i, G_KNOCKER] >= 0:
        o[o_phase + 2] = 1.0
        o[o_knocker + (g[i, G_KNOCKER] - me) % n] = 1.0
    if phase >= ROUND_OVER:
        o[o_phase + 3] = 1.0
    o[o_dealer + (g[i, G_DEALER] - me) % n] = 1.0
    for p in range(n):
        if seat_i[i, p, S_ACTIVE]:
            o[o_active + (p - me) % n] = 1.0
    nd = g[i, G_NDISC]
    if nd > 0:
        for c in range(NUM_CARDS):
            s = disc_seat[i, c]
            if s >= 0:
                age = (nd - 1) - disc_order[i, c]
                o[o_hist + ((s - me) % n) * NUM_CARDS + c] = 1.0 / (1.0 + age)
    for p in range(n):
        o[o_lives + (p - me) % n] = min(1.0, seat_i[i, p, S_LIVES] / R[R_LIVES])
    o[o_stock] = g[i, G_SLEN] / deck_size
    o[o_turn] = min(1.0, seat_i[i, me, S_TURNS] / TURN_SCALE)
    if o_opp >= 0:  # the opt-in opponent_history part (offset -1: not in the layout)
        for p in range(n):
            if p != me:
                f = history_row(seat_i[i, p, S_TALLY : S_TALLY + NUM_TALLY], scale)
                row = o_opp + ((p - me) % n - 1) * len(f)
                for j in range(len(f)):
                    o[row + j] = f[j]
    if h == 4:
        a, b, c, d = hands[i, me, 0], hands[i, me, 1], hands[i, me, 2], hands[i, me, 3]
        k0, k1, k2, k3 = value(t, b, c, d), value(t, a, c, d), value(t, a, b, d), value(t, a, b, c)
        o[o_dv + a] = k0 / scale
        o[o_dv + b] = k1 / scale
        o[o_dv + c] = k2 / scale
        o[o_dv + d] = k3 / scale
        o[o_hv] = max(max(k0, k1), max(k2, k3)) / scale
    elif h == 3:
        a, b, c = hands[i, me, 0], hands[i, me, 1], hands[i, me, 2]
        now = value(t, a, b, c)
        seen = (np.int64(1) << a) | (np.int64(1) << b) | (np.int64(1) << c)
        for j in range(plen):
            seen |= np.int64(1) << pile[i, j]
        for p in range(n):
            if p != me:
                seen |= known[i, p]
        total = 0.0
        better = 0
        count = 0
        for u in deck:
            if (seen >> u) & 1:
                continue
            v = max(value(t, b, c, u), value(t, a, c, u), value(t, a, b, u))
            count += 1
            if v > now:
                total += v
                better += 1
            else:
                total += now
        o[o_hv] = now / scale
        if plen > 0:
            top = pile[i, plen - 1]
            o[o_hv + 1] = max(value(t, b, c, top), value(t, a, c, top), value(t, a, b, top)) / scale
        if count:
            o[o_hv + 2] = total / count / scale
            o[o_hv + 3] = better / count


@njit(cache=True)
def encode(
    g, seat_i, hands, pile, known, disc_seat, disc_order, R, t, deck, off, scale, rows, col, out, compact
):
    """The flat observations of the seat in column ``col`` of ``g`` (``G_SEAT``: the
    agent; ``G_CUR``: the seat to act) in games ``rows``, into ``out[k]`` (``compact``)
    or ``out[rows[k]]``."""
    for k in range(len(rows)):
        i = rows[k]
        o = out[k] if compact else out[i]
        encode_row(
            g, seat_i, hands, pile, known, disc_seat, disc_order, R, t, deck, off, scale, i, g[i, col], o
        )


#: The layout parts :func:`encode` writes, in the order of its ``off`` argument.
OFFSETS = (
    "hand",
    "drawn",
    "top_discard",
    "dead_cards",
    "discard_history",
    "known_cards",
    "phase",
    "knocker",
    "dealer",
    "lives",
    "active",
    "stock_size",
    "turn",
    "hand_values",
    "discard_values",
    "opponent_history",  # opt-in: -1 where the layout has none
)


@njit(cache=True)
def step_encode(
    g, seat_i, hands, stock, pile, known, disc_seat, disc_order, disc_log, R, rs, t, deck, opp_kind, opp_knock2,
    rew, pending, actions, illegal, done, off, scale, obs, mask_out,
):  # fmt: skip
    """:func:`step_games`, then every game's observation and mask, in one call (each
    kernel call costs a few microseconds of argument checks: this matters for one game)."""
    step_games(
        g, seat_i, hands, stock, pile, known, disc_seat, disc_order, disc_log, R, rs, t, deck, opp_kind, opp_knock2,
        rew, pending, actions, illegal, done,
    )  # fmt: skip
    encode(
        g, seat_i, hands, pile, known, disc_seat, disc_order, R, t, deck, off, scale, np.arange(g.shape[0]), G_SEAT,
        obs, False,
    )  # fmt: skip
    masks(g, seat_i, hands, R, mask_out)


@njit(cache=True)
def baked_constants():
    """The imported constants (and a few rewards) as the compiled, maybe cached, kernels
    hold them; its ``py_func`` gives their owners' values now. They differ after an
    owner changed one and the numba cache was not cleared (``tests/test_kernel_mirror.py``
    checks)."""
    return (
        DRAW, DISCARD, ROUND_OVER, GAME_OVER, DRAW_STOCK, TAKE_DISCARD, KNOCK, STAND, DISCARD_BASE,
        NUM_ACTIONS, NUM_CARDS, PAIR_STRIDE, TURN_SCALE, R_BLITZ2, R_KFT, R_RETURN, R_STAND, R_BLITZ_LATE,
        R_MAX_TURNS, R_EXHAUSTED, R_TIE, R_PENALTY, R_FREE_RIDE, R_MAX_ROUNDS, R_LIVES, R_EPISODE,
        R_REWARD, EXHAUSTED_RESHUFFLE, EXHAUSTED_SHOWDOWN, TIE_KNOCKER_PAYS, TIE_KNOCKER_SAFE,
        TIE_KNOCKER_PAYS_PENALTY, EPISODE_ROUND, LIVES, WIN, RATE, NUM_TALLY, T_ROUNDS, T_KNOCKS,
        T_KNOCK_TURNS, T_KNOCKS_SHOWN, T_KNOCK_VALUE2, T_SHOWDOWNS, T_SHOWN_VALUE2, T_DRAWS, T_PICKUPS,
        # and the history row (its scales are baked in)
        history_row((10, 3, 20, 2, 120, 9, 500, 30, 7), 31.0),
        # the reward function is compiled into the kernels too (a change to it leaves
        # them stale the same way)
        reward_of(LIVES, -2.0, False, False, 0.25), reward_of(LIVES, 1.0, True, True, 0.25),
        reward_of(WIN, -2.0, True, False, 0.25), reward_of(WIN, -1.0, False, True, 0.25),
        reward_of(WIN, -1.0, False, False, 0.25), reward_of(WIN, 0.0, True, True, 0.25),
        reward_of(RATE, -2.0, False, False, 0.25), reward_of(RATE, 0.0, True, False, 1.0 / 3.0),
        forfeit_of(LIVES, 3.0, 2.0, False), forfeit_of(RATE, 3.0, 2.0, True),
        forfeit_of(WIN, 3.0, 2.0, False), forfeit_of(LIVES, 7.0, 0.0, False),
    )  # fmt: skip
