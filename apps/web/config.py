"""The web table's configuration: the folders it serves, who it seats, and the bounds
that keep one request from taking the server's time or memory."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


def _help(text: str) -> dict[str, str]:
    return {"help": text}


@dataclass(frozen=True)
class WebConfig:
    """What :func:`apps.web.app.create_app` serves and how far it trusts a request."""

    records: Path | None = field(default=None, metadata=_help("game records to watch; saved games go here"))
    results: Path | None = field(default=None, metadata=_help("evaluate.py results folders to show"))
    models: Path | None = field(
        default=None, metadata=_help("a folder of models that opponents may name (ppo:path=NAME.zip)")
    )
    allow_code: bool = field(
        default=False,
        metadata=_help(
            "seat players by import path or file: anyone who can reach the server then runs code here"
        ),
    )
    allow_seeds: bool = field(
        default=False,
        metadata=_help(
            "let a request choose the shuffle's seed (to replay a deal): whoever sets a seed can know every card"
        ),
    )
    host: str = field(default="127.0.0.1", metadata=_help("the address it listens on (the Host it answers)"))
    token: str | None = field(
        default=None, metadata=_help("the token requests carry (None: a fresh random one)")
    )
    max_games: int = field(default=64, metadata=_help("games kept at once"))
    idle_minutes: float = field(default=30.0, metadata=_help("minutes after which an untouched game expires"))
    move_seconds: float = field(
        default=20.0, metadata=_help("seconds the opponents may take between two of the person's moves")
    )
    workers: int = field(
        default=4, metadata=_help("games computed at once (moves, new games, record replays)")
    )

    def __post_init__(self) -> None:
        for name in ("max_games", "workers"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100_000:
                raise ValueError(f"{name} must be an integer in 1..100000, got {value!r}")
        for name in ("idle_minutes", "move_seconds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 7 * 24 * 60:
                raise ValueError(f"{name} must be a positive number (at most a week), got {value!r}")
