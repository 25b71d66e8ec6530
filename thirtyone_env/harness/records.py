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
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from thirtyone_env.game import events as ev
from thirtyone_env.game.actions import action_name, encode, event_move
from thirtyone_env.game.engine import (
    GAME_OVER,
    ROUND_OVER,
    GameState,
    RoundResult,
    apply_action,
    new_game,
    stacked_deck,
    stacked_table_deck,
    start_round,
)
from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.driver import MoveObserver, observed_action
from thirtyone_env.harness.files import atomic_write, json_value

VERSION = 2
#: versions this program replays; version 1 differs from 2 only in banking's deal (its
#: widow was dealt all at once after each player's first card), so a version-1 banking
#: game is refused rather than replayed from decks dealt another way
READ_VERSIONS = (1, 2)


def _event_action(kind: str, data: Any) -> int | None:
    """The action id behind a history event (``None`` for events that are not moves)."""
    move = event_move(kind, data)
    return None if move is None else encode(move)


def round_record(history: list, rules: Rules) -> dict[str, Any]:
    """One settled round (its ``state.history``) as a record line.

    A Switch carry-over round (a ``CARRY_OVER`` event) records the deck with the
    carried cards last: the engine deals that round from the deck without them."""
    kind, dealer, deal = history[0]
    if kind != ev.DEAL:
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
        if kind == ev.CARRY_OVER:
            carried = list(data)
        action = _event_action(kind, data)
        if action is not None:
            actions.append([seat, action, action_name(action)])
        if kind == ev.DRAW_STOCK or kind == ev.RENEW:
            cards = [data] if kind == ev.DRAW_STOCK else list(data[2])
            (after if counts else drawn).extend(cards)
        elif kind == ev.RESHUFFLE:
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
    result = history[-1][2] if history[-1][0] == ev.SETTLE else None
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


def write_lines(path: str | os.PathLike, lines: Sequence[str], *, replace: bool = True) -> Path:
    """Write record lines atomically with the user's umask (a reader never sees half a
    file); ``replace=False``: never over a file that exists (``ValueError``)."""
    return atomic_write(path, "\n".join(lines) + "\n", replace=replace)


#: The file that marks a record folder complete (``evaluate.py --record``): written
#: last, once every game file is in place.
MANIFEST = "manifest.json"


#: Keys every line of a type must have.
REQUIRED_KEYS = {
    "game": ("rules", "num_players"),
    "round": ("dealer", "deck", "reshuffles", "actions", "result"),
    "end": ("winners",),
}


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_ints(x: Any) -> bool:
    return isinstance(x, list) and all(_is_int(v) for v in x)


#: The shape of each key a line states: (test, what it must be).
KEY_SHAPES: dict[str, tuple[Any, str]] = {
    "rules": (lambda x: isinstance(x, dict), "an object of rule fields"),
    "num_players": (_is_int, "an integer"),
    "dealer": (_is_int, "a seat number"),
    "round_no": (lambda x: x is None or _is_int(x), "a round number"),
    "deck": (_is_ints, "a list of card ids"),
    "reshuffles": (
        lambda x: isinstance(x, list) and all(_is_ints(r) for r in x),
        "a list of lists of card ids",
    ),
    "actions": (
        lambda x: (
            isinstance(x, list)
            and all(isinstance(a, list) and len(a) == 3 and _is_int(a[0]) and _is_int(a[1]) for a in x)
        ),
        "a list of [seat, action id, name] entries",
    ),
    "result": (lambda x: x is None or isinstance(x, dict), "an object (or null)"),
    "winners": (_is_ints, "a list of seats"),
}


