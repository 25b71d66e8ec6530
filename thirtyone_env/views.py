"""What one seat can see of the game: a structured public view plus its own hand.

``player_view(state, seat)`` holds exactly what a player at a real table knows: their
own cards, every face-up card and who played it, lives, who knocked, the size of the
stock. Opponents' hands appear only as the cards they were seen to take from the
discard pile and have not discarded since. Heuristic players read this; the encoders
turn the same facts into arrays.
"""

from __future__ import annotations

from typing import NamedTuple

from thirtyone_env.engine import DISCARD, DRAW, KNOCKED, PHASE_NAMES, STOCK_SHOWDOWN, GameState, RoundResult
from thirtyone_env.rules import Rules


def bits_to_cards(mask: int) -> tuple[int, ...]:
    """Card ids of the set bits of ``mask``, ascending."""
    cards = []
    while mask:
        low = mask & -mask
        cards.append(low.bit_length() - 1)
        mask ^= low
    return tuple(cards)


class PlayerView(NamedTuple):
    """One seat's view. Seats here are absolute; ``relative(p)`` turns one into the
    distance clockwise from this seat (0 = me, 1 = the player after me)."""

    seat: int
    num_players: int
    rules: Rules
    phase: str  #: "draw", "discard", "round_over" or "game_over"
    my_turn: bool  #: whether this seat is to act
    hand: tuple[int, ...]  #: own cards (4 while discarding)
    drawn: int  #: card drawn this turn (-1 unless discarding)
    took: int  #: card taken from the discard pile this turn (-1 if none)
    top_discard: int  #: -1 if the pile is empty
    discard_pile: tuple[int, ...]  #: bottom to top, all face up
    discards: tuple[tuple[int, int], ...]  #: (seat, card) for every discard this round, in order
    known: tuple[tuple[int, ...], ...]  #: per seat: cards known to be in that hand
    lives: tuple[int, ...]
    active: tuple[bool, ...]
    dealer: int
    knocker: int  #: -1 if nobody has knocked
    stock_size: int
    turn: int  #: this seat's turn number in the round (1 = first)
    round_no: int

    def relative(self, seat: int) -> int:
        return (seat - self.seat) % self.num_players


def player_view(s: GameState, seat: int) -> PlayerView:
    """The view of ``seat``: own hand, public cards, nothing hidden."""
    mine = s.current == seat and s.phase in (DRAW, DISCARD)
    discards = tuple((p, c) for kind, p, c in s.history if kind == "discard")
    known = tuple(tuple(s.hands[p]) if p == seat else bits_to_cards(s.known[p]) for p in range(s.num_players))
    return PlayerView(
        seat=seat,
        num_players=s.num_players,
        rules=s.rules,
        phase=PHASE_NAMES[s.phase],
        my_turn=mine,
        hand=tuple(s.hands[seat]),
        drawn=s.drawn if mine and s.phase == DISCARD else -1,
        took=s.took if mine else -1,
        top_discard=s.discard[-1] if s.discard else -1,
        discard_pile=tuple(s.discard),
        discards=discards,
        known=known,
        lives=tuple(s.lives),
        active=tuple(s.active),
        dealer=s.dealer,
        knocker=s.knocker,
        stock_size=len(s.stock),
        turn=s.player_turns[seat],
        round_no=s.round_no,
    )


def describe_view(v: PlayerView) -> str:
    """Human-readable text of a view (the env's ``ansi`` render)."""
    from thirtyone_env.cards import format_cards, hand_value

    lines = [
        f"Round {v.round_no} | dealer: seat {v.dealer} | stock: {v.stock_size} cards"
        + (f" | seat {v.knocker} knocked" if v.knocker >= 0 else "")
    ]
    for p in range(v.num_players):
        tag = "you " if p == v.seat else "    "
        status = f"lives {v.lives[p]}" if v.active[p] else "out"
        if p == v.seat:
            cards = format_cards(v.hand)
            value = f" (value {hand_value(v.hand, v.rules)})" if len(v.hand) == 3 else ""
            lines.append(f"{tag}seat {p}: {status:<8} hand: {cards}{value}")
        else:
            known = format_cards(v.known[p]) or "-"
            lines.append(f"{tag}seat {p}: {status:<8} known: {known}")
    top = format_cards([v.top_discard]) if v.top_discard >= 0 else "-"
    lines.append(f"top discard: {top} | pile: {format_cards(v.discard_pile[:-1]) or '-'}")
    lines.append(f"phase: {v.phase}" + (" (your turn)" if v.my_turn else ""))
    return "\n".join(lines)


def public_result(result: RoundResult, seat: int) -> RoundResult:
    """The round result as ``seat`` sees it: hands are shown only at a showdown (and
    a blitzer shows the 31), so other seats' values are ``None`` after a void round or
    a blitz."""
    if result.reason in (KNOCKED, STOCK_SHOWDOWN):
        return result
    shown = set(result.blitzers) | {seat}
    values = tuple(v if p in shown else None for p, v in enumerate(result.values))
    return result._replace(values=values)
