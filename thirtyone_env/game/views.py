"""What one seat can see of the game: a structured public view plus its own hand.

``player_view(state, seat)`` holds exactly what a player at a real table knows: their
own cards, every face-up card and who played it, lives, who knocked, the size of the
stock. Opponents' hands appear only as the cards they were seen to take from the
discard pile and have not discarded since. Heuristic players read this; the encoders
turn the same facts into arrays.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from thirtyone_env.game.engine import (
    CARRY,
    CHOOSE,
    DISCARD,
    PHASE_NAMES,
    ROUND_OVER,
    GameState,
    RoundResult,
    carry_qualifies,
)
from thirtyone_env.game.rules import Rules
from thirtyone_env.game.state import hands_shown

_BITS: dict[int, tuple[int, ...]] = {0: ()}


def bits_to_cards(mask: int) -> tuple[int, ...]:
    """Card ids of the set bits of ``mask``, ascending (memoised: few masks recur)."""
    cards = _BITS.get(mask)
    if cards is None:
        found = []
        m = mask
        while m:
            low = m & -m
            found.append(low.bit_length() - 1)
            m ^= low
        cards = tuple(found)
        if len(_BITS) < 100_000:
            _BITS[mask] = cards
    return cards


class PlayerView(NamedTuple):
    """One seat's view. Seats here are absolute; ``relative(p)`` turns one into the
    distance clockwise from this seat (0 = me, 1 = the player after me)."""

    seat: int
    num_players: int
    rules: Rules
    #: "draw", "discard", "choose" (the Switch dealer), "continue", "carry" (the Switch
    #: carry-over offer: ``hand`` is still the seat's last-round hand, the one it may lay
    #: face up), "round_over" or "game_over"
    phase: str
    my_turn: bool  #: whether this seat is to act
    hand: tuple[int, ...]  #: own cards (4 while discarding)
    drawn: int  #: card drawn this turn (-1 unless discarding)
    took: int  #: card taken from the discard pile this turn (-1 if none)
    top_discard: int  #: -1 if the pile is empty
    discard_pile: tuple[int, ...]  #: bottom to top, all face up
    discards: tuple[tuple[int, int], ...]  #: (seat, card) for every discard this round, in order
    known_masks: tuple[int, ...]  #: per seat: bitmask of cards known in that hand (see ``known``)
    lives: tuple[int, ...]
    active: tuple[bool, ...]
    dealer: int
    knocker: int  #: -1 if nobody has knocked
    stock_size: int
    turn: int  #: this seat's turn number in the round (1 = first)
    round_no: int
    turns_played: int  #: turns started this round, all seats together
    #: variants: table hands by slot, ``None`` for a face-down card (banking's widow,
    #: Switch's two table hands, Stop the Bus's three cards); () in the stock game and
    #: during the carry-over offer (the new table is not dealt yet)
    table: tuple[tuple[int | None, ...], ...] = ()
    muck: tuple[int, ...] = ()  #: face-up cards put out of play (Switch renewals)
    score: tuple[int, ...] = ()  #: points (no elimination) or chips (banking) per seat; () with lives
    pot: int = 0  #: banking: chips in the pot
    choice: tuple[tuple[int, ...], ...] = ()  #: Switch dealer choosing: the two dealt hands

    @property
    def known(self) -> tuple[tuple[int, ...], ...]:
        """Per seat: the cards known to be in that hand (own seat: the whole hand);
        an opponent's known cards are those it took from the discard pile and has not
        discarded since."""
        known = [bits_to_cards(m) for m in self.known_masks]
        known[self.seat] = self.hand
        return tuple(known)

    def known_of(self, seat: int) -> tuple[int, ...]:
        """The cards known to be in ``seat``'s hand (one seat of ``known``, cheaper)."""
        return self.hand if seat == self.seat else bits_to_cards(self.known_masks[seat])

    def relative(self, seat: int) -> int:
        return (seat - self.seat) % self.num_players

    def unseen(self) -> list[int]:
        """Cards this seat cannot see: the stock, opponents' unknown cards and any
        face-down table or mucked card."""
        seen = set(self.hand)
        seen.update(self.discard_pile)
        for m in self.known_masks:
            if m:
                seen.update(bits_to_cards(m))
        for cards in self.table:
            seen.update(c for c in cards if c is not None)
        seen.update(self.muck)
        for cards in self.choice:
            seen.update(cards)
        return [c for c in self.rules.deck_cards if c not in seen]

    def players_after(self) -> list[int]:
        """Seats still in, clockwise from the one after this seat."""
        n = self.num_players
        return [p for p in ((self.seat + k) % n for k in range(1, n)) if self.active[p]]

    def turns_taken(self) -> list[int]:
        """Per seat: turns started this round (public: turns go round in seat order
        from the dealer's left)."""
        n = self.num_players
        order = [p for p in ((self.dealer + k) % n for k in range(1, n + 1)) if self.active[p]]
        k = len(order)
        taken = [0] * n
        for idx, p in enumerate(order):
            taken[p] = max(0, (self.turns_played - idx + k - 1) // k)
        return taken

    def turns_left_after_knock(self) -> int:
        """With a knock pending: how many turns (including this seat's, if to act)
        remain before the showdown; -1 without a knock."""
        if self.knocker < 0:
            return -1
        n = self.num_players
        count = 0
        p = self.seat if self.my_turn else (self.seat + 1) % n
        while p != self.knocker:
            if self.active[p]:
                count += 1
            p = (p + 1) % n
        return count


_new_view = tuple.__new__  # builds the named tuple from all its fields at once (hot path)


def player_view(s: GameState, seat: int) -> PlayerView:
    """The view of ``seat``: own hand, public cards, nothing hidden."""
    phase = s.phase
    mine = s.current == seat and phase < ROUND_OVER
    table = choice = muck = ()
    if not s.stock_game and phase != CARRY:  # (the carry-over offer: last round's table is gone)
        table = tuple(
            tuple(c if up and c >= 0 else None for c, up in zip(cards, ups, strict=True))
            for cards, ups in zip(s.table, s.table_up, strict=True)
        )
        if mine and phase == CHOOSE and s.dealt_pair is not None:
            choice = tuple(tuple(h) for h in s.dealt_pair)
        if s.muck_up:
            muck = bits_to_cards(s.muck_up)
    return _new_view(
        PlayerView,
        (
            seat,
            s.num_players,
            s.rules,
            PHASE_NAMES[phase],
            mine,
            tuple(s.hands[seat]),
            s.drawn if mine and phase == DISCARD else -1,
            s.took if mine else -1,
            s.discard[-1] if s.discard else -1,
            tuple(s.discard),
            tuple(s.discards),
            tuple(s.known),
            tuple(s.lives),
            tuple(s.active),
            s.dealer,
            s.knocker,
            len(s.stock),
            s.player_turns[seat],
            s.round_no,
            s.turn,
            table,
            muck,
            tuple(s.score) if s.scored else (),
            s.pot,
            choice,
        ),
    )


def as_view(observation: Any, player: object) -> PlayerView:
    """``observation`` as the :class:`PlayerView` ``player`` reads; a ``TypeError``
    saying what to give it for anything else (a flat observation, say)."""
    if isinstance(observation, PlayerView):
        return observation
    raise TypeError(
        f"{type(player).__name__} reads a PlayerView (its obs_encoding is 'view'), not a "
        f"{type(observation).__name__}: give it player_view(state, seat), or seat it in an env, "
        "which hands each player the observation it asks for"
    )


def describe_view(v: PlayerView, spectator: bool = False) -> str:
    """Human-readable text of a view (the env's ``ansi`` render); ``spectator``: what a
    spectator of the table sees of it, the seat's own hand and choices left out (its
    publicly known cards shown as everyone's are)."""
    from thirtyone_env.game.cards import format_cards, hand_value

    lines = [
        f"Round {v.round_no} | dealer: seat {v.dealer} | "
        + ("not dealt yet (carry-over offer)" if v.phase == "carry" else f"stock: {v.stock_size} cards")
        + (f" | seat {v.knocker} knocked" if v.knocker >= 0 else "")
    ]
    for p in range(v.num_players):
        tag = "you " if p == v.seat and not spectator else "    "
        status = f"lives {v.lives[p]}" if v.active[p] else "out"
        if p == v.seat and not spectator:
            cards = format_cards(v.hand)
            value = f" (value {hand_value(v.hand, v.rules)})" if len(v.hand) == 3 else ""
            lines.append(f"{tag}seat {p}: {status:<8} hand: {cards}{value}")
        else:  # (a spectator knows of the seat's own hand what the others know)
            known = format_cards(bits_to_cards(v.known_masks[p])) or "-"
            lines.append(f"{tag}seat {p}: {status:<8} known: {known}")
    if v.rules.table in ("stock", "widow"):
        top = format_cards([v.top_discard]) if v.top_discard >= 0 else "-"
        lines.append(f"top discard: {top} | pile: {format_cards(v.discard_pile[:-1]) or '-'}")
    for t, cards in enumerate(v.table):
        shown = " ".join("??" if x is None else format_cards([x]) for x in cards)
        lines.append(f"table hand {t}: {shown}")
    if v.choice and not spectator:
        lines.append("your two dealt hands: " + " | ".join(format_cards(h) for h in v.choice))
    if v.phase == "carry" and v.my_turn and not spectator:
        if carry_qualifies(v.hand):
            lines.append(
                f"carry-over: lay your last hand {format_cards(v.hand)} face up as the new face-up table hand?"
            )
        else:  # asked so that being asked tells nothing (a round without a showdown)
            lines.append(
                f"carry-over: every seat is asked after a round without a showdown; your last hand "
                f"{format_cards(v.hand)} does not qualify: decline"
            )
    if v.rules.scoring != "lives":
        what = "points" if v.rules.scoring == "points" else "chips"
        lines.append(f"{what}: " + " ".join(f"seat {p}: {x}" for p, x in enumerate(v.score)))
        if v.rules.scoring == "chips":
            lines[-1] += f" | pot: {v.pot}"
    turn = (f" (seat {v.seat} to act)" if spectator else " (your turn)") if v.my_turn else ""
    lines.append(f"phase: {v.phase}{turn}")
    return "\n".join(lines)


def public_result(result: RoundResult, seat: int, rules: Rules) -> RoundResult:
    """The round result as ``seat`` sees it at a table of ``rules``: every value where
    every hand is laid down (:func:`~thirtyone_env.game.state.hands_shown`), else the
    blitzers' 31 and the seat's own, other seats' values ``None`` (after a lives or
    chips game's blitz, or a void round)."""
    if hands_shown(result.reason, rules):
        return result
    shown = set(result.blitzers) | {seat}
    values = tuple(v if p in shown else None for p, v in enumerate(result.values))
    return result._replace(values=values)
