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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

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
    num_actions,
)
from thirtyone_env.game.cards import (
    CARD_VALUES,
    DECKS,
    NUM_CARDS,
    PAIR_STRIDE,
    format_card,
    hand_table,
    parse_cards,
)
from thirtyone_env.game.events import Event
from thirtyone_env.game.rules import MAX_PLAYERS, Rules
from thirtyone_env.game.table_moves import (
    apply_table_move,
    choose_actions,
    continue_actions,
    keep_hand,
    turn_actions,
    widow_actions,
)


def _card_events(kind: str) -> tuple[tuple[Event, ...], ...]:
    """Every ``Event(kind, seat, card)``, by seat and card: events are immutable, so the
    hot path appends a shared one instead of building a tuple per move."""
    return tuple(tuple(Event(kind, seat, card) for card in range(NUM_CARDS)) for seat in range(MAX_PLAYERS))


_DRAWN = _card_events(ev.DRAW_STOCK)
_TAKEN = _card_events(ev.TAKE_DISCARD)
_DISCARDED = _card_events(ev.DISCARD)

#: Builds an Event without the NamedTuple constructor's Python frame (a round's deal,
#: knock and settlement events are on the engine's hot path).
_new = tuple.__new__

# Phases of the state. Every phase below ROUND_OVER has a seat to act (``current``);
# the loops of the envs and players test ``phase < ROUND_OVER`` / ``>= ROUND_OVER``.
# (batch_kernels imports these numbers: numba bakes them in when it compiles, so
# after renumbering clear its cache, __pycache__/batch_kernels.*.nbi/.nbc.)
DRAW = 0  #: start of a turn: draw, take the discard, knock or stand (or a table move)
DISCARD = 1  #: after drawing: discard one of four cards
CHOOSE = 2  #: Switch: the dealer keeps one of two dealt hands
CONTINUE = 3  #: the turn goes on (Switch after a face-up renewal, Stop the Bus after an exchange)
CARRY = 4  #: Switch carry-over: the offered seat carries its last hand over or declines
ROUND_OVER = 5  #: settled; call start_round for the next deal
GAME_OVER = 6  #: one player left (or max_rounds / num_rounds): see state.winners

PHASE_NAMES = ("draw", "discard", "choose", "continue", "carry", "round_over", "game_over")

# Reasons a round ends.
BLITZ = "blitz"
KNOCKED = "knock"
STOCK_SHOWDOWN = "stock_exhausted"
VOID = "void"


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
    gains: tuple[float, ...] = ()  #: per seat: change of standing (-lives, +points, chips)
    score_after: tuple[int, ...] = ()  #: per seat: points or chips after the round (lives games: lives)


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
    ``history``, ``result`` (the last :class:`RoundResult`), ``winners``; for the
    variants ``table`` / ``table_up`` (table hands by slot and their face-up flags),
    ``muck`` / ``muck_up`` (cards out of play; bitmask of the public ones),
    ``dealt_pair`` (Switch: the dealer's two hands before the choice), ``score``
    (points or chips per seat), ``pot`` and ``carry_seats`` (Switch carry-over, phase
    ``CARRY``: the seats still to be asked, the one asked now first; else empty);
    ``stock_game`` (the rules deal no table: ``Rules.table == "stock"``) and ``scored``
    (points or chips in ``score``: ``Rules.scoring`` is not ``"lives"``), fixed by the
    rules, for readers such as the views; :attr:`hand_values` is the value lookup.
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
        "table",
        "table_up",
        "muck",
        "muck_up",
        "dealt_pair",
        "score",
        "score_start",
        "pot",
        "carry_seats",
        "stock_game",
        "scored",
        "_carry_deal",
        "_carry_events",
        "_table",
        "_blitz",
        "_draws",
        "_kft",
        "_return_ok",
        "_stand_ok",
        "_blitz_late",
        "_max_turns",
    )

    @property
    def hand_values(self) -> tuple:
        """The rules' hand-value lookup (:func:`~thirtyone_env.game.cards.hand_table`), read
        only: index it with :func:`~thirtyone_env.game.cards.triple_index`."""
        return self._table

    def __repr__(self) -> str:
        hands = " | ".join(" ".join(format_card(c) for c in h) for h in self.hands)
        return (
            f"GameState(round={self.round_no}, phase={PHASE_NAMES[self.phase]}, "
            f"current={self.current}, lives={self.lives}, hands=[{hands}])"
        )


