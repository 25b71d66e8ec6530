"""Research records from round histories: knocks, turns and suit switches.

Every function reads one round's ``state.history`` (see :mod:`thirtyone_env.game.engine`)
and returns a list of plain dicts, one per event, ready for ``pandas.DataFrame(...)``
or for the evaluation harness. Nothing here plots.

Definitions:

- A **turn** is one player's move: draw from the stock or take the discard and then
  discard (a *draw turn*), knock, or stand. ``turn`` counts a player's own turns in
  the round from 1; ``round_turn`` counts everyone's. In the table variants an
  exchange with the table (widow, swap, renewal, bus) is a draw turn too; a Switch
  renewal face up and the swap that follows are one turn, and in Stop the Bus the
  knock after an exchange shares that turn (its record has ``continues`` true).
- The **best suits** of a 3-card hand are the suits whose cards sum to the hand's
  suit value (the suit sums' maximum); ties give several. A **suit switch** happens on
  a draw turn when none of the best suits after the turn was a best suit before it:
  the player has abandoned the suit it was building. Three-of-a-kind scoring does not
  enter this definition (it is about suits).
- The **discard-suit change** is the seed text's outward signal ("if a player discards
  a suit other than the one discarded on their previous turn, one can infer they are
  switching suits"): on a draw turn after the player's first discard of the round,
  whether the discarded card's suit differs from that of the player's previous discard.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np

from thirtyone_env.game.actions import event_move
from thirtyone_env.game.cards import CARD_VALUES, NUM_CARDS, PAIR_STRIDE, hand_table
from thirtyone_env.game.engine import RoundResult
from thirtyone_env.game.events import (
    BUS,
    DISCARD,
    DRAW_STOCK,
    KEEP,
    KNOCK,
    RENEW,
    RESHUFFLE,
    SETTLE,
    STAND,
    TABLE_MOVES,
    TAKE_DISCARD,
)
from thirtyone_env.game.rules import TABLE_CARDS, Rules

TURN_KINDS = (DRAW_STOCK, TAKE_DISCARD, KNOCK, STAND)
#: The variants' table moves (see :mod:`thirtyone_env.game.table_moves`): each is a turn,
#: except a move that continues the turn it belongs to (after a face-up renewal).
TABLE_KINDS = TABLE_MOVES
TABLE_EVENTS = frozenset((*TABLE_KINDS, KEEP))


def best_suits(hand: Sequence[int]) -> frozenset[int]:
    """Suits (0..3) whose card values sum to the maximum suit sum of ``hand``."""
    sums = [0, 0, 0, 0]
    for c in hand:
        sums[c // 13] += CARD_VALUES[c]
    top = max(sums)
    return frozenset(s for s in range(4) if sums[s] == top)


@cache
def _best_suit_masks() -> tuple[int, ...]:
    """Bitmask of :func:`best_suits` for every ordered triple (index :func:`~thirtyone_env.game.cards.triple_index`)."""
    c = np.arange(52)
    a, b, d = np.meshgrid(c, c, c, indexing="ij")
    values = np.asarray(CARD_VALUES)
    sums = np.zeros((4, 52, 52, 52), dtype=np.int64)
    for card in (a, b, d):
        np.add.at(sums, (card // 13, a, b, d), values[card])
    best = sums == sums.max(axis=0)
    masks = sum(best[s].astype(np.int64) << s for s in range(4))
    return tuple(masks.ravel().tolist())


def _result(history: list) -> RoundResult | None:
    return history[-1][2] if history and history[-1][0] == SETTLE else None


def turn_records(history: list, rules: Rules | None = None) -> list[dict[str, Any]]:
    """One record per turn of the round, in order.

    Keys: ``seat``, ``turn``, ``round_turn``, ``kind`` (``"draw_stock"``,
    ``"take_discard"``, ``"knock"`` or ``"stand"``), ``card_in`` / ``card_out`` (drawn and
    discarded card, -1 if none), ``value_before`` / ``value_after``, ``stock_left`` (at the
    start of the turn), ``switched`` (suit switch, see the module doc),
    ``discard_suit_changed`` (``None`` when there is no previous discard to compare).
    """
    rules = rules or Rules()
    values = hand_table(rules)
    suits = _best_suit_masks()
    deal = history[0]
    hands = [list(h) for h in deal[2][0]]
    n_dealt = sum(1 for h in hands if h)
    stock = len(rules.deck_cards) - 3 * n_dealt - TABLE_CARDS[rules.table]
    tables = [list(t) for t in deal[2][3]] if len(deal[2]) > 3 else []
    second = deal[2][4] if len(deal[2]) > 4 else None
    turns = [0] * len(hands)
    last_suit = [-1] * len(hands)
    records: list[dict[str, Any]] = []
    round_turn = 0
    pending: dict[str, Any] | None = None
    last: dict[str, Any] | None = None
    for kind, seat, data in history[1:]:
        if last is None and kind not in TABLE_EVENTS:
            pass  # the stock game's events (the common case): below
        elif kind == KEEP:  # Switch: the dealer's choice, not a turn
            if data == 1:
                hands[seat], tables[0] = list(second), hands[seat]
            else:
                tables[0] = list(second)
            continue
        elif kind in TABLE_EVENTS or (kind == KNOCK and last is not None and last.get("open") == seat):
            h = hands[seat]
            key = h[0] * PAIR_STRIDE + h[1] * NUM_CARDS + h[2]
            if last is not None and last.get("open") == seat:  # the same turn goes on
                rec = last
                rec.pop("open")
                if kind == KNOCK:
                    knock = dict(rec, kind=KNOCK, continues=True, value_before=values[key], switched=False)
                    knock["value_after"] = values[key]
                    records.append(knock)
                    last = None
                    continue
            else:
                turns[seat] += 1
                round_turn += 1
                rec = _turn_record(seat, turns[seat], round_turn, kind, values[key], stock)
                rec["suits_before"] = suits[key]
                records.append(rec)
            moved = _table_move(kind, data, h, tables)
            if kind == RENEW:
                stock -= 3
            if moved:
                rec["card_in"], rec["card_out"] = moved[0]
                key = h[0] * PAIR_STRIDE + h[1] * NUM_CARDS + h[2]
                rec["value_after"] = values[key]
                rec["switched"] = not (suits[key] & rec["suits_before"])
            if (kind == RENEW and data[1] == "up") or (kind == BUS and rules.table == "bus"):
                rec["open"] = seat  # a swap (Switch) or a knock (Stop the Bus) may follow
            last = rec
            continue
        if last is not None:
            last.pop("open", None)
            last = None
        if kind in TURN_KINDS:
            turns[seat] += 1
            round_turn += 1
            h = hands[seat]
            rec = _turn_record(
                seat,
                turns[seat],
                round_turn,
                kind,
                values[h[0] * PAIR_STRIDE + h[1] * NUM_CARDS + h[2]],
                stock,
            )
            records.append(rec)
            if kind in (DRAW_STOCK, TAKE_DISCARD):
                rec["card_in"] = data
                if kind == DRAW_STOCK:
                    stock -= 1
                pending = rec
                before = suits[h[0] * PAIR_STRIDE + h[1] * NUM_CARDS + h[2]]
                h.append(data)
        elif kind == DISCARD and pending is not None:
            h = hands[seat]
            h.remove(data)
            pending["card_out"] = data
            key = h[0] * PAIR_STRIDE + h[1] * NUM_CARDS + h[2]
            pending["value_after"] = values[key]
            pending["switched"] = not (suits[key] & before)
            suit = data // 13
            if last_suit[seat] >= 0:
                pending["discard_suit_changed"] = suit != last_suit[seat]
            last_suit[seat] = suit
            pending = None
        elif kind == RESHUFFLE:
            stock = data
    if tables:  # the table variants' bookkeeping keys go
        for rec in records:
            rec.pop("open", None)
            rec.pop("suits_before", None)
    return records


def _turn_record(
    seat: int, turn: int, round_turn: int, kind: str, value: float, stock: int
) -> dict[str, Any]:
    """A turn record before the turn's cards are known (see :func:`turn_records`)."""
    return {
        "seat": seat,
        "turn": turn,
        "round_turn": round_turn,
        "kind": kind,
        "card_in": -1,
        "card_out": -1,
        "value_before": value,
        "value_after": value,
        "stock_left": stock,
        "switched": False,
        "discard_suit_changed": None,
        "continues": False,
    }


