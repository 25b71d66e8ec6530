"""How the command-line tools end a run: one line on stderr and an exit status, never
a traceback (0 done, 2 an error, 130 interrupted); and the table options the
benchmarks that play games share."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn


class CommandParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that refuses bad input in one line on stderr, status 2
    (``prog: error: ...``): the usage is what ``--help`` is for."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def seconds_arg(text: str) -> float:
    """An ``argparse`` type: a finite number of seconds (or minutes) above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {text!r}")
    return value


def count_arg(text: str) -> int:
    """An ``argparse`` type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def path_arg(text: str) -> Path:
    """An ``argparse`` type: a path that is not empty (``Path("")`` would be the
    working folder, which nobody named)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty: name a file or folder (. for this one)")
    return Path(text)


def run_command(prog: str, what: str, body: Callable[[], int], interrupted: str = "interrupted") -> int:
    """``body()``'s exit status; a bad folder, option or illegal move (``ValueError``,
    ``OSError``) and a player's own failure (any other exception, named with ``what``
    stopped) become ``prog: error: ...`` and status 2, Ctrl-C ``prog: <interrupted>``
    and status 130."""
    try:
        return body()
    except KeyboardInterrupt:
        print(f"{prog}: {interrupted}", file=sys.stderr)
        return 130
    except (ValueError, OSError) as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # a player's own failure: named, never a traceback
        print(f"{prog}: error: {what} stopped: {type(e).__name__}: {e}", file=sys.stderr)
        return 2


def add_game_options(
    parser: argparse.ArgumentParser,
    *,
    games: int,
    seed: int,
    players: int | None = 4,
    games_help: str = "games each player plays",
    rules_help: str = "a rules preset",
) -> None:
    """Add the options of a tool that plays seeded games on worker processes:
    ``--players`` (unless ``players`` is None: the tool counts the seats itself),
    ``--games``, ``--rules``, ``--seed`` and ``--workers``, with these defaults."""
    if players is not None:
        parser.add_argument("--players", type=int, default=players, help="the table's size")
    parser.add_argument("--games", type=int, default=games, help=games_help)
    parser.add_argument("--rules", default="standard", help=rules_help)
    parser.add_argument("--seed", type=int, default=seed, help="the games' seed")
    parser.add_argument("--workers", type=int, default=1, help="worker processes")
