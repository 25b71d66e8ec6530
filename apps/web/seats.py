"""Which players the web table seats, and the bounds on every option a request may set.

A request names each opponent by spec, but a web request is not a command line: anyone
who can reach the server sends it. So the table builds only the built-in players of
:data:`agents.REGISTRY`, each option checked against :data:`BOUNDS` (an option without a
bound cannot be set from the web), and the learned player only from models it was
started with: the zoo's model for the table (``ppo``), or one named by its file name
(``ppo:path=NAME.zip``) in the zoo or in the folder given as ``--models``. Specs that
run code (``package.module:Class``, ``file.py:Class``, a name an installed package
registers) are refused before anything is imported, unless the server was started
with ``--allow-code``; even then the built-in players keep their bounds.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import agents
from agents.ppo import ZOO
from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.match import play_game

#: A model file name a request may give (no folder, no ``..``).
MODEL_SUFFIXES = (".zip", ".npz")


@dataclass(frozen=True)
class Bound:
    """What an option may be set to from the web: a number in ``[low, high]`` (None:
    also ``none``, where the player takes it), or one of ``choices``."""

    low: float | None = None
    high: float | None = None
    choices: tuple[Any, ...] = ()
    none: bool = False

    def check(self, player: str, key: str, value: Any) -> None:
        if value is None:
            if not self.none:
                raise ValueError(f"player {player!r} option {key!r} cannot be none at the web table")
            return
        if self.choices:
            if value not in self.choices:
                raise ValueError(
                    f"player {player!r} option {key}={value!r}: the web table allows {list(self.choices)}"
                )
            return
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ValueError(f"player {player!r} option {key!r} takes a finite number, got {value!r}")
        if not self.low <= value <= self.high:  # type: ignore[operator]
            raise ValueError(
                f"player {player!r} option {key}={value}: the web table allows {self.low:g}..{self.high:g}"
            )


HAND = Bound(0, 40)  #: a hand value threshold (31 is the best hand; 32 and more: never knock)
UNIT = Bound(0, 1)
FLAG = Bound(choices=(True, False))

#: Every option the web table lets a request set, per built-in player, with its bounds:
#: search's budget (worlds, batch, seconds a decision: never none, see
#: :data:`WEB_DEFAULTS`) is held to what answers a move within seconds and a few megabytes.
BOUNDS: dict[str, dict[str, Bound]] = {
    "random": {},
    "greedy": {"knock_at": HAND},
    "blitz31": {"early_knock": HAND, "late_knock": HAND, "late_stock": Bound(0, 52)},
    "expert": {
        "horizon": Bound(0, 8),
        "knock_risk": UNIT,
        "last_life_care": UNIT,
        "opp_knock_at": HAND,
        "knocker_floor": HAND,
        "feed_weight": UNIT,
        "blitz_bonus": Bound(0, 20),
        "table_knock_at": HAND,
    },
    "search": {
        "worlds": Bound(1, 256),
        "time_limit": Bound(0.01, 2.0),
        "moves": Bound(choices=("knock", "all")),
        "rollout": Bound(choices=("expert", "greedy")),
        "rollout_knock_at": Bound(0, 40, none=True),
        "elimination_penalty": Bound(0, 10),
        "max_improve": Bound(0, 15),
        "confidence": Bound(0, 10),
        "batch": Bound(2, 16),
        "stop": Bound(0, 10),
    },
    # path: a model's file name (see resolve_model); model: a zoo id, checked by the player
    "ppo": {"path": Bound(), "deterministic": FLAG, "model": Bound()},
    "population": {
        "split": Bound(choices=("train", "held_out")),
        "seed": Bound(0, 2**31 - 1),
        "member": Bound(0, 10_000),
    },
}


#: Options the web table sets where a request does not: search always has a time limit
#: (checked after each batch of worlds), so no decision runs unbounded.
WEB_DEFAULTS: dict[str, dict[str, Any]] = {"search": {"time_limit": 1.0}}


@dataclass(frozen=True)
class Seating:
    """How the web table builds the players a request names."""

    #: folders whose models ``ppo:path=NAME`` may name (the zoo, then ``--models``)
    model_folders: tuple[Path, ...] = (ZOO,)
    #: seat players by import path, file or entry point (``--allow-code``): any client
    #: can then run code on this machine
    allow_code: bool = False

    def build(self, spec: str) -> Any:
        """The player ``spec`` names, or ``ValueError`` saying why the web table refuses it."""
        spec = spec.strip()
        kind = agents.spec_kind(spec)
        if kind != "builtin":
            if ":" not in spec and not self.allow_code:
                raise ValueError(
                    f"unknown player {spec[:80]!r}; the web table seats {sorted(BOUNDS)} and the zoo's models"
                )
            if not self.allow_code:
                raise ValueError(
                    f"player {spec[:60]!r} runs code: the web table seats it only when started with "
                    f"--allow-code; it seats {sorted(BOUNDS)} and the zoo's models"
                )
            return agents.from_spec(spec)
        name = spec.partition(":")[0].strip()
        options = {**WEB_DEFAULTS.get(name, {}), **agents.spec_options(spec)}
        player = agents.make(name, **self.checked(name, options))
        if name == "search":
            warm_search()
        return player

    def checked(self, name: str, options: dict[str, Any]) -> dict[str, Any]:
        """``options`` within :data:`BOUNDS`, with a model's file name resolved."""
        allowed = BOUNDS.get(name)
        if allowed is None:
            raise ValueError(f"player {name!r} is not seated at the web table; players are {sorted(BOUNDS)}")
        for key, value in options.items():
            if key not in allowed:
                settable = sorted(allowed) or "none"
                raise ValueError(
                    f"player {name!r} option {key!r} cannot be set at the web table (options: {settable})"
                )
            if name == "ppo" and key in ("path", "model"):
                continue
            allowed[key].check(name, key, value)
        if name == "ppo" and options.get("path") is not None:
            options = {**options, "path": str(self.resolve_model(options["path"]))}
        return options

    def resolve_model(self, name: Any) -> Path:
        """The model file ``name`` (a bare file name) in the first of the model folders
        that holds it."""
        text = str(name)
        if not _model_name(text):
            raise ValueError(
                f"ppo option path={text[:80]!r}: name a model file (.zip or .npz) of the zoo or of --models, "
                "without a folder"
            )
        for folder in self.model_folders:
            path = _inside(folder, text)
            if path is not None:
                return path
        raise ValueError(f"ppo option path={text!r}: no such model; models are {self.model_names()}")

    def model_names(self) -> list[str]:
        """The model files ``ppo:path=NAME`` may name: those :meth:`resolve_model` seats
        (a link out of its folder is not one)."""
        found: list[str] = []
        for folder in self.model_folders:
            for p in sorted(folder.iterdir()) if folder.is_dir() else ():
                if _model_name(p.name) and p.name not in found and _inside(folder, p.name):
                    found.append(p.name)
        return found[:1000]