def write_manifest(
    folder: str | os.PathLike, files: Sequence[tuple[str, int]], config: dict[str, Any]
) -> Path:
    """Mark a record folder complete: which files (name, games) it holds, how many games
    in all, and the configuration that played them. Written last and atomically, so a
    folder without it is an interrupted record."""
    folder = Path(folder)
    missing = [name for name, _ in files if not (folder / name).is_file()]
    if missing:
        raise ValueError(f"record folder {folder} lacks {missing[0]}: not marking it complete")
    manifest = {
        "type": "record manifest",
        "version": VERSION,
        "complete": True,
        "games": sum(g for _, g in files),
        "config": config,
        "files": [{"name": name, "games": g} for name, g in files],
    }
    return atomic_write(folder / MANIFEST, json.dumps(manifest, indent=1) + "\n")


def read_manifest(folder: str | os.PathLike) -> dict[str, Any]:
    """The manifest of a complete record folder; ``ValueError`` saying the record is
    incomplete when it has none (the run that wrote it stopped early) or when a file it
    lists is missing."""
    folder = Path(folder)
    path = folder / MANIFEST
    if not path.is_file():
        raise ValueError(
            f"incomplete record: {folder} has no {MANIFEST} (the run that wrote it did not finish)"
        )
    try:
        manifest = json_value(path.read_text())
        files = [(f["name"], f["games"]) for f in manifest["files"]]
        for name, games in files:
            if (
                not isinstance(name, str)
                or isinstance(games, bool)
                or not isinstance(games, int)
                or games < 0
            ):
                raise ValueError(
                    f"a file entry needs a name and a whole number of games, got {name!r}: {games!r}"
                )
        if len({name for name, _ in files}) != len(files):
            raise ValueError("a file is listed twice")
        if manifest.get("type") != "record manifest" or not _readable(manifest.get("version")):
            raise ValueError("its type and version are not 'record manifest', 1 or 2")
        if manifest.get("complete") is not True:
            raise ValueError("it does not say the record is complete")
        total = manifest.get("games")
        if isinstance(total, bool) or total != sum(g for _, g in files):
            raise ValueError(f"its games {total!r} are not the {sum(g for _, g in files)} its files hold")
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{path}: not a record manifest ({e})") from None
    for name, _ in files:
        if Path(name).name != name or not (folder / name).is_file():
            raise ValueError(f"incomplete record: {folder} lacks {name!r}, listed in its {MANIFEST}")
    manifest["files"] = [{"name": n, "games": g} for n, g in files]
    return manifest


def incomplete_note(path: str | os.PathLike) -> str | None:
    """A warning when ``path`` is a game file of a tournament record folder that has
    no manifest (an interrupted run: the folder lacks games); ``None`` otherwise."""
    path = Path(path)
    if not re.fullmatch(r"deal_\d+\.jsonl", path.name) or (path.parent / MANIFEST).is_file():
        return None
    return (
        f"incomplete record: {path.parent} has no {MANIFEST}, so the run that wrote it did "
        f"not finish; {path.name} itself is whole, but the folder lacks games"
    )


#: Longest record line read (characters): a round's line holds its deck and its moves,
#: some 40 characters a move, so 32 MiB is some 800,000 moves, where the rules' default
#: turn limit (200) allows about 400. Parsing a crafted line can cost some 30 times its
#: length in memory: a longer one is refused unread, and a server reading what any client
#: sends passes a smaller limit (:func:`parse_line`).
MAX_LINE = 32 * 2**20


def too_long(limit: int) -> str:
    return f"a line longer than {limit:,} characters is not a record line this program reads"


