"""The questions the decision oracle answers, as the options they set against each other.

A question looks at one decision of one seat and, where it applies, names a
*baseline* move and one or more *alternatives*; the oracle measures each alternative's
gain over the baseline. Where the player's own move is one of the options it is used
as that option, so a gain is always "this instead of what the player would do there":

- ``knock``: a turn on which knocking is legal (and not the only move). Alternative
  ``knock``; baseline ``wait``: the player's own move, or, when the player knocks,
  the move it makes with knocking taken away (asked of the player itself).
- ``switch`` (stock games): a discard after a draw that leaves a choice between
  keeping one of the hand's best suits (``stay``) and abandoning them all for another
  suit (``switch:<suit>``, one alternative per suit that a legal discard makes a best
  suit; :mod:`~thirtyone_env.harness.analysis` defines the switch). Each option is
  the player's own discard when it is of that kind, else the highest-valued such
  discard (lowest card id on ties).
- ``take`` (stock games): a turn on which both the discard pile and the stock may be
  drawn from. Alternative ``take``; baseline ``draw`` (the stock). The player plays
  the discard that follows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from thirtyone_env.game.actions import DISCARD_BASE, DRAW_STOCK, KNOCK, TAKE_DISCARD, action_name
from thirtyone_env.game.cards import NUM_CARDS, PAIR_STRIDE, SUITS
from thirtyone_env.game.engine import DISCARD, GameState
from thirtyone_env.harness.analysis import best_suit_masks

QUESTIONS = ("knock", "switch", "take")
#: What each question measures, for its ``--help``: one line, then the detail.
QUESTION_HELP = {
    "knock": "knock now, or play on as the player would (the baseline: 'wait')\n\n"
    "At each turn where knocking is legal (and not the only move), the gain of knocking over the\n"
    "player's own move there; where the player knocks, over the move it makes with knocking taken\n"
    "away. Answers: the gain by hand value and turn, the break-even hand value a turn (the lowest\n"
    "value from which knocking gains), and how often the player's knocks gain.",
    "switch": "switch suits, or stay with the hand's best suit (the baseline: 'stay'; stock games)\n\n"
    "At each discard that leaves a choice between keeping one of the hand's best suits and\n"
    "abandoning them all for another suit, the gain of each such switch over staying (the\n"
    "player's own discard where it is of that kind, else the highest-valued one). Answers: the\n"
    "gain of switching by turn and hand value, how often the player switches, and what its\n"
    "switches cost or gain.",
    "take": "take the top of the discard pile, or draw from the stock (the baseline: 'draw'; stock games)\n\n"
    "At each turn where both are possible, the gain of taking the discard over drawing from the\n"
    "stock, the player playing the discard that follows. Answers: the gain by the discard's\n"
    "value to the hand, and how often the player takes it.",
}
#: The baseline option of each question.
BASELINES = {"knock": "wait", "switch": "stay", "take": "draw"}
#: Questions that need a stock game (``Rules.table == "stock"``).
STOCK_ONLY = frozenset({"switch", "take"})

#: ``ask(mask)``: the player's move in the same position with only ``mask``'s actions legal.
Ask = Callable[[np.ndarray], int]


class Options(NamedTuple):
    """What a question sets against each other at one decision: ``baseline`` (its
    label and action id), the ``alternatives`` (label, action id) and ``own``, the label
    of the option the player chose (its action's name when it chose none of them)."""

    baseline: tuple[str, int]
    alternatives: tuple[tuple[str, int], ...]
    own: str


def check_question(question: str, rules: object) -> None:
    """``ValueError`` naming the problem unless ``question`` can be asked under ``rules``."""
    if question not in QUESTIONS:
        raise ValueError(f"unknown question {question!r}; questions are {list(QUESTIONS)}")
    table = getattr(rules, "table", "stock")
    if question in STOCK_ONLY and table != "stock":
        raise ValueError(
            f"the {question!r} question needs a stock game (rules.table='stock'); these rules exchange "
            f"cards with the table (table={table!r}): ask 'knock' there"
        )


def options(question: str, s: GameState, mask: np.ndarray, own: int, ask: Ask) -> Options | None:
    """The options of ``question`` at the decision of the seat to act in ``s`` (legal
    ``mask``, the player's own move ``own``); ``None`` where the question does not apply."""
    if question == "knock":
        return _knock(mask, own, ask)
    if question == "take":
        return _take(mask, own)
    if question == "switch":
        return _switch(s, mask, own)
    raise ValueError(f"unknown question {question!r}; questions are {list(QUESTIONS)}")


def _knock(mask: np.ndarray, own: int, ask: Ask) -> Options | None:
    if not mask[KNOCK] or int(mask.sum()) < 2:
        return None
    if own == KNOCK:
        rest = mask.copy()
        rest[KNOCK] = 0
        wait = int(ask(rest))
        if not (0 <= wait < len(rest) and rest[wait]):
            raise ValueError(f"asked to move without knocking, the player chose {wait!r}, which is not legal")
        return Options(("wait", wait), (("knock", KNOCK),), "knock")
    return Options(("wait", own), (("knock", KNOCK),), "wait")


def _take(mask: np.ndarray, own: int) -> Options | None:
    if not (mask[TAKE_DISCARD] and mask[DRAW_STOCK]):
        return None
    label = {TAKE_DISCARD: "take", DRAW_STOCK: "draw"}.get(own, action_name(own))
    return Options(("draw", DRAW_STOCK), (("take", TAKE_DISCARD),), label)


def suit_label(suit: int) -> str:
    """The alternative that switches to ``suit`` (0..3): ``"switch:c"`` and so on."""
    return f"switch:{SUITS[suit]}"


def _switch(s: GameState, mask: np.ndarray, own: int) -> Options | None:
    if s.phase != DISCARD or len(s.hands[s.current]) != 4 or s.drawn < 0:
        return None
    hand = s.hands[s.current]
    values, suits = s.hand_values, best_suit_masks()
    before = [c for c in hand if c != s.drawn]
    before_suits = suits[before[0] * PAIR_STRIDE + before[1] * NUM_CARDS + before[2]]
    stay: tuple[float, int] | None = None
    targets: dict[int, tuple[float, int]] = {}  # suit -> (value, action) of its best discard
    own_label = action_name(own)
    for card in sorted(hand):
        action = DISCARD_BASE + card
        if not mask[action]:
            continue
        a, b, c = (x for x in hand if x != card)
        key = a * PAIR_STRIDE + b * NUM_CARDS + c
        value, best = values[key], suits[key]
        is_own = action == own
        if best & before_suits:
            if is_own:
                own_label = "stay"
            if stay is None or is_own or (value > stay[0] and stay[1] != own):
                stay = (value, action)
            continue
        for suit in range(4):
            if best >> suit & 1:
                if is_own:
                    own_label = suit_label(suit) if own_label.startswith("discard") else own_label
                old = targets.get(suit)
                if old is None or is_own or (value > old[0] and old[1] != own):
                    targets[suit] = (value, action)
    if stay is None or not targets:
        return None
    alternatives = tuple((suit_label(suit), targets[suit][1]) for suit in sorted(targets))
    return Options(("stay", stay[1]), alternatives, own_label)