def _table_move(kind: str, data: Any, hand: list[int], tables: list[list[int]]) -> list[tuple[int, int]]:
    """Apply a recorded table move to ``hand`` and ``tables``; returns the
    (card in, card out) pairs."""
    if kind == RENEW:
        tables[data[0]] = list(data[2])
        return []
    move = event_move(kind, data)
    moved = []
    for i, t, j in move.pairs if move is not None else ():
        card_in, card_out = tables[t][j], hand[i]
        hand[i], tables[t][j] = card_in, card_out
        moved.append((card_in, card_out))
    return moved


def knock_records(history: list, rules: Rules | None = None) -> list[dict[str, Any]]:
    """The knock of the round (zero or one record).

    Keys: ``seat``, ``value`` (hand value at the knock), ``turn`` (the knocker's own
    turn number), ``round_turn``, ``stock_left``, ``lives`` (the knocker's lives at the
    deal), ``num_in`` (players dealt in), ``position`` (the knocker's seat order in the
    round: 0 = first to play), ``lost`` (lives the knocker lost), ``success`` (the
    knocker lost nothing), ``reason`` (how the round ended: ``"knock"``, or ``"blitz"``
    when a 31 after the knock ended it), ``final_value`` (the knocker's value at the end).
    """
    result = _result(history)
    deal = history[0]
    dealer, (hands, _upcard, lives) = deal[1], deal[2][:3]
    n = len(hands)
    order = [p for p in ((dealer + k) % n for k in range(1, n + 1)) if hands[p]]
    out = []
    for rec in turn_records(history, rules):
        if rec["kind"] != KNOCK:
            continue
        seat = rec["seat"]
        lost = result.losses[seat] if result is not None else 0
        out.append(
            {
                "seat": seat,
                "value": rec["value_before"],
                "turn": rec["turn"],
                "round_turn": rec["round_turn"],
                "stock_left": rec["stock_left"],
                "lives": lives[seat],
                "num_in": len(order),
                "position": order.index(seat),
                "lost": lost,
                "success": lost == 0,
                "reason": result.reason if result is not None else None,
                "final_value": result.values[seat] if result is not None else None,
            }
        )
    return out


