"""Typed history events and the one action decoder.

Every event the engine writes is an :class:`~thirtyone_env.game.events.Event` whose kind is a
declared constant; every action id of every table layout decodes to a
:class:`~thirtyone_env.game.actions.Move` that encodes back to the same id, and the records
recover each played id from its event through the same decoder.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from thirtyone_env.game import events as ev
from thirtyone_env.game.actions import (
    NUM_ACTIONS,
    NUM_ACTIONS_ALL,
    Move,
    action_name,
    decode,
    encode,
    event_move,
    num_actions,
    parse_action,
)
from thirtyone_env.game.cards import NUM_CARDS, PAIR_STRIDE, hand_value, triple_index
from thirtyone_env.game.engine import (
    GAME_OVER,
    ROUND_OVER,
    apply_action,
    legal_actions,
    new_game,
    start_round,
)
from thirtyone_env.game.rules import PRESETS

ROOT = Path(__file__).resolve().parents[1]
TABLE_PRESETS = ("standard", "pagat", "banking", "switch", "stop_the_bus")


def _play(preset: str, seed: int, rounds: int = 6) -> list[tuple[list, list[tuple[int, int]]]]:
    """Random legal play: each settled round's history with the (seat, id) played in it."""
    rng = np.random.default_rng(seed)
    s = new_game(PRESETS[preset], 3, rng)
    out = []
    for _ in range(rounds):
        played = []
        while s.phase < ROUND_OVER:
            legal = legal_actions(s)
            a = int(legal[rng.integers(len(legal))])
            played.append((s.current, a))
            apply_action(s, a, rng)
        out.append((list(s.history), played))
        if s.phase == GAME_OVER:
            break
        start_round(s, rng)
    return out


@pytest.mark.parametrize("preset", TABLE_PRESETS)
def test_decode_round_trips_every_id_of_every_table_kind(preset: str) -> None:
    rules = PRESETS[preset]
    for action in range(num_actions(rules)):
        move = decode(action)
        assert isinstance(move, Move)
        assert encode(move) == action
        assert parse_action(action_name(action)) == action


def test_decode_refuses_unknown_ids() -> None:
    for bad in (-1, NUM_ACTIONS_ALL, 2.0, True):
        with pytest.raises(ValueError, match="unknown action id"):
            decode(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no action id"):
        encode(Move(ev.DISCARD, card=99))


def test_decoded_moves_say_what_the_id_does() -> None:
    assert decode(0) == Move(ev.DRAW_STOCK)
    assert decode(NUM_ACTIONS - 1) == Move(ev.DISCARD, card=51)
    assert decode(parse_action("widow 01>12")).pairs == ((0, 0, 1), (1, 0, 2))
    assert decode(parse_action("swap 2 1 0")).pairs == ((2, 1, 0),)
    assert decode(parse_action("swap hand 1")) == Move(
        ev.SWAP_HAND, pairs=((0, 1, 0), (1, 1, 1), (2, 1, 2)), hand=1
    )
    assert decode(parse_action("renew 1 up")) == Move(ev.RENEW, hand=1, up=True)
    assert decode(parse_action("keep 1")) == Move(ev.KEEP, hand=1)
    assert decode(parse_action("bus 2 0")).pairs == ((2, 0, 0),)
    assert decode(parse_action("bus all")).pairs == ((0, 0, 0), (1, 0, 1), (2, 0, 2))


@pytest.mark.parametrize("preset", TABLE_PRESETS)
def test_every_event_is_typed_with_a_declared_kind_and_maps_back_to_its_action(preset: str) -> None:
    kinds = set()
    for seed in range(3):
        for history, played in _play(preset, seed):
            assert all(isinstance(e, ev.Event) for e in history)
            kinds |= {e.kind for e in history}
            recovered = [
                (e.seat, encode(m)) for e in history if (m := event_move(e.kind, e.data)) is not None
            ]
            assert recovered == played
            assert history[0].kind == ev.DEAL and history[-1].kind == ev.SETTLE
    assert kinds <= ev.KINDS


GAME = ROOT / "thirtyone_env" / "game"
#: the engine's modules (engine.py re-exports the others' public names)
ENGINE_MODULES = [
    GAME / f"{m}.py" for m in ("engine", "state", "settle", "turns", "deal", "play", "positions")
]


def test_engine_and_table_moves_spell_no_event_kind_by_literal() -> None:
    """Every event the engine's modules create names its kind by a constant of
    :mod:`thirtyone_env.game.events`."""
    kinds = set()
    for path in [*ENGINE_MODULES, GAME / "table_moves.py"]:
        src = path.read_text()
        made = re.findall(r"Event, \(ev\.([A-Z_]+)|Event\(ev\.([A-Z_]+)", src)
        kinds |= {getattr(ev, a or b) for a, b in made}
        assert not re.search(r"history\.append\(\(", src), path.name
        assert not re.search(r"Event\(\"", src), path.name
    assert kinds and kinds <= ev.KINDS


def test_state_privates_stay_in_the_engine() -> None:
    """Views and players read the state's public names (``stock_game``, ``scored``,
    ``hand_values``), not the engine's private fields."""
    private = re.compile(
        r"\b(?:s|state)\._(?:plain|scored|table|values|blitz|kft|draws|carry_events|carry_deal|return_ok|stand_ok|blitz_late|max_turns)\b"
    )
    paths = [p for p in (ROOT / "thirtyone_env").rglob("*.py") if p not in ENGINE_MODULES]
    paths += list((ROOT / "agents").rglob("*.py"))
    for path in paths:
        assert not private.findall(path.read_text()), path.name


def test_state_public_names_read_the_rules() -> None:
    rng = np.random.default_rng(0)
    s = new_game(PRESETS["standard"], 3, rng)
    assert s.stock_game and not s.scored
    h = s.hands[0]
    assert s.hand_values[triple_index(*h)] == hand_value(h)
    s = new_game(PRESETS["banking"], 3, rng)
    assert not s.stock_game and s.scored
    assert triple_index(1, 2, 3) == 1 * 52 * 52 + 2 * 52 + 3 == PAIR_STRIDE + 2 * NUM_CARDS + 3
