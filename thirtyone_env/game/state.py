"""The engine's state: :class:`GameState`, :class:`RoundResult`, the phases and the
reasons a round ends, and the few small helpers every other part of the engine reads
(a hand's value, the next seat still in, the rules cached on the state).

The bottom of the engine's modules: it imports no other of them (see
:mod:`thirtyone_env.game.engine` for the whole and the order of the parts).
"""

from __future__ import annotations

from typing import NamedTuple

from thirtyone_env.game.cards import NUM_CARDS, PAIR_STRIDE, format_card, hand_table
from thirtyone_env.game.rules import Rules

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


def hands_shown(reason: str, rules: Rules) -> bool:
    """Whether every hand is laid down when a round ends for ``reason``: at a showdown
    (a knock, or a stock run out where that is a showdown) and, in the points game,
    after a blitz too, whose points rank every hand (the seed: "whether a player knocks
    or shows a blitz, all players show their hands"). After a lives or chips game's
    blitz only the 31 is shown; after a void round, nothing."""
    return reason in (KNOCKED, STOCK_SHOWDOWN) or (reason == BLITZ and rules.scoring == "points")


# The public tally of each seat over the game's rounds (``GameState.tally[seat][T_*]``):
# what a real table sees of how a player plays, the opponent-history part of the
# observation (:mod:`thirtyone_env.game.encoding`). Hand values are counted doubled
# (whole numbers: a three of a kind is 30.5). The kernels keep the same columns
# (``batch_kernels``: numba bakes these numbers in; clear its cache after a change).
T_ROUNDS = 0  #: settled rounds the seat was dealt in
T_KNOCKS = 1  #: its knocks
T_KNOCK_TURNS = 2  #: the sum of its own turn numbers at its knocks
T_KNOCKS_SHOWN = 3  #: its knocks whose hands were shown (a showdown, not a blitz or void)
T_KNOCK_VALUE2 = 4  #: the sum of its doubled hand values shown at those knocks
T_SHOWDOWNS = 5  #: showdowns it was dealt in (hands shown)
T_SHOWN_VALUE2 = 6  #: the sum of its doubled hand values shown at them
T_DRAWS = 7  #: its draws, from the stock or the discard pile (this round's too)
T_PICKUPS = 8  #: its draws from the discard pile (this round's too)
NUM_TALLY = 9


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
    """Everything about a game in progress. Mutable; copy with
    :func:`~thirtyone_env.game.positions.clone_state`.

    Public fields (read them, change them only through the engine's functions):
    ``rules``, ``num_players``, ``lives``, ``active`` (still in the game), ``dealer``,
    ``round_no``, ``hands`` (lists of card ids), ``stock`` (top card LAST), ``discard``
    (top card last), ``current`` (seat to act), ``phase``, ``knocker`` (-1: none),
    ``turn`` (turns started this round), ``player_turns`` (per seat), ``known``
    (per seat, bitmask of cards publicly known in that hand: taken from the discard
    pile and not discarded since), ``discards`` (public: ``(seat, card)`` for every
    discard this round, in order), ``disc_seat`` / ``disc_order`` (per card: who last
    discarded it and its index in ``discards``, -1 if never),
    ``drawn`` / ``took`` (the card drawn / taken from the discard pile this turn, -1),
    ``history`` (this round's events), ``tally`` (per seat, the public counts of its
    play over the game: ``T_*`` indexes), ``result`` (the last :class:`RoundResult`), ``winners``; for the
    variants ``table`` / ``table_up`` (table hands by slot and their face-up flags),
    ``muck`` / ``muck_up`` (cards out of play; bitmask of the public ones),
    ``dealt_pair`` (Switch: the dealer's two hands before the choice), ``score``
    (points or chips per seat), ``pot`` and ``carry_seats`` (Switch carry-over, phase
    ``CARRY``: the seats still to be asked, the one asked now first; else empty);
    ``stock_game`` (the rules deal no table: ``Rules.table == "stock"``) and ``scored``
    (points or chips in ``score``: ``Rules.scoring`` is not ``"lives"``), fixed by the
    rules, for readers such as the views; :attr:`hand_values` is the value lookup.

    The ``_``-prefixed fields are the engine's own (the rule values its hot path
    reads, the carry-over offer in progress): shared by the engine's modules
    (``state``, ``settle``, ``turns``, ``deal``, ``play``, ``positions``) and read by
    nothing outside them (a test checks it).
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
        "tally",
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
        "_values",
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
        return self._values

    def __repr__(self) -> str:
        hands = " | ".join(" ".join(format_card(c) for c in h) for h in self.hands)
        return (
            f"GameState(round={self.round_no}, phase={PHASE_NAMES[self.phase]}, "
            f"current={self.current}, lives={self.lives}, hands=[{hands}])"
        )


def _bind_rules(s: GameState, rules: Rules) -> None:
    """Cache the rule values the hot path reads on the state."""
    s.rules = rules
    s._values = hand_table(rules)
    s._blitz = rules.blitz_value
    s._draws = rules.table in ("stock", "widow")
    s.stock_game = rules.table == "stock"
    s.scored = rules.scoring != "lives"
    s._kft = rules.knock_from_turn
    s._return_ok = rules.allow_discard_return
    s._stand_ok = rules.stand_after_knock
    s._blitz_late = rules.blitz_after_knock
    s._max_turns = rules.max_turns_per_round


def _value(values: tuple, h: list[int]) -> float:
    return values[h[0] * PAIR_STRIDE + h[1] * NUM_CARDS + h[2]]


def _next_active(s: GameState, seat: int) -> int:
    n = s.num_players
    active = s.active
    seat = (seat + 1) % n
    while not active[seat]:
        seat = (seat + 1) % n
    return seat
