"""The events of a round's history: one typed record and a named constant per kind.

``state.history`` (see :mod:`thirtyone_env.game.engine`) is a list of :class:`Event`. An
``Event`` is a ``NamedTuple``, so it still compares equal to, and unpacks like, the plain
``(kind, seat, data)`` tuple; readers match ``event.kind`` against the constants below,
never against string literals, so a kind is spelled in one place.

| kind              | seat   | data                                                  |
|-------------------|--------|-------------------------------------------------------|
| :data:`DEAL`      | dealer | ``(hands, upcard, lives)``; the table variants add     |
|                   |        | ``table, second_hand`` (``upcard`` -1 where none)      |
| :data:`DRAW_STOCK`| player | card drawn                                            |
| :data:`TAKE_DISCARD`| player | card taken                                          |
| :data:`DISCARD`   | player | card discarded                                        |
| :data:`KNOCK`     | player | hand value at the knock                               |
| :data:`STAND`     | player | hand value                                            |
| :data:`END_TURN`  | player | ``None``: ``STAND`` after a face-up renewal or a bus  |
|                   |        | exchange                                              |
| :data:`BLITZ`     | player | ``"dealt"`` or ``"turn"``: where the 31 came from      |
| :data:`RESHUFFLE` | -1     | number of cards in the new stock                      |
| :data:`SETTLE`    | -1     | the :class:`~thirtyone_env.game.engine.RoundResult`        |
| :data:`CARRY_OVER`| player | the hand it laid face up (Switch carry-over)          |
| :data:`DECLINE_CARRY`| player | ``None``: it declined the carry-over offer         |
| :data:`WIDOW`     | player | ``(hand slots, widow slots)``                         |
| :data:`SWAP`      | player | ``(hand slot, table hand, table slot)``               |
| :data:`SWAP_HAND` | player | the table hand swapped whole                          |
| :data:`RENEW`     | player | ``(table hand, "up" or "down", new cards)``           |
| :data:`KEEP`      | dealer | the dealt hand the Switch dealer keeps (0 or 1)       |
| :data:`BUS`       | player | ``(hand slots, table slots)``                         |

The values are the strings records and reports have always shown, so a history compares
equal to one written before this module existed.
"""

from __future__ import annotations

from typing import Any, NamedTuple

DEAL = "deal"
DRAW_STOCK = "draw_stock"
TAKE_DISCARD = "take_discard"
DISCARD = "discard"
KNOCK = "knock"
STAND = "stand"
END_TURN = "end_turn"
BLITZ = "blitz"
RESHUFFLE = "reshuffle"
SETTLE = "settle"
CARRY_OVER = "carry_over"
DECLINE_CARRY = "decline_carry"
WIDOW = "widow"
SWAP = "swap"
SWAP_HAND = "swap_hand"
RENEW = "renew"
KEEP = "keep"
BUS = "bus"

#: Every kind the engine emits.
KINDS = frozenset(
    (
        DEAL,
        DRAW_STOCK,
        TAKE_DISCARD,
        DISCARD,
        KNOCK,
        STAND,
        END_TURN,
        BLITZ,
        RESHUFFLE,
        SETTLE,
        CARRY_OVER,
        DECLINE_CARRY,
        WIDOW,
        SWAP,
        SWAP_HAND,
        RENEW,
        KEEP,
        BUS,
    )
)
#: The table variants' card moves with the table (see :mod:`thirtyone_env.game.table_moves`).
TABLE_MOVES = (WIDOW, SWAP, SWAP_HAND, RENEW, BUS)


class Event(NamedTuple):
    """One entry of ``state.history``: what happened (``kind``, one of :data:`KINDS`),
    who did it (``seat``, -1 for the table), and its ``data`` (see the module table)."""

    kind: str
    seat: int
    data: Any
