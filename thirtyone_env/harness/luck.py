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
every player, and a reshuffle leaves it uniform), so its expectation is exact. A
deal's is taken over the deals that hand the same hands round the seats in every
order of rotation, each as likely as the deal itself: its luck has mean exactly zero
too.
Moves are decisions, not luck, except where a player samples its move from chances it
tells (``move_probabilities(observation, mask)``, as ``random`` does): there the move
drawn is a chance event too, its value less the chance-weighted mean over the moves it
could have drawn. Nothing else is corrected: a table without stock draws (Switch, Stop
the Bus) or scored in points or chips keeps its plain estimate.

The value function is a round-loss model (:class:`LuckModel`, plain numbers in
``luck_model.json``): each seat dealt in loses the round with a chance that a small
network gives from features of its hand (the best three cards' value, how it compares
with the other seats', whether it would lose a showdown now, what the card the next
seat will be offered adds to that seat), of the knock and of how far the round has gone
(:data:`FEATURES`), normalised over the seats, and then loses ``scale`` lives (more if
it knocked); a 31 that ends the round is valued exactly. A seat's luck in lives is the
change of its expected lives lost; its luck in wins is that change carried through its
chance to win the game (:mod:`~thirtyone_env.harness.equity`'s model of the rounds to
come). ``benchmarks/luck_model.py`` fitted it to the rounds of games at a mix of tables
and players, on seeds no measurement uses; the closer it follows the real chances, the
fewer games an estimate needs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from thirtyone_env.game.actions import DRAW_STOCK
from thirtyone_env.game.cards import NUM_CARDS, PAIR_STRIDE, hand_table
from thirtyone_env.game.engine import GameState, apply_action
from thirtyone_env.game.events import DEAL
from thirtyone_env.game.positions import clone_state
from thirtyone_env.game.rules import Rules
from thirtyone_env.game.state import DRAW, ROUND_OVER
from thirtyone_env.harness.equity import check_win_objective, win_chance
from thirtyone_env.harness.files import json_value

#: The round-loss model's features of one seat, in order (values in tens of points).
FEATURES = (
    "value",  # the best three cards' value
    "value squared",
    "four cards",  # the seat drew and has yet to discard
    "discard gain",  # the value with the discard pile's top card, less the value
    "knocked",  # somebody has knocked
    "knocker",  # this seat knocked
    "still to play",  # after a knock: the seat has a turn before the showdown
    "progress",  # the round's turns over three a seat, at most 2
    "stock left",  # the stock's cards over the deck's
    "value x progress",
    "value x knocked",
    "value - best other",  # less the best value of the other seats dealt in
    "value - worst other",  # less the worst
    "wait",  # the seats to play before this one plays again, over the seats dealt in
    "value x wait",
    "lowest",  # no seat dealt in holds less: it would lose a showdown now
    "lowest x knocked",
    "lowest x last",  # after a knock, no seat has a turn before the showdown
    "holds a blitz",  # a blitz that ends the round now (31 on the seat's turn)
    "blitz now",  # some seat dealt in holds one: every other seat loses a life
    "offered gain",  # to the seat to play next: the value the card it will be offered adds
    "offered gain x knocked",
)
#: Where :func:`_lives` reads a blitz that ends the round (the model's answer then is exact).
_HOLDS_BLITZ = FEATURES.index("holds a blitz")
_BLITZ_NOW = FEATURES.index("blitz now")
_OFFER = FEATURES.index("offered gain")  #: and "offered gain x knocked" after it
_KNOCKED = FEATURES.index("knocked")
NUM_FEATURES = len(FEATURES)
#: The packaged model: fitted by ``benchmarks/luck_model.py`` (its file says how).
MODEL_FILE = Path(__file__).with_name("luck_model.json")
_NO_CARDS = np.zeros(0, dtype=np.int64)
#: The generator a valued move is played with on a copy (a turn that starts on an empty
#: stock reshuffles it; the model does not read the stock's order).
_NO_RNG = np.random.default_rng(0)


