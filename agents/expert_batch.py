"""The expert's and blitz31's decisions for a whole :class:`~thirtyone_env.game.view_batch.ViewBatch`,
compiled with numba.

:meth:`agents.expert.ExpertPlayer.act_batch` and :meth:`agents.blitz31.Blitz31Player.act_batch`
call these kernels: one call decides every row of the batch (the seat to act in each of
many stock games), with no Python work per row. Each kernel is the player's ``act``
written over the batch's arrays, step for step, so it plays the same move for every
row: the same table lookups (the caller hands over its ``act``'s own tables as arrays),
float sums taken in the same order (over the unseen cards in deck order, as
``PlayerView.unseen`` lists them), the same divisions, and the same tie-breaks (strict
``>`` keeping the first card in sorted order, ``min`` over ``(value, action)`` tuples,
tuple keys compared field by field). ``tests/test_batched_players.py`` holds them to
``act`` decision for decision.

A row whose mask has no legal action gets ``-1`` (the caller refuses the batch).

Numba reads the constants imported here (action ids, card count, lookup stride) as
compile-time constants and its cache checks only this file: after changing one of them
in its owner, clear the cache (``agents/__pycache__/expert_batch.*``).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
from numba import njit

from thirtyone_env.game.actions import DISCARD_BASE, DRAW_STOCK, KNOCK, STAND, TAKE_DISCARD, num_actions
from thirtyone_env.game.cards import CARD_VALUES, NUM_CARDS, PAIR_STRIDE, hand_table
from thirtyone_env.game.rules import Rules
from thirtyone_env.game.view_batch import ViewBatch

#: Card points by card id, for the kernels (``cards.CARD_VALUES``).
CARD_POINTS = np.asarray(CARD_VALUES, dtype=np.int64)

# expert float parameters (slots of ``fparams``)
F_KNOCK_RISK, F_LAST_LIFE_CARE, F_FEED_WEIGHT = range(3)
NUM_F = 3
# expert int parameters (slots of ``iparams``): rules switches and the knocker's floor bin
I_FREE_RIDE, I_PENALTY, I_TIE_SAFE, I_TIE_PAYS, I_RETURN, I_BLITZ_LATE, I_MAY_KNOCK, I_FLOOR_BIN = range(8)
NUM_I = 8


def deck_mask(cards: tuple[int, ...]) -> int:
    """The bitmask of a deck's card ids (the kernels list unseen cards from it)."""
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


@cache
def hand_array(rules: Rules) -> np.ndarray:
    """:func:`~thirtyone_env.game.cards.hand_table` of ``rules`` as a read-only float64
    array (every entry is an int or 30.5: exact)."""
    values = np.asarray(hand_table(rules), dtype=np.float64)
    values.flags.writeable = False
    return values


def batch_masks(owner: str, observations: Any, masks: Any) -> np.ndarray:
    """The masks of a batched call as a C-ordered int8 array, after checking that
    ``observations`` is a stock-game :class:`ViewBatch` and that ``masks`` has one row
    of ``num_actions(rules)`` entries per view; ``ValueError`` naming ``owner`` else."""
    if not isinstance(observations, ViewBatch):
        raise ValueError(
            f"{owner}.act_batch: observations must be a ViewBatch, got {type(observations).__name__}"
        )
    rules = observations.rules
    if rules.table != "stock":
        raise ValueError(f"{owner}.act_batch: the stock game only (table {rules.table!r}); use act")
    m = np.asarray(masks)
    want = (len(observations), num_actions(rules))
    if m.shape != want:
        raise ValueError(
            f"{owner}.act_batch: masks of shape {m.shape} do not fit {want[0]} views "
            f"of {want[1]} actions (expected shape {want})"
        )
    if m.dtype == np.bool_:
        m = m.view(np.int8)
    elif m.dtype != np.int8:
        if not np.issubdtype(m.dtype, np.integer):
            raise ValueError(f"{owner}.act_batch: masks must be int8 (or bool, int), got dtype {m.dtype}")
        m = (m != 0).view(np.int8)
    return np.ascontiguousarray(m)


