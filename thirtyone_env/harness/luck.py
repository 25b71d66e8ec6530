"""Luck as a control variate: tournament estimates with the chance taken out.

A game's result mixes the players' skill with the luck of the cards. The evaluator sees
every card, so the luck of each chance event can be measured and subtracted (AIVAT,
Burch et al., AAAI 2018): with a value function ``V`` fixed before the games, an event
that moves the game from ``s`` to ``s'`` is worth ``V(s') - E[V(s')]`` of luck, the
expectation over every outcome the event could have had. Each such term has mean
exactly zero whatever ``V`` is, so the result minus the game's luck estimates the same
thing as the result alone; the closer ``V`` follows the real chances, the less variance
is left.

The chance events corrected here are the deal of every round and every draw from the
stock; a draw's outcome is uniform over the stock's cards (its order is hidden from
every player, and a reshuffle leaves it uniform), so its expectation is exact. The
deal's is exact too: :class:`LuckModel` treats the seats dealt in alike, so over all
deals each one's chance to lose the round is the same (one over the seats dealt in).
Moves are decisions, not luck, and nothing else is corrected: a table without stock
draws (Switch, Stop the Bus) or scored in points or chips keeps its plain estimate.

The value function is a round-loss model: each seat dealt in loses the round with
probability ``softmax(w . f)`` over the seats, ``f`` a few features of its hand (the
best three cards' value, its square, the value with the discard pile's top card), of the
knock, and of how far the round has gone. A seat's luck in lives is ``scale`` times the
change of its chance; its luck in wins is the change of its chance to win the game
(:mod:`~thirtyone_env.harness.equity`'s model of the rounds to come) over who loses
the round. The weights were fitted to rounds of expert and greedy tables at four seats
(``benchmarks/luck_model.py`` fits them again, on seeds no measurement uses).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
from numba import njit

from thirtyone_env.game.actions import DRAW_STOCK
from thirtyone_env.game.cards import NUM_CARDS, PAIR_STRIDE
from thirtyone_env.game.engine import GameState
from thirtyone_env.game.rules import Rules
from thirtyone_env.game.state import DRAW
from thirtyone_env.harness.equity import check_win_objective, win_chance

#: The round-loss model's features of one seat, in the order of :attr:`LuckModel.weights`.
FEATURES = (
    "value",  # the best three cards' value / 10
    "value x progress",  # progress: the round's turns over three a seat, at most 2
    "value x knocked",  # somebody has knocked
    "knocker",  # this seat knocked
    "knocker x value",
    "four cards",  # the seat drew and has yet to discard
    "value squared",
    "discard gain",  # the value with the discard pile's top card, less the value (/ 10)
    "discard gain x not knocked",
)


_NO_CARDS = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class LuckModel:
    """The value function of the control variate: a seat's chance to lose the round."""

    #: one weight per feature of :data:`FEATURES`, in order (fitted: see the module doc)
    weights: tuple[float, ...] = (0.981, 0.399, -5.092, 2.324, -0.532, 0.147, -0.781, -1.172, 1.007)
    #: lives a loser loses, on average, a round (a knocker caught low loses two)
    scale: float = 1.2
    #: a name for reports
    name: str = field(default="hand-value model", compare=False)

    def __post_init__(self) -> None:
        if len(self.weights) != len(FEATURES):
            raise ValueError(
                f"a luck model needs {len(FEATURES)} weights ({', '.join(FEATURES)}), got {len(self.weights)}"
            )
        if not all(np.isfinite(self.weights)) or not np.isfinite(self.scale):
            raise ValueError("a luck model's weights and scale must be finite numbers")


def applies(rules: Rules) -> bool:
    """Whether the chance of ``rules`` is corrected: a lives game with draws from a stock,
    its hands ranked by points (the model's features)."""
    return rules.scoring == "lives" and rules.table in ("stock", "widow") and rules.hand_ranking == "points"


@cache
def _value_array(values: tuple) -> np.ndarray:
    """The rules' hand-value lookup as an array (one per lookup table)."""
    return np.asarray(values, dtype=np.float64)


@njit(cache=True)
def _best3(values: np.ndarray, a: int, b: int, c: int, d: int) -> float:
    """The best three cards' value of a hand of three (``d < 0``) or four cards."""
    v = values[a * PAIR_STRIDE + b * NUM_CARDS + c]
    if d >= 0:
        v = max(v, values[a * PAIR_STRIDE + b * NUM_CARDS + d])
        v = max(v, values[a * PAIR_STRIDE + d * NUM_CARDS + c])
        v = max(v, values[d * PAIR_STRIDE + b * NUM_CARDS + c])
    return v


