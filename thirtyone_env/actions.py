"""Flat action ids: the one place they are defined.

The standard game (``table="stock"``) uses ids 0..55:

| id      | name           | when                                                        |
|---------|----------------|-------------------------------------------------------------|
| 0       | ``DRAW_STOCK`` | start of a turn: take the top card of the stock              |
| 1       | ``TAKE_DISCARD``| start of a turn: take the top card of the discard pile      |
| 2       | ``KNOCK``      | start of a turn, no knock yet: knock instead of drawing      |
| 3       | ``STAND``      | last turn after a knock: keep the hand                       |
| 4 + c   | discard card c | after drawing: discard the card with id ``c`` (0..51)        |

Discards name a card, not a hand slot, so an action means the same thing whatever
order the hand is held in. ``NUM_ACTIONS`` is 56.

Variants whose turns exchange cards with the table (``Rules.table`` ``"widow"``,
``"switch"``, ``"bus"``) use ids 56..112 as well (``NUM_ACTIONS_ALL`` = 113, see
:func:`num_actions`). They name **slots**: a hand keeps its three slots 0..2 (a card
exchanged in takes the slot of the card it replaces; the observation shows which card
is in which slot), and a table hand has slots 0..2 likewise.

| ids      | name                      | preset         | meaning                          |
|----------|---------------------------|----------------|----------------------------------|
| 56..74   | ``widow H>W``             | banking        | give hand slots H, take widow    |
|          |                           |                | slots W (same count, 1..3; paired|
|          |                           |                | in slot order); see WIDOW_MOVES  |
| 75..92   | ``swap i t j``            | switch         | hand slot i <-> slot j of table  |
|          |                           |                | hand t (75 + 6*i + 3*t + j)      |
| 93, 94   | ``swap hand t``           | switch         | the whole hand <-> table hand t  |
| 95..98   | ``renew t down|up``       | switch         | table hand t from the stock,     |
|          |                           |                | face down (turn ends) or face up |
|          |                           |                | (turn goes on): 95 + 2*t + up    |
| 99, 100  | ``keep k``                | switch         | the dealer keeps dealt hand k    |
| 101..109 | ``bus i j``               | stop_the_bus   | hand slot i <-> table slot j     |
|          |                           |                | (101 + 3*i + j)                  |
| 110      | ``bus all``               | stop_the_bus   | the hand <-> the three table cards|
| 111      | ``carry over``            | switch         | carry-over offered: lay last     |
|          |                           |                | round's one-suit hand (over 21)  |
|          |                           |                | face up as the new table hand 0  |
| 112      | ``decline carry``         | switch         | carry-over offered: decline (the |
|          |                           |                | next candidate is asked, or the  |
|          |                           |                | usual deal follows)              |

``KNOCK`` and ``STAND`` keep their ids. In Switch after a face-up renewal, and in Stop
the Bus after an exchange, ``STAND`` ends the turn (in Stop the Bus: without stopping
the bus) and ``KNOCK`` (bus only) stops the bus. ``CARRY_OVER`` and ``DECLINE_CARRY``
are the only legal actions of the carry-over offer (``Rules.carry_over``), which comes
before the deal of a Switch round.
"""

from __future__ import annotations

from itertools import combinations
from typing import TYPE_CHECKING

from thirtyone_env.cards import NUM_CARDS, format_card, parse_card

if TYPE_CHECKING:
    from thirtyone_env.rules import Rules

DRAW_STOCK = 0
TAKE_DISCARD = 1
KNOCK = 2
STAND = 3
DISCARD_BASE = 4
NUM_ACTIONS = DISCARD_BASE + NUM_CARDS

#: Banking: (hand slots given, widow slots taken), paired in slot order.
WIDOW_MOVES: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...] = tuple(
    (h, w) for k in (1, 2, 3) for h in combinations(range(3), k) for w in combinations(range(3), k)
)
WIDOW_BASE = NUM_ACTIONS  # 56
SWAP_ONE_BASE = WIDOW_BASE + len(WIDOW_MOVES)  # 75
SWAP_HAND_BASE = SWAP_ONE_BASE + 18  # 93
RENEW_BASE = SWAP_HAND_BASE + 2  # 95
KEEP_BASE = RENEW_BASE + 4  # 99
BUS_ONE_BASE = KEEP_BASE + 2  # 101
BUS_ALL = BUS_ONE_BASE + 9  # 110
CARRY_OVER = BUS_ALL + 1  # 111
DECLINE_CARRY = CARRY_OVER + 1  # 112
NUM_ACTIONS_ALL = DECLINE_CARRY + 1  # 113


