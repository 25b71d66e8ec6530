"""Helpers shared by the tests: stacked deals, scripted play, random positions and the
hidden-card swap that checks nobody sees a card it could not see at a real table.

Plain functions, imported by the test files with ``from conftest import deal, play``
(pytest puts this folder on the import path).
"""

from __future__ import annotations

import signal
from collections.abc import Sequence

import numpy as np
import pytest

from thirtyone_env.game.actions import discard_action
from thirtyone_env.game.cards import parse_card, parse_cards
from thirtyone_env.game.engine import (
    DRAW,
    GameState,
    apply_action,
    card_locations,
    clone_state,
    from_position,
    legal_actions,
    new_game,
    stacked_deck,
    stacked_table_deck,
)
from thirtyone_env.game.rules import Rules


@pytest.fixture(autouse=True, scope="session")
def ctrl_c_reaches_the_trainers():
    """Some tests press Ctrl-C on a trainer. A shell that starts the suite in the
    background (``make test &``) has SIGINT ignored, and an ignored SIGINT is inherited by
    every child: give this process Python's own handler, so the children start with the
    default and the tests see what a user at a terminal sees."""
    before = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def card(text: str) -> int:
    """The id of the card written ``text`` (``"Qh"``)."""
    return parse_card(text)


def disc(text: str) -> int:
    """The action that discards the card written ``text``."""
    return discard_action(parse_card(text))


def deal(
    hands: Sequence,
    upcard: str | int | None = None,
    stock: str | Sequence = "",
    *,
    dealer: int,
    rules: Rules | str | None = None,
    table: str | Sequence | None = None,
    second_hand: str | Sequence = (),
    seed: int = 0,
) -> tuple[GameState, np.random.Generator]:
    """A new game on a stacked deck (``hands`` by seat, then the upcard and the stock
    top first; the table variants also ``table`` and Switch's ``second_hand``);
    returns ``(state, rng)``. ``rules`` is a ``Rules``, a preset name or ``None``."""
    rules = Rules.resolve(rules)
    if rules.table == "stock":
        deck = stacked_deck(hands, upcard=upcard, stock=stock, dealer=dealer)
    else:
        deck = stacked_table_deck(rules, hands, table, upcard, stock, dealer, second_hand)
    rng = np.random.default_rng(seed)
    return new_game(rules, len(hands), rng, dealer=dealer, deck=deck), rng


def play(s: GameState, rng: np.random.Generator, *actions: int) -> None:
    """Play ``actions`` in order, checking after each that every card is in exactly one
    place (``card_locations`` raises otherwise)."""
    for a in actions:
        apply_action(s, a, rng)
        card_locations(s)


def switch_deal(**kw) -> tuple[GameState, np.random.Generator]:
    """A Switch deal, 3 players, dealer 2: seat 0 holds Tc 2d 3h, seat 1 Ah 5s 4d; the
    dealer chooses between Kd Qd 2s (first) and 9h 8h 7h; As Ks Qs lie face down; the
    stock (top first) starts 2c 3c 4c 5c 6c 7c. ``kw`` goes to :func:`deal`."""
    return deal(
        ["Tc 2d 3h", "Ah 5s 4d", "Kd Qd 2s"],
        rules="switch",
        table="As Ks Qs",
        second_hand="9h 8h 7h",
        stock="2c 3c 4c 5c 6c 7c",
        dealer=2,
        **kw,
    )


def random_moves(s: GameState, rng: np.random.Generator, most: int) -> GameState:
    """Play a random number (``0..most-1``, drawn from ``rng``) of uniformly random legal
    moves, stopping early when the round ends; returns ``s``."""
    for _ in range(int(rng.integers(0, most))):
        acts = legal_actions(s)
        if not acts:
            break
        apply_action(s, acts[int(rng.integers(len(acts)))], rng)
    return s


def swap_hidden(s: GameState, seat: int, rng: np.random.Generator) -> GameState:
    """A copy of ``s`` in which every other seat's first card that ``seat`` cannot see
    (not publicly known in that hand) is exchanged with a random stock card: what
    ``seat`` may observe is the same in both."""
    t = clone_state(s)
    for opp in range(s.num_players):
        hidden = [c for c in t.hands[opp] if opp != seat and not (t.known[opp] >> c) & 1]
        if hidden and t.stock:
            i = t.hands[opp].index(hidden[0])
            j = int(rng.integers(len(t.stock)))
            t.hands[opp][i], t.stock[j] = t.stock[j], t.hands[opp][i]
    return t


def heads_up_known(me: str, opponent: str, lives: int) -> GameState:
    """Heads-up, standard rules, seat 0 to draw on its fourth turn: the opponent took its
    three cards from the pile (so seat 0 knows them) while seat 0 discarded 7s, 8c and
    9d onto 5s."""
    rules = Rules.resolve("standard")
    mine, theirs = parse_cards(me), parse_cards(opponent)
    pile = parse_cards("5s 7s 8c 9d")
    used = set(mine + theirs + pile)
    stock = [c for c in rules.deck_cards if c not in used]
    discards = [(0, theirs[0]), (1, pile[1]), (0, theirs[1]), (1, pile[2]), (0, theirs[2]), (1, pile[3])]
    return from_position(
        rules,
        hands=[mine, theirs],
        stock=stock,
        discard=pile,
        current=0,
        phase=DRAW,
        dealer=1,
        lives=[lives, lives],
        active=[True, True],
        turns_played=6,
        known=[0, sum(1 << c for c in theirs)],
        discards=discards,
    )


def recorded_heads_up(seed: int = 0) -> tuple[object, list[str]]:
    """A standard heads-up game, greedy against expert, and its record lines: the
    material of the record-file tests."""
    import agents
    from thirtyone_env.harness.match import play_game
    from thirtyone_env.harness.records import game_lines

    rules = Rules()
    players = [agents.make("greedy"), agents.make("expert")]
    rec = play_game(players, np.random.default_rng(seed), rules, keep_history=True)
    return rec, game_lines(rules, 2, rec.histories, rec.winners, rec.lives)


def takes_history(path: object, players: int = 4, rules: str | Rules = "standard") -> bool:
    """Whether the model at ``path`` reads the observation with the ``opponent_history``
    part at its table (the shipped 4-player model does), so a test's env observes for it."""
    from agents.ppo import PPOPlayer

    player = PPOPlayer(str(path))
    player.check_table(players, rules)
    return player.obs_encoding == "flat+history"


def run_evaluate(*args: str, cwd: object = None, env_columns: int | None = None) -> object:
    """``python evaluate.py ARGS`` (from the repository root unless ``cwd``), its output
    captured; ``env_columns``: the terminal width it is told."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    env = None if env_columns is None else {**os.environ, "COLUMNS": str(env_columns)}
    return subprocess.run(
        [sys.executable, str(root / "evaluate.py"), *args],
        capture_output=True,
        text=True,
        cwd=root if cwd is None else cwd,
        timeout=300,
        env=env,
    )
