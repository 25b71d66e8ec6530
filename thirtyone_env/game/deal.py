"""The deal: new games, new rounds, deck orders, stacked decks and the Switch
carry-over offer.

:func:`new_game` and :func:`start_round` draw a round's deck order (:func:`_deck_order`:
one shuffle a round, or a stacked prefix over a shuffled rest; :func:`stacked_deck` and
:func:`stacked_table_deck` build stacked ones), deal the hands and, in the variants,
the table (:func:`_deal_table`), take the chips games' ante, and start the play
(:func:`_after_deal`: dealt 31s blitz at once, else the first turn). Under
``Rules.carry_over`` a round may first offer the seats their last hands
(:func:`carry_asked`, :func:`_offer_carry`, :func:`_carry_decision`). Imports
:mod:`~thirtyone_env.game.state`, :mod:`~thirtyone_env.game.settle` and
:mod:`~thirtyone_env.game.turns`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from thirtyone_env.game import events as ev
from thirtyone_env.game.actions import CARRY_OVER
from thirtyone_env.game.cards import CARD_VALUES, DECKS, NUM_CARDS, PAIR_STRIDE, format_card, parse_cards
from thirtyone_env.game.events import Event
from thirtyone_env.game.rules import Rules
from thirtyone_env.game.settle import _settle_blitz
from thirtyone_env.game.starts import check_standing
from thirtyone_env.game.state import (
    CARRY,
    CHOOSE,
    DRAW,
    KNOCKED,
    NUM_TALLY,
    PHASE_NAMES,
    ROUND_OVER,
    STOCK_SHOWDOWN,
    GameState,
    _bind_rules,
    _new,
    _next_active,
    _value,
)
from thirtyone_env.game.turns import _begin_turn

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
        order = [c for r in range(3) for c in [*(parsed[p][r] for p in seats), tab[r]]]
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


def new_game(
    rules: Rules | str | None,
    num_players: int,
    rng: np.random.Generator,
    *,
    dealer: int | None = None,
    deck: Sequence | None = None,
    lives: Sequence | None = None,
) -> GameState:
    """A new game, first round dealt: everyone at full lives, or at the standing
    ``lives`` (per seat its lives, ``None`` for a seat out; see
    :func:`~thirtyone_env.game.starts.check_standing`).

    ``dealer`` defaults to a seat in the game drawn from ``rng``; ``deck`` stacks the
    first deal (cards top first, the rest shuffled beneath).
    """
    rules = Rules.resolve(rules)
    n = rules.check_num_players(num_players)
    s = GameState()
    s.rules = rules
    s.num_players = n
    if lives is None:
        s.lives = [rules.lives] * n
        s.active = [True] * n
    else:
        standing = check_standing(rules, n, lives)
        s.lives = [0 if x is None else x for x in standing]
        s.active = [x is not None for x in standing]
    s.round_no = 0
    s.tally = [[0] * NUM_TALLY for _ in range(n)]
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
        seats_in = [p for p in range(n) if s.active[p]]
        dealer = seats_in[int(rng.integers(len(seats_in)))]
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
        values = s._values
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
    values = s._values
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

    Widow: three rounds of one card to each player and one face-down card to the widow
    (the seed: "after each player has received one card, the dealer lays one card face
    down ... to form a pile of three cards"), then the upcard, the stock. Switch: three rounds of one card to each player, to the dealer's
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
            hands[seat] = [order[r * (k + 1) + i] for r in range(3)]
        s.table = [[order[r * (k + 1) + k] for r in range(3)]]
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
