"""The game engine: a compact game state and pure-function transitions.

Modelled on OpenSpiel's State: :func:`new_game` deals, :func:`legal_actions` /
:func:`legal_mask` list what the player to act may do, :func:`apply_action` plays it,
:func:`start_round` deals the next round once one is over. All randomness comes from
the ``numpy.random.Generator`` passed in: the deck is shuffled once per round (and the
discard pile again only under ``stock_exhausted="reshuffle"``), so a seed fixes a game
byte for byte.

Seats are 0..n-1 clockwise: the player to the dealer's left is ``dealer + 1``.

The engine knows nothing of Gymnasium; it is the hot path of every simulation, so the
state is plain lists and ints, hand values come from a lookup table, and a draw or a
discard allocates nothing (its history event is prebuilt and shared: events are
immutable).

History: ``state.history`` holds the events of the current round, each an
:class:`~thirtyone_env.game.events.Event` ``(kind, seat, data)``; :mod:`thirtyone_env.game.events`
names every kind and documents its data. The deal event shows every hand (and, in the
table variants, the table and the Switch dealer's other dealt hand): the history is the
engine's full account, not a player's view.

Switch carry-over (``Rules.carry_over``, see :class:`~thirtyone_env.game.rules.Rules`): when
the last round leaves seats to ask (:func:`carry_asked`), :func:`start_round` draws the
round's deck order as always but deals nothing yet: the state is in phase ``CARRY``
with ``current`` the seat asked (the cards of the last round stay where they were, so
each seat still holds its last hand). A seat whose last hand qualifies
(:func:`carry_qualifies`: three cards of one suit worth more than 21) may play
``CARRY_OVER`` or ``DECLINE_CARRY``, any other only ``DECLINE_CARRY``. After a showdown
every hand was shown, so only the qualifying seats are asked; after a void round or a
blitz the hands were not all shown, so every seat is asked in the new round's order of
play, whether or not its hand qualifies: whose turn it is then tells nothing of a
hidden hand. Once a seat accepts, or all decline, the round is dealt from that order
(without the three carried cards on a carry) and its history is the ``"deal"`` event
(the carried hand is table hand 0, ``second_hand`` ``None``) followed by the decisions
in order, then the play: once dealt, a round's history starts with its deal (while
the offer runs, ``history`` is empty and the decisions wait for the deal).

Settlement follows ``Rules.scoring``: lives (the standard game), points to a running
total (no elimination) or chips and a pot (banking); ``state.score`` holds the points
or chips, ``state.pot`` the pot, and every :class:`RoundResult` has ``gains``, the
change of each seat's standing (minus lives lost, points scored, or chips won less the
ante and any blitz payment).

The pieces, one job each, in import order (each imports only those listed before it):

- :mod:`~thirtyone_env.game.state`: :class:`GameState`, :class:`RoundResult`, the
  phases (``DRAW`` .. ``GAME_OVER``, :data:`PHASE_NAMES`), the reasons a round ends
  and the small helpers all the others read;
- :mod:`~thirtyone_env.game.settle`: blitz, showdown and void rounds, lives, points
  and chips scoring, chip standings, the end of the game;
- :mod:`~thirtyone_env.game.turns`: the start of a turn (turn limit, empty stock) and
  its end (the turns left after a knock, a blitz on 31);
- :mod:`~thirtyone_env.game.deal`: :func:`new_game`, :func:`start_round`, the deck
  order, :func:`stacked_deck` / :func:`stacked_table_deck`, the variants' table deal
  and the Switch carry-over offer;
- :mod:`~thirtyone_env.game.play`: :func:`legal_actions`, :func:`legal_mask`,
  :func:`apply_action`;
- :mod:`~thirtyone_env.game.positions` (beside them, on the state only):
  :func:`from_position`, :func:`clone_state`, :func:`card_locations`,
  :func:`hand_values`.

This module is their public face: it re-exports every public name, so
``from thirtyone_env.game.engine import X`` is the one way in for players, envs and
tests. The parts bind each other's functions as module globals (``from ... import
name``), so a decision costs no attribute lookup.
"""

from thirtyone_env.game.actions import IllegalActionError
from thirtyone_env.game.deal import (
    carry_asked,
    carry_candidates,
    carry_qualifies,
    new_game,
    stacked_deck,
    stacked_table_deck,
    start_round,
)
from thirtyone_env.game.play import apply_action, legal_actions, legal_mask
from thirtyone_env.game.positions import card_locations, clone_state, from_position, hand_values
from thirtyone_env.game.state import (
    BLITZ,
    CARRY,
    CHOOSE,
    CONTINUE,
    DISCARD,
    DRAW,
    GAME_OVER,
    KNOCKED,
    PHASE_NAMES,
    ROUND_OVER,
    STOCK_SHOWDOWN,
    VOID,
    GameState,
    RoundResult,
)

__all__ = [
    "BLITZ",
    "CARRY",
    "CHOOSE",
    "CONTINUE",
    "DISCARD",
    "DRAW",
    "GAME_OVER",
    "KNOCKED",
    "PHASE_NAMES",
    "ROUND_OVER",
    "STOCK_SHOWDOWN",
    "VOID",
    "GameState",
    "IllegalActionError",
    "RoundResult",
    "apply_action",
    "card_locations",
    "carry_asked",
    "carry_candidates",
    "carry_qualifies",
    "clone_state",
    "from_position",
    "hand_values",
    "legal_actions",
    "legal_mask",
    "new_game",
    "stacked_deck",
    "stacked_table_deck",
    "start_round",
]