def checked_actions(owner: str, actions: np.ndarray) -> np.ndarray:
    """``actions``, unless a kernel marked a row whose mask allows nothing (-1):
    ``ValueError`` naming ``owner`` and the row."""
    bad = np.flatnonzero(actions < 0)
    if bad.size:
        raise ValueError(f"{owner}.act_batch: row {int(bad[0])} of masks allows no action")
    return actions


# ---------------------------------------------------------------------- shared helpers
@njit(cache=True)
def _low_card(m: int) -> int:
    """Index of the lowest set bit of ``m`` (``m != 0``): the lowest card of a mask."""
    c = 0
    shift = 32
    while shift:  # halve the window each time: 32, 16, 8, 4, 2, 1 bits
        if (m & ((1 << shift) - 1)) == 0:
            m >>= shift
            c += shift
        shift >>= 1
    return c


@njit(cache=True)
def _no_legal(masks: np.ndarray, k: int) -> bool:
    """Whether row ``k`` of ``masks`` allows nothing."""
    for a in range(masks.shape[1]):  # noqa: SIM110 (a loop numba compiles, no generator)
        if masks[k, a]:
            return False
    return True


@njit(cache=True)
def _top(pile: np.ndarray, pile_len: np.ndarray, k: int) -> int:
    """The top of row ``k``'s discard pile, -1 if it is empty."""
    n = pile_len[k]
    return pile[k, n - 1] if n > 0 else -1


@njit(cache=True)
def _unseen(k, hand, hand_len, pile, pile_len, known, deck_bits):
    """Row ``k``'s unseen cards as a bitmask (``PlayerView.unseen``: the deck less the
    hand, the pile and every seat's known cards)."""
    seen = np.int64(0)
    one = np.int64(1)
    for i in range(hand_len[k]):
        seen |= one << hand[k, i]
    for i in range(pile_len[k]):
        seen |= one << pile[k, i]
    for p in range(known.shape[1]):
        seen |= known[k, p]
    return deck_bits & ~seen


@njit(cache=True)
def _sorted4(hand, k, out):
    """Row ``k``'s four cards into ``out``, ascending (``sorted(hand)``)."""
    for i in range(4):
        c = hand[k, i]
        j = i
        while j > 0 and out[j - 1] > c:
            out[j] = out[j - 1]
            j -= 1
        out[j] = c


@njit(cache=True)
def _kept(hand, k, card):
    """The lookup index of row ``k``'s hand without ``card``, in hand order."""
    idx = 0
    scale = PAIR_STRIDE
    for i in range(4):
        h = hand[k, i]
        if h != card:
            idx += h * scale
            scale //= NUM_CARDS
    return idx


