"""Populations of heuristic players with randomised habits: opponents a learner trains
against (the league) and, from disjoint ranges, opponents it never saw (the gauntlet).

A :class:`PopulationPlayer` plays by a handful of numbers (:class:`PopulationParams`):

- **Knock** when the hand is worth at least the threshold of its own turn in the round
  (``knock_1``, ``knock_2``, ``knock_3``, ``knock_4`` for turn 4 and later), plus
  ``late_shift`` once fewer than ``late_stock`` cards remain in the stock.
- **Pick up** the top discard when it raises the best hand it can keep by at least
  ``take_gain`` points, and by ``off_suit_gain`` more when the card is not of the suit
  the hand collects (its *master suit*: the suit worth most in it, ties to the higher
  suit, as Blitz31 counts it); else draw from the stock.
- **Discard** the card that leaves the best hand; cards whose throw leaves a hand within
  ``keep_margin`` points of the best are weighed by habit: throwing a card off the
  master suit scores ``keep_suit``, every point of the thrown card costs ``keep_high``
  (a high card is kept), and a card of a suit the next player visibly took from the
  pile costs ``feed_care`` (it would feed that player); then the better hand, then the
  lower card id.
- **Last turn after a knock**: stand with a hand worth at least ``stand_at`` (where
  standing is allowed), else draw or pick up as above.

On the variants' tables (widow, Switch, Stop the Bus) the shared table heuristic
(:func:`~thirtyone_env.game.table_strategy.table_move`) plays the table moves, knocking
at the turn's threshold.

:data:`TRAIN_RANGES` and :data:`HELD_OUT_RANGES` give every parameter an interval;
for every parameter the two are disjoint, so a held-out member differs from every
training member in every habit. :func:`draw_members` draws members uniformly from
ranges, deterministically in the seed (member ``k`` is the same whatever the count).
The registry's ``population`` spec (:class:`PopulationMember`) builds one member by
name, so worker processes can build it: ``population:split=held_out,seed=7,member=3``.

``act_batch(observations, masks)`` decides every row of a stock-game
:class:`~thirtyone_env.game.view_batch.ViewBatch` in one compiled call: row ``k`` gets
exactly the move ``act(observations.view(k), masks[k])`` plays (the same lookups, the
same float operations in the same order, the same tie-breaks). The kernel calls
helpers of :mod:`agents.expert_batch`; numba's cache checks only this file, so after
changing those, clear ``agents/__pycache__/populations.*`` too.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numba import njit

from agents.blitz31 import master_suit
from agents.expert_batch import (
    CARD_POINTS,
    _best_keyed,
    _kept,
    _master_suit,
    _no_legal,
    _sorted4,
    _top,
    batch_masks,
    checked_actions,
    hand_array,
)
from thirtyone_env.game.actions import DISCARD_BASE, DRAW_STOCK, KNOCK, STAND, TAKE_DISCARD
from thirtyone_env.game.cards import CARD_VALUES, NUM_CARDS, PAIR_STRIDE, hand_table, value_with
from thirtyone_env.game.table_strategy import table_move
from thirtyone_env.game.view_batch import ViewBatch
from thirtyone_env.game.views import PlayerView, as_view


@dataclass(frozen=True)
class PopulationParams:
    """One member's habits (see the module doc). Values are hand points unless noted."""

    knock_1: float  #: knock threshold on the seat's first turn of a round
    knock_2: float  #: ... on its second turn
    knock_3: float  #: ... on its third turn
    knock_4: float  #: ... on its fourth turn and later
    late_stock: float  #: below this many stock cards, ``late_shift`` is added to the threshold
    late_shift: float  #: the late-stock change of the knock threshold
    take_gain: float  #: least gain in hand value for which it picks up the top discard
    off_suit_gain: float  #: extra gain asked of a card off the master suit
    keep_margin: float  #: discards leaving a hand this close to the best are weighed by habit
    keep_suit: float  #: habit score of throwing a card off the master suit
    keep_high: float  #: habit cost per point of the thrown card
    feed_care: float  #: habit cost of throwing a suit the next player visibly collects
    stand_at: float  #: last turn after a knock: stand with at least this value

    def __post_init__(self) -> None:
        for name, value in dataclasses.asdict(self).items():
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"PopulationParams.{name}={value!r}: expected a finite number")

    def array(self) -> np.ndarray:
        """The parameters as float64, in field order (the kernel's ``fparams``)."""
        return np.array([float(x) for x in dataclasses.astuple(self)], dtype=np.float64)


