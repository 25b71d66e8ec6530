"""Turn bookkeeping: where a turn starts and ends, shared by the deal (which starts
the first turn) and the play (which ends each turn).

:func:`_begin_turn` applies the turn limit and the empty-stock rule (void round,
showdown or reshuffle) before handing the turn to a seat; :func:`_end_turn` counts
the turns left after a knock and settles the showdown; :func:`_turn_done` and
:func:`_blitz_turn` end a turn that changed the hand. Imports
:mod:`~thirtyone_env.game.state` and :mod:`~thirtyone_env.game.settle`.
"""

from __future__ import annotations

import numpy as np

from thirtyone_env.game import events as ev
from thirtyone_env.game.cards import NUM_CARDS, PAIR_STRIDE
from thirtyone_env.game.events import Event
from thirtyone_env.game.settle import _settle, _settle_blitz, _settle_showdown
from thirtyone_env.game.state import (
    DRAW,
    KNOCKED,
    STOCK_SHOWDOWN,
    VOID,
    GameState,
    _new,
    _next_active,
)


def _begin_turn(s: GameState, seat: int, rng: np.random.Generator | None) -> None:
    """Start ``seat``'s turn, first applying the empty-stock and turn-limit rules."""
    if s.turn >= s._max_turns:
        _settle(s, VOID, "max_turns", [0] * s.num_players, s.knocker if s.knocker >= 0 else None, ())
        return
    if s.knocker < 0 and not s.stock and s._draws:
        mode = s.rules.stock_exhausted
        if mode == "showdown":
            _settle_showdown(s, STOCK_SHOWDOWN, -1)
            return
        if mode == "reshuffle":
            if rng is None:
                raise ValueError("this transition reshuffles the discard pile: pass rng")
            top = s.discard.pop()
            pile = s.discard
            s.stock = [pile[i] for i in rng.permutation(len(pile)).tolist()]
            s.discard = [top]
            s.history.append(_new(Event, (ev.RESHUFFLE, -1, len(s.stock))))
        if not s.stock:
            _settle(s, VOID, "stock_exhausted", [0] * s.num_players, None, ())
            return
    s.current = seat
    s.phase = DRAW
    s.turn += 1
    s.player_turns[seat] += 1
    s.drawn = -1
    s.took = -1


def _end_turn(s: GameState, seat: int, rng: np.random.Generator | None) -> None:
    if s.knocker >= 0 and seat != s.knocker:
        s.final_left -= 1
        if s.final_left == 0:
            _settle_showdown(s, KNOCKED, s.knocker)
            return
    _begin_turn(s, _next_active(s, seat), rng)


def _turn_done(s: GameState, seat: int, rng: np.random.Generator | None) -> None:
    """A turn that changed the hand is over: blitz on 31, else the next turn."""
    hand = s.hands[seat]
    if s._values[hand[0] * PAIR_STRIDE + hand[1] * NUM_CARDS + hand[2]] == s._blitz and (
        s.knocker < 0 or s._blitz_late
    ):
        _blitz_turn(s, seat)
        return
    _end_turn(s, seat, rng)


def _blitz_turn(s: GameState, seat: int) -> None:
    s.history.append(_new(Event, (ev.BLITZ, seat, "turn")))
    _settle_blitz(s, (seat,), "turn")
