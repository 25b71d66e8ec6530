"""Positions: a state built from its parts (:func:`from_position`, for search
players), an independent copy (:func:`clone_state`), where every card is
(:func:`card_locations`, for the invariant tests) and every seat's hand value
(:func:`hand_values`). Imports only :mod:`~thirtyone_env.game.state` of the engine's
modules.
"""

from __future__ import annotations

from collections.abc import Sequence

from thirtyone_env.game.cards import NUM_CARDS, format_card
from thirtyone_env.game.rules import Rules
from thirtyone_env.game.state import NUM_TALLY, GameState, _bind_rules, _value


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
    tally: Sequence[Sequence[int]] | None = None,
) -> GameState:
    """A state in the middle of a round, from its parts: for search players that
        sample the cards they cannot see (determinization) and play the rest out.

        ``stock`` is top card LAST, ``discard`` top card last; ``final_left`` is, with a
        knock pending, the number of turns still to be played before the showdown
        (counting the current one); ``muck_up`` is the bitmask of the face-up cards in
        ``muck`` (default: all of them); ``tally`` the seats' public counts over the game
    (``GameState.tally``; default: none yet). Per-seat turn counts follow from ``turns_played``,
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
    s.tally = [list(t) for t in tally] if tally is not None else [[0] * NUM_TALLY for _ in range(n)]
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
    table = s._values
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
    c.tally = [t[:] for t in s.tally]
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