#: The parameter names, in field order.
FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(PopulationParams))
(
    P_KNOCK_1,
    P_KNOCK_2,
    P_KNOCK_3,
    P_KNOCK_4,
    P_LATE_STOCK,
    P_LATE_SHIFT,
    P_TAKE_GAIN,
    P_OFF_SUIT_GAIN,
    P_KEEP_MARGIN,
    P_KEEP_SUIT,
    P_KEEP_HIGH,
    P_FEED_CARE,
    P_STAND_AT,
) = range(len(FIELDS))

Ranges = dict[str, tuple[float, float]]

#: What the league trains against: closed intervals ``(low, high)`` per parameter.
#: Knocks from fairly early (20 late in a round) to cautious (28 on the first turn),
#: lower as the stock runs out; picks up only a clear gain; discards close to the best
#: hand with mild habits; rarely stands after a knock (32: never).
TRAIN_RANGES: Ranges = {
    "knock_1": (23.0, 29.0),
    "knock_2": (22.0, 27.0),
    "knock_3": (21.0, 26.0),
    "knock_4": (19.0, 24.0),
    "late_stock": (6.0, 14.0),
    "late_shift": (-3.0, 0.0),
    "take_gain": (1.5, 6.0),
    "off_suit_gain": (0.0, 3.0),
    "keep_margin": (0.0, 1.5),
    "keep_suit": (0.0, 1.0),
    "keep_high": (0.0, 0.15),
    "feed_care": (0.0, 1.5),
    "stand_at": (28.0, 32.0),
}

#: What no training run sees (the gauntlet's populations): every interval disjoint from
#: :data:`TRAIN_RANGES`'. Almost never knocks on the first turn, knocks low on the
#: second, then waits for more, more so as the stock runs out; takes any gain of its
#: master suit but hardly an off-suit card; gives up points to keep its suit and high
#: cards and to starve the next player; stands on a fair hand after a knock.
HELD_OUT_RANGES: Ranges = {
    "knock_1": (19.0, 22.5),
    "knock_2": (27.5, 30.0),
    "knock_3": (26.5, 29.0),
    "knock_4": (24.5, 28.0),
    "late_stock": (15.0, 26.0),
    "late_shift": (0.5, 3.0),
    "take_gain": (0.25, 1.25),
    "off_suit_gain": (3.5, 10.0),
    "keep_margin": (2.0, 4.0),
    "keep_suit": (1.5, 3.0),
    "keep_high": (0.2, 0.4),
    "feed_care": (2.0, 4.0),
    "stand_at": (23.0, 27.5),
}

#: The registry spec's ``split`` option: its name -> ranges.
SPLITS: dict[str, Ranges] = {"train": TRAIN_RANGES, "held_out": HELD_OUT_RANGES}


def check_ranges(ranges: Ranges) -> None:
    """``ValueError`` unless ``ranges`` gives every parameter (and nothing else) a
    finite interval ``(low, high)`` with ``low <= high``."""
    if set(ranges) != set(FIELDS):
        missing = sorted(set(FIELDS) - set(ranges))
        extra = sorted(set(ranges) - set(FIELDS))
        raise ValueError(
            f"population ranges: missing {missing}, unknown {extra}; parameters are {list(FIELDS)}"
        )
    for name in FIELDS:
        low, high = ranges[name]
        if not (math.isfinite(low) and math.isfinite(high) and low <= high):
            raise ValueError(
                f"population ranges: {name} = ({low!r}, {high!r}) is not an interval low <= high"
            )


