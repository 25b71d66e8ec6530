"""Cards as ints, their text form, and hand values.

A card is an int ``suit * 13 + rank`` with suits in the order c, d, h, s and ranks
2..A as 0..12, so ``0`` is ``2c`` and ``51`` is ``As``. The 32-card piquet deck uses the
same 52 slots (ranks 7..A only).

Hand values come from a lookup table with an entry for every ordered triple of cards
(``a, b, c`` at :func:`triple_index`, ``a * PAIR_STRIDE + b * NUM_CARDS + c``; numba
kernels use the constants, not the function), built once per ``three_of_a_kind`` setting: scoring a hand is one list
index, which is what the engine's hot path needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from thirtyone_env.game.rules import Rules

SUITS = "cdhs"
RANKS = "23456789TJQKA"
NUM_CARDS = 52
#: The stride of a triple's first card in the hand-value lookup (52 * 52).
PAIR_STRIDE = NUM_CARDS * NUM_CARDS

#: Point value of each rank index: 2..10 face value, J Q K 10, ace 11.
RANK_VALUES: tuple[int, ...] = (2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10, 11)
#: Point value of each card id.
CARD_VALUES: tuple[int, ...] = tuple(RANK_VALUES[c % 13] for c in range(NUM_CARDS))

DECKS: dict[str, tuple[int, ...]] = {
    "standard52": tuple(range(NUM_CARDS)),
    "piquet32": tuple(c for c in range(NUM_CARDS) if c % 13 >= 5),
}


def triple_index(a: int, b: int, c: int) -> int:
    """Index of the ordered triple ``(a, b, c)`` in a hand-value lookup (:func:`value_table`,
    :func:`brag_table`); hot loops inline ``a * PAIR_STRIDE + b * NUM_CARDS + c``."""
    return a * PAIR_STRIDE + b * NUM_CARDS + c


def card_suit(card: int) -> int:
    """Suit index 0..3 (c, d, h, s)."""
    return card // 13


def card_rank(card: int) -> int:
    """Rank index 0..12 (2..A)."""
    return card % 13


def parse_card(text: str) -> int:
    """Parse ``"As"``, ``"Td"``, ``"10h"`` (any case) into a card id."""
    if not isinstance(text, str):
        raise ValueError(f"card must be text like 'As', got {text!r}")
    t = text.strip().upper()
    if t.startswith("10"):
        t = "T" + t[2:]
    if len(t) != 2 or t[0] not in RANKS or t[1].lower() not in SUITS:
        raise ValueError(
            f"unknown card {text!r}: expected rank {'/'.join(RANKS)} (or 10) "
            f"followed by suit {'/'.join(SUITS)}, e.g. 'As', 'Td', '10h'"
        )
    return SUITS.index(t[1].lower()) * 13 + RANKS.index(t[0])


def format_card(card: int) -> str:
    """Text form of a card id, e.g. ``51 -> "As"``."""
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"unknown card id {card!r}: card ids are 0..51")
    return RANKS[card % 13] + SUITS[card // 13]


def parse_cards(cards: str | Iterable[int | str]) -> list[int]:
    """Parse a space-separated string or a sequence of ids/texts into card ids."""
    items = cards.split() if isinstance(cards, str) else list(cards)
    out = []
    for item in items:
        if isinstance(item, str):
            out.append(parse_card(item))
        elif isinstance(item, int | np.integer) and 0 <= int(item) < NUM_CARDS:
            out.append(int(item))
        else:
            raise ValueError(f"unknown card {item!r}: use ids 0..51 or text like 'As'")
    return out


def format_cards(cards: Iterable[int]) -> str:
    """Space-separated text form of several cards."""
    return " ".join(format_card(c) for c in cards)


def _score(cards: Sequence[int], three_of_a_kind: float | None) -> float:
    """Reference scoring of any number of cards: best single-suit sum."""
    if three_of_a_kind is not None and len(cards) == 3 and cards[0] % 13 == cards[1] % 13 == cards[2] % 13:
        return three_of_a_kind
    sums = [0, 0, 0, 0]
    for c in cards:
        sums[c // 13] += CARD_VALUES[c]
    return max(sums)


@cache
def value_table(three_of_a_kind: float | None = None) -> tuple[float, ...]:
    """Value of every ordered triple, at :func:`triple_index`.

    Built with numpy in a few milliseconds; cached per ``three_of_a_kind`` setting.
    Entries are ints except a 30.5 three-of-a-kind. Triples with a repeated card are
    not hands; their entries are scored like any triple and never looked up.
    """
    c = np.arange(NUM_CARDS)
    a, b, d = np.meshgrid(c, c, c, indexing="ij")
    values = np.asarray(CARD_VALUES)
    sums = np.zeros((4, NUM_CARDS, NUM_CARDS, NUM_CARDS), dtype=np.int64)
    for card in (a, b, d):
        np.add.at(sums, (card // 13, a, b, d), values[card])
    best = sums.max(axis=0).astype(np.float64)
    if three_of_a_kind is not None:
        trips = (a % 13 == b % 13) & (b % 13 == d % 13)
        best[trips] = three_of_a_kind
    flat = best.ravel()
    return tuple(int(v) if v == int(v) else float(v) for v in flat)


#: Brag hand classes, weakest first (the class is the leading digit of a Brag key).
BRAG_CLASSES = ("high card", "pair", "flush", "run", "running flush", "prial")


def brag_key(cards: Sequence[int], ace_low_run: bool = True) -> int:
    """Rank of a 3-card hand in three-card Brag as one int (higher is better):
    ``class * 13**3 + tiebreak``. Within a class, as the seed says, by the highest card
    *or the pair*, then the middle card *or the kicker*, then the lowest: high card and
    flush card by card from the top; a pair by its rank first, then the kicker (so
    K-K-2 beats Q-Q-A); run and running flush by the top card (A-2-3, when a run, is
    the lowest: its top card is the 3; Q-K-A the highest); prial by rank. Suits never
    rank."""
    if len(cards) != 3:
        raise ValueError(f"a Brag hand has 3 cards, got {len(cards)}")
    r = sorted((c % 13 for c in cards), reverse=True)
    flush = cards[0] // 13 == cards[1] // 13 == cards[2] // 13
    top = None
    if r[0] - 1 == r[1] and r[1] - 1 == r[2]:
        top = r[0]
    elif ace_low_run and r == [12, 1, 0]:
        top = 1  # A-2-3: a run topped by the 3
    if r[0] == r[2]:
        return 5 * 2197 + r[0]
    if top is not None:
        return (4 if flush else 3) * 2197 + top
    if flush:
        return 2 * 2197 + r[0] * 169 + r[1] * 13 + r[2]
    if r[0] == r[1] or r[1] == r[2]:
        pair, kicker = r[1], (r[2] if r[0] == r[1] else r[0])  # r[1] is always a pair card
        return 1 * 2197 + pair * 169 + kicker * 13 + pair
    return r[0] * 169 + r[1] * 13 + r[2]


@cache
def brag_table(ace_low_run: bool = True) -> tuple[int, ...]:
    """:func:`brag_key` of every ordered triple, indexed like :func:`value_table`."""
    out = [0] * (NUM_CARDS**3)
    for a in range(NUM_CARDS):
        for b in range(a + 1, NUM_CARDS):
            for c in range(b + 1, NUM_CARDS):
                k = brag_key((a, b, c), ace_low_run)
                for x, y, z in ((a, b, c), (a, c, b), (b, a, c), (b, c, a), (c, a, b), (c, b, a)):
                    out[x * PAIR_STRIDE + y * NUM_CARDS + z] = k
    return tuple(out)


def hand_table(rules: Rules) -> tuple:
    """The lookup table that ranks 3-card hands under ``rules`` (higher is better):
    :func:`value_table` for points, :func:`brag_table` for Brag."""
    if rules.hand_ranking == "brag":
        return brag_table(rules.ace_low_run)
    return value_table(rules.three_of_a_kind)


def hand_value(cards: Sequence[int], rules: Rules | None = None) -> float:
    """Value of a 3-card hand: the best single-suit sum (three suits: highest card).

    With ``rules.three_of_a_kind`` set, three cards of one rank score that value.
    Other sizes (a 4-card hand mid-turn) are scored by the same suit rule. Under Brag
    ranking (``rules.hand_ranking="brag"``) the value is the hand's :func:`brag_key`.
    """
    if rules is not None and rules.hand_ranking == "brag":
        return brag_key(cards, rules.ace_low_run)
    tok = None if rules is None else rules.three_of_a_kind
    if len(cards) == 3:
        return value_table(tok)[cards[0] * PAIR_STRIDE + cards[1] * NUM_CARDS + cards[2]]
    return _score(cards, tok)


def value_with(hand3: Sequence[int], card: int, values: tuple) -> float:
    """Best value after adding ``card`` to a 3-card hand and throwing one of the three
    (the value of taking the top discard, which may not go straight back)."""
    a, b, c = hand3
    return max(
        values[b * PAIR_STRIDE + c * NUM_CARDS + card],
        values[a * PAIR_STRIDE + c * NUM_CARDS + card],
        values[a * PAIR_STRIDE + b * NUM_CARDS + card],
    )
