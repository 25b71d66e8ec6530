"""Card moves of the variants that exchange cards with the table (banking's widow,
Switch's table hands, Stop the Bus's three cards): which are legal, and what they do
to a :class:`~thirtyone_env.engine.GameState`.

The engine owns the flow of turns; this module only moves cards and keeps the public
record straight: ``state.table`` holds the table hands (lists of three cards, by slot),
``state.table_up`` the face-up flags per slot, ``state.known`` the cards publicly known
in each player's hand, ``state.muck`` the cards put out of play (``state.muck_up``: the
public ones, as a bitmask). A card given to the table always lies face up; a card taken
from a face-down slot becomes known to its taker alone.
"""

from __future__ import annotations

from typing import Any

from thirtyone_env.actions import (
    BUS_ALL,
    BUS_ONE_BASE,
    KEEP_BASE,
    KNOCK,
    RENEW_BASE,
    STAND,
    SWAP_HAND_BASE,
    SWAP_ONE_BASE,
    WIDOW_BASE,
    WIDOW_MOVES,
)

#: Turn-start actions of each table layout (without KNOCK / STAND, added by rule).
_SWAPS = tuple(range(SWAP_ONE_BASE, SWAP_HAND_BASE)) + (SWAP_HAND_BASE, SWAP_HAND_BASE + 1)
_BUS = tuple(range(BUS_ONE_BASE, BUS_ALL + 1))
_WIDOW = tuple(range(WIDOW_BASE, WIDOW_BASE + len(WIDOW_MOVES)))


def widow_actions() -> tuple[int, ...]:
    return _WIDOW


def turn_actions(s: Any) -> list[int]:
    """Table moves that may start a turn (banking adds these to drawing)."""
    kind = s.rules.table
    if kind == "widow":
        return list(_WIDOW)
    if kind == "bus":
        return list(_BUS)
    acts = list(_SWAPS)
    if len(s.stock) >= 3:
        acts.extend(range(RENEW_BASE, RENEW_BASE + 4))
    return acts


def continue_actions(s: Any) -> list[int]:
    """Actions after a move that lets the turn go on: Switch after a face-up renewal
    (swap, or STAND to end the turn); Stop the Bus after an exchange (KNOCK to stop the
    bus when the turn allows it, STAND to play on)."""
    if s.rules.table == "bus":
        return [KNOCK, STAND] if s.player_turns[s.current] >= s.rules.knock_from_turn else [STAND]
    return [*_SWAPS, STAND]


def choose_actions() -> list[int]:
    """Switch: the dealer keeps dealt hand 0 or 1."""
    return [KEEP_BASE, KEEP_BASE + 1]


def _take(s: Any, seat: int, t: int, j: int, give: int) -> int:
    """Put ``give`` (from ``seat``'s hand) face up into table slot (t, j); return the
    card that was there, recording whether its taker's card is public."""
    card = s.table[t][j]
    public = s.table_up[t][j]
    s.table[t][j] = give
    s.table_up[t][j] = True
    known = s.known[seat] & ~(1 << give)
    if public:
        known |= 1 << card
    s.known[seat] = known
    return card


def apply_table_move(s: Any, seat: int, action: int) -> str:
    """Play a table move for ``seat``. Returns ``"end"`` (the turn is over),
    ``"continue"`` (the same player acts again) or ``""`` (not a table move here)."""
    hand = s.hands[seat]
    kind = s.rules.table
    if kind == "widow" and WIDOW_BASE <= action < WIDOW_BASE + len(WIDOW_MOVES):
        given, taken = WIDOW_MOVES[action - WIDOW_BASE]
        for i, j in zip(given, taken, strict=True):
            hand[i] = _take(s, seat, 0, j, hand[i])
        s.history.append(("widow", seat, (given, taken)))
        return "end"
    if kind == "bus":
        if BUS_ONE_BASE <= action < BUS_ALL:
            i, j = divmod(action - BUS_ONE_BASE, 3)
            hand[i] = _take(s, seat, 0, j, hand[i])
            s.history.append(("bus", seat, ((i,), (j,))))
            return "continue" if s.knocker < 0 else "end"
        if action == BUS_ALL:
            for i in range(3):
                hand[i] = _take(s, seat, 0, i, hand[i])
            s.history.append(("bus", seat, ((0, 1, 2), (0, 1, 2))))
            return "continue" if s.knocker < 0 else "end"
        return ""
    if kind == "switch":
        if SWAP_ONE_BASE <= action < SWAP_HAND_BASE:
            i, rest = divmod(action - SWAP_ONE_BASE, 6)
            t, j = divmod(rest, 3)
            hand[i] = _take(s, seat, t, j, hand[i])
            s.history.append(("swap", seat, (i, t, j)))
            return "end"
        if SWAP_HAND_BASE <= action < RENEW_BASE:
            t = action - SWAP_HAND_BASE
            for i in range(3):
                hand[i] = _take(s, seat, t, i, hand[i])
            s.history.append(("swap_hand", seat, t))
            return "end"
        if RENEW_BASE <= action < KEEP_BASE and len(s.stock) >= 3:
            t, up = divmod(action - RENEW_BASE, 2)
            for j in range(3):
                old = s.table[t][j]
                s.muck.append(old)
                if s.table_up[t][j]:
                    s.muck_up |= 1 << old
                s.table[t][j] = s.stock.pop()
                s.table_up[t][j] = bool(up)
            s.history.append(("renew", seat, (t, "up" if up else "down", tuple(s.table[t]))))
            return "continue" if up else "end"
    return ""


def keep_hand(s: Any, dealer: int, action: int) -> bool:
    """Switch: the dealer keeps dealt hand ``action - KEEP_BASE``; the other lies face
    up as table hand 0. Returns ``False`` if ``action`` is not a keep."""
    if not KEEP_BASE <= action < KEEP_BASE + 2:
        return False
    k = action - KEEP_BASE
    hands = s.dealt_pair
    s.hands[dealer] = hands[k]
    s.table[0] = hands[1 - k]
    s.table_up[0] = [True, True, True]
    s.dealt_pair = None
    s.history.append(("keep", dealer, k))
    return True
