"""Sampling decisions at a table and measuring them: one job of an oracle study.

A job plays whole games at the study's table (game ``g`` of job ``k`` on its own
generator, child ``(k, g)`` of the study's seed) and stops at each decision of the
studied seat. Where the question applies, the oracle measures its options
(:func:`~thirtyone_env.research.oracle.measure`; the play-outs of decision ``i`` draw
from child ``(k, g, i)``), then the player's own move is played and the game goes on.
A job measures a fixed number of decisions, so a study's rows depend on its seed
alone, never on how its jobs are spread over workers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from thirtyone_env.game.actions import action_name
from thirtyone_env.game.cards import NUM_CARDS, PAIR_STRIDE
from thirtyone_env.game.engine import IllegalActionError, legal_mask, new_game
from thirtyone_env.game.rules import Rules
from thirtyone_env.harness.driver import Table, check_seated, observe, player_move, reset_players
from thirtyone_env.research.config import StudyConfig
from thirtyone_env.research.oracle import gains, hand_rng, measure
from thirtyone_env.research.questions import options

#: The columns of a study's table, in order (see the README, Research).
COLUMNS = (
    "game",
    "round",
    "seat",
    "player",
    "turn",
    "position",
    "players_in",
    "lives",
    "score",
    "stock",
    "value",
    "question",
    "own",
    "baseline",
    "alternative",
    "chosen",
    "gain",
    "se",
    "rollouts",
    "regret",
)
#: Games per job at most (game ids are ``job * GAMES_PER_JOB + game``).
GAMES_PER_JOB = 100_000


def label_job(config: StudyConfig, job: int, size: int, make_player: Callable[[str], Any]) -> list[tuple]:
    """Rows (:data:`COLUMNS`) of the first ``size`` decisions job ``job`` measures."""
    rules = Rules.resolve(config.rules)
    n, seat = len(config.table), config.seat
    rows: list[tuple] = []
    measured = 0
    for g in range(GAMES_PER_JOB):
        if measured >= size:
            return rows
        rng = np.random.default_rng(np.random.SeedSequence(config.seed, spawn_key=(job, g)))
        players = [make_player(spec) for spec in config.table]
        reset_players(players, rng)
        table = Table(new_game(rules, n, rng), players, rng, labels=[f"player {p!r}" for p in config.table])
        me = players[seat]
        encoding = table.encodings[seat]
        # the play-outs run on the true position: players of their own play them, so the
        # game's players never see a card the play-outs turn up
        stand_ins = [make_player(spec) for spec in config.table]
        check_seated(stand_ins, n, rules)
        move = player_move(stand_ins, table.encodings, table.layout, "player")
        hand = hand_rng(stand_ins)
        i = 0
        while measured < size and not table.advance(seat):
            s = table.state
            mask = legal_mask(s)
            obs = observe(s, seat, encoding, table.layout)
            own = _checked(me.act(obs, mask), mask, config.table[seat], seat)
            found = options(config.question, s, mask, own, lambda m, me=me, obs=obs: me.act(obs, m))
            if found is not None:
                base_label, base = found.baseline
                actions = [base, *(a for _, a in found.alternatives)]
                values = measure(
                    s,
                    actions,
                    move,
                    np.random.SeedSequence(config.seed, spawn_key=(job, g, i)),
                    config.rollouts,
                    hand,
                    objective=config.objective,
                )
                gain, se = gains(values)
                labels = [base_label, *(label for label, _ in found.alternatives)]
                loss = regret(values, labels.index(found.own) if found.own in labels else -1)
                context = _context(s, seat, job * GAMES_PER_JOB + g, config.table[seat])
                for (label, _), d, e in zip(found.alternatives, gain, se, strict=True):
                    rows.append(
                        (*context, config.question, found.own, base_label, label, found.own == label)
                        + (float(d), float(e), config.rollouts, loss)
                    )
                measured += 1
                i += 1
            table.play(own)
    raise RuntimeError(f"job {job} found fewer than {size} decisions in {GAMES_PER_JOB:,} games")


def regret(values: np.ndarray, chosen: int) -> float:
    """What the player's choice (row ``chosen`` of the oracle's ``values``: options by
    play-outs) lost against the best option, measured so that the play-outs' noise does
    not inflate it: the best option is picked on one half of the play-outs and the
    difference measured on the other, both ways round, averaged. It estimates the loss
    against the option the oracle would pick (no more than the loss against the truly
    best one); ``nan`` with fewer than two play-outs or a choice outside the options."""
    k = values.shape[1]
    if chosen < 0 or k < 2:
        return float("nan")
    halves = (values[:, : k // 2], values[:, k // 2 :])
    total = 0.0
    for pick, measure_on in (halves, halves[::-1]):
        best = int(np.argmax(pick.mean(axis=1)))
        total += float((measure_on[best] - measure_on[chosen]).mean())
    return total / 2


def _checked(action: Any, mask: np.ndarray, spec: str, seat: int) -> int:
    """The player's move as an int, refused (naming the player) when it is not legal."""
    a = action if type(action) is int else int(action) if isinstance(action, np.integer) else -1
    if not (0 <= a < len(mask) and mask[a]):
        legal = ", ".join(action_name(int(x)) for x in np.flatnonzero(mask))
        raise IllegalActionError(f"player {spec!r} in seat {seat} chose {action!r}; legal: {legal}")
    return a


def _context(s: Any, seat: int, game: int, player: str) -> tuple:
    """game, round, seat, player, turn, position, players_in, lives, score, stock and
    value: the hand's value at the start of the turn (before a draw mid-turn)."""
    n = s.num_players
    order = [p for p in ((s.dealer + k) % n for k in range(1, n + 1)) if s.hands[p]]
    a, b, c = (x for x in s.hands[seat] if x != s.drawn) if len(s.hands[seat]) == 4 else s.hands[seat]
    value = float(s.hand_values[a * PAIR_STRIDE + b * NUM_CARDS + c])
    score = s.score[seat] if s.scored else s.lives[seat]
    turn = s.player_turns[seat]
    return (
        game,
        s.round_no,
        seat,
        player,
        turn,
        order.index(seat),
        len(order),
        s.lives[seat],
        score,
        len(s.stock),
        value,
    )