def draw_member(ranges: Ranges, seed: int, member: int) -> PopulationParams:
    """Member ``member`` of the population of ``seed``: every parameter uniform in its
    interval, rounded to 0.01 (readable in reports; still inside the interval). Its own
    random stream (seed, member), so it does not depend on how many are drawn."""
    check_ranges(ranges)
    if seed < 0 or member < 0:
        raise ValueError(f"population seed and member must be non-negative, got seed={seed}, member={member}")
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(member,)))
    values = {}
    for name in FIELDS:
        low, high = ranges[name]
        values[name] = min(max(round(low + (high - low) * float(rng.random()), 2), low), high)
    return PopulationParams(**values)


def draw_members(ranges: Ranges, count: int, seed: int) -> list[PopulationParams]:
    """``count`` members drawn from ``ranges``, deterministic in ``seed`` (see
    :func:`draw_member`)."""
    if count < 0:
        raise ValueError(f"draw_members: count must be non-negative, got {count}")
    return [draw_member(ranges, seed, k) for k in range(count)]


@lru_cache(maxsize=4096)
def member_params(split: str, seed: int, member: int) -> PopulationParams:
    """The parameters of a registry spec's member (drawn once per process)."""
    return draw_member(SPLITS[split], seed, member)


class PopulationPlayer:
    """A heuristic player with the habits ``params`` (see the module doc). Reads a
    :class:`PlayerView`; deterministic."""

    obs_encoding = "view"

    def __init__(self, params: PopulationParams) -> None:
        if not isinstance(params, PopulationParams):
            raise ValueError(f"PopulationPlayer needs PopulationParams, got {type(params).__name__}")
        self.params = params
        self._fparams = params.array()
        self._rules: object = None  # the rules the cached hand table is for
        self._values: tuple = ()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.params})"

    def threshold(self, turn: int, stock_size: int) -> float:
        """The knock threshold on the seat's ``turn`` with ``stock_size`` cards left."""
        p = self.params
        t = p.knock_1 if turn <= 1 else p.knock_2 if turn == 2 else p.knock_3 if turn == 3 else p.knock_4
        return t + p.late_shift if stock_size < p.late_stock else t

    def act(self, observation: PlayerView, action_mask: np.ndarray) -> int:
        v = as_view(observation, self)
        if v.rules is not self._rules:
            self._rules, self._values = v.rules, hand_table(v.rules)
        threshold = self.threshold(v.turn, v.stock_size)
        if v.rules.table != "stock":  # the variants' table moves
            move = table_move(v, action_mask, threshold)
            if move is not None:
                return move
        if len(v.hand) == 4:
            return self._discard(v, action_mask)
        return self._draw(v, action_mask, threshold)

    def _draw(self, v: PlayerView, mask: np.ndarray, threshold: float) -> int:
        """Knock, stand, pick up or draw with a 3-card hand."""
        p = self.params
        values = self._values
        hand = v.hand
        a, b, c = hand
        now = values[a * PAIR_STRIDE + b * NUM_CARDS + c]
        if v.knocker >= 0 and mask[STAND] and now >= p.stand_at:
            return STAND
        if mask[KNOCK] and now >= threshold:
            return KNOCK
        top = v.top_discard
        if top >= 0 and mask[TAKE_DISCARD]:
            gain = value_with(hand, top, values) - now
            need = p.take_gain if top // 13 == master_suit(hand) else p.take_gain + p.off_suit_gain
            if gain >= need or not mask[DRAW_STOCK]:
                return TAKE_DISCARD
        if mask[DRAW_STOCK]:
            return DRAW_STOCK
        if mask[STAND]:
            return STAND
        return int(np.flatnonzero(mask)[0])

    def _discard(self, v: PlayerView, mask: np.ndarray) -> int:
        """The card to throw from a 4-card hand: the largest key (within the margin of
        the best hand, habit score, hand kept), the first in sorted order on ties."""
        p = self.params
        values = self._values
        hand = v.hand
        master = master_suit(hand)
        fed = self._fed_suits(v)
        options = []
        for card in sorted(hand):
            if mask[DISCARD_BASE + card]:
                x, y, z = [h for h in hand if h != card]
                options.append((values[x * PAIR_STRIDE + y * NUM_CARDS + z], card))
        floor = max(kept for kept, _ in options) - p.keep_margin
        best_key, best_action = None, -1
        for kept, card in options:
            suit = card // 13
            habit = (
                (p.keep_suit if suit != master else 0.0)
                - p.keep_high * CARD_VALUES[card]
                - (p.feed_care if (fed >> suit) & 1 else 0.0)
            )
            key = (1.0 if kept >= floor else 0.0, habit, kept)
            if best_key is None or key > best_key:
                best_key, best_action = key, DISCARD_BASE + card
        return best_action

    @staticmethod
    def _fed_suits(v: PlayerView) -> int:
        """Bitmask of the suits the next player (still to play this round) visibly
        holds: throwing one of them may feed it."""
        after = v.players_after()
        if not after or after[0] == v.knocker:
            return 0
        known = v.known_masks[after[0]]
        return sum(1 << s for s in range(4) if (known >> (13 * s)) & 0x1FFF)

    def act_batch(self, observations: ViewBatch, masks: np.ndarray) -> np.ndarray:
        """The move of every row of a stock-game batch, as ``act`` plays it for
        ``observations.view(k)`` and ``masks[k]``, in one compiled call (int64, shape
        ``(B,)``). ``ValueError`` (naming this player) for masks that do not fit the
        batch or a row that allows nothing."""
        owner = type(self).__name__
        mask = batch_masks(owner, observations, masks)
        b = observations
        out = np.empty(len(b), dtype=np.int64)
        population_kernel(
            b.seat,
            b.hand,
            b.hand_len,
            b.pile,
            b.pile_len,
            b.known,
            b.active,
            b.knocker,
            b.stock_size,
            b.turn,
            mask,
            hand_array(b.rules),
            self._fparams,
            out,
        )
        return checked_actions(owner, out)


