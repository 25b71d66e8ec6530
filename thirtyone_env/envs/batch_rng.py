"""NumPy's default generator (PCG64) inside numba kernels, draw for draw.

Each batched game keeps the state of its own ``numpy.random.Generator`` in a row of a
``uint64`` array and draws with the same algorithms as NumPy: ``integers(k)``
(Lemire's bounded 32-bit method on the buffered 32-bit outputs) and
``permutation`` / ``shuffle`` (Fisher-Yates with masked rejection). So a batched game
deals, reshuffles and plays random opponents exactly as a single env whose generator
was seeded the same way, without leaving compiled code. Tested against NumPy. The
players draw from a second row seeded from a hash of the game's (:func:`derive_players`),
as the engine's players draw from ``thirtyone_env.game.player_stream.players_generator``.

Row layout: ``[state_hi, state_lo, inc_hi, inc_lo, has_uint32, uinteger]``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from thirtyone_env.game import player_stream as PS

_MUL_HI = np.uint64(2549297995355413924)
_MUL_LO = np.uint64(4865540595714422341)
_M32 = np.uint64(0xFFFFFFFF)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
ROW = 6


def state_row(rng: np.random.Generator) -> np.ndarray:
    """The row for a NumPy ``Generator`` over ``PCG64`` (its exact current state)."""
    st = rng.bit_generator.state
    if st["bit_generator"] != "PCG64":
        raise ValueError(f"batched games need PCG64 generators, got {st['bit_generator']}")
    s, inc = st["state"]["state"], st["state"]["inc"]
    mask = (1 << 64) - 1
    return np.array(
        [s >> 64, s & mask, inc >> 64, inc & mask, st["has_uint32"], st["uinteger"]], dtype=np.uint64
    )


def load_row(rng: np.random.Generator, row: np.ndarray) -> None:
    """Write a row back into a NumPy ``Generator`` (so it goes on from there)."""
    r = [int(x) for x in row]
    rng.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": (r[0] << 64) | r[1], "inc": (r[2] << 64) | r[3]},
        "has_uint32": r[4],
        "uinteger": r[5],
    }


@njit(cache=True, inline="always")
def _mulhi(a, b):
    a_lo = a & _M32
    a_hi = a >> np.uint64(32)
    b_lo = b & _M32
    b_hi = b >> np.uint64(32)
    p0 = a_lo * b_lo
    p1 = a_lo * b_hi
    p2 = a_hi * b_lo
    p3 = a_hi * b_hi
    mid = (p0 >> np.uint64(32)) + (p1 & _M32) + (p2 & _M32)
    return p3 + (p1 >> np.uint64(32)) + (p2 >> np.uint64(32)) + (mid >> np.uint64(32))


@njit(cache=True)
def next_uint64(st, i):
    """``Generator.bit_generator.random_raw()`` for row ``i``."""
    s_hi = st[i, 0]
    s_lo = st[i, 1]
    hi = _mulhi(s_lo, _MUL_LO) + s_hi * _MUL_LO + s_lo * _MUL_HI
    lo = s_lo * _MUL_LO
    new_lo = lo + st[i, 3]
    carry = _ONE if new_lo < lo else _ZERO
    new_hi = hi + st[i, 2] + carry
    st[i, 0] = new_hi
    st[i, 1] = new_lo
    v = new_hi ^ new_lo
    rot = new_hi >> np.uint64(58)
    return (v >> rot) | (v << ((np.uint64(64) - rot) & np.uint64(63)))


@njit(cache=True)
def next_uint32(st, i):
    if st[i, 4] != _ZERO:
        st[i, 4] = _ZERO
        return st[i, 5]
    x = next_uint64(st, i)
    st[i, 4] = _ONE
    st[i, 5] = x >> np.uint64(32)
    return x & _M32


@njit(cache=True)
def integers(st, i, k):
    """``Generator.integers(k)`` (0 <= value < k, k < 2**32)."""
    rng = np.uint64(k - 1)
    if rng == _ZERO:
        return np.int64(0)
    excl = rng + _ONE
    m = next_uint32(st, i) * excl
    left = m & _M32
    if left < excl:
        threshold = (_M32 - rng) % excl
        while left < threshold:
            m = next_uint32(st, i) * excl
            left = m & _M32
    return np.int64(m >> np.uint64(32))


@njit(cache=True)
def _interval(st, i, mx):
    if mx == 0:
        return np.int64(0)
    mask = np.uint64(mx)
    mask |= mask >> np.uint64(1)
    mask |= mask >> np.uint64(2)
    mask |= mask >> np.uint64(4)
    mask |= mask >> np.uint64(8)
    mask |= mask >> np.uint64(16)
    mask |= mask >> np.uint64(32)
    while True:
        v = next_uint32(st, i) & mask
        if v <= np.uint64(mx):
            return np.int64(v)


@njit(cache=True)
def shuffle(st, i, x, n):
    """``Generator.shuffle(x[:n])`` in place (``permutation`` of an array copies,
    then does this; ``permutation(n)`` shuffles ``arange(n)``)."""
    for j in range(n - 1, 0, -1):
        k = _interval(st, i, j)
        t = x[j]
        x[j] = x[k]
        x[k] = t


_CHAIN_A, _CHAIN_B = np.uint64(PS.CHAIN_A), np.uint64(PS.CHAIN_B)
_INC_A, _INC_B = np.uint64(PS.INC_A), np.uint64(PS.INC_B)
_MIX_1, _MIX_2 = np.uint64(PS.MIX_1), np.uint64(PS.MIX_2)


@njit(cache=True, inline="always")
def _mix64(z):
    z = (z ^ (z >> np.uint64(30))) * _MIX_1
    z = (z ^ (z >> np.uint64(27))) * _MIX_2
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def derive_players(st, i, j):
    """Seed row ``j`` as the players' generator of row ``i``'s game, from a hash of row
    ``i``'s state (not advanced): ``thirtyone_env.game.player_stream.players_generator``."""
    a = _CHAIN_A
    b = _CHAIN_B
    for k in range(4):
        a = _mix64(a ^ st[i, k])
        b = _mix64(b ^ st[i, 3 - k])
    st[j, 0] = a
    st[j, 1] = b
    st[j, 2] = _mix64(a ^ _INC_A)
    st[j, 3] = _mix64(b ^ _INC_B) | _ONE
    st[j, 4] = _ZERO
    st[j, 5] = _ZERO
