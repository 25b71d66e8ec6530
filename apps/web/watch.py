"""What the web table shows of recorded games and of results folders.

A record is replayed on the engine (:func:`thirtyone_env.harness.records.replay`,
which checks every standing the record states), and each step becomes a frame: every
hand (a record shows them all), the top discard, the stock, the table hands, lives and
the move just made; a settled round's frame carries its result. Results folders of
``evaluate.py`` are listed with their tables (CSV) and plots (PNG). Files are found only
inside the folders the server was given: a name is checked, resolved and must stay
inside its folder (no ``..``, no link out of it).
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any

from apps.web.session import card, cards
from thirtyone_env.game import events as ev
from thirtyone_env.game.actions import action_name
from thirtyone_env.game.engine import ROUND_OVER
from thirtyone_env.harness.records import parse_line, replay
from thirtyone_env.harness.replay import RECORD_ERRORS, describe_event

#: Largest record the server reads (an upload or a file).
MAX_RECORD_BYTES = 50 * 1024 * 1024
#: Most frames a game yields (a record is a game; a longer one is refused).
MAX_FRAMES = 50_000
#: Most lines and games a record the server reads may hold.
MAX_LINES, MAX_GAMES = 200_000, 10_000
#: Longest line of an uploaded record (characters): some 50,000 moves a round, where
#: the presets' turn limit allows about 400; parsing costs up to some 30 times a line's
#: length, so this bounds what one upload can make the server hold.
MAX_LINE = 2**21
#: Names of results folders and files the server serves.
SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
PLOTS, TABLES = (".png",), (".csv",)
#: Rows of a CSV table sent to the browser.
MAX_ROWS = 500


def inside(root: Path, relative: str, suffixes: tuple[str, ...]) -> Path:
    """``root/relative``, a regular file with one of ``suffixes`` that resolves inside
    ``root``; ``ValueError`` (a 4xx) for anything else, saying which."""
    parts = Path(relative).parts
    if not relative or Path(relative).is_absolute() or any(not SAFE_NAME.fullmatch(p) for p in parts):
        raise ValueError(f"{relative!r} is not a file name the server serves")
    try:
        path = (root / relative).resolve()
    except RuntimeError:  # a link that leads back to itself
        raise ValueError(f"{relative!r} is a symbolic link that loops") from None
    if not path.is_relative_to(root.resolve()):
        raise ValueError(f"{relative!r} is not inside the served folder")
    if path.suffix.lower() not in suffixes or not path.is_file():
        raise FileNotFoundError(relative)
    return path


def _resolves_inside(path: Path, root: Path) -> bool:
    """Whether ``path`` resolves inside ``root`` (a link that loops does not)."""
    try:
        return path.resolve().is_relative_to(root)
    except RuntimeError:
        return False


def list_records(root: Path) -> list[str]:
    """The ``.jsonl`` records under ``root`` (one level of folders: ``evaluate.py
    --record DIR`` folders), relative paths, sorted."""
    root = root.resolve()
    found = [*root.glob("*.jsonl"), *root.glob("*/*.jsonl")]
    out = []
    for p in found:
        rel = p.relative_to(root).as_posix()
        if p.is_file() and _resolves_inside(p, root) and all(SAFE_NAME.fullmatch(x) for x in Path(rel).parts):
            out.append(rel)
    return sorted(out)[:1000]


def parse_record(text: str, name: str) -> list[list[dict[str, Any]]]:
    """The games of a record's text (JSON Lines: a ``game`` line, its rounds, an
    ``end`` line); ``ValueError`` naming ``name`` and the line for a bad one."""
    games: list[list[dict[str, Any]]] = []
    for k, line in enumerate(text.splitlines(), 1):
        if k > MAX_LINES:
            raise ValueError(f"{name} holds more than {MAX_LINES:,} lines")
        if not line.strip():
            continue
        item = parse_line(line, f"{name}:{k}", MAX_LINE)
        if item["type"] == "game":
            if len(games) == MAX_GAMES:
                raise ValueError(f"{name} holds more than {MAX_GAMES:,} games")
            games.append([item])
        elif not games:
            raise ValueError(f"{name}:{k}: a {item['type']!r} line before any 'game' line")
        else:
            games[-1].append(item)
    if not games:
        raise ValueError(f"{name} holds no game (an empty record)")
    return games


def frames(game: list[dict[str, Any]], name: str) -> dict[str, Any]:
    """A recorded game as frames to step through; ``ValueError`` naming ``name`` when it
    does not replay (a damaged or crafted record)."""
    head = game[0]
    out: list[dict[str, Any]] = []
    try:
        dealt = None  # the round whose deal has its frame
        for s, seat, action in replay(game):
            if dealt != s.round_no and s.history and s.history[0][0] == ev.DEAL:
                dealt = s.round_no  # (a Switch round's carry-over offers come before its deal)
                out.append(_deal_frame(s))
            kind, who, data = s.history[-1] if s.history else (None, seat, None)
            text = describe_event(kind, who, data) if kind else None
            out.append(_frame(s, seat, text or f"seat {seat}: {action_name(action)}"))
            if len(out) > MAX_FRAMES:
                raise ValueError(f"more than {MAX_FRAMES:,} moves")
    except RECORD_ERRORS as e:
        raise ValueError(f"cannot load record {name}: {e}") from None
    end = next((x for x in game if x["type"] == "end"), None)
    return {
        "players": _names(head.get("players"), head["num_players"]),
        "num_players": head["num_players"],
        "rules": head["rules"],
        "seed": _seed(head.get("seed")),
        "frames": out,
        "winners": end["winners"] if end else None,
    }


def _names(players: Any, n: int) -> list[str]:
    """The record's player names, each cut to 100 characters; seat numbers where the
    record has no list of ``n`` names (the names are shown, nothing checks them)."""
    if isinstance(players, list) and len(players) == n and all(isinstance(x, str) for x in players):
        return [x[:100] for x in players]
    return [f"seat {i}" for i in range(n)]


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _seed(seed: Any) -> Any:
    """The record's seed as shown: an integer or a short list of them, else None."""
    if _is_int(seed) or (isinstance(seed, list) and len(seed) <= 8 and all(_is_int(x) for x in seed)):
        return seed
    return None


