"""Game records as JSON Lines, and their exact replay.

A record is built from the engine's round histories (``state.history``, which every
player loop can keep), so any game can be written: from ``evaluate.py --record``,
``ThirtyOneEnv.save_record``, or the terminal game. One file holds one game or more,
each as:

- ``{"type": "game", "rules": {...every Rules field...}, "num_players": n, "players":
  [...], "seed": ...}``
- per round: ``{"type": "round", "round_no", "dealer", "deck": [card ids, top first],
  "reshuffles": [[cards drawn from each reshuffled stock, in order], ...], "actions":
  [[seat, action id, name], ...], "result": {...the RoundResult...}}``
- ``{"type": "end", "winners": [...], "lives": [...], "score": [...]}``

The deck is the order that deals exactly that round (every card drawn from the stock
in order, the rest after); with the actions and any reshuffled stock it replays the
round on the engine (:func:`replay`), to the same final lives.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from thirtyone_env.actions import (
    BUS_ALL,
    CARRY_OVER,
    DECLINE_CARRY,
    DISCARD_BASE,
    DRAW_STOCK,
    KEEP_BASE,
    KNOCK,
    RENEW_BASE,
    STAND,
    SWAP_HAND_BASE,
    TAKE_DISCARD,
    action_name,
    bus_one_action,
    swap_one_action,
    widow_action,
)
from thirtyone_env.engine import (
    GameState,
    RoundResult,
    apply_action,
    new_game,
    stacked_deck,
    stacked_table_deck,
    start_round,
)
from thirtyone_env.rules import Rules

VERSION = 1


def _event_action(kind: str, data: Any) -> int | None:
    """The action id behind a history event (``None`` for events that are not moves)."""
    if kind == "draw_stock":
        return DRAW_STOCK
    if kind == "take_discard":
        return TAKE_DISCARD
    if kind == "discard":
        return DISCARD_BASE + data
    if kind == "knock":
        return KNOCK
    if kind in ("stand", "end_turn"):
        return STAND
    if kind == "widow":
        return widow_action(*data)
    if kind == "bus":
        given, _taken = data
        return BUS_ALL if len(given) == 3 else bus_one_action(given[0], data[1][0])
    if kind == "swap":
        return swap_one_action(*data)
    if kind == "swap_hand":
        return SWAP_HAND_BASE + data
    if kind == "renew":
        return RENEW_BASE + 2 * data[0] + (data[1] == "up")
    if kind == "keep":
        return KEEP_BASE + data
    if kind == "carry_over":
        return CARRY_OVER
    if kind == "decline_carry":
        return DECLINE_CARRY
    return None


def round_record(history: list, rules: Rules) -> dict[str, Any]:
    """One settled round (its ``state.history``) as a record line.

    A Switch carry-over round (a ``"carry_over"`` event) records the deck with the
    carried cards last: the engine deals that round from the deck without them."""
    kind, dealer, deal = history[0]
    if kind != "deal":
        raise ValueError("a round history starts with its 'deal' event")
    hands, upcard, _lives = deal[:3]
    table = deal[3] if len(deal) > 3 else ()
    second = deal[4] if len(deal) > 4 else None
    drawn: list[int] = []  # stock cards in draw order, before any reshuffle
    reshuffles: list[list[int]] = []
    after: list[int] = []  # draws since the last reshuffle
    counts: list[int] = []
    actions = []
    carried: list[int] = []
    for kind, seat, data in history[1:]:
        if kind == "carry_over":
            carried = list(data)
        action = _event_action(kind, data)
        if action is not None:
            actions.append([seat, action, action_name(action)])
        if kind == "draw_stock" or kind == "renew":
            cards = [data] if kind == "draw_stock" else list(data[2])
            (after if counts else drawn).extend(cards)
        elif kind == "reshuffle":
            if counts:
                reshuffles.append(after)
            counts.append(data)
            after = []
    if counts:
        reshuffles.append(after)
    dealt = {c for h in hands for c in h} | {c for t in table for c in t if c >= 0}
    dealt |= set(second or ()) | ({upcard} if upcard is not None and upcard >= 0 else set())
    known = set(drawn)
    rest = [c for c in rules.deck_cards if c not in dealt and c not in known]
    stock = drawn + rest
    if rules.table == "stock":
        deck = stacked_deck([list(h) or None for h in hands], upcard, stock, dealer=dealer)
    else:
        face_down = [t for t in table if all(c >= 0 for c in t)][-1] if rules.table == "switch" else table[0]
        deck = stacked_table_deck(
            rules,
            [list(h) or None for h in hands],
            list(face_down),
            upcard if upcard is not None and upcard >= 0 else None,
            stock,
            dealer=dealer,
            second_hand=list(second) if second else (),
            carried=carried,
        )
    result = history[-1][2] if history[-1][0] == "settle" else None
    return {
        "type": "round",
        "round_no": result.round_no if result else None,
        "dealer": dealer,
        "deck": deck,
        "reshuffles": [[int(c) for c in cards] for cards in reshuffles],
        "actions": actions,
        "result": _result_dict(result) if result else None,
    }


def _result_dict(r: RoundResult) -> dict[str, Any]:
    d = r._asdict()
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in d.items()}


def game_lines(
    rules: Rules,
    num_players: int,
    histories: Sequence[list],
    winners: Sequence[int] | None = None,
    lives: Sequence[int] = (),
    score: Sequence[int] = (),
    players: Sequence[str] = (),
    seed: Any = None,
) -> list[str]:
    """The JSON lines of one game from its round histories; ``winners`` (with the final
    ``lives`` and ``score``) closes a finished game with an ``end`` line."""
    head = {
        "type": "game",
        "version": VERSION,
        "rules": dataclasses.asdict(rules),
        "num_players": num_players,
        "players": list(players),
        "seed": seed,
    }
    lines = [json.dumps(head)]
    lines += [json.dumps(round_record(h, rules)) for h in histories]
    if winners is not None:
        end = {
            "type": "end",
            "winners": list(winners),
            "lives": list(lives),
            "score": list(score),
            "rounds": len(histories),
        }
        lines.append(json.dumps(end))
    return lines


def write_lines(path: str | os.PathLike, lines: Sequence[str]) -> Path:
    """Write record lines atomically (a reader never sees half a file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_games(path: str | os.PathLike) -> Iterator[list[dict[str, Any]]]:
    """The games of a record file, each as its list of line objects; a damaged file
    raises ``ValueError`` naming the path and line."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"record file not found: {path}")
    game: list[dict[str, Any]] = []
    with path.open() as f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{i}: not a JSON line ({e})") from None
            if not isinstance(obj, dict) or "type" not in obj:
                raise ValueError(f"{path}:{i}: not a record line")
            if obj["type"] == "game":
                if game:
                    yield game
                game = [obj]
            elif not game:
                raise ValueError(f"{path}:{i}: a {obj['type']!r} line before any 'game' line")
            else:
                game.append(obj)
    if game:
        yield game


class _ReplayRng:
    """Stands in for the generator during a replay: hands out the recorded
    reshuffles as permutations of the pile being shuffled."""

    def __init__(self) -> None:
        self.pending: list[list[int]] = []
        self.state: GameState | None = None

    def permutation(self, n: int) -> np.ndarray:
        if not self.pending:
            raise ValueError("the record has fewer reshuffles than the replay needs")
        drawn = self.pending.pop(0)
        pile = self.state.discard  # the engine shuffles this list (its top already taken off)
        if len(pile) != n or not set(drawn) <= set(pile):
            raise ValueError("a recorded reshuffle does not match the discard pile")
        # the new stock, top last: cards never drawn from it, then the drawn ones
        target = [c for c in pile if c not in set(drawn)] + list(reversed(drawn))
        where = {c: i for i, c in enumerate(pile)}
        return np.array([where[c] for c in target])

    def integers(self, *args: Any, **kwargs: Any) -> int:
        raise ValueError("a replay draws nothing at random: the record must fix every dealer")


def replay(game: list[dict[str, Any]]) -> Iterator[tuple[GameState, int, int]]:
    """Play a recorded game again on the engine; yields ``(state, seat, action)`` after
    each action, and checks every round's result and the end against the record."""
    head = game[0]
    rules = Rules(**{k: v for k, v in head["rules"].items()})
    n = head["num_players"]
    rng = _ReplayRng()
    s: GameState | None = None
    for line in game[1:]:
        if line["type"] != "round":
            continue
        if s is None:
            s = new_game(rules, n, rng, dealer=line["dealer"], deck=line["deck"])  # type: ignore[arg-type]
        else:
            start_round(s, rng, deck=line["deck"], dealer=line["dealer"])  # type: ignore[arg-type]
        rng.state = s
        rng.pending = [list(x) for x in line["reshuffles"]]
        for seat, action, _name in line["actions"]:
            if s.current != seat:
                raise ValueError(
                    f"round {line['round_no']}: seat {seat} acts in the record, seat {s.current} in the replay"
                )
            apply_action(s, action, rng)  # type: ignore[arg-type]
            yield s, seat, action
        result = line["result"]
        if (
            result is not None
            and s.result is not None
            and list(s.result.lives_after) != result["lives_after"]
        ):
            raise ValueError(f"round {line['round_no']}: the replay ends with other lives than the record")
    end = next((x for x in game if x["type"] == "end"), None)
    if (
        end is not None
        and s is not None
        and (list(s.winners) != end["winners"] or list(s.lives) != end["lives"])
    ):
        raise ValueError("the replayed game ends otherwise than the record")
