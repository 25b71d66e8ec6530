"""The rules of Thirty-One as one frozen dataclass, with named presets.

Every option of ``docs/RULES.md`` is a field of :class:`Rules`; every named rule book is
a preset (``Rules.preset("pagat")``). Validation happens in ``__post_init__`` so an
invalid ``Rules`` can never exist.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from thirtyone_env.game.cards import DECKS

MIN_PLAYERS = 2
MAX_PLAYERS = 7  #: the seed: "for two to seven players"
#: Upper bound of every count option (lives, chips, ante, rounds, turn limits, ...).
#: Far beyond any real game, and small enough that every count the compiled backend
#: keeps in 32-bit integers (lives, lives lost over a game, turn and round counters)
#: stays far from overflow, so both backends play every allowed value alike.
MAX_COUNT = 1_000_000

KNOCKER_TIES = ("knocker_pays", "knocker_safe", "all_lose", "knocker_pays_penalty")
STOCK_EXHAUSTED = ("void", "reshuffle", "showdown")
THREE_OF_A_KIND = (None, 30, 30.5)
SCORINGS = ("lives", "points", "chips")
TABLES = ("stock", "widow", "switch", "bus")
HAND_RANKINGS = ("points", "brag")
#: Cards a table layout deals besides the players' hands (the upcard included).
TABLE_CARDS = {"stock": 1, "widow": 4, "switch": 6, "bus": 3}


@dataclass(frozen=True)
class Rules:
    """All options of a game of Thirty-One. Defaults are the seed's standard game.

    Attributes:
        deck: ``"standard52"`` (52 cards) or ``"piquet32"`` (7..A of each suit, Dutch).
        lives: lives each player starts with (the seed's four corners of the bill).
        free_ride: at 0 lives a player is "on the bike" and plays on, going out when a
            loss would take them below 0. ``False``: a player is out on reaching 0.
        three_of_a_kind: ``None`` (no special value), ``30`` or ``30.5``: the value of
            three cards of one rank. All such hands are equal.
        knock_from_turn: first turn number, counted per player within a round, on which
            that player may knock (1 = any turn).
        allow_discard_return: whether the card just taken from the discard pile may be
            discarded again in the same turn. (Taking back one's own discard from an
            earlier turn, as in the two-player case after a knock, is always allowed.)
        stand_after_knock: whether a player's last turn after a knock may be a stand
            (keep the hand, neither draw nor discard).
        blitz_after_knock: whether completing a last turn after a knock with 31 ends the
            round at once as a blitz. ``False`` (seed): the 31 simply scores at the
            showdown.
        knocker_penalty: lives the knocker loses when strictly lowest at the showdown.
        knocker_tie: when the knocker ties for lowest: ``"knocker_pays"`` (only the
            knocker loses 1), ``"knocker_safe"`` (the other tied players lose 1, the
            knocker nothing), ``"all_lose"`` (every tied player loses 1) or
            ``"knocker_pays_penalty"`` (cut-throat: a knocker who beats nobody loses
            ``knocker_penalty`` whether tied or strictly lowest; those tied with it lose
            nothing).
        stock_exhausted: what happens when a turn starts with an empty stock and no
            knock pending (checked before the player acts): ``"void"`` (the round ends,
            nobody loses), ``"reshuffle"`` (the discard pile but its top card is
            shuffled into a new stock; if that leaves no stock the round is void) or
            ``"showdown"`` (hands are settled as at a showdown with no knocker). With a
            knock pending the players left may only take the discard or stand.
        max_turns_per_round: a round in which this many turns (all players' together,
            knocks and stands included) have been played ends as void when the next
            turn would start, knock pending or not, so every game ends.
        max_rounds: a game that reaches this many rounds ends; the players with the
            most lives share first place.
        seats: ``None`` for any table of 2..7 players that the deck can deal
            (3 * n cards plus the table's, see ``table``); an int fixes the table size
            (the Blitz31 program's 4).
        scoring: what a round settles: ``"lives"`` (the standard game), ``"points"``
            (no elimination: every round scores points to a running total, see
            ``num_rounds``) or ``"chips"`` (banking: ``ante`` to the pot each round, the
            best hand takes it, a player without chips is out).
        num_rounds: with ``scoring="points"``, the game's length in rounds; the highest
            total wins (ties share).
        chips: with ``scoring="chips"``, each player's starting chips.
        ante: with ``scoring="chips"``, chips each player puts in the pot every round.
        blitz_chips: with ``scoring="chips"``, chips every other player adds to the pot
            when a blitz ends the round (the blitzer then takes the pot).
        table: the turn structure. ``"stock"``: draw from the stock or the discard pile
            (the standard game). ``"widow"`` (banking): as ``"stock"``, plus three
            face-down widow cards; instead of drawing a player may exchange one to three
            cards of the hand for as many widow cards, and the cards given lie face up.
            ``"switch"``: no stock draws; the dealer is dealt two hands and keeps one, the
            other lies face up beside a face-down table hand; a turn swaps one card or the
            whole hand with a table hand, or renews a table hand from the stock (face down:
            the turn ends; face up: the turn goes on), or knocks. ``"bus"`` (Stop the Bus):
            three face-up table cards; a turn exchanges exactly one or all three cards
            with them, after which the player may knock ("stop the bus").
        hand_ranking: ``"points"`` (a hand is worth its best single-suit sum) or
            ``"brag"`` (three-card Brag: prial > running flush > run > flush > pair > high
            card; no 31 and so no blitz).
        ace_low_run: with ``hand_ranking="brag"``, whether A-2-3 is a run (the lowest);
            Q-K-A is always the highest.
        carry_over: with ``table="switch"`` only: a player still in the game who ended
            the last round holding three cards of one suit worth more than 21 is offered,
            at the start of the next round, to lay that hand face up as the new face-up
            table hand (``CARRY_OVER`` or ``DECLINE_CARRY``; see "Switch carry-over"
            below).

    Every count option (``lives``, ``knock_from_turn``, ``knocker_penalty``,
    ``max_turns_per_round``, ``max_rounds``, ``num_rounds``, ``chips``, ``ante``,
    ``blitz_chips``) is an int of at most ``MAX_COUNT`` (a million), so both backends
    play every allowed value alike and no count overflows.

    Where the variant sections of docs/RULES.md leave a point open, the engine decides so
    (docs/RULES.md, "Interpretations of this implementation"):

    - Cut throat: "beats nobody" means a hand no higher than every other; then only the
      knocker pays (``knocker_penalty``), tied or strictly lowest.
    - Points: with ties each player takes the best rank it shares; "lowest" needs a
      hand strictly below all others; after a blitz every hand is ranked, the 31 the
      highest (6 instead of 3) and the others below it, the knocker's 0/1 still
      applying, and every hand is laid down and shown, as after a knock (the seed:
      "all players show their hands"); a void round scores nothing.
    - Banking: the widow gets one face-down card after each round of the deal (one
      card to each player); widow exchanges are allowed in the last turns after a knock too (they
      replace a draw); a player short of the ante or the blitz chip pays what it has;
      the odd chips of a split pot stay for the next round; a void round keeps the pot.
    - Switch: dealt one card at a time to each player, the dealer's second hand and
      the face-down hand; the dealer sees both hands and keeps one before play (a
      dealt 31 is checked after that choice); renewed cards go out of play (face-up
      ones stay public) and need three stock cards; after a face-up renewal the player
      swaps or ends the turn (``STAND``); a hand given to a table hand lies face up.
    - Stop the Bus: the bus can stop only right after an exchange (``KNOCK`` in the
      continue phase, from ``knock_from_turn``); after a knock each other player has
      one turn, an exchange (the preset sets ``stand_after_knock=False``: every turn
      exchanges); the rest of the deck is not used; within a Brag class hands compare
      by the highest card or the pair, then the middle card or the kicker, then the
      lowest (the seed: K-K-2 beats Q-Q-A).
    - Switch carry-over (``carry_over``): the offer comes at the start of the round
      that follows a settled round that did not end the game. Each player still in the
      game whose last-round hand is three cards of one suit worth more than 21 is
      offered it in turn, in the new round's order of play (from the new dealer's
      left); the first who accepts lays that hand face up as table hand 0; everybody,
      the carrier too, is dealt a fresh hand and the face-down table hand is dealt anew
      from the other cards (the round's shuffled deck without the three carried ones,
      one card at a time to each player and to the face-down hand); the dealer then
      has no choice of hands and play starts from the dealer's left as usual. If
      nobody accepts, the round is the usual Switch deal (with the dealer's choice).
      Who is asked: after a showdown (a knock, or the empty stock) every hand was
      shown, so only the qualifying players are asked; after a round whose hands were
      not all shown (a void round, a blitz) every player still in is asked in turn, and
      one whose hand does not qualify may only decline (``DECLINE_CARRY``), so that
      whose turn it is (seen by all, e.g. the PettingZoo env's ``agent_selection``)
      tells nothing of a hidden hand. A decline is silent: no other seat's
      observation, view or table log shows it.
    """

    deck: str = "standard52"
    lives: int = 4
    free_ride: bool = True
    three_of_a_kind: float | None = None
    knock_from_turn: int = 1
    allow_discard_return: bool = False
    stand_after_knock: bool = True
    blitz_after_knock: bool = False
    knocker_penalty: int = 2
    knocker_tie: str = "knocker_pays"
    stock_exhausted: str = "void"
    max_turns_per_round: int = 200
    max_rounds: int = 1000
    seats: int | None = None
    scoring: str = "lives"
    num_rounds: int = 10
    chips: int = 20
    ante: int = 1
    blitz_chips: int = 1
    table: str = "stock"
    hand_ranking: str = "points"
    ace_low_run: bool = True
    carry_over: bool = False

    def __post_init__(self) -> None:
        _check_choice("deck", self.deck, tuple(DECKS))
        _check_choice("three_of_a_kind", self.three_of_a_kind, THREE_OF_A_KIND)
        _check_choice("knocker_tie", self.knocker_tie, KNOCKER_TIES)
        _check_choice("stock_exhausted", self.stock_exhausted, STOCK_EXHAUSTED)
        _check_choice("scoring", self.scoring, SCORINGS)
        _check_choice("table", self.table, TABLES)
        _check_choice("hand_ranking", self.hand_ranking, HAND_RANKINGS)
        _check_bool("ace_low_run", self.ace_low_run)
        _check_int("num_rounds", self.num_rounds, 1)
        _check_int("chips", self.chips, 1)
        _check_int("ante", self.ante, 0)
        _check_int("blitz_chips", self.blitz_chips, 0)
        _check_bool("carry_over", self.carry_over)
        if self.carry_over and self.table != "switch":
            raise ValueError(
                f"Rules.carry_over=True is not allowed with table={self.table!r}: "
                "the carry-over is a Switch rule (table='switch')"
            )
        for name in ("free_ride", "allow_discard_return", "stand_after_knock"):
            _check_bool(name, getattr(self, name))
        _check_bool("blitz_after_knock", self.blitz_after_knock)
        _check_int("lives", self.lives, 1)
        _check_int("knock_from_turn", self.knock_from_turn, 1)
        _check_int("knocker_penalty", self.knocker_penalty, 1)
        _check_int("max_turns_per_round", self.max_turns_per_round, 1)
        _check_int("max_rounds", self.max_rounds, 1)
        if self.seats is not None:
            _check_int("seats", self.seats, MIN_PLAYERS)
            self.check_num_players(self.seats)

    @property
    def deck_cards(self) -> tuple[int, ...]:
        """The card ids of this deck, in id order."""
        return DECKS[self.deck]

    @property
    def max_players(self) -> int:
        """Largest table this deck can deal (3 cards each plus the table's cards: the
        upcard, the widow, Switch's two extra hands, the bus's three), at most 7 (the seed)."""
        return min(MAX_PLAYERS, (len(self.deck_cards) - TABLE_CARDS[self.table]) // 3)

    @property
    def blitz_value(self) -> float:
        """The hand value that blitzes (31), or -1 where none does (Brag ranking)."""
        return 31 if self.hand_ranking == "points" else -1

    def check_num_players(self, num_players: int) -> int:
        """Return ``num_players`` if these rules allow it, else raise ``ValueError``."""
        if isinstance(num_players, bool | np.bool_) or not isinstance(num_players, int | np.integer):
            raise ValueError(f"num_players must be an int, got {num_players!r}")
        num_players = int(num_players)  # a NumPy integer (a sweep's np.arange) as a plain int
        if not MIN_PLAYERS <= num_players <= self.max_players:
            raise ValueError(
                f"num_players={num_players} is not allowed with deck={self.deck!r}: "
                f"allowed {MIN_PLAYERS}..{self.max_players}"
            )
        if self.seats is not None and num_players != self.seats:
            raise ValueError(f"num_players={num_players} is not allowed: these rules fix seats={self.seats}")
        return num_players

    def replace(self, **changes: Any) -> Rules:
        """A copy with some fields changed (validated like any ``Rules``)."""
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise ValueError(f"unknown rules option(s) {sorted(unknown)}; options are {field_names()}")
        return dataclasses.replace(self, **changes)

    @staticmethod
    def preset(name: str) -> Rules:
        """The rules of a named rule book. ``Rules.preset("pagat")``.

        - ``standard``: the seed text (Russian Wikipedia, "Thirty-one"): every default.
        - ``pagat``: pagat.com's "31 (Scat)": 3 lives with a free ride, a knocker tied for
          lowest is safe, the stock is reshuffled when it runs out.
        - ``blitz31``: the open-source Windows game Blitz31: 4 seats, 4 lives, knocker
          safe on a tie, a 31 after a knock still blitzes, an empty stock forces a
          showdown.
        - ``dutch``: Dutch *Eenendertigen*: the 32-card piquet deck, three of a kind 30.5.
        - ``cut_throat``: West-Lansing Cut Throat (the seed's variant section): 3 lives
          and no free ride, three of a kind 30.5, a knocker who beats nobody pays 2 and
          those tied with it nothing.
        - ``no_elimination``: the seed's points game: 10 rounds, lowest hand 1 point
          (knocker 0), middle 2 (knocker 1), highest 3 (knocker 4), a blitz 6; a 31
          made on a last turn after a knock is a blitz too (the seed: each other
          player may "possibly get a blitz"), so ``blitz_after_knock=True``.
        - ``banking``: the seed's widow-and-pot game (as pagat.com's "31" with a widow):
          20 chips, ante 1, a three-card widow to exchange with, best hand takes the pot;
          the game ends when one player has all the chips or after 100 rounds (most
          chips win: the seed sets no end, and chip games between equals run long).
        - ``switch``: the seed's Switch: no stock draws, swaps with two table hands,
          and the carry-over of a one-suit hand worth more than 21 (``carry_over``).
        - ``stop_the_bus``: the seed's (and pagat.com's) Stop the Bus: Brag ranking,
          three face-up table cards, exchange one or all three (every turn, the last
          turns after a stop too), 3 lives, no free ride, the weakest hand(s) lose 1.

        House rules are a preset with changes, ``PRESET:OPTION=VALUE,...``:
        ``Rules.preset("standard:lives=5,knock_from_turn=2")`` (values as the fields take
        them: ``true``/``false``, numbers, ``none``, names), checked as any ``Rules``.
        """
        base, colon, changes = name.partition(":") if isinstance(name, str) else (name, "", "")
        try:
            rules = PRESETS[base]
        except (KeyError, TypeError):
            raise ValueError(f"unknown rules preset {base!r}; presets are {sorted(PRESETS)}") from None
        return rules.replace(**_changes(changes, name)) if colon else rules

    @staticmethod
    def resolve(rules: Rules | str | None) -> Rules:
        """Accept a ``Rules``, a preset name or house rules (:meth:`preset`), or ``None``
        (standard)."""
        if rules is None:
            return PRESETS["standard"]
        if isinstance(rules, Rules):
            return rules
        if isinstance(rules, str):
            return Rules.preset(rules)
        raise ValueError(f"rules must be a Rules or a preset name, got {rules!r}")


def house_spec(rules: Rules) -> str:
    """``rules`` as the shortest spec :meth:`Rules.preset` reads back: a preset's name,
    or the nearest preset with the fields that differ (``"standard:lives=2"``)."""

    def text(value: Any) -> str:
        return "none" if value is None else str(value).lower() if isinstance(value, bool) else str(value)

    specs = []
    for name, preset in PRESETS.items():
        changed = [
            f.name for f in dataclasses.fields(Rules) if getattr(rules, f.name) != getattr(preset, f.name)
        ]
        specs.append(
            (
                len(changed),
                name
                + "".join(
                    f"{',' if k else ':'}{key}={text(getattr(rules, key))}" for k, key in enumerate(changed)
                ),
            )
        )
    return min(specs)[1]


def _changes(text: str, spec: str) -> dict[str, Any]:
    """``OPTION=VALUE,...`` of a house-rules spec as typed field values (a ``ValueError``
    naming the spec and the part it cannot read)."""
    kinds = {f.name: str(f.type) for f in dataclasses.fields(Rules)}
    out: dict[str, Any] = {}
    for part in text.split(","):
        key, eq, raw = (x.strip() for x in part.partition("="))
        if not eq or not key:
            raise ValueError(f"rules {spec!r}: {part!r} is not OPTION=VALUE")
        if key not in kinds:
            raise ValueError(f"rules {spec!r}: unknown rules option {key!r}; options are {field_names()}")
        if key in out:
            raise ValueError(f"rules {spec!r}: {key!r} is given twice")
        kind, low = kinds[key], raw.lower()
        try:
            if "None" in kind and low == "none":
                out[key] = None
            elif kind == "bool":
                if low not in ("true", "false"):
                    raise ValueError
                out[key] = low == "true"
            elif kind.startswith("int"):
                if not raw.isascii():  # (int() reads other scripts' digits: a spec is ASCII)
                    raise ValueError
                out[key] = int(raw)
            elif kind.startswith("float"):
                if not raw.isascii():
                    raise ValueError
                out[key] = float(raw)
            else:
                out[key] = raw
        except ValueError:
            want = "true or false" if kind == "bool" else kind.replace("None", "none").replace(" | ", " or ")
            raise ValueError(f"rules {spec!r}: {key}={raw!r} must be {want}") from None
    return out


def field_names() -> list[str]:
    """Names of every rules option."""
    return [f.name for f in dataclasses.fields(Rules)]


def _check_choice(name: str, value: Any, allowed: tuple) -> None:
    ok = any(value == a and type(value) is not bool for a in allowed if a is not None)
    if value is None and None in allowed:
        ok = True
    if not ok:
        raise ValueError(f"Rules.{name}={value!r} is not allowed; allowed values: {list(allowed)}")


def _check_bool(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise ValueError(f"Rules.{name}={value!r} is not allowed; allowed values: [True, False]")


def _check_int(name: str, value: Any, minimum: int, maximum: int = MAX_COUNT) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        raise ValueError(
            f"Rules.{name}={value!r} is not allowed; allowed values: integers {minimum}..{maximum}"
        )


PRESETS: dict[str, Rules] = {
    "standard": Rules(),
    "pagat": Rules(
        lives=3,
        free_ride=True,
        knocker_tie="knocker_safe",
        allow_discard_return=False,
        stock_exhausted="reshuffle",
    ),
    "blitz31": Rules(
        seats=4,
        lives=4,
        free_ride=True,
        knocker_tie="knocker_safe",
        blitz_after_knock=True,
        stock_exhausted="showdown",
    ),
    "dutch": Rules(deck="piquet32", three_of_a_kind=30.5),
    "cut_throat": Rules(lives=3, free_ride=False, three_of_a_kind=30.5, knocker_tie="knocker_pays_penalty"),
    "no_elimination": Rules(scoring="points", num_rounds=10, blitz_after_knock=True),
    "banking": Rules(scoring="chips", table="widow", chips=20, ante=1, blitz_chips=1, max_rounds=100),
    "switch": Rules(table="switch", carry_over=True),
    "stop_the_bus": Rules(
        table="bus",
        hand_ranking="brag",
        lives=3,
        free_ride=False,
        knocker_penalty=1,
        knocker_tie="all_lose",
        stand_after_knock=False,
    ),
}
