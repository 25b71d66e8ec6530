"""A sensible heuristic for the variants' table moves, shared by the built-in players.

:func:`table_move` picks, from what a :class:`~thirtyone_env.game.views.PlayerView` shows,
the table move that leaves the best hand: every face-up card is valued exactly; a
face-down card (banking's widow, Switch's face-down hand) at the mean over the cards
the player cannot see. Moves that take two or more face-down cards are used only when
nothing else is legal. It knocks when the hand is worth ``knock_at`` or more (under
Brag ranking: when the hand beats ``brag_knock_share`` of all hands). It returns
``None`` where the caller's own play applies (the stock game; banking when drawing
beats the widow).

The Switch carry-over offer (:func:`carry_decision`): carry the hand over only when
it may (``CARRY_OVER`` legal: the hand qualifies) and this seat plays first in the new
round. It then takes the carried hand back at once
with a whole-hand swap if nothing better turns up, so the hand over 21 stays its own;
any later seat would lay it face up for the players before it to take.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import numpy as np

from thirtyone_env.game.actions import (
    BUS_ALL,
    BUS_ONE_BASE,
    CARRY_OVER,
    DECLINE_CARRY,
    KEEP_BASE,
    KNOCK,
    RENEW_BASE,
    STAND,
    TAKE_DISCARD,
    WIDOW_BASE,
    decode,
)
from thirtyone_env.game.cards import NUM_CARDS, PAIR_STRIDE, hand_table
from thirtyone_env.game.rules import Rules
from thirtyone_env.game.views import PlayerView


@cache
def brag_share_key(rules: Rules, share: float) -> int:
    """The Brag key that beats ``share`` of all 3-card hands of the deck."""
    values = hand_table(rules)
    cards = rules.deck_cards
    keys = sorted(
        values[a * PAIR_STRIDE + b * NUM_CARDS + c]
        for i, a in enumerate(cards)
        for j, b in enumerate(cards[i + 1 :], i + 1)
        for c in cards[j + 1 :]
    )
    return keys[min(len(keys) - 1, int(share * len(keys)))]


@cache
def _moves(action: int) -> tuple[tuple[int, int, int], ...]:
    """(hand slot, table hand, table slot) pairs an exchange action makes."""
    return decode(action).pairs


def estimate(
    v: PlayerView, action: int, values: tuple, unseen: list[int] | Callable[[], list[int]]
) -> tuple[float, int]:
    """Estimated value of the hand after an exchange, and how many face-down cards it
    takes; ``unseen`` (or a function giving it, asked only for a face-down card) the
    cards a face-down one may be."""
    hand = list(v.hand)
    hidden = []
    for i, t, j in _moves(action):
        card = v.table[t][j]
        if card is None:
            hidden.append(i)
        else:
            hand[i] = card
    if not hidden:
        return values[hand[0] * PAIR_STRIDE + hand[1] * NUM_CARDS + hand[2]], 0
    if callable(unseen):
        unseen = unseen()
    if len(hidden) > 1 or not unseen:
        return -1.0, len(hidden)
    i = hidden[0]
    total = 0.0
    for u in unseen:
        hand[i] = u
        total += values[hand[0] * PAIR_STRIDE + hand[1] * NUM_CARDS + hand[2]]
    return total / len(unseen), 1


def knock_worthy(v: PlayerView, value: float, knock_at: float, brag_knock_share: float) -> bool:
    if v.rules.hand_ranking == "brag":
        return value >= brag_share_key(v.rules, brag_knock_share)
    return value >= knock_at


def first_to_play(v: PlayerView) -> bool:
    """Whether ``v.seat`` plays first in its round: the first seat still in after the
    dealer."""
    n = v.num_players
    first = next(p for p in ((v.dealer + k) % n for k in range(1, n + 1)) if v.active[p])
    return first == v.seat


def carry_decision(v: PlayerView, mask: np.ndarray) -> int:
    """The Switch carry-over offer: ``CARRY_OVER`` iff it is legal in ``mask`` (after a
    void round or a blitz every seat is asked, one whose hand does not qualify may only
    decline) and this seat plays first in the new round (see the module doc), else
    ``DECLINE_CARRY``."""
    return CARRY_OVER if mask[CARRY_OVER] and first_to_play(v) else DECLINE_CARRY


def table_move(
    v: PlayerView, mask: np.ndarray, knock_at: float = 25, brag_knock_share: float = 0.8
) -> int | None:
    """The move for a variant's table phase, or ``None`` to play the stock game's way."""
    kind = v.rules.table
    if kind == "stock":
        return None
    if v.phase == "carry":
        return carry_decision(v, mask)
    values = hand_table(v.rules)
    if v.phase == "choose":
        a, b = (values[h[0] * PAIR_STRIDE + h[1] * NUM_CARDS + h[2]] for h in v.choice)
        return KEEP_BASE + (1 if b > a else 0)
    legal = np.flatnonzero(mask).tolist()
    hand = v.hand
    if len(hand) != 3:
        return None  # banking's discard after a draw: the caller's
    now = values[hand[0] * PAIR_STRIDE + hand[1] * NUM_CARDS + hand[2]]
    if v.phase == "continue" and KNOCK in legal and knock_worthy(v, now, knock_at, brag_knock_share):
        return KNOCK
    if mask[KNOCK] and v.phase == "draw" and knock_worthy(v, now, knock_at, brag_knock_share):
        return KNOCK
    found: list[list[int]] = []

    def unseen() -> list[int]:  # the cards a face-down one may be, found once if asked
        if not found:
            found.append(v.unseen())
        return found[0]

    scored = []
    for a in legal:
        if WIDOW_BASE <= a <= BUS_ALL and not RENEW_BASE <= a < BUS_ONE_BASE:
            value, hidden = estimate(v, a, values, unseen)
            scored.append((hidden > 1, -value, a))
    scored.sort()
    best = scored[0] if scored else None
    if kind == "widow":
        if best is None or best[0] or -best[1] <= now:
            return None  # drawing (the caller's play) is at least as good
        top = v.top_discard
        if top >= 0 and mask[TAKE_DISCARD]:
            with_top = max(
                values[x * PAIR_STRIDE + y * NUM_CARDS + top]
                for x, y in ((hand[0], hand[1]), (hand[0], hand[2]), (hand[1], hand[2]))
            )
            if with_top >= -best[1]:
                return None
        return best[2]
    if best is not None and not best[0] and -best[1] > now:
        return best[2]
    if STAND in legal:
        return STAND
    renew = [a for a in legal if RENEW_BASE <= a < RENEW_BASE + 4 and (a - RENEW_BASE) % 2 == 1]
    if renew:
        # look at the table hand with the most face-down cards
        return max(renew, key=lambda a: (sum(c is None for c in v.table[(a - RENEW_BASE) // 2]), -a))
    if best is not None:
        return best[2]
    return legal[0]