def num_actions(rules: Rules) -> int:
    """Size of the action space under ``rules``: 56 for the stock game, else 113."""
    return NUM_ACTIONS if rules.table == "stock" else NUM_ACTIONS_ALL


def swap_one_action(slot: int, table_hand: int, table_slot: int) -> int:
    return SWAP_ONE_BASE + 6 * slot + 3 * table_hand + table_slot


def bus_one_action(slot: int, table_slot: int) -> int:
    return BUS_ONE_BASE + 3 * slot + table_slot


def widow_action(hand_slots: tuple[int, ...], widow_slots: tuple[int, ...]) -> int:
    return WIDOW_BASE + WIDOW_MOVES.index((tuple(hand_slots), tuple(widow_slots)))


_NAMES = {DRAW_STOCK: "draw_stock", TAKE_DISCARD: "take_discard", KNOCK: "knock", STAND: "stand"}
_CARRY_NAMES = {CARRY_OVER: "carry over", DECLINE_CARRY: "decline carry"}


def discard_action(card: int) -> int:
    """The action id that discards ``card``."""
    return DISCARD_BASE + card


def action_card(action: int) -> int:
    """The card a discard action names (``-1`` for the other actions)."""
    return action - DISCARD_BASE if action >= DISCARD_BASE else -1


def action_name(action: int) -> str:
    """Readable name: ``"knock"``, ``"discard Qh"``, ``"swap 0 1 2"``."""
    if action in _NAMES:
        return _NAMES[action]
    if DISCARD_BASE <= action < NUM_ACTIONS:
        return "discard " + format_card(action - DISCARD_BASE)
    if WIDOW_BASE <= action < SWAP_ONE_BASE:
        h, w = WIDOW_MOVES[action - WIDOW_BASE]
        return f"widow {''.join(map(str, h))}>{''.join(map(str, w))}"
    if SWAP_ONE_BASE <= action < SWAP_HAND_BASE:
        i, rest = divmod(action - SWAP_ONE_BASE, 6)
        return f"swap {i} {rest // 3} {rest % 3}"
    if SWAP_HAND_BASE <= action < RENEW_BASE:
        return f"swap hand {action - SWAP_HAND_BASE}"
    if RENEW_BASE <= action < KEEP_BASE:
        t, up = divmod(action - RENEW_BASE, 2)
        return f"renew {t} {'up' if up else 'down'}"
    if KEEP_BASE <= action < BUS_ONE_BASE:
        return f"keep {action - KEEP_BASE}"
    if BUS_ONE_BASE <= action < BUS_ALL:
        i, j = divmod(action - BUS_ONE_BASE, 3)
        return f"bus {i} {j}"
    if action == BUS_ALL:
        return "bus all"
    if action in _CARRY_NAMES:
        return _CARRY_NAMES[action]
    return f"<unknown action {action!r}>"


def parse_action(text: str) -> int:
    """Inverse of :func:`action_name`: ``"knock"`` or ``"discard Qh"`` to an id."""
    t = text.strip().lower()
    for action, name in _NAMES.items():
        if t == name:
            return action
    if t.startswith("discard "):
        return DISCARD_BASE + parse_card(t.split(None, 1)[1])
    for action in range(WIDOW_BASE, NUM_ACTIONS_ALL):
        if t == action_name(action):
            return action
    raise ValueError(
        f"unknown action {text!r}; actions are {list(_NAMES.values())}, 'discard <card>' or a "
        "table move ('widow 01>12', 'swap 0 1 2', 'swap hand 1', 'renew 0 up', 'keep 1', 'bus 0 2', 'bus all', "
        "'carry over', 'decline carry')"
    )


def check_action_id(action: object, n_actions: int) -> int:
    """``action`` as an int id in ``0..n_actions-1``: the one action contract of every
    env (single, vector, PettingZoo).

    A Python or numpy integer, or a size-1 integer array, is accepted; anything else
    (a bool, a float even when whole such as ``2.0``, a string, an array of another
    size, an id out of range) raises :class:`~thirtyone_env.engine.IllegalActionError`,
    never a silent cast.
    """
    import numpy as np

    a = action
    if isinstance(a, np.ndarray) and a.size == 1:
        a = a.reshape(()).item()
    if isinstance(a, np.integer):
        a = int(a)
    if isinstance(a, bool) or not isinstance(a, int) or not 0 <= a < n_actions:
        from thirtyone_env.engine import IllegalActionError  # (the engine imports this module)

        raise IllegalActionError(f"action {action!r} is outside the action space Discrete({n_actions})")
    return int(a)