class PopulationMember(PopulationPlayer):
    """Member ``member`` of the population of ``seed`` drawn from the ``split`` ranges
    (``train``: :data:`TRAIN_RANGES`, ``held_out``: :data:`HELD_OUT_RANGES`): the
    registry's ``population`` player."""

    def __init__(self, split: str = "train", seed: int = 0, member: int = 0) -> None:
        self.check_options(split, seed, member)
        super().__init__(member_params(split, seed, member))
        self.split, self.seed, self.member = split, seed, member

    def __repr__(self) -> str:
        return f"population:split={self.split},seed={self.seed},member={self.member} {self.params}"

    @staticmethod
    def check_options(split: str = "train", seed: int = 0, member: int = 0) -> None:
        """``ValueError`` naming the option unless the spec names a member."""
        if split not in SPLITS:
            raise ValueError(f"population option split={split!r}: use one of {sorted(SPLITS)}")
        if seed < 0:
            raise ValueError(f"population option seed={seed}: use a non-negative integer")
        if member < 0:
            raise ValueError(f"population option member={member}: use a non-negative integer")


# ---------------------------------------------------------------------- the kernel
@njit(cache=True)
def _fed_suits(k, seat, active, knocker, known):
    """``PopulationPlayer._fed_suits`` for row ``k``."""
    n = active.shape[1]
    s = seat[k]
    nxt = -1
    for d in range(1, n):
        q = (s + d) % n
        if active[k, q]:
            nxt = q
            break
    if nxt < 0 or nxt == knocker[k]:
        return 0
    fed = 0
    for suit in range(4):
        if (known[k, nxt] >> (13 * suit)) & 0x1FFF:
            fed |= 1 << suit
    return fed


