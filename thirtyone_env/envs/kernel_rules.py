"""What the compiled kernels know of a :class:`~thirtyone_env.game.rules.Rules`: the one
declared mirror of the rules in :mod:`thirtyone_env.envs.batch_kernels`.

The kernels read the rules from one int64 vector (slots ``R_*``) and two arrays (the
hand-value lookup and the deck). :data:`MIRROR` says, for every field of ``Rules``,
which of these it travels in, or that the kernels play only some of its values (any
other value makes the rules unbatchable: the vector env falls back to the engine and
``backend="compiled"`` is refused), or why it does not concern them. ``batchable`` and
:func:`pack` are derived from the table, and a test fails when a ``Rules`` field is
missing from it: adding a rule option means deciding here what the kernels do with it.

No numba here: the table can be read (and tested) without compiling anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from thirtyone_env.envs.env_options import EPISODES, REWARDS
from thirtyone_env.game.rules import KNOCKER_TIES, STOCK_EXHAUSTED, Rules

# Slots of the rules vector the kernels read (``R[R_KFT]``...).
R_BLITZ2, R_KFT, R_RETURN, R_STAND, R_BLITZ_LATE, R_MAX_TURNS, R_EXHAUSTED = range(7)
R_TIE, R_PENALTY, R_FREE_RIDE, R_MAX_ROUNDS, R_LIVES, R_EPISODE, R_REWARD = range(7, 14)
NUM_R = 14

# The codes of the choice options in their slots: the option's index in its owner's tuple.
EXHAUSTED_VOID = STOCK_EXHAUSTED.index("void")
EXHAUSTED_RESHUFFLE = STOCK_EXHAUSTED.index("reshuffle")
EXHAUSTED_SHOWDOWN = STOCK_EXHAUSTED.index("showdown")
TIE_KNOCKER_PAYS = KNOCKER_TIES.index("knocker_pays")
TIE_KNOCKER_SAFE = KNOCKER_TIES.index("knocker_safe")
TIE_ALL_LOSE = KNOCKER_TIES.index("all_lose")
TIE_KNOCKER_PAYS_PENALTY = KNOCKER_TIES.index("knocker_pays_penalty")
EPISODE_ROUND = EPISODES.index("round")


@dataclass(frozen=True)
class Packed:
    """The field's value goes into rules-vector slot ``slot``, as ``convert(rules)``."""

    slot: int
    convert: Callable[[Rules], int]


@dataclass(frozen=True)
class InArrays:
    """The field shapes an array the kernels take (``how``), not a slot."""

    how: str


@dataclass(frozen=True)
class Only:
    """The kernels play only these values of the field; any other makes the rules
    unbatchable (``why``)."""

    values: tuple
    why: str


@dataclass(frozen=True)
class Irrelevant:
    """The field does not concern the kernels (``why``)."""

    why: str


def _int(name: str) -> Callable[[Rules], int]:
    return lambda rules: int(getattr(rules, name))


def _index(name: str, choices: tuple) -> Callable[[Rules], int]:
    return lambda rules: choices.index(getattr(rules, name))


#: Every ``Rules`` field and what the kernels do with it.
MIRROR: dict[str, Packed | InArrays | Only | Irrelevant] = {
    "deck": InArrays("the deck's cards (vector env: rules.deck_cards), shuffled each deal"),
    "lives": Packed(R_LIVES, _int("lives")),
    "free_ride": Packed(R_FREE_RIDE, _int("free_ride")),
    "three_of_a_kind": InArrays("the hand-value lookup (cards.hand_table)"),
    "knock_from_turn": Packed(R_KFT, _int("knock_from_turn")),
    "allow_discard_return": Packed(R_RETURN, _int("allow_discard_return")),
    "stand_after_knock": Packed(R_STAND, _int("stand_after_knock")),
    "blitz_after_knock": Packed(R_BLITZ_LATE, _int("blitz_after_knock")),
    "knocker_penalty": Packed(R_PENALTY, _int("knocker_penalty")),
    "knocker_tie": Packed(R_TIE, _index("knocker_tie", KNOCKER_TIES)),
    "stock_exhausted": Packed(R_EXHAUSTED, _index("stock_exhausted", STOCK_EXHAUSTED)),
    "max_turns_per_round": Packed(R_MAX_TURNS, _int("max_turns_per_round")),
    "max_rounds": Packed(R_MAX_ROUNDS, _int("max_rounds")),
    "seats": Irrelevant("fixes the table size, which the env checks when it is built"),
    "scoring": Only(("lives",), "the kernels settle rounds in lives only (no points, chips or pot)"),
    "num_rounds": Irrelevant("read only with scoring='points', which the kernels do not play"),
    "chips": Irrelevant("read only with scoring='chips', which the kernels do not play"),
    "ante": Irrelevant("read only with scoring='chips', which the kernels do not play"),
    "blitz_chips": Irrelevant("read only with scoring='chips', which the kernels do not play"),
    "table": Only(("stock",), "the kernels play the stock and discard pile turn only (no table cards)"),
    # A Brag ranking has no 31: its blitz value -1 is never a hand's value.
    "hand_ranking": Packed(R_BLITZ2, lambda rules: round(2 * rules.blitz_value)),
    "ace_low_run": InArrays("the hand-value lookup (cards.hand_table, Brag ranking)"),
    "carry_over": Only((False,), "the Switch carry-over is a Switch rule (table='switch')"),
}


def undecided(names: list[str]) -> list[str]:
    """The rules fields among ``names`` that :data:`MIRROR` does not decide."""
    return [name for name in names if name not in MIRROR]


def refusals(rules: Rules) -> list[str]:
    """Why the kernels cannot play ``rules`` (empty: they can), one line per field."""
    return [
        f"{name}={getattr(rules, name)!r} (kernels play {list(m.values)}: {m.why})"
        for name, m in MIRROR.items()
        if isinstance(m, Only) and getattr(rules, name) not in m.values
    ]


def batchable(rules: Rules) -> bool:
    """Whether the compiled kernels play ``rules`` (see :data:`MIRROR`)."""
    return not refusals(rules)


def pack(rules: Rules, episode: str, reward: str) -> np.ndarray:
    """The rules vector the kernels read for ``rules`` and the env's ``episode`` and
    ``reward`` options (``ValueError`` for rules they cannot play)."""
    refused = refusals(rules)
    if refused:
        raise ValueError(f"the compiled kernels do not play {'; '.join(refused)}")
    out = np.zeros(NUM_R, dtype=np.int64)
    for m in MIRROR.values():
        if isinstance(m, Packed):
            out[m.slot] = m.convert(rules)
    out[R_EPISODE] = EPISODES.index(episode)
    out[R_REWARD] = REWARDS.index(reward)  # the kind rewards.settled_reward takes
    return out


def packed_slots() -> list[int]:
    """Every slot :func:`pack` fills, the env options' included (each once)."""
    return [m.slot for m in MIRROR.values() if isinstance(m, Packed)] + [R_EPISODE, R_REWARD]
