"""Research records of rounds: turns, knocks, suit switches and players' rounds.

Turn records are built from the engine's real states as the moves are played: a
:class:`TurnRecorder` watches every move at a
:class:`~thirtyone_env.harness.driver.Table` (tournaments attach one) or in the
replay of a saved record (:func:`replay_rounds`, on the engine through
:func:`~thirtyone_env.harness.records.replay`), so the hands, values and stock sizes
are the engine's own, never those of a second simulation. The knock and
player-round records add what a round's ``state.history`` says of its deal and
settlement (see :mod:`thirtyone_env.game.engine`). Every record is a plain dict,
ready for ``pandas.DataFrame(...)`` or for the evaluation harness. Nothing here plots.

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

from thirtyone_env.game.actions import DISCARD_BASE, NUM_ACTIONS, NUM_ACTIONS_ALL, decode
from thirtyone_env.game.cards import CARD_VALUES, NUM_CARDS, PAIR_STRIDE
from thirtyone_env.game.engine import CONTINUE, GameState, RoundResult
from thirtyone_env.game.events import (
    BUS,
    CARRY_OVER,
    DECLINE_CARRY,
    DISCARD,
    DRAW_STOCK,
    KEEP,
    KINDS,
    KNOCK,
    RENEW,
    SETTLE,
    STAND,
    TABLE_MOVES,
    TAKE_DISCARD,
)
from thirtyone_env.harness.records import replay


def best_suits(hand: Sequence[int]) -> frozenset[int]:
    """Suits (0..3) whose card values sum to the maximum suit sum of ``hand``."""
    sums = [0, 0, 0, 0]
    for c in hand:
        sums[c // 13] += CARD_VALUES[c]
    top = max(sums)
    return frozenset(s for s in range(4) if sums[s] == top)


@cache
def best_suit_masks() -> tuple[int, ...]:
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


#: The moves that are no turn: the carry-over offer and the Switch dealer's choice.
_NOT_TURNS = frozenset((CARRY_OVER, DECLINE_CARRY, KEEP))
#: Every action id's move (:func:`~thirtyone_env.game.actions.decode`), looked up per move.
_MOVES = tuple(decode(a) for a in range(NUM_ACTIONS_ALL))
#: The event kind of every action id: the :mod:`~thirtyone_env.game.events` constants
#: themselves, so that ``is`` compares them.
_KINDS = tuple({kind: kind for kind in KINDS}[move.kind] for move in _MOVES)
_DRAWS = frozenset((DRAW_STOCK, TAKE_DISCARD))


class TurnRecorder:
    """Builds the turn records of each round from the real states of its moves: a
    :class:`~thirtyone_env.harness.driver.MoveObserver` for a ``Table`` or a replay.

    :meth:`round_turns` gives the records of the round a state is in (read it in
    ``on_settle``); a new round starts them afresh. One record per turn, in order, with
    the keys ``game`` and ``player`` (the recorder's ``game`` id and the label of the
    seat's player in ``players``, ``None`` when not given), ``round_no``, ``seat``, ``turn``, ``round_turn``, ``kind`` (``"draw_stock"``,
    ``"take_discard"``, ``"knock"``, ``"stand"`` or a table move), ``card_in`` /
    ``card_out`` (card drawn or taken from the table and card discarded or given to it,
    -1 if none), ``value_before`` / ``value_after``, ``stock_left`` (at the start of the
    turn), ``switched`` (suit switch, see the module doc), ``discard_suit_changed``
    (``None`` when there is no previous discard to compare) and ``continues`` (a knock
    that goes on the turn of a Stop the Bus exchange).
    """

    __slots__ = (
        "game",
        "players",
        "_round_no",
        "_turns",
        "_history",
        "_values",
        "_bus",
        "_counts",
        "_last_suit",
        "_round_turn",
        "_rec",
        "_suits",
        "_suits_before",
        "_open",
        "_open_seat",
    )

    def __init__(self, game: Any = None, players: Sequence[Any] | None = None) -> None:
        self._turns: list[dict[str, Any]] = []
        self._history: list | None = None
        self.game = game
        self.players = None if players is None else list(players)

    def round_turns(self, state: GameState) -> list[dict[str, Any]]:
        """The turn records of the round ``state`` is in (empty when nobody moved); a
        draw turn's record is whole once its discard is played, so read them when the
        round is settled."""
        return self._turns if state.history is self._history else []

    def _new_round(self, s: GameState) -> None:
        """Start the records of the round ``s`` is in (its history is new)."""
        n = s.num_players
        self._turns = []
        self._history = s.history
        self._round_no = s.round_no
        self._values = s.hand_values
        self._suits = best_suit_masks()
        self._bus = s.rules.table == "bus"
        self._counts = [0] * n
        self._last_suit = [-1] * n
        self._round_turn = 0
        self._rec: dict[str, Any] | None = None
        self._open: dict[str, Any] | None = None
        self._open_seat = -1

    def before(self, s: GameState, seat: int, action: int) -> bool:
        """Note the turn a move starts (or goes on with) from the state it is played in;
        true when the move's cards are to be read after it (a discard, a table move)."""
        if s.history is not self._history:
            self._new_round(s)
        kind = _KINDS[action]
        if kind is DISCARD:  # completes the draw turn in ``_rec``: the card drawn, and after
            rec = self._rec
            if rec is None:
                return False
            rec["card_in"] = s.drawn
            return True
        opened = self._open
        if opened is not None:  # a continued turn goes on with this move or is over
            self._open = None
            if self._open_seat == seat and (kind in TABLE_MOVES or kind is KNOCK):
                return self._go_on(s, seat, kind, opened)
        if kind in _NOT_TURNS or (kind is STAND and s.phase == CONTINUE):
            self._rec = None  # no turn, or the end of a continued one
            return False
        h = s.hands[seat]
        key = h[0] * PAIR_STRIDE + h[1] * NUM_CARDS + h[2]
        counts = self._counts
        counts[seat] += 1
        self._round_turn += 1
        value = self._values[key]
        rec = {
            "game": self.game,
            "round_no": self._round_no,
            "seat": seat,
            "player": None if self.players is None else self.players[seat],
            "turn": counts[seat],
            "round_turn": self._round_turn,
            "kind": kind,
            "card_in": -1,
            "card_out": -1,
            "value_before": value,
            "value_after": value,
            "stock_left": len(s.stock),
            "switched": False,
            "discard_suit_changed": None,
            "continues": False,
        }
        self._turns.append(rec)
        self._suits_before = self._suits[key]
        if kind in _DRAWS:  # waits for its discard
            self._rec = rec
            return False
        self._rec = rec if kind in TABLE_MOVES else None  # a knock or a stand is whole
        return self._rec is not None

    def _go_on(self, s: GameState, seat: int, kind: str, opened: dict[str, Any]) -> bool:
        """A move on a continued turn (``opened``): a swap after a face-up renewal reads
        its cards after; the knock after a bus exchange is a record of its own."""
        if kind is not KNOCK:
            self._rec = opened
            return True
        self._rec = None
        h = s.hands[seat]
        value = self._values[h[0] * PAIR_STRIDE + h[1] * NUM_CARDS + h[2]]
        self._turns.append(
            dict(opened, kind=KNOCK, continues=True, value_before=value, value_after=value, switched=False)
        )
        return False

    def after(self, s: GameState, seat: int, action: int) -> None:
        """Complete the turn's record from the state the move left (a discard's hand,
        or a table move's cards: the only moves :meth:`before` asks to see after)."""
        rec = self._rec
        if action >= NUM_ACTIONS:  # beyond the discards: a table move
            self._table_move(s, seat, _MOVES[action], rec)
            return
        self._rec = None
        h = s.hands[seat]
        key = h[0] * PAIR_STRIDE + h[1] * NUM_CARDS + h[2]
        card = action - DISCARD_BASE
        rec["card_out"] = card
        rec["value_after"] = self._values[key]
        rec["switched"] = not (self._suits[key] & self._suits_before)
        suit = card // 13
        last = self._last_suit
        if last[seat] >= 0:
            rec["discard_suit_changed"] = suit != last[seat]
        last[seat] = suit

    def _table_move(self, s: GameState, seat: int, move: Any, rec: dict[str, Any]) -> None:
        """A table move's cards and values, from the hand and table it left."""
        if move.pairs:
            i, t, j = move.pairs[0]
            h = s.hands[seat]
            rec["card_in"], rec["card_out"] = h[i], s.table[t][j]
            key = h[0] * PAIR_STRIDE + h[1] * NUM_CARDS + h[2]
            rec["value_after"] = self._values[key]
            rec["switched"] = not (self._suits[key] & self._suits_before)
        if (move.kind == RENEW and move.up) or (move.kind == BUS and self._bus):
            self._open = rec  # a swap (Switch) or a knock (Stop the Bus) may go on with it
            self._open_seat = seat


