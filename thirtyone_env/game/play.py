"""The play: what the player to act may do and doing it.

:func:`legal_actions` and :func:`legal_mask` list the legal actions (the stock turn,
the banking widow's exchanges, Switch's and Stop the Bus's own, the Switch dealer's
choice and the carry-over decision); :func:`apply_action` plays one: a draw, a take,
a discard, a knock, a stand or a table move, the end of the turn (through
:mod:`~thirtyone_env.game.turns`) and, in the deal's phases, the dealer's choice and
the carry-over decision (through :mod:`~thirtyone_env.game.deal`). The top of the
engine's modules.
"""

from __future__ import annotations

import numpy as np

from thirtyone_env.game import events as ev
from thirtyone_env.game.actions import (
    CARRY_OVER,
    DECLINE_CARRY,
    DISCARD_BASE,
    DRAW_STOCK,
    KNOCK,
    STAND,
    TAKE_DISCARD,
    IllegalActionError,
    action_name,
    num_actions,
)
from thirtyone_env.game.cards import NUM_CARDS, PAIR_STRIDE
from thirtyone_env.game.deal import _after_deal, _carry_decision, carry_qualifies
from thirtyone_env.game.events import Event
from thirtyone_env.game.rules import MAX_PLAYERS
from thirtyone_env.game.state import (
    CARRY,
    CHOOSE,
    CONTINUE,
    DISCARD,
    DRAW,
    PHASE_NAMES,
    T_DRAWS,
    T_PICKUPS,
    GameState,
    _new,
    _next_active,
    _value,
)
from thirtyone_env.game.table_moves import (
    apply_table_move,
    choose_actions,
    continue_actions,
    keep_hand,
    turn_actions,
    widow_actions,
)
from thirtyone_env.game.turns import _blitz_turn, _end_turn, _turn_done


def _card_events(kind: str) -> tuple[tuple[Event, ...], ...]:
    """Every ``Event(kind, seat, card)``, by seat and card: events are immutable, so the
    hot path appends a shared one instead of building a tuple per move."""
    return tuple(tuple(Event(kind, seat, card) for card in range(NUM_CARDS)) for seat in range(MAX_PLAYERS))


_DRAWN = _card_events(ev.DRAW_STOCK)
_TAKEN = _card_events(ev.TAKE_DISCARD)
_DISCARDED = _card_events(ev.DISCARD)


def legal_actions(s: GameState) -> list[int]:
    """Legal action ids for the player to act, ascending; empty when the round is over."""
    if not s.stock_game:
        return _table_actions(s)
    return _stock_actions(s)


def _stock_actions(s: GameState) -> list[int]:
    """Legal actions of a turn with the stock and the discard pile."""
    phase = s.phase
    if phase == DRAW:
        acts = [DRAW_STOCK] if s.stock else []
        if may_take(s):
            acts.append(TAKE_DISCARD)
        if s.knocker < 0:
            if s.player_turns[s.current] >= s._kft:
                acts.append(KNOCK)
        elif s._stand_ok:
            acts.append(STAND)
        return acts
    if phase == DISCARD:
        took = s.took
        if took < 0 or s._return_ok:
            return sorted([DISCARD_BASE + c for c in s.hands[s.current]])
        return sorted([DISCARD_BASE + c for c in s.hands[s.current] if c != took])
    return []


def may_take(s: GameState) -> bool:
    """Whether the seat to act may take the top discard: not its own discard (one the
    others left on top, standing after a knock), but in the seed's one case, two
    players left and one of them knocked; and where no other move is left."""
    if not s.discard or s.disc_seat[s.discard[-1]] != s.current:
        return True
    if s.knocker >= 0 and sum(s.active) == 2:
        return True
    if s.knocker < 0:
        return not s.stock and s.player_turns[s.current] < s._kft
    return not s.stock and not s._stand_ok


def _table_actions(s: GameState) -> list[int]:
    """Legal actions of the table variants: banking adds the widow exchanges to the
    stock turn; Switch and Stop the Bus have their own."""
    if not s._draws:
        return _variant_actions(s)
    acts = _stock_actions(s)
    if s.phase == DRAW:
        acts.extend(widow_actions())
    return acts


def _variant_actions(s: GameState) -> list[int]:
    """Legal actions of Switch and Stop the Bus."""
    phase = s.phase
    if phase == DRAW:
        acts = turn_actions(s)
        if s.knocker < 0:
            if s.rules.table == "switch" and s.player_turns[s.current] >= s._kft:
                acts.append(KNOCK)
        elif s._stand_ok:
            acts.append(STAND)
        return sorted(acts)
    if phase == CONTINUE:
        return sorted(continue_actions(s))
    if phase == CHOOSE:
        return choose_actions()
    if phase == CARRY:
        return [CARRY_OVER, DECLINE_CARRY] if carry_qualifies(s.hands[s.current]) else [DECLINE_CARRY]
    return []


_MASKS: dict[tuple[int, ...], np.ndarray] = {}


def legal_mask(s: GameState) -> np.ndarray:
    """Legal actions as an ``int8`` mask of length :func:`~thirtyone_env.game.actions.num_actions`
    (56 for the stock game; a fresh array).

    Masks are built once per distinct set of legal actions and copied out, which is
    several times faster than filling a new array each call.
    """
    # (-1 marks the long action space of the table variants)
    key = tuple(_stock_actions(s)) if s.stock_game else (-1, *_table_actions(s))
    mask = _MASKS.get(key)
    if mask is None:
        if len(_MASKS) > 200_000:
            _MASKS.clear()
        mask = np.zeros(num_actions(s.rules), dtype=np.int8)
        mask[[a for a in key if a >= 0]] = 1
        _MASKS[key] = mask
    return mask.copy()