def _record_lines(f: Any, path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of the non-blank lines, one at a time, none longer than
    :data:`MAX_LINE`."""
    number = 0
    while True:
        text = f.readline(MAX_LINE + 1)
        if not text:
            return
        number += 1
        if len(text) > MAX_LINE:
            raise ValueError(f"{path}:{number}: {too_long(MAX_LINE)}")
        if text.strip():
            yield number, text


def _named(keys: Sequence[str]) -> str:
    quoted = [repr(k) for k in keys]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _is_text(obj: Any) -> bool:
    """Whether every string in ``obj`` is text UTF-8 can write: JSON's ``\\u`` escapes
    can spell a lone surrogate, which no file or answer can hold."""
    try:
        json.dumps(obj, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    except RecursionError:
        return True  # (the line is refused for its nesting, not its text)
    return True


def _readable(version: Any) -> bool:
    return type(version) is int and version in READ_VERSIONS


def _check_version(head: dict[str, Any], where: str) -> None:
    """Refuse a game line of a version this program does not replay (see
    :data:`READ_VERSIONS`)."""
    version = head.get("version", VERSION)
    if not _readable(version):
        raise ValueError(f"{where}: a record of version {version!r}; this program reads versions 1 and 2")
    rules = head.get("rules")
    if version == 1 and isinstance(rules, dict) and rules.get("table") == "widow":
        raise ValueError(
            f"{where}: a banking record of version 1, dealt with the widow all at once after "
            "each player's first card; this program deals the widow one card a round and "
            "cannot replay it"
        )


def parse_line(text: str, where: str, max_line: int = MAX_LINE) -> dict[str, Any]:
    """One record line as its object; ``ValueError`` starting with ``where`` (file:line)
    for anything that is not a record line of a known type with its keys, or that is
    longer than ``max_line`` characters (refused before it is parsed)."""
    if len(text) > max_line:
        raise ValueError(f"{where}: {too_long(max_line)}")
    try:
        obj = json.loads(text)
    except ValueError as e:  # not JSON, or an integer of more digits than Python converts
        raise ValueError(f"{where}: not a JSON line ({e})") from None
    except RecursionError:
        raise ValueError(f"{where}: nested too deeply to be a record line") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        raise ValueError(f"{where}: not a record line (a JSON object with a 'type')")
    if "\\u" in text and not _is_text(obj):
        raise ValueError(f"{where}: a string holds a lone surrogate (a \\ud800-\\udfff escape), not text")
    kind = obj["type"]
    if kind not in REQUIRED_KEYS:
        raise ValueError(f"{where}: unknown line type {kind!r} (expected one of {sorted(REQUIRED_KEYS)})")
    missing = [k for k in REQUIRED_KEYS[kind] if k not in obj]
    if missing:
        s = "s" if len(missing) > 1 else ""
        raise ValueError(f"{where}: the {kind!r} line lacks the key{s} {_named(missing)}")
    for key, (fits, what) in KEY_SHAPES.items():
        if key in obj and key in (*REQUIRED_KEYS[kind], "round_no") and not fits(obj[key]):
            raise ValueError(f"{where}: the {kind!r} line's {key!r} must be {what}")
    if kind == "game":
        _check_version(obj, where)
    return obj


def read_games(path: str | os.PathLike) -> Iterator[list[dict[str, Any]]]:
    """The games of a record file, each as its list of line objects, read one game at a
    time (a large file is never held whole); a damaged file raises ``ValueError``
    naming the path and line."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a folder, not a record file")
    if not path.is_file():
        if path.exists():
            raise ValueError(f"{path} is not a regular file: not a record file")
        raise ValueError(f"record file not found: {path}")
    game: list[dict[str, Any]] = []
    try:
        with path.open(encoding="utf-8") as f:
            for i, text in _record_lines(f, path):
                obj = parse_line(text, f"{path}:{i}")
                if obj["type"] == "game":
                    if game:
                        yield game
                    game = [obj]
                elif not game:
                    raise ValueError(f"{path}:{i}: a {obj['type']!r} line before any 'game' line")
                else:
                    game.append(obj)
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not a text file ({e.reason} at byte {e.start})") from None
    if game:
        yield game


