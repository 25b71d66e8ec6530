"""Flat action ids of the standard game: the one place they are defined.

| id      | name           | when                                                        |
|---------|----------------|-------------------------------------------------------------|
| 0       | ``DRAW_STOCK`` | start of a turn: take the top card of the stock              |
| 1       | ``TAKE_DISCARD``| start of a turn: take the top card of the discard pile      |
| 2       | ``KNOCK``      | start of a turn, no knock yet: knock instead of drawing      |
| 3       | ``STAND``      | last turn after a knock: keep the hand                       |
| 4 + c   | discard card c | after drawing: discard the card with id ``c`` (0..51)        |

Discards name a card, not a hand slot, so an action means the same thing whatever
order the hand is held in. ``NUM_ACTIONS`` is 56.
"""

from __future__ import annotations

from thirtyone_env.cards import NUM_CARDS, format_card, parse_card

DRAW_STOCK = 0
TAKE_DISCARD = 1
KNOCK = 2
STAND = 3
DISCARD_BASE = 4
NUM_ACTIONS = DISCARD_BASE + NUM_CARDS

_NAMES = {DRAW_STOCK: "draw_stock", TAKE_DISCARD: "take_discard", KNOCK: "knock", STAND: "stand"}


def discard_action(card: int) -> int:
    """The action id that discards ``card``."""
    return DISCARD_BASE + card


def action_card(action: int) -> int:
    """The card a discard action names (``-1`` for the other actions)."""
    return action - DISCARD_BASE if action >= DISCARD_BASE else -1


def action_name(action: int) -> str:
    """Readable name: ``"knock"``, ``"discard Qh"``."""
    if action in _NAMES:
        return _NAMES[action]
    if DISCARD_BASE <= action < NUM_ACTIONS:
        return "discard " + format_card(action - DISCARD_BASE)
    return f"<unknown action {action!r}>"


def parse_action(text: str) -> int:
    """Inverse of :func:`action_name`: ``"knock"`` or ``"discard Qh"`` to an id."""
    t = text.strip().lower()
    for action, name in _NAMES.items():
        if t == name:
            return action
    if t.startswith("discard "):
        return DISCARD_BASE + parse_card(t.split(None, 1)[1])
    raise ValueError(f"unknown action {text!r}; actions are {list(_NAMES.values())} or 'discard <card>'")
