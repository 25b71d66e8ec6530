"""Research records of played games as DataFrames that join on their ids.

:func:`table_records` plays games at a table with a
:class:`~thirtyone_env.harness.analysis.TurnRecorder` watching and returns the turn,
knock and player-round records (:mod:`~thirtyone_env.harness.analysis`), each row
carrying ``game``, ``round_no``, ``seat`` and ``player`` (the seat's spec): join them
with ``turns.merge(rounds, on=["game", "round_no", "seat", "player"])``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from thirtyone_env.game.engine import new_game
from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.analysis import TurnRecorder, knock_records, player_round_records
from thirtyone_env.harness.driver import NOBODY, Table, reset_players


def table_records(
    table: Sequence[str],
    games: int,
    make_player: Callable[[str], Any],
    rules: Rules | str | None = None,
    seed: int = 0,
) -> tuple[Any, Any, Any]:
    """``(turns, knocks, rounds)`` DataFrames of ``games`` games at ``table`` (one spec
    per seat); game ``g`` is played on child ``g`` of ``seed``, its dealer drawn from it."""
    import pandas as pd

    rules = Rules.resolve(rules)
    turns: list[dict[str, Any]] = []
    knocks: list[dict[str, Any]] = []
    rounds: list[dict[str, Any]] = []
    for g in range(games):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(g,)))
        players = [make_player(spec) for spec in table]
        reset_players(players, rng)
        recorder = TurnRecorder(g, list(table))

        def settled(s: Any, recorder: TurnRecorder = recorder, g: int = g) -> None:
            t = recorder.round_turns(s)
            turns.extend(t)
            knocks.extend(knock_records(s.history, t))
            rounds.extend(player_round_records(s.history, t, g, list(table)))

        Table(
            new_game(rules, len(table), rng),
            players,
            rng,
            labels=[f"player {p!r}" for p in table],
            observer=recorder,
            on_settle=settled,
        ).advance(NOBODY)
    return pd.DataFrame(turns), pd.DataFrame(knocks), pd.DataFrame(rounds)