@njit(cache=True)
def _population_discard(k, hand, masks, values, fparams, fed, cards):
    """``PopulationPlayer._discard`` for row ``k`` (``cards``: scratch of 4)."""
    master = _master_suit(hand, k, 4)
    _sorted4(hand, k, cards)
    best_kept = -1e300
    for i in range(4):
        if masks[k, DISCARD_BASE + cards[i]]:
            best_kept = max(best_kept, values[_kept(hand, k, cards[i])])
    floor = best_kept - fparams[P_KEEP_MARGIN]
    keys = np.empty((4, 3))
    for i in range(4):
        card = cards[i]
        kept = values[_kept(hand, k, card)]
        suit = card // 13
        keys[i, 0] = 1.0 if kept >= floor else 0.0
        keys[i, 1] = (
            (fparams[P_KEEP_SUIT] if suit != master else 0.0)
            - fparams[P_KEEP_HIGH] * CARD_POINTS[card]
            - (fparams[P_FEED_CARE] if (fed >> suit) & 1 else 0.0)
        )
        keys[i, 2] = kept
    return _best_keyed(k, masks, cards, keys)


@njit(cache=True)
def _population_draw(k, hand, pile, pile_len, knocker, stock_size, turn, masks, values, fparams):
    """``PopulationPlayer._draw`` for row ``k``, with its turn's knock threshold."""
    a = hand[k, 0]
    b = hand[k, 1]
    c = hand[k, 2]
    now = values[a * PAIR_STRIDE + b * NUM_CARDS + c]
    if knocker[k] >= 0 and masks[k, STAND] and now >= fparams[P_STAND_AT]:
        return STAND
    t = turn[k]
    if t <= 1:
        threshold = fparams[P_KNOCK_1]
    elif t == 2:
        threshold = fparams[P_KNOCK_2]
    elif t == 3:
        threshold = fparams[P_KNOCK_3]
    else:
        threshold = fparams[P_KNOCK_4]
    if stock_size[k] < fparams[P_LATE_STOCK]:
        threshold = threshold + fparams[P_LATE_SHIFT]
    if masks[k, KNOCK] and now >= threshold:
        return KNOCK
    top = _top(pile, pile_len, k)
    if top >= 0 and masks[k, TAKE_DISCARD]:
        with_top = max(
            max(values[b * PAIR_STRIDE + c * NUM_CARDS + top], values[a * PAIR_STRIDE + c * NUM_CARDS + top]),
            values[a * PAIR_STRIDE + b * NUM_CARDS + top],
        )
        gain = with_top - now
        if top // 13 == _master_suit(hand, k, 3):
            need = fparams[P_TAKE_GAIN]
        else:
            need = fparams[P_TAKE_GAIN] + fparams[P_OFF_SUIT_GAIN]
        if gain >= need or not masks[k, DRAW_STOCK]:
            return TAKE_DISCARD
    if masks[k, DRAW_STOCK]:
        return DRAW_STOCK
    if masks[k, STAND]:
        return STAND
    for x in range(masks.shape[1]):
        if masks[k, x]:
            return x
    return -1


@njit(cache=True)
def population_kernel(
    seat,
    hand,
    hand_len,
    pile,
    pile_len,
    known,
    active,
    knocker,
    stock_size,
    turn,
    masks,
    values,
    fparams,
    out,
):
    """``PopulationPlayer.act`` for every row (the stock game): ``out[k]`` the move of
    row ``k``, -1 where its mask allows nothing. ``fparams``:
    :meth:`PopulationParams.array`."""
    cards = np.empty(4, dtype=np.int64)
    for k in range(seat.shape[0]):
        if _no_legal(masks, k):
            out[k] = -1
        elif hand_len[k] == 4:
            fed = _fed_suits(k, seat, active, knocker, known)
            out[k] = _population_discard(k, hand, masks, values, fparams, fed, cards)
        else:
            out[k] = _population_draw(
                k, hand, pile, pile_len, knocker, stock_size, turn, masks, values, fparams
            )