_DECK_ARRAYS = {name: np.array(cards, dtype=np.int64) for name, cards in DECKS.items()}


def _check_deck_items(deck: object) -> None:
    """Refuse a stacked deck that is not a sequence of cards (ids or text), naming the
    first bad element: a bool or a float is not a card, even when it equals an id."""
    if isinstance(deck, str):
        return
    try:
        items = list(deck)  # type: ignore[call-overload]
    except TypeError:
        raise ValueError(f"stacked deck: {deck!r} is not a sequence of cards") from None
    kinds = set(map(type, items))  # one look per type, not per card: decks come every round
    if all(_card_type(k) for k in kinds):
        return
    for i, c in enumerate(items):
        if isinstance(c, bool | np.bool_) or not isinstance(c, int | np.integer | str):
            raise ValueError(
                f"stacked deck: element {i} ({c!r}, a {type(c).__name__}) is not a card: "
                "use card ids 0..51 (int) or text like 'As'"
            )


def _card_type(kind: type) -> bool:
    """Whether values of this type may name a card: ints (not bools) and text."""
    return not issubclass(kind, bool | np.bool_) and issubclass(kind, int | np.integer | str)


def _deck_order(rules: Rules, rng: np.random.Generator, deck: Sequence | None) -> list[int]:
    """The deal order, top first: a stacked prefix (if given) over a shuffled rest."""
    if deck is None:
        return rng.permutation(_DECK_ARRAYS[rules.deck]).tolist()
    cards = rules.deck_cards
    _check_deck_items(deck)
    if type(deck) is list and len(deck) == len(cards) and set(deck) == set(cards):
        return list(map(int, deck))  # a whole deck of ids (the tournament's pre-shuffled decks)
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


def stacked_table_deck(
    rules: Rules | str,
    hands: Sequence[Sequence[int | str] | str | None],
    table: Sequence[int | str] | str,
    upcard: int | str | None = None,
    stock: Sequence[int | str] | str = (),
    dealer: int = 0,
    second_hand: Sequence[int | str] | str = (),
    carried: Sequence[int | str] | str = (),
) -> list[int]:
    """:func:`stacked_deck` for the table variants: the deck order that deals ``hands``
    and ``table`` (banking: the widow; Switch: the face-down table hand, and
    ``second_hand`` the dealer's other hand; Stop the Bus: the three table cards), then
    the ``upcard`` (banking) and the ``stock`` top first.

    Switch carry-over: ``carried`` (the hand a player will lay face up) instead of a
    ``second_hand``: the order deals ``hands`` and the face-down ``table`` once the
    carried cards are taken out, and ends with them (pass it to :func:`start_round`)."""
    rules = Rules.resolve(rules)
    n = len(hands)
    parsed = [parse_cards(h) if h else [] for h in hands]
    seats = [p for p in ((dealer + 1 + i) % n for i in range(n)) if parsed[p]]
    for p in seats:
        if len(parsed[p]) != 3:
            raise ValueError(f"stacked_table_deck: seat {p} needs 3 cards, got {len(parsed[p])}")
    tab = parse_cards(table)
    if len(tab) != 3:
        raise ValueError(f"stacked_table_deck: the table needs 3 cards, got {len(tab)}")
    kind = rules.table
    if kind == "widow":
        order = [parsed[p][0] for p in seats] + tab + [parsed[p][r] for r in (1, 2) for p in seats]
        order += parse_cards([upcard]) if upcard is not None else []
    elif kind == "switch" and carried:
        carry = parse_cards(carried)
        if len(carry) != 3 or second_hand:
            raise ValueError("stacked_table_deck: a carry-over needs the 3 carried cards and no second_hand")
        order = [c for r in range(3) for c in [*(parsed[p][r] for p in seats), tab[r]]]
        return order + parse_cards(stock) + carry
    elif kind == "switch":
        second = parse_cards(second_hand)
        if len(second) != 3:
            raise ValueError("stacked_table_deck: Switch needs the dealer's second_hand (3 cards)")
        order = [c for r in range(3) for c in [*(parsed[p][r] for p in seats), second[r], tab[r]]]
    elif kind == "bus":
        order = [parsed[p][r] for r in range(3) for p in seats] + tab
    else:
        raise ValueError(f"stacked_table_deck is for table variants; these rules have table={kind!r}")
    return order + parse_cards(stock)