class _ReplayRng:
    """Stands in for the generator during a replay: hands out a round's recorded
    reshuffles, in order, as permutations of the pile being shuffled (each stacks its
    recorded cards on top of the new stock, to be drawn in that order).

    A record says what happened, so each recorded reshuffle must happen in the replay
    and every card it lists be drawn: a reshuffle the replay never makes (one too many,
    one in a round that ends before the stock runs out, any under rules that do not
    reshuffle) or cards listed but never drawn are refused, as a reshuffle the record
    lacks is. :meth:`start` begins a round, :meth:`finish` checks it used them all."""

    def __init__(self) -> None:
        self.pending: list[list[int]] = []
        self.state: GameState | None = None
        self.where = ""  # the round line, for messages
        self.dealing = False  # a round is being dealt from its recorded deck
        self.used = 0  # reshuffles handed out this round
        self.stock = 0  # size of the last one's new stock
        self.listed = 0  # cards its record lists as drawn from it

    def start(self, s: GameState, where: str, reshuffles: list[list[int]]) -> None:
        """A new round of ``s`` (its line named by ``where``) with its recorded reshuffles."""
        self.state, self.where = s, where
        self.pending = [list(x) for x in reshuffles]
        self.used = self.stock = self.listed = 0

    def permutation(self, n: int) -> np.ndarray:
        if self.dealing:  # the engine reshuffles only when a deal runs out of cards
            raise ValueError(f"{self.where}: its deck is short of the cards its deal needs")
        self._check_drawn()
        if not self.pending:
            raise ValueError(
                f"{self.where}: the replay reshuffles the discard pile more often than the "
                f"record's {self.used} reshuffle{'s' if self.used != 1 else ''}"
            )
        drawn = self.pending.pop(0)
        self.used += 1
        pile = self.state.discard  # the engine shuffles this list (its top already taken off)
        if len(pile) != n or len(set(drawn)) != len(drawn) or not set(drawn) <= set(pile):
            raise ValueError(
                f"{self.where}: recorded reshuffle {self.used} does not match the discard pile "
                "(its cards must be distinct cards of the pile)"
            )
        self.stock, self.listed = n, len(drawn)
        # the new stock, top last: cards never drawn from it, then the drawn ones
        target = [c for c in pile if c not in set(drawn)] + list(reversed(drawn))
        where = {c: i for i, c in enumerate(pile)}
        return np.array([where[c] for c in target])

    def integers(self, *args: Any, **kwargs: Any) -> int:
        raise ValueError("a replay draws nothing at random: the record must fix every dealer")

    def finish(self) -> None:
        """``ValueError`` naming the round line where a recorded reshuffle went unused:
        never made by the replay, or listing cards the replay never drew."""
        self._check_drawn()
        if not self.pending:
            return
        s = self.state
        recorded = self.used + len(self.pending)
        if s.rules.stock_exhausted != "reshuffle":
            why = f"these rules never reshuffle (stock_exhausted={s.rules.stock_exhausted!r})"
        else:
            why = f"the replay reshuffles {self.used} time{'s' if self.used != 1 else ''}"
        raise ValueError(
            f"{self.where}: the record has {recorded} reshuffle{'s' if recorded != 1 else ''} "
            f"of the discard pile, but {why}: reshuffle {self.used + 1} is never used"
        )

    def _check_drawn(self) -> None:
        """The cards drawn from the last reshuffled stock (once it runs out, or once the
        round is over) must be the ones its record lists, all of them."""
        if not self.used:
            return
        drawn = self.stock - len(self.state.stock)
        if drawn != self.listed:
            raise ValueError(
                f"{self.where}: recorded reshuffle {self.used} lists {self.listed} cards drawn "
                f"from its stock, the replay draws {drawn}"
            )