def _deal_frame(s: Any) -> dict[str, Any]:
    """The round as dealt (the replay yields after each move: the deal is read back
    from the round's first event)."""
    _kind, dealer, data = s.history[0]
    hands, upcard, lives = data[0], data[1], data[2]
    first = s.history[1][0] if len(s.history) > 1 else None
    frame = _frame(s, None, f"round {s.round_no}: seat {dealer} deals", deal=True)
    frame["hands"] = [cards(h) for h in hands]
    frame["top_discard"] = card(upcard) if upcard is not None else None
    frame["stock"] = len(s.stock) + (first == ev.DRAW_STOCK)
    frame["lives"] = list(lives)
    if len(data) > 3 and frame["table_hands"]:
        frame["table_hands"] = [cards(h) for h in data[3]]
    frame["result"] = None
    return frame


def _frame(s: Any, seat: int | None, text: str, deal: bool = False) -> dict[str, Any]:
    result = None
    if s.phase >= ROUND_OVER and s.result is not None:
        r = s.result
        result = {
            "reason": r.reason,
            "values": list(r.values),
            "losses": list(r.losses),
            "lives": list(r.lives_after),
            "eliminated": list(r.eliminated),
        }
    return {
        "round": s.round_no,
        "dealer": s.dealer,
        "seat": seat,
        "text": text,
        "deal": deal,
        "hands": [cards(h) for h in s.hands],
        "top_discard": card(s.discard[-1]) if s.discard else None,
        "stock": len(s.stock),
        "table_hands": [cards(h) for h in s.table] if not s.stock_game else [],
        "lives": list(s.lives),
        "active": [bool(a) for a in s.active],
        "result": result,
    }


def load_record(root: Path, relative: str) -> list[list[dict[str, Any]]]:
    """The games of a record file in ``root``; ``ValueError`` naming it when bad."""
    path = inside(root, relative, (".jsonl",))
    if path.stat().st_size > MAX_RECORD_BYTES:
        raise ValueError(f"{relative} is larger than {MAX_RECORD_BYTES // 2**20} MB")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"cannot load record {relative}: it is not UTF-8 text") from None
    return parse_record(text, relative)


def list_results(root: Path) -> list[dict[str, Any]]:
    """The results folders under ``root`` (folders holding CSV tables or PNG plots);
    a folder or file that is a link out of ``root`` is not listed (nor served)."""
    root = root.resolve()
    if not root.is_dir():
        return []  # (as the records: a folder removed while the server runs lists nothing)
    out = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and SAFE_NAME.fullmatch(p.name)):
        if not _resolves_inside(folder, root):
            continue
        files = [
            f.name
            for f in sorted(folder.iterdir())
            if f.is_file() and SAFE_NAME.fullmatch(f.name) and _resolves_inside(f, root)
        ]
        plots = [f for f in files if f.lower().endswith(PLOTS)]
        tables = [f for f in files if f.lower().endswith(TABLES)]
        if plots or tables:
            out.append({"name": folder.name, "plots": plots, "tables": tables})
    return out[:1000]


#: The eight bytes every PNG file starts with.
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def is_png(path: Path) -> bool:
    """Whether ``path`` starts as a PNG file does: only those are served as images."""
    with path.open("rb") as f:
        return f.read(len(PNG_SIGNATURE)) == PNG_SIGNATURE


def read_table(path: Path) -> dict[str, Any]:
    """A CSV file as its header and first :data:`MAX_ROWS` rows; ``csv.Error`` for
    one the csv module cannot read (a NUL byte, a field over its limit)."""
    with path.open(newline="", encoding="utf-8", errors="replace") as f:
        rows = list(csv.reader(io.StringIO(f.read(4 * 2**20))))
    return {
        "header": rows[0] if rows else [],
        "rows": rows[1 : MAX_ROWS + 1],
        "more": len(rows) - 1 > MAX_ROWS,
    }
