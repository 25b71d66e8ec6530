"""The game engine: a compact game state and pure-function transitions.

Modelled on OpenSpiel's State: :func:`new_game` deals, :func:`legal_actions` /
:func:`legal_mask` list what the player to act may do, :func:`apply_action` plays it,
:func:`start_round` deals the next round once one is over. All randomness comes from
the ``numpy.random.Generator`` passed in: the deck is shuffled once per round (and the
discard pile again only under ``stock_exhausted="reshuffle"``), so a seed fixes a game
byte for byte.

Seats are 0..n-1 clockwise: the player to the dealer's left is ``dealer + 1``.

The engine knows nothing of Gymnasium; it is the hot path of every simulation, so the
state is plain lists and ints, hand values come from a lookup table, and nothing is
allocated per step but the history tuple.

History: ``state.history`` holds the events of the current round as tuples
``(kind, seat, data)``:

| kind             | seat     | data                                             |
|------------------|----------|--------------------------------------------------|
| ``"deal"``       | dealer   | ``(hands, upcard, lives)``: every seat's dealt    |
|                  |          | hand, the upcard, lives at the deal              |
| ``"draw_stock"`` | player   | card drawn                                       |
| ``"take_discard"``| player  | card taken                                       |
| ``"discard"``    | player   | card discarded                                   |
| ``"knock"``      | player   | hand value at the knock                          |
| ``"stand"``      | player   | hand value                                       |
| ``"blitz"``      | player   | ``"dealt"`` or ``"turn"``: where the 31 came from |
| ``"reshuffle"``  | -1       | number of cards in the new stock                 |
| ``"settle"``     | -1       | the :class:`RoundResult`                         |
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from thirtyone_env.actions import DISCARD_BASE, DRAW_STOCK, KNOCK, NUM_ACTIONS, STAND, TAKE_DISCARD
from thirtyone_env.cards import DECKS, NUM_CARDS, format_card, parse_cards, value_table
from thirtyone_env.rules import Rules

# Phases of the state.
DRAW = 0  #: start of a turn: draw, take the discard, knock or stand
DISCARD = 1  #: after drawing: discard one of four cards
ROUND_OVER = 2  #: settled; call start_round for the next deal
GAME_OVER = 3  #: one player left (or max_rounds): see state.winners

PHASE_NAMES = ("draw", "discard", "round_over", "game_over")

# Reasons a round ends.
BLITZ = "blitz"
KNOCKED = "knock"
STOCK_SHOWDOWN = "stock_exhausted"
VOID = "void"


class IllegalActionError(ValueError):
    """An action that is not legal in the current state."""


class RoundResult(NamedTuple):
    """How a round ended and who paid.

    ``losses`` and ``values`` are per seat (``values`` is ``None`` for seats not dealt
    in); ``reason`` is one of ``"blitz"``, ``"knock"``, ``"stock_exhausted"`` (a
    showdown forced by the empty stock) or ``"void"``; ``detail`` says more
    (``"dealt"`` for a dealt 31, ``"stock_exhausted"`` or ``"max_turns"`` for a void).
    """

    round_no: int
    dealer: int
    reason: str
    detail: str
    losses: tuple[int, ...]
    values: tuple[float | None, ...]
    knocker: int | None
    blitzers: tuple[int, ...]
    eliminated: tuple[int, ...]
    lives_after: tuple[int, ...]


class GameState:
    """Everything about a game in progress. Mutable; copy with :func:`clone_state`.

    Public fields (read them, change them only through this module's functions):
    ``rules``, ``num_players``, ``lives``, ``active`` (still in the game), ``dealer``,
    ``round_no``, ``hands`` (lists of card ids), ``stock`` (top card LAST), ``discard``
    (top card last), ``current`` (seat to act), ``phase``, ``knocker`` (-1: none),
    ``turn`` (turns started this round), ``player_turns`` (per seat), ``known``
    (per seat, bitmask of cards publicly known in that hand: taken from the discard
    pile and not discarded since), ``discards`` (public: ``(seat, card)`` for every
    discard this round, in order), ``disc_seat`` / ``disc_order`` (per card: who last
    discarded it and its index in ``discards``, -1 if never),
    ``drawn`` / ``took`` (the card drawn / taken from the discard pile this turn, -1),
    ``history``, ``result`` (the last :class:`RoundResult`), ``winners``.
    """

    __slots__ = (
        "rules",
        "num_players",
        "lives",
        "active",
        "dealer",
        "round_no",
        "hands",
        "stock",
        "discard",
        "current",
        "phase",
        "knocker",
        "final_left",
        "turn",
        "player_turns",
        "known",
        "disc_seat",
        "disc_order",
        "discards",
        "drawn",
        "took",
        "history",
        "result",
        "winners",
        "_table",
        "_kft",
        "_return_ok",
        "_stand_ok",
        "_blitz_late",
        "_max_turns",
    )

    def __repr__(self) -> str:
        hands = " | ".join(" ".join(format_card(c) for c in h) for h in self.hands)
        return (
            f"GameState(round={self.round_no}, phase={PHASE_NAMES[self.phase]}, "
            f"current={self.current}, lives={self.lives}, hands=[{hands}])"
        )


_DECK_ARRAYS = {name: np.array(cards, dtype=np.int64) for name, cards in DECKS.items()}


def _deck_order(rules: Rules, rng: np.random.Generator, deck: Sequence | None) -> list[int]:
    """The deal order, top first: a stacked prefix (if given) over a shuffled rest."""
    if deck is None:
        return rng.permutation(_DECK_ARRAYS[rules.deck]).tolist()
    cards = rules.deck_cards
    if type(deck) is list and len(deck) == len(cards) and set(deck) == set(cards):
        return list(deck)  # a whole deck of ids (the tournament's pre-shuffled decks)
    top = parse_cards(deck)
    allowed = set(cards)
    seen: set[int] = set()
    for c in top:
        if c not in allowed:
            raise ValueError(f"stacked deck: card {format_card(c)} is not in the {rules.deck} deck")
        if c in seen:
            raise ValueError(f"stacked deck: card {format_card(c)} appears twice")
        seen.add(c)
    rest = [c for c in cards if c not in seen]
    return top + [rest[i] for i in rng.permutation(len(rest)).tolist()]


def stacked_deck(
    hands: Sequence[Sequence[int | str] | str | None],
    upcard: int | str | None = None,
    stock: Sequence[int | str] | str = (),
    dealer: int = 0,
) -> list[int]:
    """The deck order (top first) that deals ``hands[seat]`` to each seat.

    ``hands`` has one entry per seat (``None`` or empty for a seat out of the game);
    cards are ids or text (``"As Kd Qh"``). The next card is ``upcard`` and the stock
    follows top first; anything not named is shuffled beneath by the engine. Pass the
    result as ``deck=`` with the same ``dealer``.
    """
    n = len(hands)
    parsed = [parse_cards(h) if h else [] for h in hands]
    seats = [(dealer + 1 + i) % n for i in range(n)]
    seats = [p for p in seats if parsed[p]]
    for p in seats:
        if len(parsed[p]) != 3:
            raise ValueError(f"stacked_deck: seat {p} needs 3 cards, got {len(parsed[p])}")
    order = [parsed[p][k] for k in range(3) for p in seats]
    if upcard is not None:
        order += parse_cards([upcard])
    elif stock:
        raise ValueError("stacked_deck: a stacked stock needs an upcard")
    order += parse_cards(stock)
    return order


def _bind_rules(s: GameState, rules: Rules) -> None:
    """Cache the rule values the hot path reads on the state."""
    s.rules = rules
    s._table = value_table(rules.three_of_a_kind)
    s._kft = rules.knock_from_turn
    s._return_ok = rules.allow_discard_return
    s._stand_ok = rules.stand_after_knock
    s._blitz_late = rules.blitz_after_knock
    s._max_turns = rules.max_turns_per_round


def new_game(
    rules: Rules | str | None,
    num_players: int,
    rng: np.random.Generator,
    *,
    dealer: int | None = None,
    deck: Sequence | None = None,
) -> GameState:
    """A new game with everyone at full lives, first round dealt.

    ``dealer`` defaults to a seat drawn from ``rng``; ``deck`` stacks the first deal
    (cards top first, the rest shuffled beneath).
    """
    rules = Rules.resolve(rules)
    n = rules.check_num_players(num_players)
    s = GameState()
    s.rules = rules
    s.num_players = n
    s.lives = [rules.lives] * n
    s.active = [True] * n
    s.round_no = 0
    s.winners = ()
    s.result = None
    _bind_rules(s, rules)
    if dealer is None:
        dealer = int(rng.integers(n))
    s.dealer = 0
    s.current = -1
    s.phase = ROUND_OVER
    start_round(s, rng, deck=deck, dealer=dealer)
    return s


def _check_seat(s: GameState, seat: int) -> int:
    if isinstance(seat, bool) or not isinstance(seat, int | np.integer) or not 0 <= seat < s.num_players:
        raise ValueError(f"seat {seat!r} does not exist: seats are 0..{s.num_players - 1}")
    return int(seat)


def start_round(
    s: GameState,
    rng: np.random.Generator,
    *,
    deck: Sequence | None = None,
    dealer: int | None = None,
) -> None:
    """Deal the next round. The deal passes clockwise to the next player still in,
    unless ``dealer`` names an active seat."""
    if s.phase != ROUND_OVER:
        raise ValueError(
            f"start_round needs a finished round; the state is in phase {PHASE_NAMES[s.phase]!r}"
        )
    n = s.num_players
    if dealer is None:
        dealer = _next_active(s, s.dealer)
    else:
        dealer = _check_seat(s, dealer)
        if not s.active[dealer]:
            raise ValueError(f"seat {dealer} is out of the game and cannot deal")
    order = _deck_order(s.rules, rng, deck)
    s.dealer = dealer
    s.round_no += 1
    active = s.active
    seats = [(dealer + i) % n for i in range(1, n + 1)]
    if not all(active):
        seats = [p for p in seats if active[p]]
    k = len(seats)
    hands: list[list[int]] = [[] for _ in range(n)]
    for i, seat in enumerate(seats):
        hands[seat] = [order[i], order[i + k], order[i + 2 * k]]
    upcard = order[3 * k]
    s.hands = hands
    s.discard = [upcard]
    s.stock = order[: 3 * k : -1]
    s.knocker = -1
    s.final_left = 0
    s.turn = 0
    s.player_turns = [0] * n
    s.known = [0] * n
    s.disc_seat = [-1] * NUM_CARDS
    s.disc_order = [-1] * NUM_CARDS
    s.discards = []
    s.drawn = -1
    s.took = -1
    s.current = -1
    s.history = [("deal", dealer, (tuple(map(tuple, hands)), upcard, tuple(s.lives)))]
    table = s._table
    blitzers = tuple(p for p in seats if _value(table, hands[p]) == 31)
    if blitzers:
        for p in blitzers:
            s.history.append(("blitz", p, "dealt"))
        _settle_blitz(s, blitzers, "dealt")
        return
    s.phase = DRAW
    _begin_turn(s, seats[0], rng)


def _value(table: tuple, h: list[int]) -> float:
    return table[h[0] * 2704 + h[1] * 52 + h[2]]


def _next_active(s: GameState, seat: int) -> int:
    n = s.num_players
    active = s.active
    seat = (seat + 1) % n
    while not active[seat]:
        seat = (seat + 1) % n
    return seat


def _begin_turn(s: GameState, seat: int, rng: np.random.Generator | None) -> None:
    """Start ``seat``'s turn, first applying the empty-stock and turn-limit rules."""
    if s.turn >= s._max_turns:
        _settle(s, VOID, "max_turns", [0] * s.num_players, s.knocker if s.knocker >= 0 else None, ())
        return
    if s.knocker < 0 and not s.stock:
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
            s.history.append(("reshuffle", -1, len(s.stock)))
        if not s.stock:
            _settle(s, VOID, "stock_exhausted", [0] * s.num_players, None, ())
            return
    s.current = seat
    s.phase = DRAW
    s.turn += 1
    s.player_turns[seat] += 1
    s.drawn = -1
    s.took = -1


def legal_actions(s: GameState) -> list[int]:
    """Legal action ids for the player to act, ascending; empty when the round is over."""
    phase = s.phase
    if phase == DRAW:
        acts = [DRAW_STOCK, TAKE_DISCARD] if s.stock else [TAKE_DISCARD]
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


_MASKS: dict[tuple[int, ...], np.ndarray] = {}


def legal_mask(s: GameState) -> np.ndarray:
    """Legal actions as an ``int8`` mask of length ``NUM_ACTIONS`` (a fresh array).

    Masks are built once per distinct set of legal actions and copied out, which is
    several times faster than filling a new array each call.
    """
    key = tuple(legal_actions(s))
    mask = _MASKS.get(key)
    if mask is None:
        if len(_MASKS) > 200_000:
            _MASKS.clear()
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        mask[list(key)] = 1
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
    if phase == DRAW:
        if action == DRAW_STOCK and s.stock:
            card = s.stock.pop()
            s.hands[seat].append(card)
            s.drawn = card
            s.phase = DISCARD
            s.history.append(("draw_stock", seat, card))
            return
        if action == TAKE_DISCARD and s.discard:
            card = s.discard.pop()
            s.hands[seat].append(card)
            s.drawn = card
            s.took = card
            s.known[seat] |= 1 << card
            s.phase = DISCARD
            s.history.append(("take_discard", seat, card))
            return
        if action == KNOCK and s.knocker < 0 and s.player_turns[seat] >= s._kft:
            s.knocker = seat
            s.final_left = sum(s.active) - 1
            s.history.append(("knock", seat, _value(s._table, s.hands[seat])))
            _end_turn(s, seat, rng)
            return
        if action == STAND and s.knocker >= 0 and s._stand_ok:
            s.history.append(("stand", seat, _value(s._table, s.hands[seat])))
            if s._blitz_late and _value(s._table, s.hands[seat]) == 31:
                _blitz_turn(s, seat)
                return
            _end_turn(s, seat, rng)
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
            s.history.append(("discard", seat, card))
            if s._table[hand[0] * 2704 + hand[1] * 52 + hand[2]] == 31 and (s.knocker < 0 or s._blitz_late):
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


def _illegal_message(s: GameState, action: object) -> str:
    from thirtyone_env.actions import action_name

    legal = legal_actions(s)
    names = ", ".join(f"{a} ({action_name(a)})" for a in legal) or "none: the round is over"
    what = action_name(action) if isinstance(action, int) else "not an action id"
    return f"illegal action {action!r} ({what}) in phase {PHASE_NAMES[s.phase]!r}; legal: {names}"


def _end_turn(s: GameState, seat: int, rng: np.random.Generator | None) -> None:
    if s.knocker >= 0 and seat != s.knocker:
        s.final_left -= 1
        if s.final_left == 0:
            _settle_showdown(s, KNOCKED, s.knocker)
            return
    _begin_turn(s, _next_active(s, seat), rng)


def _blitz_turn(s: GameState, seat: int) -> None:
    s.history.append(("blitz", seat, "turn"))
    _settle_blitz(s, (seat,), "turn")


def _in_round(s: GameState) -> list[int]:
    return [p for p in range(s.num_players) if s.active[p]]


def _settle_blitz(s: GameState, blitzers: tuple[int, ...], detail: str) -> None:
    """Everyone not holding 31 loses one life."""
    table = s._table
    losses = [0] * s.num_players
    for p in _in_round(s):
        if _value(table, s.hands[p]) != 31:
            losses[p] = 1
    blitzers = tuple(p for p in _in_round(s) if losses[p] == 0)
    knocker = s.knocker if s.knocker >= 0 else None
    _settle(s, BLITZ, detail, losses, knocker, blitzers)


def _settle_showdown(s: GameState, reason: str, knocker: int) -> None:
    """Lowest hand(s) lose 1; a knocker strictly lowest pays ``knocker_penalty``."""
    table = s._table
    values = tuple(table[h[0] * 2704 + h[1] * 52 + h[2]] if h else None for h in s.hands)
    low = min(v for v in values if v is not None)
    tied = [p for p, v in enumerate(values) if v == low]
    losses = [0] * s.num_players
    rules = s.rules
    if knocker in tied:
        if len(tied) == 1:
            losses[knocker] = rules.knocker_penalty
        elif rules.knocker_tie == "knocker_pays":
            losses[knocker] = 1
        elif rules.knocker_tie == "knocker_safe":
            for p in tied:
                if p != knocker:
                    losses[p] = 1
        else:  # all_lose
            for p in tied:
                losses[p] = 1
    else:
        for p in tied:
            losses[p] = 1
    _settle(s, reason, reason, losses, knocker if knocker >= 0 else None, (), values)


def _settle(
    s: GameState,
    reason: str,
    detail: str,
    losses: list[int],
    knocker: int | None,
    blitzers: tuple[int, ...],
    values: tuple[float | None, ...] | None = None,
) -> None:
    """Apply lives lost, eliminate, and decide whether the game is over.

    ``values`` (every seat's hand value, ``None`` if not dealt in) is computed here
    unless the caller already has it.
    """
    if values is None:
        table = s._table
        values = tuple(table[h[0] * 2704 + h[1] * 52 + h[2]] if h else None for h in s.hands)
    players = [p for p, h in enumerate(s.hands) if h]
    lives = s.lives
    floor = 0 if s.rules.free_ride else 1
    out = [p for p in players if lives[p] - losses[p] < floor]
    if out and len(out) == len(players):
        # No game ends without a winner: all stay in at their lowest legal count, and
        # the result records the lives actually lost.
        for p in players:
            new = max(floor, lives[p] - losses[p])
            losses[p] = lives[p] - new
            lives[p] = new
        out = []
    else:
        for p in players:
            if losses[p]:
                lives[p] = max(0, lives[p] - losses[p])
        for p in out:
            s.active[p] = False
    result = RoundResult(
        s.round_no,
        s.dealer,
        reason,
        detail,
        tuple(losses),
        values,
        knocker,
        blitzers,
        tuple(out),
        tuple(lives),
    )
    s.result = result
    s.history.append(("settle", -1, result))
    s.drawn = -1
    s.took = -1
    remaining = [p for p in players if s.active[p]] if out else players
    if len(remaining) == 1:
        s.winners = (remaining[0],)
        s.phase = GAME_OVER
    elif s.round_no >= s.rules.max_rounds:
        best = max(lives[p] for p in remaining)
        s.winners = tuple(p for p in remaining if lives[p] == best)
        s.phase = GAME_OVER
    else:
        s.phase = ROUND_OVER


def from_position(
    rules: Rules,
    *,
    hands: Sequence[Sequence[int]],
    stock: Sequence[int],
    discard: Sequence[int],
    current: int,
    phase: int,
    dealer: int,
    lives: Sequence[int],
    active: Sequence[bool],
    knocker: int = -1,
    final_left: int = 0,
    turns_played: int = 0,
    known: Sequence[int] | None = None,
    discards: Sequence[tuple[int, int]] = (),
    drawn: int = -1,
    took: int = -1,
    round_no: int = 1,
) -> GameState:
    """A state in the middle of a round, from its parts: for search players that
    sample the cards they cannot see (determinization) and play the rest out.

    ``stock`` is top card LAST, ``discard`` top card last; ``final_left`` is, with a
    knock pending, the number of turns still to be played before the showdown
    (counting the current one). Per-seat turn counts follow from ``turns_played``,
    the dealer and the seat order. Nothing is checked beyond what play needs, so
    the caller must pass a consistent position.
    """
    n = len(hands)
    s = GameState()
    s.rules = rules
    s.num_players = n
    s.lives = list(lives)
    s.active = list(active)
    s.dealer = dealer
    s.round_no = round_no
    s.hands = [list(h) for h in hands]
    s.stock = list(stock)
    s.discard = list(discard)
    s.current = current
    s.phase = phase
    s.knocker = knocker
    s.final_left = final_left
    s.turn = turns_played
    order = [p for p in ((dealer + k) % n for k in range(1, n + 1)) if s.active[p]]
    k = len(order)
    s.player_turns = [0] * n
    for idx, p in enumerate(order):
        s.player_turns[p] = max(0, (turns_played - idx + k - 1) // k)
    s.known = list(known) if known is not None else [0] * n
    s.discards = list(discards)
    s.disc_seat = [-1] * NUM_CARDS
    s.disc_order = [-1] * NUM_CARDS
    for i, (seat, card) in enumerate(s.discards):
        s.disc_seat[card] = seat
        s.disc_order[card] = i
    s.drawn = drawn
    s.took = took
    s.history = []
    s.result = None
    s.winners = ()
    _bind_rules(s, rules)
    return s


def hand_values(s: GameState) -> list[float | None]:
    """Current value of every seat's hand (``None`` for seats out of the round)."""
    table = s._table
    return [_value(table, h) if len(h) == 3 else None for h in s.hands]


def clone_state(s: GameState) -> GameState:
    """An independent copy (for search): lists copied, immutable parts shared."""
    c = GameState()
    for name in GameState.__slots__:
        setattr(c, name, getattr(s, name))
    c.lives = s.lives[:]
    c.active = s.active[:]
    c.hands = [h[:] for h in s.hands]
    c.stock = s.stock[:]
    c.discard = s.discard[:]
    c.player_turns = s.player_turns[:]
    c.known = s.known[:]
    c.disc_seat = s.disc_seat[:]
    c.discards = s.discards[:]
    c.disc_order = s.disc_order[:]
    c.history = s.history[:]
    return c


def card_locations(s: GameState) -> dict[int, str]:
    """Where each card of the deck is: ``"hand<seat>"``, ``"stock"`` or ``"discard"``.

    Raises ``AssertionError`` if a card is in two places or missing: the invariant
    tests rely on it.
    """
    where: dict[int, str] = {}

    def put(card: int, place: str) -> None:
        assert card not in where, f"card {format_card(card)} in {where[card]} and {place}"
        where[card] = place

    for seat, hand in enumerate(s.hands):
        for c in hand:
            put(c, f"hand{seat}")
    for c in s.stock:
        put(c, "stock")
    for c in s.discard:
        put(c, "discard")
    missing = set(s.rules.deck_cards) - set(where)
    assert not missing, f"cards missing: {sorted(format_card(c) for c in missing)}"
    return where