def replay(
    game: list[dict[str, Any]],
    *,
    observer: MoveObserver | None = None,
    on_settle: Callable[[GameState], None] | None = None,
) -> Iterator[tuple[GameState, int, int]]:
    """Play a recorded game again on the engine; yields ``(state, seat, action)`` after
    each action, and checks every field the record states of each round's result and
    of the game's end against the replay (:func:`check_round`, :func:`check_end`),
    raising ``ValueError`` at the first difference. Each round's recorded reshuffles
    are the stocks the replay draws from when it runs out; one the replay never makes,
    or lists cards it never draws, is an error too (naming the round).

    As at a :class:`~thirtyone_env.harness.driver.Table`, an ``observer`` sees every
    move and ``on_settle(state)`` every settled round once it is checked."""
    head = game[0]
    rules = record_rules(head)
    n = head["num_players"]
    rng = _ReplayRng()
    s: GameState | None = None
    rounds = 0
    for line in game[1:]:
        if line["type"] != "round":
            continue
        if s is not None and s.phase == GAME_OVER:
            raise ValueError(f"round {line.get('round_no')}: the record goes on after the game is over")
        rng.where, rng.dealing = f"round {line.get('round_no')}", True
        if s is None:
            s = new_game(rules, n, rng, dealer=line["dealer"], deck=line["deck"])  # type: ignore[arg-type]
        else:
            start_round(s, rng, deck=line["deck"], dealer=line["dealer"])  # type: ignore[arg-type]
        rng.dealing = False
        rounds += 1
        rng.start(s, f"round {line.get('round_no')}", line["reshuffles"])
        for seat, action, _name in line["actions"]:
            if s.current != seat:
                raise ValueError(
                    f"round {line.get('round_no')}: seat {seat} acts in the record, seat {s.current} in the replay"
                )
            if observer is None:
                apply_action(s, action, rng)  # type: ignore[arg-type]
            else:
                observed_action(s, action, rng, observer)
            yield s, seat, action
        check_round(line, s)
        rng.finish()
        if on_settle is not None and s.phase >= ROUND_OVER:
            on_settle(s)
    if s is None:
        raise ValueError("the game has no rounds: nothing to replay (a header without its game)")
    end = next((x for x in game if x["type"] == "end"), None)
    if end is not None:
        check_end(end, s, rounds)


def record_rules(head: dict[str, Any]) -> Rules:
    """The ``Rules`` of a record's game line; a clear error for anything else."""
    stated = head["rules"]
    if not isinstance(stated, dict):
        raise ValueError("the game line's 'rules' is not an object of rule fields")
    known = {f.name for f in dataclasses.fields(Rules)}
    unknown = sorted(set(stated) - known)
    if unknown:
        raise ValueError(f"the game line's rules name unknown fields {_named(unknown)}")
    return Rules(**stated)


def _differences(stated: dict[str, Any], actual: dict[str, Any]) -> Iterator[str]:
    """A sentence for each field ``stated`` gives otherwise than ``actual`` (stated
    fields only, in the record's order)."""
    for key, value in stated.items():
        if key == "type":
            continue
        if key not in actual:
            yield f"the record states {key!r}, which the replay does not have"
        elif actual[key] != value:
            yield f"the record states {key} = {value!r}, the replay gives {actual[key]!r}"


def check_round(line: dict[str, Any], s: GameState) -> None:
    """``ValueError`` naming the first field of the round's recorded result (lives,
    losses, values, points or chips, who went out, ...) that the replay does not give."""
    stated = line["result"]
    where = f"round {line.get('round_no')}"
    if stated is None:
        return  # an unsettled round: nothing stated
    if not isinstance(stated, dict):
        raise ValueError(f"{where}: the 'result' is not an object")
    if s.phase < ROUND_OVER or s.result is None:
        raise ValueError(f"{where}: the recorded actions do not finish the round")
    actual = json.loads(json.dumps(_result_dict(s.result)))
    if line.get("round_no") is not None and line["round_no"] != s.round_no:
        raise ValueError(f"{where}: the replay plays round {s.round_no}")
    for difference in _differences(stated, actual):
        raise ValueError(f"{where}: {difference}")


def check_end(end: dict[str, Any], s: GameState, rounds: int) -> None:
    """``ValueError`` naming the first field of the recorded end (winners, lives,
    points or chips, rounds) that the replayed game does not give. An empty ``lives``
    or ``score`` list states nothing (records that did not keep them)."""
    if s.phase != GAME_OVER:
        raise ValueError("the record ends the game, but the replayed game is not over")
    actual = {"winners": list(s.winners), "lives": list(s.lives), "score": list(s.score), "rounds": rounds}
    stated = {k: v for k, v in end.items() if not (k in ("lives", "score") and v == [])}
    for difference in _differences(stated, actual):
        raise ValueError(f"game end: {difference}")
