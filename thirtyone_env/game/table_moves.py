"""Card moves of the variants that exchange cards with the table (banking's widow,
Switch's table hands, Stop the Bus's three cards): which are legal, and what they do
to a :class:`~thirtyone_env.game.engine.GameState`.

The engine owns the flow of turns; this module only moves cards and keeps the public
record straight: ``state.table`` holds the table hands (lists of three cards, by slot),
``state.table_up`` the face-up flags per slot, ``state.known`` the cards publicly known
in each player's hand, ``state.muck`` the cards put out of play (``state.muck_up``: the
public ones, as a bitmask). A card given to the table always lies face up; a card taken
from a face-down slot becomes known to its taker alone.
"""

from __future__ import annotations

from typing import Any

from thirtyone_env.game import events as ev
from thirtyone_env.game.actions import (
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
    decode,
)
from thirtyone_env.game.events import Event

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


def _exchange(s: Any, seat: int, pairs: tuple[tuple[int, int, int], ...]) -> None:
    """Exchange ``seat``'s hand slots with table slots: (hand slot, table hand, slot)."""
    hand = s.hands[seat]
    for i, t, j in pairs:
        hand[i] = _take(s, seat, t, j, hand[i])


def _renew(s: Any, t: int, up: bool) -> None:
    """Switch: table hand ``t`` goes to the muck and three stock cards replace it."""
    for j in range(3):
        old = s.table[t][j]
        s.muck.append(old)
        if s.table_up[t][j]:
            s.muck_up |= 1 << old
        s.table[t][j] = s.stock.pop()
        s.table_up[t][j] = up


def apply_table_move(s: Any, seat: int, action: int) -> str:
    """Play a table move for ``seat``. Returns ``"end"`` (the turn is over),
    ``"continue"`` (the same player acts again) or ``""`` (not a table move here)."""
    kind = s.rules.table
    if not WIDOW_BASE <= action <= BUS_ALL:
        return ""
    m = decode(action)
    move = m.kind
    if kind == "widow" and move == ev.WIDOW:
        _exchange(s, seat, m.pairs)
        given = tuple(i for i, _, _ in m.pairs)
        s.history.append(Event(ev.WIDOW, seat, (given, tuple(j for _, _, j in m.pairs))))
        return "end"
    if kind == "bus" and move == ev.BUS:
        _exchange(s, seat, m.pairs)
        given = tuple(i for i, _, _ in m.pairs)
        s.history.append(Event(ev.BUS, seat, (given, tuple(j for _, _, j in m.pairs))))
        return "continue" if s.knocker < 0 else "end"
    if kind != "switch":
        return ""
    if move == ev.SWAP:
        _exchange(s, seat, m.pairs)
        s.history.append(Event(ev.SWAP, seat, m.pairs[0]))
        return "end"
    if move == ev.SWAP_HAND:
        _exchange(s, seat, m.pairs)
        s.history.append(Event(ev.SWAP_HAND, seat, m.hand))
        return "end"
    if move == ev.RENEW and len(s.stock) >= 3:
        _renew(s, m.hand, m.up)
        s.history.append(Event(ev.RENEW, seat, (m.hand, "up" if m.up else "down", tuple(s.table[m.hand]))))
        return "continue" if m.up else "end"
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
    s.history.append(Event(ev.KEEP, dealer, k))
    return True