def _bind_rules(s: GameState, rules: Rules) -> None:
    """Cache the rule values the hot path reads on the state."""
    s.rules = rules
    s._table = hand_table(rules)
    s._blitz = rules.blitz_value
    s._draws = rules.table in ("stock", "widow")
    s.stock_game = rules.table == "stock"
    s.scored = rules.scoring != "lives"
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
    s.score = [rules.chips if rules.scoring == "chips" else 0] * n
    s.score_start = s.score[:]
    s.pot = 0
    s.table = []
    s.table_up = []
    s.muck = []
    s.muck_up = 0
    s.dealt_pair = None
    s.carry_seats = []
    s._carry_deal = None
    s._carry_events = []
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
    unless ``dealer`` names an active seat.

    The round's deck order is drawn here, once. Under ``Rules.carry_over`` a round
    with seats to ask (see :func:`carry_asked`) starts in phase ``CARRY`` instead, and
    is dealt from that order once the offer is settled."""
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
    played = s.round_no
    s.dealer = dealer
    s.round_no += 1
    seats = [(dealer + i) % n for i in range(1, n + 1)]
    if not all(s.active):
        seats = [p for p in seats if s.active[p]]
    if s.rules.carry_over and played:
        asked = carry_asked(s, seats)
        if asked:
            _offer_carry(s, order, seats, asked)
            return
    _deal(s, order, seats, rng)


def carry_qualifies(h: Sequence[int]) -> bool:
    """Switch carry-over: whether ``h`` (a seat's hand from the last round) may be
    carried over: three cards of one suit worth more than 21."""
    return len(h) == 3 and h[0] // 13 == h[1] // 13 == h[2] // 13 and sum(CARD_VALUES[c] for c in h) > 21


def carry_candidates(s: GameState, seats: Sequence[int]) -> list[int]:
    """Switch carry-over: the seats of ``seats`` (the new round's order of play) whose
    hand, the one they ended the last round with, qualifies (:func:`carry_qualifies`)."""
    return [p for p in seats if carry_qualifies(s.hands[p])]


def carry_asked(s: GameState, seats: Sequence[int]) -> list[int]:
    """Switch carry-over: the seats of ``seats`` asked, in order. After a showdown
    (every hand shown) only the candidates; after a round whose hands were not all
    shown (a void round, a blitz) every seat, so that who is asked tells nothing of a
    hidden hand (a seat whose hand does not qualify may only decline)."""
    shown = s.result is not None and s.result.reason in (KNOCKED, STOCK_SHOWDOWN)
    return carry_candidates(s, seats) if shown else list(seats)


def _reset_round(s: GameState) -> None:
    """The per-round public counters of a round about to start."""
    n = s.num_players
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


def _offer_carry(s: GameState, order: list[int], seats: list[int], asked: list[int]) -> None:
    """Enter phase ``CARRY``: the first seat of ``asked`` is asked; the cards stay as
    the last round left them until the deal."""
    _reset_round(s)
    s.carry_seats = asked
    s._carry_deal = (order, seats)
    s._carry_events = []
    s.history = []
    s.phase = CARRY
    s.current = asked[0]


def _carry_decision(s: GameState, seat: int, action: int, rng: np.random.Generator | None) -> None:
    """``CARRY_OVER``: deal the round with ``seat``'s hand face up as table hand 0.
    ``DECLINE_CARRY``: ask the next seat, or deal the usual Switch round."""
    order, seats = s._carry_deal
    if action == CARRY_OVER:
        hand = list(s.hands[seat])
        s._carry_events.append(_new(Event, (ev.CARRY_OVER, seat, tuple(hand))))
        _deal(s, order, seats, rng, carried=hand)
        return
    s._carry_events.append(_new(Event, (ev.DECLINE_CARRY, seat, None)))
    s.carry_seats = s.carry_seats[1:]
    if s.carry_seats:
        s.current = s.carry_seats[0]
        return
    _deal(s, order, seats, rng)


def _deal(
    s: GameState,
    order: list[int],
    seats: list[int],
    rng: np.random.Generator | None,
    carried: list[int] | None = None,
) -> None:
    """Deal the round from ``order`` (top first) to ``seats`` (from the dealer's left)
    and start it; ``carried``: the hand laid face up by a Switch carry-over."""
    n = s.num_players
    dealer = s.dealer
    k = len(seats)
    hands: list[list[int]] = [[] for _ in range(n)]
    plain = s.stock_game
    if plain:  # the stock game: the table, muck and Switch pair stay empty
        for i, seat in enumerate(seats):
            hands[seat] = [order[i], order[i + k], order[i + 2 * k]]
        upcard = order[3 * k]
        s.discard = [upcard]
        s.stock = order[: 3 * k : -1]
    else:
        s.table = []
        s.table_up = []
        s.muck = []
        s.muck_up = 0
        s.dealt_pair = None
        upcard = _deal_table(s, order, seats, hands, carried)
    s.hands = hands
    if s.scored:
        s.score_start = s.score[:]
        if s.rules.scoring == "chips":
            for p in seats:
                paid = min(s.rules.ante, s.score[p])
                s.score[p] -= paid
                s.pot += paid
    _reset_round(s)
    events = s._carry_events
    if events:
        s.carry_seats = []
        s._carry_deal = None
        s._carry_events = []
    if plain:
        s.history = [_new(Event, (ev.DEAL, dealer, (tuple(map(tuple, hands)), upcard, tuple(s.lives))))]
        values = s._table
        blitz = s._blitz
        for p in seats:
            h = hands[p]
            if values[h[0] * PAIR_STRIDE + h[1] * NUM_CARDS + h[2]] == blitz:
                _after_deal(s, seats, rng)  # a dealt 31
                return
        s.phase = DRAW
        _begin_turn(s, seats[0], rng)
        return
    else:
        second = tuple(s.dealt_pair[1]) if s.dealt_pair is not None else None
        deal = (tuple(map(tuple, hands)), upcard, tuple(s.lives), tuple(map(tuple, s.table)), second)
        s.history = [_new(Event, (ev.DEAL, dealer, deal)), *events]
        if s.dealt_pair is not None:  # Switch: the dealer chooses a hand first
            s.phase = CHOOSE
            s.current = dealer
            return
    _after_deal(s, seats, rng)


def _after_deal(s: GameState, seats: list[int], rng: np.random.Generator | None) -> None:
    """Dealt 31s blitz at once; else the player after the dealer starts."""
    values = s._table
    blitz = s._blitz
    blitzers = tuple(p for p in seats if _value(values, s.hands[p]) == blitz)
    if blitzers:
        for p in blitzers:
            s.history.append(_new(Event, (ev.BLITZ, p, "dealt")))
        _settle_blitz(s, blitzers, "dealt")
        return
    s.phase = DRAW
    _begin_turn(s, seats[0], rng)


def _deal_table(
    s: GameState, order: list[int], seats: list[int], hands: list[list[int]], carried: list[int] | None = None
) -> int:
    """Deal a variant's table (see ``Rules.table``); returns the upcard (-1: none).

    Widow: one card to each player, three face-down widow cards, two more rounds, the
    upcard, the stock. Switch: three rounds of one card to each player, to the dealer's
    second hand and to the face-down table hand; the rest is the stock (for renewals).
    A Switch carry-over (``carried``): the carried hand lies face up as table hand 0 and
    ``order`` without its three cards deals three rounds to each player and to the
    face-down hand (no second hand: the dealer has no choice), the rest the stock.
    Bus: three rounds to the players, then three face-up table cards.
    """
    k = len(seats)
    kind = s.rules.table
    s.discard = []
    if kind == "widow":
        for i, seat in enumerate(seats):
            hands[seat] = [order[i], order[k + 3 + i], order[2 * k + 3 + i]]
        s.table = [order[k : k + 3]]
        s.table_up = [[False, False, False]]
        upcard = order[3 * k + 3]
        s.discard = [upcard]
        s.stock = order[: 3 * k + 3 : -1]
        return upcard
    if kind == "switch":
        if carried:
            out = set(carried)
            order = [c for c in order if c not in out]
        m = k + 1 if carried else k + 2
        rows = [[order[r * m + i] for r in range(3)] for i in range(m)]
        for i, seat in enumerate(seats):
            hands[seat] = rows[i]
        if carried:
            s.table = [list(carried), rows[k]]
        else:
            s.dealt_pair = (hands[seats[-1]], rows[k])  # the dealer is the last seat dealt
            s.table = [[-1, -1, -1], rows[k + 1]]
        s.table_up = [[True, True, True], [False, False, False]]
        s.stock = order[: 3 * m - 1 : -1]
        return -1
    for i, seat in enumerate(seats):  # bus
        hands[seat] = [order[i], order[i + k], order[i + 2 * k]]
    s.table = [order[3 * k : 3 * k + 3]]
    s.table_up = [[True, True, True]]
    s.stock = order[: 3 * k + 2 : -1]
    return -1


def _value(values: tuple, h: list[int]) -> float:
    return values[h[0] * PAIR_STRIDE + h[1] * NUM_CARDS + h[2]]


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


def legal_actions(s: GameState) -> list[int]:
    """Legal action ids for the player to act, ascending; empty when the round is over."""
    if not s.stock_game:
        return _table_actions(s)
    return _stock_actions(s)


def _stock_actions(s: GameState) -> list[int]:
    """Legal actions of a turn with the stock and the discard pile."""
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
            s.history.append(_DRAWN[seat][card])
            return
        if action == TAKE_DISCARD and s.discard:
            card = s.discard.pop()
            s.hands[seat].append(card)
            s.drawn = card
            s.took = card
            s.known[seat] |= 1 << card
            s.phase = DISCARD
            s.history.append(_TAKEN[seat][card])
            return
        if action == KNOCK and s.knocker < 0 and s.player_turns[seat] >= s._kft:
            s.knocker = seat
            s.final_left = sum(s.active) - 1
            s.history.append(_new(Event, (ev.KNOCK, seat, _value(s._table, s.hands[seat]))))
            _end_turn(s, seat, rng)
            return
        if action == STAND and s.knocker >= 0 and s._stand_ok:
            s.history.append(_new(Event, (ev.STAND, seat, _value(s._table, s.hands[seat]))))
            if s._blitz_late and _value(s._table, s.hands[seat]) == s._blitz:
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
            if s._table[hand[0] * PAIR_STRIDE + hand[1] * NUM_CARDS + hand[2]] == s._blitz and (
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
        s.history.append(_new(Event, (ev.KNOCK, seat, _value(s._table, s.hands[seat]))))
        _end_turn(s, seat, rng)
        return
    if action == STAND:
        if s.phase == DRAW:
            s.history.append(_new(Event, (ev.STAND, seat, _value(s._table, s.hands[seat]))))
        else:
            s.history.append(_new(Event, (ev.END_TURN, seat, None)))
        _turn_done(s, seat, rng)
        return
    outcome = apply_table_move(s, seat, action)
    if outcome == "continue":
        hand = s.hands[seat]
        if s._table[hand[0] * PAIR_STRIDE + hand[1] * NUM_CARDS + hand[2]] == s._blitz and s.knocker < 0:
            _blitz_turn(s, seat)
            return
        s.phase = CONTINUE
        return
    _turn_done(s, seat, rng)


def _turn_done(s: GameState, seat: int, rng: np.random.Generator | None) -> None:
    """A turn that changed the hand is over: blitz on 31, else the next turn."""
    hand = s.hands[seat]
    if s._table[hand[0] * PAIR_STRIDE + hand[1] * NUM_CARDS + hand[2]] == s._blitz and (
        s.knocker < 0 or s._blitz_late
    ):
        _blitz_turn(s, seat)
        return
    _end_turn(s, seat, rng)


def _illegal_message(s: GameState, action: object) -> str:
    from thirtyone_env.game.actions import action_name

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
    s.history.append(_new(Event, (ev.BLITZ, seat, "turn")))
    _settle_blitz(s, (seat,), "turn")


def _in_round(s: GameState) -> list[int]:
    return [p for p in range(s.num_players) if s.active[p]]


def _settle_blitz(s: GameState, blitzers: tuple[int, ...], detail: str) -> None:
    """Everyone not holding 31 loses one life (points and chips: see :func:`_score_round`)."""
    values = s._table
    losses = [0] * s.num_players
    for p in _in_round(s):
        if _value(values, s.hands[p]) != s._blitz:
            losses[p] = 1
    blitzers = tuple(p for p in _in_round(s) if losses[p] == 0)
    knocker = s.knocker if s.knocker >= 0 else None
    if s.rules.scoring != "lives":
        _score_round(s, BLITZ, detail, knocker, blitzers)
        return
    _settle(s, BLITZ, detail, losses, knocker, blitzers)


def _settle_showdown(s: GameState, reason: str, knocker: int) -> None:
    """Lowest hand(s) lose 1; a knocker strictly lowest pays ``knocker_penalty``."""
    if s.rules.scoring != "lives":
        _score_round(s, reason, reason, knocker if knocker >= 0 else None, ())
        return
    table = s._table
    values = tuple(table[h[0] * PAIR_STRIDE + h[1] * NUM_CARDS + h[2]] if h else None for h in s.hands)
    low = min(v for v in values if v is not None)
    tied = [p for p, v in enumerate(values) if v == low]
    losses = [0] * s.num_players
    rules = s.rules
    if knocker in tied:
        if len(tied) == 1 or rules.knocker_tie == "knocker_pays_penalty":
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
        values = tuple(
            table[h[0] * PAIR_STRIDE + h[1] * NUM_CARDS + h[2]] if len(h) == 3 else None for h in s.hands
        )
    if s.rules.scoring != "lives":  # a void round: nobody scores, the pot stays
        gains = [0] * s.num_players
        out: tuple[int, ...] = ()
        if s.rules.scoring == "chips":  # the ante was paid: whoever has no chips left is out
            players = [p for p in range(s.num_players) if s.active[p] and s.hands[p]]
            out = _chip_standings(s, players, gains)
        _finish_scored(s, reason, detail, gains, knocker, blitzers, values, out)
        return
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
        tuple(-x for x in losses),
        tuple(lives),
    )
    s.result = result
    s.history.append(_new(Event, (ev.SETTLE, -1, result)))
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


def _rank_points(values: dict[int, float], knocker: int | None) -> dict[int, int]:
    """No-elimination points by rank: lowest 1 (knocker 0), middle 2 (knocker 1),
    highest 3 (knocker 4). Ties take the best rank they share; with one player, high."""
    points = {}
    top = max(values.values())
    low = min(values.values())
    lowest_alone = sum(1 for v in values.values() if v == low) == 1 and low != top
    for p, v in values.items():
        if v == top:
            rank = 2
        elif v == low and lowest_alone:
            rank = 0
        else:
            rank = 1
        points[p] = ((0, 1, 4) if p == knocker else (1, 2, 3))[rank]
    return points


def _score_round(
    s: GameState, reason: str, detail: str, knocker: int | None, blitzers: tuple[int, ...]
) -> None:
    """Settle a points or chips round (see ``Rules.scoring``)."""
    table = s._table
    values = tuple(_value(table, h) if len(h) == 3 else None for h in s.hands)
    players = [p for p in range(s.num_players) if values[p] is not None]
    gains = [0] * s.num_players
    if s.rules.scoring == "points":
        others = {p: values[p] for p in players if p not in blitzers}
        if others:
            for p, pts in _rank_points(others, knocker).items():
                gains[p] = pts
        for p in blitzers:
            gains[p] = 6
        for p in players:
            s.score[p] += gains[p]
        _finish_scored(s, reason, detail, gains, knocker, blitzers, values, ())
        return
    # chips: the ante is already in the pot
    if blitzers:
        for p in players:
            if p not in blitzers:
                paid = min(s.rules.blitz_chips, s.score[p])
                s.score[p] -= paid
                s.pot += paid
                gains[p] -= paid
        winners = list(blitzers)
    else:
        best = max(values[p] for p in players)
        winners = [p for p in players if values[p] == best]
    share = s.pot // len(winners)
    for p in winners:
        s.score[p] += share
    s.pot -= share * len(winners)
    out = _chip_standings(s, players, gains)
    _finish_scored(s, reason, detail, gains, knocker, blitzers, values, out)


def _chip_standings(s: GameState, players: list[int], gains: list[int]) -> tuple[int, ...]:
    """Chips games: fill ``gains`` with each player's change over the round (the ante
    and any blitz payment included) and put out whoever has no chips left, unless that
    is everyone (no game ends without a winner). Returns those put out."""
    for p in players:
        gains[p] = s.score[p] - s.score_start[p]
    out = tuple(p for p in players if s.score[p] <= 0)
    if len(out) == len(players):
        out = ()
    for p in out:
        s.active[p] = False
    return out


def _finish_scored(
    s: GameState,
    reason: str,
    detail: str,
    gains: list[int],
    knocker: int | None,
    blitzers: tuple[int, ...],
    values: tuple,
    out: tuple[int, ...],
) -> None:
    """Record a points/chips round and decide whether the game is over."""
    result = RoundResult(
        s.round_no,
        s.dealer,
        reason,
        detail,
        (0,) * s.num_players,
        values,
        knocker,
        blitzers,
        out,
        tuple(s.lives),
        tuple(gains),
        tuple(s.score),
    )
    s.result = result
    s.history.append(_new(Event, (ev.SETTLE, -1, result)))
    s.drawn = -1
    s.took = -1
    remaining = [p for p in range(s.num_players) if s.active[p]]
    rules = s.rules
    last = s.round_no >= (rules.num_rounds if rules.scoring == "points" else rules.max_rounds)
    if len(remaining) == 1:
        s.winners = (remaining[0],)
        s.phase = GAME_OVER
    elif last:
        best = max(s.score[p] for p in remaining)
        s.winners = tuple(p for p in remaining if s.score[p] == best)
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
    table: Sequence[Sequence[int]] = (),
    table_up: Sequence[Sequence[bool]] = (),
    muck: Sequence[int] = (),
    muck_up: int | None = None,
    score: Sequence[int] | None = None,
    pot: int = 0,
) -> GameState:
    """A state in the middle of a round, from its parts: for search players that
    sample the cards they cannot see (determinization) and play the rest out.

    ``stock`` is top card LAST, ``discard`` top card last; ``final_left`` is, with a
    knock pending, the number of turns still to be played before the showdown
    (counting the current one); ``muck_up`` is the bitmask of the face-up cards in
    ``muck`` (default: all of them). Per-seat turn counts follow from ``turns_played``,
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
    s.table = [list(t) for t in table]
    s.table_up = [list(u) for u in table_up]
    s.muck = list(muck)
    s.muck_up = sum(1 << c for c in s.muck) if muck_up is None else muck_up
    s.dealt_pair = None
    s.carry_seats = []
    s._carry_deal = None
    s._carry_events = []
    s.score = list(score) if score is not None else [0] * n
    s.score_start = s.score[:]
    s.pot = pot
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
    c.table = [t[:] for t in s.table]
    c.table_up = [u[:] for u in s.table_up]
    c.muck = s.muck[:]
    c.score = s.score[:]
    c.carry_seats = s.carry_seats[:]
    c._carry_events = s._carry_events[:]
    return c


def card_locations(s: GameState) -> dict[int, str]:
    """Where each card of the deck is: ``"hand<seat>"``, ``"stock"``, ``"discard"``,
    ``"table<t>"``, ``"muck"`` or ``"dealer_second_hand"`` (Switch, before the choice).

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
    for t, cards in enumerate(s.table):
        for c in cards:
            if c >= 0:
                put(c, f"table{t}")
    if s.dealt_pair is not None:
        for c in s.dealt_pair[1]:
            put(c, "dealer_second_hand")
    for c in s.muck:
        put(c, "muck")
    missing = set(s.rules.deck_cards) - set(where)
    assert not missing, f"cards missing: {sorted(format_card(c) for c in missing)}"
    return where