def apply_action(s: GameState, action: int, rng: np.random.Generator | None = None) -> None:
    """Play ``action`` for the player to act. ``rng`` is needed only when the move can
    start a turn on an empty stock under ``stock_exhausted="reshuffle"``.

    Raises :class:`IllegalActionError` (naming the action and the legal ones) for an
    action that is not legal now.
    """
    phase = s.phase
    seat = s.current
    if not s._draws:
        _apply_variant(s, seat, action, rng)
        return
    if phase == DRAW:
        if action == DRAW_STOCK and s.stock:
            card = s.stock.pop()
            s.hands[seat].append(card)
            s.drawn = card
            s.phase = DISCARD
            s.tally[seat][T_DRAWS] += 1
            s.history.append(_DRAWN[seat][card])
            return
        if action == TAKE_DISCARD and s.discard and may_take(s):
            card = s.discard.pop()
            s.hands[seat].append(card)
            s.drawn = card
            s.took = card
            s.known[seat] |= 1 << card
            s.phase = DISCARD
            t = s.tally[seat]
            t[T_DRAWS] += 1
            t[T_PICKUPS] += 1
            s.history.append(_TAKEN[seat][card])
            return
        if action == KNOCK and s.knocker < 0 and s.player_turns[seat] >= s._kft:
            s.knocker = seat
            s.final_left = sum(s.active) - 1
            s.history.append(_new(Event, (ev.KNOCK, seat, _value(s._values, s.hands[seat]))))
            _end_turn(s, seat, rng)
            return
        if action == STAND and s.knocker >= 0 and s._stand_ok:
            s.history.append(_new(Event, (ev.STAND, seat, _value(s._values, s.hands[seat]))))
            if s._blitz_late and _value(s._values, s.hands[seat]) == s._blitz:
                _blitz_turn(s, seat)
                return
            _end_turn(s, seat, rng)
            return
        if s.table and isinstance(action, int | np.integer) and apply_table_move(s, seat, int(action)):
            _turn_done(s, seat, rng)
            return
    elif phase == DISCARD:
        card = action - DISCARD_BASE
        hand = s.hands[seat]
        if card in hand and action >= DISCARD_BASE and (card != s.took or s._return_ok):
            hand.remove(card)
            s.discard.append(card)
            s.known[seat] &= ~(1 << card)
            s.disc_seat[card] = seat
            s.disc_order[card] = len(s.discards)
            s.discards.append((seat, card))
            s.history.append(_DISCARDED[seat][card])
            if s._values[hand[0] * PAIR_STRIDE + hand[1] * NUM_CARDS + hand[2]] == s._blitz and (
                s.knocker < 0 or s._blitz_late
            ):
                _blitz_turn(s, seat)
                return
            if s.knocker < 0 and s.stock and s.turn < s._max_turns:
                # Fast path of _end_turn + _begin_turn: no knock, stock left, no limit.
                nxt = seat + 1 if seat + 1 < s.num_players else 0
                if not s.active[nxt]:
                    nxt = _next_active(s, seat)
                s.current = nxt
                s.phase = DRAW
                s.turn += 1
                s.player_turns[nxt] += 1
                s.drawn = -1
                s.took = -1
                return
            _end_turn(s, seat, rng)
            return
    raise IllegalActionError(_illegal_message(s, action))


def _apply_variant(s: GameState, seat: int, action: int, rng: np.random.Generator | None) -> None:
    """Switch and Stop the Bus: one action of the player to act."""
    if not isinstance(action, int | np.integer) or isinstance(action, bool):
        raise IllegalActionError(_illegal_message(s, action))
    action = int(action)
    if action not in legal_actions(s):
        raise IllegalActionError(_illegal_message(s, action))
    if s.phase == CARRY:
        _carry_decision(s, seat, action, rng)
        return
    if s.phase == CHOOSE:
        keep_hand(s, seat, action)
        n = s.num_players
        seats = [p for p in ((s.dealer + i) % n for i in range(1, n + 1)) if s.active[p]]
        _after_deal(s, seats, rng)
        return
    if action == KNOCK:  # Switch: instead of a move; Stop the Bus: after this turn's exchange
        s.knocker = seat
        s.final_left = sum(s.active) - 1
        s.history.append(_new(Event, (ev.KNOCK, seat, _value(s._values, s.hands[seat]))))
        _end_turn(s, seat, rng)
        return
    if action == STAND:
        if s.phase == DRAW:
            s.history.append(_new(Event, (ev.STAND, seat, _value(s._values, s.hands[seat]))))
        else:
            s.history.append(_new(Event, (ev.END_TURN, seat, None)))
        _turn_done(s, seat, rng)
        return
    outcome = apply_table_move(s, seat, action)
    if outcome == "continue":
        hand = s.hands[seat]
        if s._values[hand[0] * PAIR_STRIDE + hand[1] * NUM_CARDS + hand[2]] == s._blitz and s.knocker < 0:
            _blitz_turn(s, seat)
            return
        s.phase = CONTINUE
        return
    _turn_done(s, seat, rng)


def _illegal_message(s: GameState, action: object) -> str:
    legal = legal_actions(s)
    names = ", ".join(f"{a} ({action_name(a)})" for a in legal) or "none: the round is over"
    what = action_name(action) if isinstance(action, int) else "not an action id"
    return f"illegal action {action!r} ({what}) in phase {PHASE_NAMES[s.phase]!r}; legal: {names}"