# ---------------------------------------------------------------------- the expert
@njit(cache=True)
def _floor_bin(m, vbin):
    """``expert._floor_bin``: the lowest value bin of a hand holding the cards of mask
    ``m`` (the first three, ascending, when three or more are known)."""
    a = -1
    b = -1
    n = 0
    sums = np.zeros(4, dtype=np.int64)  # card points per suit
    while m != 0:
        c = _low_card(m)
        m &= m - 1
        if n == 0:
            a = c
        elif n == 1:
            b = c
        else:
            return vbin[a * PAIR_STRIDE + b * NUM_CARDS + c]
        n += 1
        sums[c // 13] += CARD_POINTS[c]
    return 2 * sums.max()


@njit(cache=True)
def _opponent(ge, final, cond):
    """``expert._Tables.opponent``: the ``ge`` row index pair for ``final`` turns given
    no knock after ``cond`` turns, clamped to the table."""
    sim_turns = ge.shape[0] - 1
    if final > sim_turns:
        cond -= final - sim_turns
        final = sim_turns
    cond = max(-1, min(cond, final))
    return final, cond + 1


@njit(cache=True)
def _p_ge(ge, f, j, floor, b):
    """``expert._p_ge`` on the row ``ge[f, j]``."""
    if b <= floor:
        return 1.0
    if b >= ge.shape[2]:
        return 0.0
    denom = ge[f, j, floor]
    return ge[f, j, b] / denom if denom > 0 else 0.0


@njit(cache=True)
def _truncate_into(ge, f, j, floor, out):
    """``expert._truncated`` of the row ``ge[f, j]`` at bin ``floor``, into ``out``."""
    nb = ge.shape[2]
    if floor <= 0:
        for i in range(nb):
            out[i] = ge[f, j, i]
        return
    denom = ge[f, j, floor]
    for i in range(floor + 1):
        out[i] = 1.0
    for i in range(floor + 1, nb):
        out[i] = ge[f, j, i] / denom if denom > 0 else 0.0


@njit(cache=True)
def _feed_penalty(card, nxt, seat, known_row, feed_weight):
    """``ExpertPlayer._feed_penalty``: potential lost by handing ``card`` to ``nxt``."""
    if nxt < 0 or nxt == seat:
        return 0.0
    suit = card // 13
    held = (known_row[nxt] >> (13 * suit)) & 0x1FFF
    if held == 0:
        return 0.0
    rest = held & (held - 1)
    if rest != 0 and (rest & (rest - 1)) == 0:  # exactly two cards of the suit
        h0 = suit * 13 + _low_card(held)
        h1 = suit * 13 + _low_card(rest)
        if CARD_POINTS[h0] + CARD_POINTS[h1] + CARD_POINTS[card] == 31:
            return 5.0
    return feed_weight * CARD_POINTS[card]


@njit(cache=True)
def _should_knock(k, after, na, hand, known, turns, lives, seat, vbin, ge, fparams, iparams):
    """``ExpertPlayer._should_knock`` for row ``k``."""
    a = hand[k, 0]
    b = hand[k, 1]
    c = hand[k, 2]
    mine = vbin[a * PAIR_STRIDE + b * NUM_CARDS + c]
    gt = 1.0
    g_e = 1.0
    others = 0
    for i in range(na):
        o = after[i]
        others += 1
        f, j = _opponent(ge, turns[k, o] + 1, turns[k, o] - 1)
        floor = _floor_bin(known[k, o], vbin)
        g_e *= _p_ge(ge, f, j, floor, mine)
        gt *= _p_ge(ge, f, j, floor, mine + 1)
    spare = lives[k, seat] - (0 if iparams[I_FREE_RIDE] else 1) + 1
    penalty = min(iparams[I_PENALTY], spare)
    tie = 0.0 if iparams[I_TIE_SAFE] else 1.0
    loss = penalty * gt + tie * (g_e - gt)
    threshold = fparams[F_KNOCK_RISK] / (others + 1)
    if spare <= 1:
        threshold *= fparams[F_LAST_LIFE_CARE]
    return loss < threshold


@njit(cache=True, inline="always")
def _pairs(hand, k):
    """The lookup offsets of row ``k``'s three cards a, b, c taken two at a time: a
    triple's index is ``ab + c``, ``ac + x * NUM_CARDS`` or ``x * PAIR_STRIDE + bc``
    with a fourth card ``x`` in the missing place (and ``c`` itself)."""
    a, b, c = hand[k, 0], hand[k, 1], hand[k, 2]
    return a * PAIR_STRIDE + b * NUM_CARDS, a * PAIR_STRIDE + c, b * NUM_CARDS + c, c


@njit(cache=True)
def _draw(k, hand, top, masks, unseen, pot, allow_return):
    """``ExpertPlayer._draw`` for row ``k`` (``unseen``: its unseen-card mask)."""
    ab, ac, bc, c = _pairs(hand, k)
    now = pot[ab + c]
    take = -1.0
    if top >= 0 and masks[k, TAKE_DISCARD]:
        take = max(pot[top * PAIR_STRIDE + bc], pot[ac + top * NUM_CARDS], pot[ab + top])
        if allow_return:
            take = max(take, now)
    if not masks[k, DRAW_STOCK]:
        return TAKE_DISCARD if masks[k, TAKE_DISCARD] else STAND
    if take < 0 or unseen == 0:
        return DRAW_STOCK
    total = 0.0
    count = 0
    m = unseen
    while m != 0:
        u = _low_card(m)
        m &= m - 1
        total += max(max(now, pot[u * PAIR_STRIDE + bc]), max(pot[ac + u * NUM_CARDS], pot[ab + u]))
        count += 1
    return TAKE_DISCARD if take > total / count else DRAW_STOCK


@njit(cache=True)
def _discard(k, hand, masks, seat, nxt, known, pot, feed_weight, cards):
    """``ExpertPlayer._discard`` for row ``k`` (``cards``: scratch of 4)."""
    _sorted4(hand, k, cards)
    best = -1e9
    best_action = -1
    for i in range(4):
        card = cards[i]
        action = DISCARD_BASE + card
        if not masks[k, action]:
            continue
        score = pot[_kept(hand, k, card)] - _feed_penalty(card, nxt, seat, known[k], feed_weight)
        if score > best:
            best = score
            best_action = action
    return best_action


@njit(cache=True)
def _lose_table(k, after, na, knocker, known, turns, vbin, ge, iparams, lose, scratch):
    """``ExpertPlayer._lose_table`` for row ``k``, into ``lose``."""
    nb = lose.shape[0]
    for i in range(nb):
        lose[i] = 1.0
    to_play = True
    for i in range(na):
        o = after[i]
        if o == knocker:
            to_play = False
            f, j = _opponent(ge, turns[k, o], -1)
            floor = max(_floor_bin(known[k, o], vbin), iparams[I_FLOOR_BIN])
            floor = min(floor, 62)
            _truncate_into(ge, f, j, floor, scratch)
            if iparams[I_TIE_PAYS]:
                for x in range(nb - 1):
                    scratch[x] = scratch[x + 1]
                scratch[nb - 1] = 0.0
        else:
            if to_play:
                f, j = _opponent(ge, turns[k, o] + 1, turns[k, o] - 1)
            else:
                f, j = _opponent(ge, turns[k, o], turns[k, o] - 2)
            _truncate_into(ge, f, j, _floor_bin(known[k, o], vbin), scratch)
        for x in range(nb):
            lose[x] = lose[x] * scratch[x]
    if iparams[I_BLITZ_LATE]:
        lose[62] = 0.0


@njit(cache=True)
def _last_draw(k, hand, top, masks, unseen, lose, vbin, allow_return):
    """``ExpertPlayer._last_draw`` for row ``k``: ``min`` over (chance, action)."""
    ab, ac, bc, c = _pairs(hand, k)
    now = lose[vbin[ab + c]]
    best = 0.0
    best_action = -1
    if masks[k, DRAW_STOCK]:  # options come in increasing action order: strict < is min()
        val = now
        if unseen != 0:
            total = 0.0
            count = 0
            m = unseen
            while m != 0:
                u = _low_card(m)
                m &= m - 1
                total += min(
                    min(now, lose[vbin[u * PAIR_STRIDE + bc]]),
                    min(lose[vbin[ac + u * NUM_CARDS]], lose[vbin[ab + u]]),
                )
                count += 1
            val = total / count
        best = val
        best_action = DRAW_STOCK
    if top >= 0 and masks[k, TAKE_DISCARD]:
        take = min(
            min(lose[vbin[top * PAIR_STRIDE + bc]], lose[vbin[ac + top * NUM_CARDS]]), lose[vbin[ab + top]]
        )
        if allow_return:
            take = min(take, now)
        if best_action < 0 or take < best:
            best = take
            best_action = TAKE_DISCARD
    if masks[k, STAND]:
        val = now + 1e-9
        if best_action < 0 or val < best:
            best = val
            best_action = STAND
    if best_action < 0:
        for x in range(masks.shape[1]):
            if masks[k, x]:
                return x
    return best_action


@njit(cache=True, inline="always")
def _beats(k0, k1, k2, b0, b1, b2):
    """Whether key ``(k0, k1, k2)`` is larger than ``(b0, b1, b2)``, field by field
    (Python's tuple comparison, which the players' ``max`` over keys uses)."""
    if k0 != b0:
        return k0 > b0
    if k1 != b1:
        return k1 > b1
    return k2 > b2


@njit(cache=True, inline="always")
def _best_keyed(k, masks, cards, keys):
    """The legal discard among the sorted ``cards`` whose row of ``keys`` is largest,
    field by field (the players' ``max`` over key tuples: the first card in sorted
    order on ties); -1 if none is legal."""
    best = -1
    for i in range(4):
        if not masks[k, DISCARD_BASE + cards[i]]:
            continue
        if best < 0 or _beats(
            keys[i, 0], keys[i, 1], keys[i, 2], keys[best, 0], keys[best, 1], keys[best, 2]
        ):
            best = i
    return -1 if best < 0 else DISCARD_BASE + cards[best]


@njit(cache=True)
def _last_discard(k, hand, masks, seat, nxt, known, lose, vbin, value, feed_weight, cards):
    """``ExpertPlayer._last_discard`` for row ``k``: the largest key
    ``(-chance of losing, -feeding penalty, value)``, compared field by field."""
    _sorted4(hand, k, cards)
    keys = np.empty((4, 3))
    for i in range(4):
        idx = _kept(hand, k, cards[i])
        keys[i, 0] = -lose[vbin[idx]]
        keys[i, 1] = -_feed_penalty(cards[i], nxt, seat, known[k], feed_weight)
        keys[i, 2] = value[idx]
    return _best_keyed(k, masks, cards, keys)


@njit(cache=True)
def expert_kernel(
    seat,
    hand,
    hand_len,
    pile,
    pile_len,
    known,
    turns,
    lives,
    active,
    knocker,
    masks,
    deck_bits,
    pot,
    vbin,
    value,
    ge,
    fparams,
    iparams,
    out,
):
    """``ExpertPlayer.act`` for every row (the stock game): ``out[k]`` the move of row
    ``k``, -1 where its mask allows nothing. ``turns`` is the batch's ``discard_counts``
    (``ExpertPlayer._turns``)."""
    n = known.shape[1]
    after = np.empty(n, dtype=np.int64)
    lose = np.empty(ge.shape[2], dtype=np.float64)
    scratch = np.empty(ge.shape[2], dtype=np.float64)
    cards = np.empty(4, dtype=np.int64)
    feed_weight = fparams[F_FEED_WEIGHT]
    allow_return = iparams[I_RETURN] != 0
    for k in range(seat.shape[0]):
        if _no_legal(masks, k):
            out[k] = -1
            continue
        s = seat[k]
        na = 0
        for d in range(1, n):  # PlayerView.players_after
            p = (s + d) % n
            if active[k, p]:
                after[na] = p
                na += 1
        kn = knocker[k]
        if hand_len[k] == 4:
            if kn >= 0:
                nxt = after[0] if na > 0 and after[0] != kn else -1
                _lose_table(k, after, na, kn, known, turns, vbin, ge, iparams, lose, scratch)
                out[k] = _last_discard(k, hand, masks, s, nxt, known, lose, vbin, value, feed_weight, cards)
            else:
                nxt = after[0] if na > 0 else -1
                out[k] = _discard(k, hand, masks, s, nxt, known, pot, feed_weight, cards)
            continue
        top = _top(pile, pile_len, k)
        if kn >= 0:
            unseen = np.int64(0)
            if masks[k, DRAW_STOCK]:
                unseen = _unseen(k, hand, hand_len, pile, pile_len, known, deck_bits)
            _lose_table(k, after, na, kn, known, turns, vbin, ge, iparams, lose, scratch)
            out[k] = _last_draw(k, hand, top, masks, unseen, lose, vbin, allow_return)
            continue
        if (
            masks[k, KNOCK]
            and iparams[I_MAY_KNOCK]
            and _should_knock(k, after, na, hand, known, turns, lives, s, vbin, ge, fparams, iparams)
        ):
            out[k] = KNOCK
            continue
        unseen = _unseen(k, hand, hand_len, pile, pile_len, known, deck_bits)
        out[k] = _draw(k, hand, top, masks, unseen, pot, allow_return)


# ---------------------------------------------------------------------- blitz31
@njit(cache=True)
def _master_suit(hand, k, count):
    """``blitz31.master_suit`` of row ``k``'s first ``count`` cards (ties: higher suit)."""
    sums = np.zeros(4, dtype=np.int64)
    for i in range(count):
        sums[hand[k, i] // 13] += CARD_POINTS[hand[k, i]]
    best = 0
    for suit in range(1, 4):
        if sums[suit] >= sums[best]:
            best = suit
    return best


@njit(cache=True)
def _blitz31_discard(k, hand, masks, values, cards):
    """``Blitz31Player._discard`` for row ``k``: the largest key (value kept, not a
    master-suit card, minus the card's points), first in sorted order on ties."""
    master = _master_suit(hand, k, 4)
    _sorted4(hand, k, cards)
    keys = np.empty((4, 3))
    for i in range(4):
        c = cards[i]
        keys[i, 0] = values[_kept(hand, k, c)]
        keys[i, 1] = 1.0 if c // 13 != master else 0.0
        keys[i, 2] = -float(CARD_POINTS[c])
    return _best_keyed(k, masks, cards, keys)


@njit(cache=True)
def blitz31_kernel(hand, hand_len, pile, pile_len, stock_size, masks, values, thresholds, out):
    """``Blitz31Player.act`` for every row (the stock game): ``out[k]`` the move of row
    ``k``, -1 where its mask allows nothing. ``thresholds``: early knock, late knock,
    the stock size from which the early one applies."""
    cards = np.empty(4, dtype=np.int64)
    early = thresholds[0]
    late = thresholds[1]
    late_stock = thresholds[2]
    for k in range(hand.shape[0]):
        if _no_legal(masks, k):
            out[k] = -1
            continue
        if hand_len[k] == 4:
            out[k] = _blitz31_discard(k, hand, masks, values, cards)
            continue
        threshold = early if stock_size[k] >= late_stock else late
        a = hand[k, 0]
        b = hand[k, 1]
        c = hand[k, 2]
        now = values[a * PAIR_STRIDE + b * NUM_CARDS + c]
        if masks[k, KNOCK] and now > threshold:
            out[k] = KNOCK
            continue
        top = _top(pile, pile_len, k)
        if top >= 0 and masks[k, TAKE_DISCARD]:
            with_top = max(
                max(
                    values[b * PAIR_STRIDE + c * NUM_CARDS + top],
                    values[a * PAIR_STRIDE + c * NUM_CARDS + top],
                ),
                values[a * PAIR_STRIDE + b * NUM_CARDS + top],
            )
            if (top // 13 == _master_suit(hand, k, 3) and with_top > now) or not masks[k, DRAW_STOCK]:
                out[k] = TAKE_DISCARD
                continue
        if masks[k, DRAW_STOCK]:
            out[k] = DRAW_STOCK
        else:
            out[k] = STAND if masks[k, STAND] else TAKE_DISCARD