def _model_name(text: str) -> bool:
    """Whether ``text`` may name a model file: a bare file name (no folder, not hidden)
    with a model's suffix."""
    return (
        bool(text)
        and Path(text).name == text
        and not text.startswith(".")
        and text.lower().endswith(MODEL_SUFFIXES)
    )


def _inside(folder: Path, name: str) -> Path | None:
    """The regular file ``name`` resolves to inside ``folder``, else None (a link out of
    it, a link that leads back to itself, a folder)."""
    try:
        path = (folder / name).resolve()
    except (RuntimeError, OSError):
        return None
    return path if path.is_file() and path.is_relative_to(folder.resolve()) else None


_warm_lock = threading.Lock()
_warmed: list[bool] = []


def warm_search() -> None:
    """Compile the search player's roll-out kernels once per process, while a game is
    being set up (:data:`~apps.web.app.SETUP_SECONDS`) rather than in its first move's
    time limit: numba keeps them on disk, but a fresh install (or changed kernels)
    compiles them at the first decision, tens of seconds. One short heads-up game of a
    small search on its own generator; the table's games and players are untouched."""
    with _warm_lock:
        if _warmed:
            return
        players = [agents.make("search", worlds=2, batch=2, moves="all"), agents.make("expert")]
        play_game(players, np.random.default_rng(0), Rules.preset("standard"))
        _warmed.append(True)
