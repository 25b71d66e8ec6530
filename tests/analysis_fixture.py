"""The seeded games behind ``tests/data/analysis_records.json``, and its writer.

The fixture holds, for every rules preset (and reshuffled stocks) and table size, the
research records (turn, knock and player-round records) of the first rounds of one
seeded game between random and greedy players. It was captured from the implementation
of ``thirtyone_env.harness.analysis`` at commit 5967217, which read the records off
each round's history with a simulation of its own, before the records were built from
the engine's real states (``TurnRecorder``); ``tests/test_analysis.py`` checks that the
new way gives the very same records. At the points and chips presets a player-round
record's ``lost`` is what the round scored, negative. Rewrite it (``.venv/bin/python
tests/analysis_fixture.py``, which now uses the ``TurnRecorder``) only when the games
themselves change on purpose: the game of ``banking/4`` did when one's own discard
could no longer be taken back with more than two players in, the points of
``no_elimination/2`` when the hands below a blitz came to rank below the 31, and every
banking game when the widow came to be dealt one card a round; only their records
were rewritten, every other game's are still those captured.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from thirtyone_env.game.engine import new_game
from thirtyone_env.game.policies import GreedyPolicy, RandomPolicy
from thirtyone_env.game.rules import PRESETS, Rules
from thirtyone_env.harness.driver import NOBODY, Table

FIXTURE = Path(__file__).parent / "data" / "analysis_records.json"
ROUNDS = 12  #: rounds kept per game (the first ones)
TABLES = ((2, 0), (3, 1), (4, 2))  #: (players, seed) of each preset's games
#: Rules beyond the presets: a small deck, late knocks and reshuffled stocks.
EXTRA = {"reshuffle": Rules(deck="piquet32", stock_exhausted="reshuffle", knock_from_turn=8)}


def players(n: int) -> list[Any]:
    """Random players with a greedy one in every other seat (knocks and switches both)."""
    return [GreedyPolicy() if seat % 2 else RandomPolicy() for seat in range(n)]


def games(observer: Any = None, on_settle: Any = None) -> Iterator[tuple[str, int, Table]]:
    """``(preset, players, table)`` of every fixture game, played to its end with every
    round's history kept (``observer`` watches every move, ``on_settle`` sees every
    settled round, as at any :class:`Table`)."""
    for name, rules in sorted({**PRESETS, **EXTRA}.items()):
        for n, seed in TABLES:
            if n > rules.max_players or rules.seats not in (None, n):
                continue
            rng = np.random.default_rng(seed)
            seated = players(n)
            for player in seated:  # the captured games: the players drew from the table's generator
                if isinstance(player, RandomPolicy):
                    player.reset(rng)
            state = new_game(rules, n, rng, dealer=n - 1)
            table = Table(state, seated, rng, keep_history=True, observer=observer, on_settle=on_settle)
            table.advance(NOBODY)
            yield name, n, table


#: The id keys of each kind of record, which the captured records predate.
IDS = {
    "turns": ("game", "round_no", "player"),
    "knocks": ("game", "round_no", "player"),
    "players": ("game", "player"),
}


def expected_records() -> dict[str, Any]:
    """The records of every fixture game's first :data:`ROUNDS` rounds, by
    ``"preset/players"``: per round its turn, knock and player-round records."""
    from thirtyone_env.harness.analysis import TurnRecorder, knock_records, player_round_records

    out: dict[str, Any] = {}
    recorder = TurnRecorder()
    rounds: list[tuple[list, list]] = []
    for name, n, _table in games(recorder, lambda s: rounds.append((s.history, recorder.round_turns(s)))):
        out[f"{name}/{n}"] = [
            {
                kind: [{k: v for k, v in rec.items() if k not in IDS[kind]} for rec in recs]
                for kind, recs in (
                    ("turns", t),
                    ("knocks", knock_records(h, t)),
                    ("players", player_round_records(h, t)),
                )
            }
            for h, t in rounds[:ROUNDS]
        ]
        rounds.clear()
    return out


def pack(records: dict[str, Any]) -> dict[str, Any]:
    """The records with each kind's keys stated once (rows of values), to keep the
    file small."""
    keys: dict[str, list[str]] = {}
    games = {}
    for game, rounds in records.items():
        packed = []
        for r in rounds:
            row = {}
            for kind, recs in r.items():
                for rec in recs:
                    keys.setdefault(kind, list(rec))
                    if list(rec) != keys[kind]:
                        raise ValueError(f"{game}: {kind} records with other keys: {list(rec)}")
                row[kind] = [list(rec.values()) for rec in recs]
            packed.append(row)
        games[game] = packed
    return {"keys": keys, "games": games}


def unpack(packed: dict[str, Any]) -> dict[str, Any]:
    """The records :func:`pack` packed, as dicts again."""
    keys = packed["keys"]
    return {
        game: [
            {kind: [dict(zip(keys[kind], row, strict=True)) for row in rows] for kind, rows in r.items()}
            for r in rounds
        ]
        for game, rounds in packed["games"].items()
    }


if __name__ == "__main__":
    FIXTURE.parent.mkdir(exist_ok=True)
    FIXTURE.write_text(json.dumps(pack(expected_records()), separators=(",", ":")) + "\n")
    print(f"wrote {FIXTURE} ({FIXTURE.stat().st_size} bytes)")
