"""The generator the players at a table draw from, apart from the one that deals.

A player that samples its moves (``random``, a model played stochastically, a search
player's worlds) is handed a generator by ``reset(rng)``. Were it the table's own, a
player could copy it and read the deck order to come, and its draws would move every
later deal and reshuffle. :func:`players_generator` instead seeds a second PCG64
generator from a hash of the table generator's state: the table's generator is not
advanced (the cards dealt under a seed are those of a table whose players draw
nothing), and what a player holds is 128 bits hashed from 256, from which the
table's state cannot be read back. It tells a player nothing a seed it knows would not:
the decks of a seeded table follow from the seed, so a player that knows the seed, or
can try every small one (against this generator or its first hand), knows them; a
table of players not trusted with that needs a seed nobody can guess
(``evaluate.py --seed random``, the web table's secret seeds). The compiled kernels derive their players'
generator with the same arithmetic (``batch_rng.derive_players``), so both backends
play the same games.
"""

from __future__ import annotations

import hashlib

import numpy as np

MASK = (1 << 64) - 1
#: The constants the two hash chains start from and the increment is drawn with.
CHAIN_A, CHAIN_B = 0x9E3779B97F4A7C15, 0xD1B54A32D192ED03
INC_A, INC_B = 0xA0761D6478BD642F, 0xE7037ED1A0B428DB
#: SplitMix64's two multipliers.
MIX_1, MIX_2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def mix64(z: int) -> int:
    """SplitMix64's finalizer: a bijection of 64-bit words that spreads every bit."""
    z = ((z ^ (z >> 30)) * MIX_1) & MASK
    z = ((z ^ (z >> 27)) * MIX_2) & MASK
    return z ^ (z >> 31)


def players_words(words: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """The players' PCG64 ``(state_hi, state_lo, inc_hi, inc_lo)`` from the table's
    ``(state_hi, state_lo, inc_hi, inc_lo)``: two hash chains over the four words."""
    a, b = CHAIN_A, CHAIN_B
    for w in words:
        a = mix64(a ^ w)
    for w in reversed(words):
        b = mix64(b ^ w)
    return a, b, mix64(a ^ INC_A), mix64(b ^ INC_B) | 1


def players_generator(rng: np.random.Generator) -> np.random.Generator:
    """A PCG64 generator for the players, seeded from the state of the table's ``rng``
    (which is not advanced). A table generator other than PCG64 (the kernels play
    PCG64 only) is hashed from its whole state instead."""
    state = rng.bit_generator.state
    if state["bit_generator"] == "PCG64":
        s, inc = state["state"]["state"], state["state"]["inc"]
        words = players_words((s >> 64, s & MASK, inc >> 64, inc & MASK))
    else:
        digest = hashlib.blake2b(_state_bytes(state), digest_size=32).digest()
        w = [int.from_bytes(digest[k : k + 8], "little") for k in range(0, 32, 8)]
        words = (w[0], w[1], w[2], w[3] | 1)
    bits = np.random.PCG64(
        np.random.SeedSequence(list(words))
    )  # its own seed sequence: ``spawn`` differs per game
    bits.state = {
        "bit_generator": "PCG64",
        "state": {"state": (words[0] << 64) | words[1], "inc": (words[2] << 64) | words[3]},
        "has_uint32": 0,
        "uinteger": 0,
    }
    return np.random.Generator(bits)


def _state_bytes(value: object) -> bytes:
    """A bit generator's state (nested dicts of ints, strings and arrays) as bytes, in
    full (an array's ``repr`` would elide a long key)."""
    if isinstance(value, dict):
        return b"{" + b",".join(_state_bytes(k) + b":" + _state_bytes(value[k]) for k in sorted(value)) + b"}"
    if isinstance(value, np.ndarray):
        return value.dtype.str.encode() + value.tobytes()
    return repr(value).encode()