def game_id(seed: Any) -> Any:
    """A game's id from its record's ``seed`` field: a list (a tournament's ``[seed,
    deal, rotation]``) joined as ``"7-3-1"``, anything else as it is."""
    return "-".join(str(x) for x in seed) if isinstance(seed, list) else seed


def replay_rounds(
    game: list[dict[str, Any]], game_id_: Any = None
) -> list[tuple[list, list[dict[str, Any]]]]:
    """``(history, turn records)`` of every settled round of a recorded game (its line
    objects, :func:`~thirtyone_env.harness.records.read_games`), replayed on the engine
    with a :class:`TurnRecorder` watching: the records of a saved game. Their ``game``
    id is ``game_id_``, by default :func:`game_id` of the record's seed; ``player``
    the record's player names."""
    head = game[0]
    players = head.get("players") or None
    recorder = TurnRecorder(game_id(head.get("seed")) if game_id_ is None else game_id_, players)
    rounds: list[tuple[list, list[dict[str, Any]]]] = []

    def settled(s: GameState) -> None:
        rounds.append((s.history, recorder.round_turns(s)))

    for _ in replay(game, observer=recorder, on_settle=settled):
        pass
    return rounds


def knock_records(history: list, turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The knock of the round (zero or one record), from its ``history`` and its turn
    records (:class:`TurnRecorder`).

    Keys: ``game``, ``round_no``, ``seat``, ``player`` (as in the turn records),
    ``value`` (hand value at the knock), ``turn`` (the knocker's own
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
    for rec in turns:
        if rec["kind"] != KNOCK:
            continue
        seat = rec["seat"]
        lost = result.losses[seat] if result is not None else 0
        out.append(
            {
                "game": rec["game"],
                "round_no": rec["round_no"],
                "seat": seat,
                "player": rec["player"],
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


def suit_switch_records(turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The turns (turn records of a round) on which a player switched suits
    (``switched`` true)."""
    return [r for r in turns if r["switched"]]


def player_round_records(
    history: list, turns: list[dict[str, Any]], game: Any = None, players: Sequence[Any] | None = None
) -> list[dict[str, Any]]:
    """One record per player dealt into the round, from its ``history`` and its turn
    records (:class:`TurnRecorder`). ``game`` and ``players`` (labels by seat): give
    them, as :func:`~thirtyone_env.research.records.table_records` does; else they are
    read off the turn records, which name only the seats that moved (a seat that took
    no turn, as when a 31 is dealt or a knock ends the round first, then has ``player``
    None).

    Keys: ``game``, ``round_no``, ``seat``, ``player``, ``lives_before``, ``lost`` (what the
    round cost the seat: lives; at a points or chips table the points or chips it scored,
    negative), ``lost_round`` (``lost`` above 0), ``reason``, ``final_value``, ``turns``, ``knocked``, ``knock_value``,
    ``knock_turn``, ``knock_success``, ``blitz`` (held the 31 of a blitz), ``switches``,
    ``discard_suit_changes``, ``eliminated``.
    """
    result = _result(history)
    if result is None:
        raise ValueError("the round is not settled: its history has no 'settle' event")
    hands, _upcard, lives = history[0][2][:3]
    n = len(hands)
    played, switches, changes = [0] * n, [0] * n, [0] * n
    knocks: list[dict[str, Any] | None] = [None] * n
    for t in turns:  # one pass: each seat's tallies
        seat = t["seat"]
        played[seat] += not t["continues"]
        switches[seat] += t["switched"]
        changes[seat] += bool(t["discard_suit_changed"])
        if t["kind"] == KNOCK and knocks[seat] is None:
            knocks[seat] = t
    if turns and game is None:
        game = turns[0]["game"]
    labels = {t["seat"]: t["player"] for t in turns}
    round_no, reason, losses, values = result.round_no, result.reason, result.losses, result.values
    blitzers, eliminated = result.blitzers, result.eliminated
    rows = []
    for seat, hand in enumerate(hands):
        if not hand:
            continue
        knock = knocks[seat]
        # what the round cost the seat in the table's standing: lives, or the points or
        # chips it scored counted negative (a lives round's gains are its losses negated)
        lost = -result.gains[seat] if result.gains else losses[seat]
        rows.append(
            {
                "game": game,
                "round_no": round_no,
                "seat": seat,
                "player": players[seat] if players is not None else labels.get(seat),
                "lives_before": lives[seat],
                "lost": lost,
                "lost_round": lost > 0,
                "reason": reason,
                "final_value": values[seat],
                "turns": played[seat],
                "knocked": knock is not None,
                "knock_value": knock["value_before"] if knock else None,
                "knock_turn": knock["turn"] if knock else None,
                "knock_success": (losses[seat] == 0) if knock else None,
                "blitz": seat in blitzers,
                "switches": switches[seat],
                "discard_suit_changes": changes[seat],
                "eliminated": seat in eliminated,
            }
        )
    return rows