def suit_switch_records(history: list, rules: Rules | None = None) -> list[dict[str, Any]]:
    """The turns of the round on which a player switched suits (``switched`` true)."""
    return [r for r in turn_records(history, rules) if r["switched"]]


def player_round_records(
    history: list, rules: Rules | None = None, turns: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """One record per player dealt into the round.

    Keys: ``round_no``, ``seat``, ``lives_before``, ``lost``, ``lost_round`` (lost any
    life), ``reason``, ``final_value``, ``turns``, ``knocked``, ``knock_value``,
    ``knock_turn``, ``knock_success``, ``blitz`` (held the 31 of a blitz), ``switches``,
    ``discard_suit_changes``, ``eliminated``. ``turns`` may pass in this round's
    :func:`turn_records` when the caller already has them.
    """
    result = _result(history)
    if result is None:
        raise ValueError("the round is not settled: its history has no 'settle' event")
    hands, _upcard, lives = history[0][2][:3]
    if turns is None:
        turns = turn_records(history, rules)
    rows = []
    for seat, hand in enumerate(hands):
        if not hand:
            continue
        mine = [t for t in turns if t["seat"] == seat]
        knock = next((t for t in mine if t["kind"] == KNOCK), None)
        lost = result.losses[seat]
        rows.append(
            {
                "round_no": result.round_no,
                "seat": seat,
                "lives_before": lives[seat],
                "lost": lost,
                "lost_round": lost > 0,
                "reason": result.reason,
                "final_value": result.values[seat],
                "turns": sum(not t["continues"] for t in mine),
                "knocked": knock is not None,
                "knock_value": knock["value_before"] if knock else None,
                "knock_turn": knock["turn"] if knock else None,
                "knock_success": (lost == 0) if knock else None,
                "blitz": seat in result.blitzers,
                "switches": sum(t["switched"] for t in mine),
                "discard_suit_changes": sum(bool(t["discard_suit_changed"]) for t in mine),
                "eliminated": seat in result.eliminated,
            }
        )
    return rows
