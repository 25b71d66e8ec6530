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

from collections.abc import Iterable
from itertools import combinations
from typing import TYPE_CHECKING, Any, NamedTuple

from thirtyone_env.game import events as ev
from thirtyone_env.game.cards import NUM_CARDS, format_card, parse_card

if TYPE_CHECKING:
    from thirtyone_env.game.rules import Rules


class IllegalActionError(ValueError):
    """An action that is not legal in the current state, or no action at all (the
    engine and every env raise it; also importable from :mod:`thirtyone_env.game.engine`)."""


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


class Move(NamedTuple):
    """What an action id does, decoded once (:func:`decode`; :func:`encode` is the
    inverse). ``kind`` is the :mod:`~thirtyone_env.game.events` kind the move records
    (``STAND`` also ends a continued turn, recorded as ``END_TURN``)."""

    kind: str
    #: the card discarded (``DISCARD``), else -1
    card: int = -1
    #: (hand slot, table hand, table slot) exchanged, in slot order (widow, swap, bus)
    pairs: tuple[tuple[int, int, int], ...] = ()
    #: the table hand swapped whole or renewed, or the dealt hand kept (``KEEP``); else -1
    hand: int = -1
    #: a renewal face up (the turn goes on)
    up: bool = False


def _decode(action: int) -> Move:
    """The move of one id (see the module table); ``ValueError`` for an unknown id."""
    if action in _SIMPLE:
        return Move(_SIMPLE[action])
    if DISCARD_BASE <= action < NUM_ACTIONS:
        return Move(ev.DISCARD, card=action - DISCARD_BASE)
    if WIDOW_BASE <= action < SWAP_ONE_BASE:
        h, w = WIDOW_MOVES[action - WIDOW_BASE]
        return Move(ev.WIDOW, pairs=tuple((i, 0, j) for i, j in zip(h, w, strict=True)))
    if SWAP_ONE_BASE <= action < SWAP_HAND_BASE:
        i, rest = divmod(action - SWAP_ONE_BASE, 6)
        return Move(ev.SWAP, pairs=((i, rest // 3, rest % 3),))
    if SWAP_HAND_BASE <= action < RENEW_BASE:
        t = action - SWAP_HAND_BASE
        return Move(ev.SWAP_HAND, pairs=tuple((i, t, i) for i in range(3)), hand=t)
    if RENEW_BASE <= action < KEEP_BASE:
        t, up = divmod(action - RENEW_BASE, 2)
        return Move(ev.RENEW, hand=t, up=bool(up))
    if KEEP_BASE <= action < BUS_ONE_BASE:
        return Move(ev.KEEP, hand=action - KEEP_BASE)
    if BUS_ONE_BASE <= action < BUS_ALL:
        i, j = divmod(action - BUS_ONE_BASE, 3)
        return Move(ev.BUS, pairs=((i, 0, j),))
    if action == BUS_ALL:
        return Move(ev.BUS, pairs=tuple((i, 0, i) for i in range(3)))
    raise ValueError(f"unknown action id {action!r}")


_SIMPLE = {
    DRAW_STOCK: ev.DRAW_STOCK,
    TAKE_DISCARD: ev.TAKE_DISCARD,
    KNOCK: ev.KNOCK,
    STAND: ev.STAND,
    CARRY_OVER: ev.CARRY_OVER,
    DECLINE_CARRY: ev.DECLINE_CARRY,
}
_SIMPLE_IDS = {kind: action for action, kind in _SIMPLE.items()}
_MOVES = tuple(_decode(a) for a in range(NUM_ACTIONS_ALL))
_IDS = {m: a for a, m in enumerate(_MOVES)}


def decode(action: int) -> Move:
    """The :class:`Move` of action id ``action`` (``ValueError`` for an unknown id): the
    one decoder of ids, used by the names, the table moves, the players and the records."""
    if isinstance(action, int) and not isinstance(action, bool) and 0 <= action < NUM_ACTIONS_ALL:
        return _MOVES[action]
    raise ValueError(f"unknown action id {action!r}")


def encode(move: Move) -> int:
    """The action id of ``move``: the inverse of :func:`decode` (``ValueError`` for a
    move no id makes)."""
    action = _IDS.get(move)
    if action is None:
        raise ValueError(f"no action id makes {move!r}")
    return action


def event_move(kind: str, data: Any) -> Move | None:
    """The move behind a history event (``None`` for events that are not moves, such as
    the deal): :func:`encode` of it is the action id the player chose."""
    if kind in _PLAIN_MOVES:
        return Move(kind)
    if kind == ev.END_TURN:
        return Move(ev.STAND)
    if kind == ev.DISCARD:
        return Move(kind, card=data)
    if kind in (ev.WIDOW, ev.BUS):
        given, taken = data
        return Move(kind, pairs=tuple((i, 0, j) for i, j in zip(given, taken, strict=True)))
    if kind == ev.SWAP:
        return Move(kind, pairs=(tuple(data),))
    if kind == ev.SWAP_HAND:
        return Move(kind, pairs=tuple((i, data, i) for i in range(3)), hand=data)
    if kind == ev.RENEW:
        return Move(kind, hand=data[0], up=data[1] == "up")
    if kind == ev.KEEP:
        return Move(kind, hand=data)
    return None


_PLAIN_MOVES = frozenset(
    (ev.DRAW_STOCK, ev.TAKE_DISCARD, ev.KNOCK, ev.STAND, ev.CARRY_OVER, ev.DECLINE_CARRY)
)


_NAMES = {DRAW_STOCK: "draw_stock", TAKE_DISCARD: "take_discard", KNOCK: "knock", STAND: "stand"}
_CARRY_NAMES = {CARRY_OVER: "carry over", DECLINE_CARRY: "decline carry"}


def discard_action(card: int) -> int:
    """The action id that discards ``card``."""
    return DISCARD_BASE + card


def action_card(action: int) -> int:
    """The card a discard action names (``-1`` for the other actions)."""
    return action - DISCARD_BASE if action >= DISCARD_BASE else -1


def _slots(numbers: Iterable[int]) -> str:
    return "".join(map(str, numbers))


def action_name(action: int) -> str:
    """Readable name: ``"knock"``, ``"discard Qh"``, ``"swap 0 1 2"``."""
    if action in _NAMES:
        return _NAMES[action]
    if action in _CARRY_NAMES:
        return _CARRY_NAMES[action]
    try:
        m = decode(action)
    except ValueError:
        return f"<unknown action {action!r}>"
    kind = m.kind
    if kind == ev.DISCARD:
        return "discard " + format_card(m.card)
    if kind == ev.WIDOW:
        return f"widow {_slots(i for i, _, _ in m.pairs)}>{_slots(j for _, _, j in m.pairs)}"
    if kind == ev.SWAP:
        return "swap {} {} {}".format(*m.pairs[0])
    if kind == ev.SWAP_HAND:
        return f"swap hand {m.hand}"
    if kind == ev.RENEW:
        return f"renew {m.hand} {'up' if m.up else 'down'}"
    if kind == ev.KEEP:
        return f"keep {m.hand}"
    if len(m.pairs) == 3:
        return "bus all"
    return f"bus {m.pairs[0][0]} {m.pairs[0][2]}"


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
    size, an id out of range) raises :class:`IllegalActionError`,
    never a silent cast.
    """
    import numpy as np

    a = action
    if isinstance(a, np.ndarray) and a.size == 1:
        a = a.reshape(()).item()
    if isinstance(a, np.integer):
        a = int(a)
    if isinstance(a, bool) or not isinstance(a, int):
        kind = (
            f"an array of {action.dtype} and shape {action.shape}"
            if isinstance(action, np.ndarray)
            else f"a {type(action).__name__}"
        )
        raise IllegalActionError(
            f"action {action!r} is {kind}, not an integer id: actions are ints 0..{n_actions - 1} "
            f"(Discrete({n_actions}))"
        )
    if not 0 <= a < n_actions:
        raise IllegalActionError(f"action {action!r} is outside the action space Discrete({n_actions})")
    return int(a)