@dataclass(frozen=True)
class LuckModel:
    """The value function of the control variate: each seat's expected lives lost this
    round. A seat loses with the chance ``softmax`` over the seats dealt in of
    ``linear . f + out . tanh(hidden . f + bias)`` (``f``: the seat's :data:`FEATURES`)
    and then loses ``scale`` lives, ``scale + knocker_scale`` if it knocked; where a
    blitz ends the round now the answer is exact (one life for every seat without it)."""

    linear: tuple[float, ...]  #: one weight a feature
    hidden: tuple[tuple[float, ...], ...]  #: one row of feature weights a hidden unit
    bias: tuple[float, ...]  #: one a hidden unit
    out: tuple[float, ...]  #: one a hidden unit
    scale: float  #: lives a loser loses, on average, a round
    knocker_scale: float = 0.0  #: more lives a knocker loses when it loses (caught low: two)
    name: str = field(default="round-loss model", compare=False)  #: for reports

    def __post_init__(self) -> None:
        units = len(self.bias)
        if len(self.linear) != NUM_FEATURES or any(len(row) != NUM_FEATURES for row in self.hidden):
            raise ValueError(f"a luck model weighs {NUM_FEATURES} features ({', '.join(FEATURES)})")
        if len(self.hidden) != units or len(self.out) != units:
            raise ValueError(
                "a luck model needs as many hidden rows, biases and output weights as hidden units"
            )
        numbers = [
            *self.linear,
            *(w for row in self.hidden for w in row),
            *self.bias,
            *self.out,
            self.scale,
            self.knocker_scale,
        ]
        if not all(
            isinstance(w, int | float) and not isinstance(w, bool) and math.isfinite(w) for w in numbers
        ):
            raise ValueError("a luck model's weights and scales must be finite numbers")

    @classmethod
    def load(cls, path: str | Path = MODEL_FILE) -> LuckModel:
        """The model in a JSON file (plain numbers: nothing in it runs); ``ValueError``
        naming what is wrong with it."""
        try:
            data = json_value(Path(path).read_text())
            if data.get("features") != list(FEATURES):
                raise ValueError(f"its features are not {list(FEATURES)}")
            return cls(
                tuple(data["linear"]),
                tuple(tuple(row) for row in data["hidden"]),
                tuple(data["bias"]),
                tuple(data["out"]),
                data["scale"],
                data["knocker_scale"],
                _text(data.get("name", "round-loss model")),
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError, OverflowError) as e:
            raise ValueError(f"not a luck model: {path}: {e}") from None

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The weights as the kernels take them: linear, hidden ``(units, F)``, bias, out
        and the two scales."""
        hidden = np.array(self.hidden, dtype=np.float64).reshape(len(self.bias), NUM_FEATURES)
        return (
            np.array(self.linear, dtype=np.float64),
            hidden,
            np.array(self.bias, dtype=np.float64),
            np.array(self.out, dtype=np.float64),
            np.array([self.scale, self.knocker_scale], dtype=np.float64),
        )


def _text(x: Any) -> str:
    if not isinstance(x, str):
        raise ValueError(f"its name must be text, got {type(x).__name__}")
    return x


@cache
def default_model() -> LuckModel:
    """The packaged model (:data:`MODEL_FILE`), read once."""
    return LuckModel.load(MODEL_FILE)


def applies(rules: Rules) -> bool:
    """Whether the chance of ``rules`` is corrected: a lives game with draws from a stock,
    its hands ranked by points (the model's features)."""
    return rules.scoring == "lives" and rules.table in ("stock", "widow") and rules.hand_ranking == "points"


@cache
def _rule_arrays(rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    """The hand-value lookup of ``rules`` as an array and its blitz: ``[value that
    blitzes (-1: none), 1 if a 31 after a knock still blitzes]`` (one per rules: hashing
    the rules is cheap, hashing the lookup itself is not)."""
    blitz = np.array([rules.blitz_value, 1.0 if rules.blitz_after_knock else 0.0])
    return np.asarray(hand_table(rules), dtype=np.float64), blitz


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
def _let_go(values: np.ndarray, hand: np.ndarray) -> int:
    """The card of a hand of four outside its best three (the first such, on a tie)."""
    a, b, c, d = hand[0], hand[1], hand[2], hand[3]
    best, card = values[b * PAIR_STRIDE + c * NUM_CARDS + d], a
    v = values[a * PAIR_STRIDE + c * NUM_CARDS + d]
    if v > best:
        best, card = v, b
    v = values[a * PAIR_STRIDE + b * NUM_CARDS + d]
    if v > best:
        best, card = v, c
    if values[a * PAIR_STRIDE + b * NUM_CARDS + c] > best:
        card = d
    return card


@njit(cache=True)
def features(state: tuple, hands: np.ndarray, out: np.ndarray) -> None:
    """Fill ``out`` ``(n, F)`` with every seat's :data:`FEATURES` (zeros for a seat not
    dealt in) in ``state`` (:func:`state_arrays`) with these ``hands`` ``(n, 4)`` (a
    missing fourth card -1)."""
    values, _, active, top, progress, knocker, turns, stock_left, blitz = state
    n = hands.shape[0]
    knocked = 1.0 if knocker >= 0 else 0.0
    last = knocked
    v = np.zeros(n)
    for p in range(n):
        if active[p]:
            h = hands[p]
            v[p] = _best3(values, h[0], h[1], h[2], h[3])
            if turns[0, p] > 0:
                last = 0.0
    # a blitz ends the round on its holder's turn: a drawer's four cards or a deal
    blitzes = blitz[0] >= 0 and (knocker < 0 or blitz[1] > 0)
    holds = np.zeros(n)
    for p in range(n):
        if blitzes and active[p] and v[p] == blitz[0] and (hands[p, 3] >= 0 or progress == 0.0):
            holds[p] = 1.0
    now = holds.max() if n else 0.0
    # the card the seat to play next is offered: the discard pile's top, or the card a
    # drawer holding four lets go (the one outside its best three)
    offered = top
    for p in range(n):
        if active[p] and hands[p, 3] >= 0:
            offered = _let_go(values, hands[p])
    for p in range(n):
        v[p] /= 10.0
    for p in range(n):
        for j in range(out.shape[1]):
            out[p, j] = 0.0
        if not active[p]:
            continue
        h = hands[p]
        best, worst = -1e9, 1e9
        for q in range(n):
            if q != p and active[q]:
                best = max(best, v[q])
                worst = min(worst, v[q])
        gain = 0.0
        if h[3] < 0 and top >= 0:
            gain = _best3(values, h[0], h[1], h[2], top) / 10.0 - v[p]
        lowest = 1.0 if v[p] <= worst else 0.0
        out[p, 0] = v[p]
        out[p, 1] = v[p] * v[p]
        out[p, 2] = 1.0 if h[3] >= 0 else 0.0
        out[p, 3] = gain
        out[p, 4] = knocked
        out[p, 5] = 1.0 if p == knocker else 0.0
        out[p, 6] = turns[0, p]
        out[p, 7] = progress
        out[p, 8] = stock_left
        out[p, 9] = v[p] * progress
        out[p, 10] = v[p] * knocked
        out[p, 11] = v[p] - best if best > -1e9 else 0.0
        out[p, 12] = v[p] - worst if worst < 1e9 else 0.0
        out[p, 13] = turns[1, p]
        out[p, 14] = v[p] * turns[1, p]
        out[p, 15] = lowest
        out[p, 16] = lowest * knocked
        out[p, 17] = lowest * last
        out[p, 18] = holds[p]
        out[p, 19] = now
        if turns[1, p] == 0.0 and h[3] < 0 and offered >= 0:
            offer = _best3(values, h[0], h[1], h[2], offered) / 10.0 - v[p]
            out[p, 20] = offer
            out[p, 21] = offer * knocked


@njit(cache=True)
def _score(f: np.ndarray, p: int, model: tuple) -> float:
    """Seat ``p``'s score before the softmax: ``linear . f + out . tanh(hidden . f + bias)``."""
    linear, hidden, bias, out_w = model[0], model[1], model[2], model[3]
    x = 0.0
    for j in range(f.shape[1]):
        x += linear[j] * f[p, j]
    for u in range(bias.shape[0]):
        a = bias[u]
        for j in range(f.shape[1]):
            a += hidden[u, j] * f[p, j]
        x += out_w[u] * _tanh(a)
    return x


@njit(cache=True)
def _tanh(a: float) -> float:
    """``tanh`` by one ``exp`` (a third of ``np.tanh``'s time here; equal to 1e-15)."""
    if a > 20.0:
        return 1.0
    if a < -20.0:
        return -1.0
    t = np.exp(2.0 * a)
    return (t - 1.0) / (t + 1.0)


@njit(cache=True)
def _lives_of(
    f: np.ndarray, z: np.ndarray, active: np.ndarray, knocker: int, scales: np.ndarray, lives: np.ndarray
) -> None:
    """Each seat's expected lives lost into ``lives`` from its features ``f`` and scores
    ``z`` (:func:`_score`): exact where a blitz ends the round, else the softmax of the
    scores over the seats dealt in times the scales."""
    n = f.shape[0]
    if f[:, _BLITZ_NOW].max() > 0:
        for p in range(n):
            lives[p] = 1.0 if active[p] and f[p, _HOLDS_BLITZ] == 0 else 0.0
        return
    top_z = -1e300
    for p in range(n):
        if active[p]:
            top_z = max(top_z, z[p])
    total = 0.0
    for p in range(n):
        lives[p] = np.exp(z[p] - top_z) if active[p] else 0.0
        total += lives[p]
    for p in range(n):
        lives[p] *= (scales[0] + (scales[1] if p == knocker else 0.0)) / total


@njit(cache=True)
def _lives(f: np.ndarray, active: np.ndarray, knocker: int, model: tuple, lives: np.ndarray) -> None:
    """Each seat's expected lives lost this round into ``lives`` (0 for a seat not dealt
    in): :class:`LuckModel` read on the features ``f``."""
    n = f.shape[0]
    z = np.zeros(n)
    for p in range(n):
        if active[p]:
            z[p] = _score(f, p, model)
    _lives_of(f, z, active, knocker, model[4], lives)


@njit(cache=True)
def _mean_and_last(
    state: tuple, seat: int, cards: np.ndarray, model: tuple, mean: np.ndarray, last: np.ndarray
) -> None:
    """Each seat's expected lives lost: with ``cards`` (the stock, its last card on top)
    ``seat`` draws one, ``mean`` the lives over every card it could draw and ``last``
    those with the top card (``state``, :func:`state_arrays`, as after the draw);
    without, both the lives of the hands as they are. ``model``: the weights of
    :meth:`LuckModel.arrays`."""
    values, hands, active, knocker = state[0], state[1], state[2], state[5]
    n = hands.shape[0]
    f = np.zeros((n, model[0].shape[0]))
    if not cards.size:
        features(state, hands, f)
        _lives(f, active, knocker, model, last)
        mean[:] = last
        return
    # the model reads a drawn card by two numbers alone: the drawer's value with it and
    # what the card it then lets go adds to the seat to play next; cards alike in both
    # leave the same lives, worked out once
    h = hands.copy()
    k = cards.size
    turns = state[6]
    following = -1
    for p in range(n):
        if active[p] and p != seat and turns[1, p] == 0.0 and hands[p, 3] < 0:
            following = p
    # the two numbers in one: twice the drawer's value (a whole number: values are whole
    # or, three of a kind at 30.5, halves) in thousands, the next seat's value under 1,000
    key = np.empty(k)
    for r in range(k):
        h[seat, 3] = cards[r]
        key[r] = 2000.0 * _best3(values, h[seat, 0], h[seat, 1], h[seat, 2], cards[r])
        if following >= 0:
            g = h[following]
            key[r] += _best3(values, g[0], g[1], g[2], _let_go(values, h[seat]))
    order = np.argsort(key)
    lives = np.zeros(n)
    z = np.zeros(n)
    for p in range(n):
        mean[p] = 0.0
    r = 0
    value = -1.0
    while r < k:
        same = r
        while same + 1 < k and key[order[same + 1]] == key[order[r]]:
            same += 1
        if key[order[r]] // 1000.0 != value:  # a new value of the drawer's: every seat read
            value = key[order[r]] // 1000.0  # twice the drawer's value
            h[seat, 3] = cards[order[r]]
            features(state, h, f)
            for p in range(n):
                if active[p]:
                    z[p] = _score(f, p, model)
        else:  # the same, another offer: only the seat offered it reads anew
            offer = (key[order[r]] - 1000.0 * value) / 10.0 - f[following, 0]
            f[following, _OFFER] = offer
            f[following, _OFFER + 1] = offer * f[following, _KNOCKED]
            z[following] = _score(f, following, model)
        _lives_of(f, z, active, knocker, model[4], lives)
        for p in range(n):
            mean[p] += lives[p] * (same - r + 1) / k
        if key[order[r]] == key[k - 1]:  # the top card's
            last[:] = lives
        r = same + 1


@njit(cache=True)
def _add_luck(
    state: tuple,
    seat: int,
    cards: np.ndarray,
    model: tuple,
    win_delta: np.ndarray,
    lost: np.ndarray,
    wins: np.ndarray,
) -> None:
    """Add one chance event's luck to ``lost`` and ``wins`` (by seat, in place).

    Without ``cards`` the event is the deal that left the hands: expected, the mean of
    the lives over the deals that hand the same hands round the seats dealt in (as
    likely as the deal itself, so the luck has mean zero whatever the model; for a
    model that treats the seats alike, one share in the seats dealt in). With ``cards``
    (the stock, its last card on top) ``seat`` draws: the mean lives over every card
    expected, the top card's had (:func:`_mean_and_last`). ``win_delta[j, i]``: how
    seat ``i``'s chance to win the game moves when ``j`` loses a life."""
    hands, active, knocker = state[1], state[2], state[5]
    n = hands.shape[0]
    expected = np.zeros(n)
    had = np.zeros(n)
    _mean_and_last(state, seat, cards, model, expected, had)
    if not cards.size:  # a deal: the mean over the hands handed round the seats dealt in
        seats = np.flatnonzero(active)
        m = seats.size
        rotated = hands.copy()
        lives = np.zeros(n)
        f = np.zeros((n, model[0].shape[0]))
        for p in range(n):
            expected[p] = 0.0
        for r in range(m):
            for i in range(m):
                rotated[seats[i]] = hands[seats[(i + r) % m]]
            features(state, rotated, f)
            _lives(f, active, knocker, model, lives)
            for p in range(n):
                expected[p] += lives[p] / m
    _accumulate(had, expected, win_delta, lost, wins)


@njit(cache=True)
def _accumulate(
    had: np.ndarray, expected: np.ndarray, win_delta: np.ndarray, lost: np.ndarray, wins: np.ndarray
) -> None:
    """Add the luck ``had - expected`` (lives lost, by seat) in lives and in wins."""
    n = had.shape[0]
    for p in range(n):
        d = had[p] - expected[p]
        lost[p] += d
        for i in range(n):
            wins[i] += d * win_delta[p, i]


def state_arrays(s: GameState, drawn: bool = False) -> tuple:
    """What the kernels read of ``s``: ``(values, hands, active, top, progress,
    knocker, turns, stock_left, blitz)`` (``turns[0]``: 1 for a seat with a turn before
    the showdown after a knock; ``turns[1]``: a seat's wait, the seats to play before it
    plays again over the seats dealt in, 0 for the seat to play next; ``blitz``: see
    :func:`_rule_arrays`); with ``drawn``, as after the seat to act draws from the stock
    (it has had its turn, the stock has a card less)."""
    n = s.num_players
    flat: list[int] = []
    for hand in s.hands:  # a seat out holds no cards
        flat += hand
        flat += _PAD[len(hand)]
    hands = np.array(flat, dtype=np.int64).reshape(n, 4)
    active = np.array(s.active, dtype=np.bool_)
    turns = np.zeros((2, n))
    dealt_in = sum(s.active)
    first = s.current if (s.phase == DRAW and not drawn) else _next(s.active, s.current)
    p = first
    for k in range(dealt_in):  # the order of play from the seat to play next
        turns[1, p] = k / dealt_in
        p = _next(s.active, p)
    if s.knocker >= 0:  # the seats to play before the knocker's turn would come again
        p = first
        for _ in range(dealt_in):  # (a knocker the showdown put out is never reached)
            if p == s.knocker:
                break
            turns[0, p] = 1.0
            p = _next(s.active, p)
    progress = min(s.turn / (3.0 * sum(s.active)), 2.0)
    top = s.discard[-1] if s.discard else -1
    stock_left = (len(s.stock) - (1 if drawn else 0)) / len(s.rules.deck_cards)
    values, blitz = _rule_arrays(s.rules)
    return values, hands, active, top, progress, s.knocker, turns, stock_left, blitz


#: -1s that fill a hand of k cards up to four
_PAD = ([-1] * 4, [-1] * 3, [-1] * 2, [-1], [])


def _next(active: list[bool], seat: int) -> int:
    n = len(active)
    seat = (seat + 1) % n
    while not active[seat]:
        seat = (seat + 1) % n
    return seat


def state_features(s: GameState, drawn: bool = False) -> tuple[np.ndarray, np.ndarray, int]:
    """Every seat's :data:`FEATURES` in ``s`` ``(n, F)`` (``drawn``: as :func:`state_arrays`),
    the seats dealt in and the knocker: what the model sees (for fitting it)."""
    state = state_arrays(s, drawn)
    out = np.zeros((s.num_players, NUM_FEATURES))
    features(state, state[1], out)
    return out, state[2], state[5]


class LuckObserver:
    """Measures the luck of one game as it is played: watches its moves (a table's
    ``observer``, passing them on to ``inner`` as well) and its deals (:meth:`dealt`,
    the first round's too). By seat, over the game so far: ``lost`` the luck in lives
    lost, ``wins`` the luck in wins (zero where the rules' end has no model)."""

    __slots__ = (
        "model",
        "n",
        "weights",
        "lost",
        "wins",
        "_win_delta",
        "_wins_measured",
        "_inner",
        "_sampled",
    )

    def __init__(
        self,
        model: LuckModel,
        state: GameState,
        inner: Any = None,
        sampled: dict[int, Callable] | None = None,
    ) -> None:
        self.model = model
        self.n = state.num_players
        self.weights = model.arrays()
        self.lost = np.zeros(self.n)
        self.wins = np.zeros(self.n)
        self._inner = inner
        self._sampled = sampled or {}
        self._win_delta = np.zeros((self.n, self.n))  # stays zero where the luck in wins is not measured
        try:
            check_win_objective(state.rules, self.n)
            self._wins_measured = True
        except ValueError:
            self._wins_measured = False  # no model of the game's end

    def _add(self, s: GameState, seat: int = -1, cards: np.ndarray = _NO_CARDS) -> None:
        """:func:`_add_luck` of the event that left ``s`` (the deal), or of ``seat``'s
        draw of the top of ``cards`` (the stock)."""
        state = state_arrays(s, drawn=bool(cards.size))
        _add_luck(state, seat, cards, self.weights, self._win_delta, self.lost, self.wins)

    # -- events -------------------------------------------------------------------------

    def dealt(self, s: GameState) -> None:
        """A round was dealt in ``s``: its luck, and the standing the round's loser
        leaves for the luck in wins (read as dealt: :func:`as_dealt`)."""
        s = as_dealt(s)
        if self._wins_measured:
            bonus = 1 if s.rules.free_ride else 0
            self._win_delta = _win_delta(
                tuple(s.lives[p] + bonus if s.active[p] else 0 for p in range(self.n))
            )
        self._add(s)

    def _value(self, s: GameState, action: int) -> np.ndarray:
        """The expected lives lost after ``action`` in ``s``: after a draw from the
        stock, their mean over every card it could bring."""
        mean, last = np.zeros(self.n), np.zeros(self.n)
        if action == DRAW_STOCK and s.phase == DRAW and s.stock:
            arrays, seat, cards = state_arrays(s, drawn=True), s.current, np.array(s.stock, dtype=np.int64)
        else:
            t = clone_state(s)
            apply_action(t, action, _NO_RNG)
            arrays, seat, cards = state_arrays(t), -1, _NO_CARDS
        _mean_and_last(arrays, seat, cards, self.weights, mean, last)
        return mean

    def _move_luck(self, s: GameState, action: int, probabilities: np.ndarray) -> None:
        """The luck of a sampled move: its value less the mean over the moves the player
        could have drawn, weighted by their chances."""
        expected = np.zeros(self.n)
        had = None
        for a in np.flatnonzero(probabilities > 0):
            v = self._value(s, int(a))
            expected += probabilities[a] * v
            if a == action:
                had = v
        if had is None:
            raise ValueError(f"the player sampled {action}, a move its own probabilities give no chance")
        _accumulate(had, expected, self._win_delta, self.lost, self.wins)

    def before(self, s: GameState, seat: int, action: int) -> bool:
        chances = self._sampled.get(seat)
        if chances is not None:
            self._move_luck(s, action, chances(s))
        if action == DRAW_STOCK and s.phase == DRAW and s.stock:
            self._add(s, seat, np.array(s.stock, dtype=np.int64))  # its top card is the one drawn
        inner = self._inner
        return inner is not None and inner.before(s, seat, action)

    def after(self, s: GameState, seat: int, action: int) -> None:
        self._inner.after(s, seat, action)


def as_dealt(s: GameState) -> GameState:
    """``s`` as its round was dealt. A dealt 31 settles the round before anyone can
    watch (the engine deals and settles in one call), so its standing and the seats
    dealt in are read back from the deal: the lives before the 31 cost any, every seat
    that was dealt a hand, nobody's turn played yet. Read after the settlement, a
    deal's luck over the rotations of its hands would not average to zero (the
    standing, and a seat the 31 put out, would depend on who was dealt the 31)."""
    if s.phase < ROUND_OVER:
        return s
    deal = s.history[0] if s.history else None
    if deal is None or deal.kind != DEAL:
        raise ValueError("a settled round's deal is not the first event of its history")
    hands, _, lives = deal.data[:3]
    t = clone_state(s)
    t.hands = [list(h) for h in hands]
    t.lives = list(lives)
    t.active = [bool(h) for h in hands]
    t.phase, t.knocker, t.turn = DRAW, -1, 0  # turn 0: a 31 dealt, valued exactly
    t.current = _next(t.active, s.dealer)
    return t


@cache
def _win_delta(left: tuple[int, ...]) -> np.ndarray:
    """``[j, i]``: how seat ``i``'s chance to win the game from ``left`` (losses left
    per seat, 0 for a seat out) moves when seat ``j`` loses one (a row of zeros for a
    seat out): the luck in wins is the luck in lives through it."""
    n = len(left)
    now = [win_chance(list(left), i) for i in range(n)]
    out = np.zeros((n, n))
    for j in range(n):
        if left[j] > 0:
            after = list(left)
            after[j] -= 1
            out[j] = [win_chance(after, i) - now[i] for i in range(n)]
    out.flags.writeable = False
    return out