@njit(cache=True)
def _add_luck(
    values: np.ndarray,
    weights: np.ndarray,
    hands: np.ndarray,
    active: np.ndarray,
    progress: float,
    knocker: int,
    top: int,
    seat: int,
    cards: np.ndarray,
    scale: float,
    win_after: np.ndarray,
    lost: np.ndarray,
    wins: np.ndarray,
) -> None:
    """Add one chance event's luck to ``lost`` and ``wins`` (by seat, in place).

    ``hands`` ``(n, 4)`` (a missing fourth card -1). Without ``cards``, the event is the
    deal that left these hands: each seat dealt in expects one chance in the seats dealt
    in to lose. With ``cards`` (the stock, its last card on top), ``seat`` draws: the
    chances with each card drawn, their mean expected and the top card's had.
    ``win_after[j, i]``: seat ``i``'s chance to win the game when ``j`` loses the round."""
    n = hands.shape[0]
    knocked = 1.0 if knocker >= 0 else 0.0
    logits = np.zeros(n)
    dealt_in = 0
    for p in range(n):
        if not active[p]:
            continue
        dealt_in += 1
        h = hands[p]
        value = _best3(values, h[0], h[1], h[2], h[3]) / 10.0
        four = 1.0 if h[3] >= 0 else 0.0
        gain = 0.0
        if h[3] < 0 and top >= 0:
            gain = _best3(values, h[0], h[1], h[2], top) / 10.0 - value
        logits[p] = _logit(weights, value, progress, knocked, p == knocker, four, gain)
    k = max(1, cards.size)
    had = np.zeros(n)
    expected = np.zeros(n)
    chances = np.zeros(n)
    for r in range(k):
        z = logits.copy()
        if cards.size:
            h = hands[seat]
            z[seat] = _logit(
                weights,
                _best3(values, h[0], h[1], h[2], cards[r]) / 10.0,
                progress,
                knocked,
                seat == knocker,
                1.0,
                0.0,
            )
        top_z = -1e300
        for p in range(n):
            if active[p] and z[p] > top_z:
                top_z = z[p]
        total = 0.0
        for p in range(n):
            chances[p] = np.exp(z[p] - top_z) if active[p] else 0.0
            total += chances[p]
        for p in range(n):
            chances[p] /= total
            expected[p] += chances[p] / k
        if r == k - 1:
            had[:] = chances
    if not cards.size:
        for p in range(n):
            expected[p] = 1.0 / dealt_in if active[p] else 0.0
    for p in range(n):
        d = had[p] - expected[p]
        lost[p] += scale * d
        for i in range(n):
            wins[i] += d * win_after[p, i]


@njit(cache=True, inline="always")
def _logit(
    weights: np.ndarray,
    value: float,
    progress: float,
    knocked: float,
    is_knocker: bool,
    four: float,
    gain: float,
) -> float:
    """The model's logit of one seat (the features of :data:`FEATURES`, weighed)."""
    k = 1.0 if is_knocker else 0.0
    return (
        weights[0] * value
        + weights[1] * value * progress
        + weights[2] * value * knocked
        + weights[3] * k
        + weights[4] * k * value
        + weights[5] * four
        + weights[6] * value * value
        + weights[7] * gain
        + weights[8] * gain * (1.0 - knocked)
    )


class LuckObserver:
    """Measures the luck of one game as it is played: watches its moves (a table's
    ``observer``, passing them on to ``inner`` as well) and its deals (:meth:`dealt`,
    the first round's too). By seat, over the game so far: ``lost`` the luck in lives
    lost, ``wins`` the luck in wins (zero where the rules' end has no model)."""

    __slots__ = (
        "model",
        "n",
        "weights",
        "values",
        "lost",
        "wins",
        "_win_after",
        "_wins_measured",
        "_inner",
    )

    def __init__(self, model: LuckModel, state: GameState, inner: Any = None) -> None:
        self.model = model
        self.n = state.num_players
        self.weights = np.asarray(model.weights, dtype=np.float64)
        self.values = _value_array(state.hand_values)
        self.lost = np.zeros(self.n)
        self.wins = np.zeros(self.n)
        self._inner = inner
        self._win_after = np.zeros((self.n, self.n))  # stays zero where the luck in wins is not measured
        try:
            check_win_objective(state.rules, self.n)
            self._wins_measured = True
        except ValueError:
            self._wins_measured = False  # no model of the game's end

    def _add(self, s: GameState, seat: int = -1, cards: np.ndarray = _NO_CARDS) -> None:
        """:func:`_add_luck` of the event that left ``s`` (the deal), or of ``seat``'s
        draw of the top of ``cards`` (the stock)."""
        n = self.n
        hands = np.full((n, 4), -1, dtype=np.int64)
        for p in range(n):
            hand = s.hands[p]
            hands[p, : len(hand)] = hand
        active = np.array(s.active, dtype=np.bool_)
        progress = min(s.turn / (3.0 * int(active.sum())), 2.0)
        top = s.discard[-1] if s.discard else -1
        _add_luck(
            self.values, self.weights, hands, active, progress, s.knocker, top, seat, cards,
            self.model.scale, self._win_after, self.lost, self.wins,
        )  # fmt: skip

    # -- events -------------------------------------------------------------------------

    def dealt(self, s: GameState) -> None:
        """A round was dealt in ``s``: its luck, and the standing the round's loser
        leaves for the luck in wins."""
        if self._wins_measured:
            bonus = 1 if s.rules.free_ride else 0
            self._win_after = _win_after(
                tuple(s.lives[p] + bonus if s.active[p] else 0 for p in range(self.n))
            )
        self._add(s)

    def before(self, s: GameState, seat: int, action: int) -> bool:
        if action == DRAW_STOCK and s.phase == DRAW and s.stock:
            self._add(s, seat, np.array(s.stock, dtype=np.int64))  # its top card is the one drawn
        inner = self._inner
        return inner is not None and inner.before(s, seat, action)

    def after(self, s: GameState, seat: int, action: int) -> None:
        self._inner.after(s, seat, action)


@cache
def _win_after(left: tuple[int, ...]) -> np.ndarray:
    """``[j, i]``: seat ``i``'s chance to win the game from ``left`` (losses left per
    seat, 0 for a seat out) when seat ``j`` loses one (a row of zeros for a seat out)."""
    n = len(left)
    out = np.zeros((n, n))
    for j in range(n):
        if left[j] > 0:
            after = list(left)
            after[j] -= 1
            out[j] = [win_chance(after, i) for i in range(n)]
    out.flags.writeable = False
    return out
