"""A hand-written expert: expected-value draws, knocks by estimated survival chance.

The player reads only its :class:`~thirtyone_env.game.views.PlayerView`. Two kinds of
table, built once per deck and ``three_of_a_kind`` setting on first use (well under a
second), keep each decision to a few dozen microseconds:

- **Potential**: for every 3-card hand, the expected value after ``horizon`` more
  stock draws played optimally (a drawn card may always be thrown back), a 31 counting
  ``blitz_bonus`` extra because a blitz costs every other player a life. Draws and
  discards maximise it, so two high cards of one suit beat a slightly higher dead hand.
- **Opponent model**: the distribution of an opponent's hand value after ``t`` turns,
  from a fixed-seed simulation of a greedy player (take the top discard if it raises
  the value, else draw and keep the best three), optionally given that it held less
  than ``opp_knock_at`` on its last turn (else it would have knocked). The cards an
  opponent is known to hold (taken from the pile, not discarded since) truncate that
  distribution from below; its turn count comes from its discards in ``view.discards``,
  which also encodes the seat order (who still gets a turn).

Decisions:

- **Knock** when the expected lives lost by knocking now (``knocker_penalty`` if
  strictly lowest, the ``knocker_tie`` rule if tied, every opponent getting one more
  turn) is below ``knock_risk`` divided by the players still in; a seat whose next
  loss would put it out (last life, or the free ride) accepts ``last_life_care`` of
  that. Against Blitz31 opponents it knocks on about 20 on its first turn, 21-25 on
  its second, 25-27 on its third and 27+ later.
- **Draw** from the stock or take the discard, whichever gives the higher expected
  potential of the hand kept; the stock is averaged over ``view.unseen()``.
- **Discard** the legal card whose loss costs the least potential, less a penalty
  for feeding the next player a card of a suit it visibly collects (it took that suit
  from the pile), a large one for handing it a 31.
- **Last turn after a knock**: stand, draw or take, and discard, to minimise the
  estimated chance of being lowest at the showdown (not the expected value), with the
  knocker's value frozen (at least ``knocker_floor``) and the tie rule applied. A
  stock draw never lowers the value, so standing only wins when nothing can help.

Deterministic: the table simulation has its own fixed seed, so the player needs no
``reset`` and plays the same way for the same view.

**Many games at once**: ``act_batch(observations, masks)`` decides for every row of a
:class:`~thirtyone_env.game.view_batch.ViewBatch` (the stock game, as the vector env
gathers the games waiting on this player) in one compiled call
(:mod:`agents.expert_batch`), about a microsecond a row: row ``k`` gets exactly the move
``act(observations.view(k), masks[k])`` plays. The tables above go to the kernel as
arrays (the potential as float64 ``52**3``, the value bins as int64, the opponent model
padded to ``(SIM_TURNS + 1, SIM_TURNS + 2, NUM_BINS)``), built once per rules and
parameters. Other tables (widow, Switch, Stop the Bus) have no batch: use ``act``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from agents.expert_batch import (
    F_FEED_WEIGHT,
    F_KNOCK_RISK,
    F_LAST_LIFE_CARE,
    I_BLITZ_LATE,
    I_FLOOR_BIN,
    I_FREE_RIDE,
    I_MAY_KNOCK,
    I_PENALTY,
    I_RETURN,
    I_TIE_PAYS,
    I_TIE_SAFE,
    NUM_F,
    NUM_I,
    batch_masks,
    checked_actions,
    deck_mask,
    expert_kernel,
)
from thirtyone_env.game.actions import DISCARD_BASE, DRAW_STOCK, KNOCK, STAND, TAKE_DISCARD
from thirtyone_env.game.cards import CARD_VALUES, DECKS, NUM_CARDS, PAIR_STRIDE, value_table
from thirtyone_env.game.rules import Rules
from thirtyone_env.game.table_strategy import table_move
from thirtyone_env.game.view_batch import ViewBatch
from thirtyone_env.game.views import PlayerView, as_view

#: Hand values are binned as ``int(2 * value)`` (0..62; 30.5 is bin 61, 31 is 62).
NUM_BINS = 64
#: Turns simulated for the opponent model; longer rounds use the last row.
SIM_TURNS = 20
#: Simulated opponents per table.
SIM_HANDS = 20_000
#: Largest potential horizon allowed.
MAX_HORIZON = 8
_SEED = 31


class _Tables:
    """Lookup tables for one deck, ``three_of_a_kind`` setting and opponent model."""

    __slots__ = ("value", "vbin", "ge")

    def __init__(self, value: tuple, vbin: tuple, ge: list[list[tuple]]) -> None:
        self.value = value  #: value_table(three_of_a_kind)
        self.vbin = vbin  #: bin of every ordered triple's value
        self.ge = ge  #: ge[t][j][b]: P(value >= bin b) after t turns, no knock after j-1

    def opponent(self, final: int, cond: int) -> tuple:
        """P(value >= bin) after ``final`` turns given the value after ``cond`` turns
        was below the knock level (``cond < 0``: no condition); clamped to the table."""
        if final > SIM_TURNS:
            cond -= final - SIM_TURNS
            final = SIM_TURNS
        cond = max(-1, min(cond, final))
        return self.ge[final][cond + 1]


#: Most parameter sets whose tables a process keeps (the least recently used go first):
#: a table of every ordered triple is a few MB, and a server's players may ask for
#: options of any value.
KEPT_TABLES = 16


@lru_cache(maxsize=KEPT_TABLES)
def _potential(
    deck: str, three_of_a_kind: float | None, horizon: int, blitz_bonus: float
) -> tuple[float, ...]:
    """Expected hand value after ``horizon`` more stock draws played optimally, for
    every ordered triple of 52 ids (cards outside the deck score 0).

    ``pot[k+1](h)`` averages, over the cards ``x`` not in ``h``, the best of keeping
    ``h`` or swapping ``x`` for one of its cards, scored by ``pot[k]``.
    """
    d = np.asarray(DECKS[deck])
    m = len(d)
    value = np.asarray(value_table(three_of_a_kind), dtype=np.float32)
    v = value.reshape(52, 52, 52)[np.ix_(d, d, d)]
    v = v + np.float32(blitz_bonus) * (v == 31)
    ar = np.arange(m)
    for _ in range(horizon):
        # best[a, b, c, x]: keep a b c, or swap the drawn card x for one of them
        best = np.maximum(v[:, :, :, None], v.transpose(1, 2, 0)[None, :, :, :])
        np.maximum(best, v.transpose(0, 2, 1)[:, None, :, :], out=best)
        np.maximum(best, v[:, :, None, :], out=best)
        best[ar, :, :, ar] = 0
        best[:, ar, :, ar] = 0
        best[:, :, ar, ar] = 0
        v = (best.sum(axis=3) / (m - 3)).astype(np.float32)
    full = np.zeros((52, 52, 52), dtype=np.float64)
    full[np.ix_(d, d, d)] = v
    return tuple(full.ravel().tolist())


def _random_cards(rng: np.random.Generator, deck: np.ndarray, hand: np.ndarray) -> np.ndarray:
    """One random deck card per row that is not in that row's hand."""
    cards = deck[rng.integers(len(deck), size=len(hand))]
    clash = (hand == cards[:, None]).any(axis=1)
    while clash.any():
        cards[clash] = deck[rng.integers(len(deck), size=int(clash.sum()))]
        clash = (hand == cards[:, None]).any(axis=1)
    return cards


def _simulate(deck: tuple[int, ...], value: np.ndarray) -> np.ndarray:
    """Value bins of ``SIM_HANDS`` greedy players after 0..SIM_TURNS turns.

    Each turn the player is offered a random card as the top discard and takes it if
    it raises the hand value, else draws a random card and keeps the best three.
    """
    rng = np.random.default_rng(_SEED)
    d = np.asarray(deck)
    n = SIM_HANDS
    hand = d[np.argsort(rng.random((n, len(d))), axis=1)[:, :3]]
    rows = np.arange(n)
    val = value[hand[:, 0] * PAIR_STRIDE + hand[:, 1] * NUM_CARDS + hand[:, 2]]
    out = np.empty((n, SIM_TURNS + 1), dtype=np.int64)
    out[:, 0] = np.rint(2 * val)
    for t in range(1, SIM_TURNS + 1):
        done = np.zeros(n, dtype=bool)
        for _ in range(2):  # the discard offer, then the stock
            card = _random_cards(rng, d, hand)
            swaps = np.stack(
                [
                    value[card * PAIR_STRIDE + hand[:, 1] * NUM_CARDS + hand[:, 2]],
                    value[hand[:, 0] * PAIR_STRIDE + card * NUM_CARDS + hand[:, 2]],
                    value[hand[:, 0] * PAIR_STRIDE + hand[:, 1] * NUM_CARDS + card],
                ],
                axis=1,
            )
            pos = swaps.argmax(axis=1)
            new = swaps[rows, pos]
            take = (new > val) & ~done
            hand[rows[take], pos[take]] = card[take]
            val = np.where(take, new, val)
            done |= take
        out[:, t] = np.rint(2 * val)
    return out


@lru_cache(maxsize=4 * KEPT_TABLES)
def _tables(deck: str, three_of_a_kind: float | None, opp_knock_at: float) -> _Tables:
    """Build (once) the tables for a deck, a three-of-a-kind value and a knock level."""
    cards = DECKS[deck]
    value_t = value_table(three_of_a_kind)
    value = np.asarray(value_t, dtype=np.float64)
    vbin = tuple(np.rint(2 * value).astype(np.int64).tolist())
    sims = _simulate(cards, value)
    knock_bin = round(2 * opp_knock_at)
    ge: list[list[tuple]] = []
    for final in range(SIM_TURNS + 1):
        row = []
        for cond in range(-1, final + 1):
            sel = sims if cond < 0 else sims[sims[:, cond] < knock_bin]
            if len(sel) < 100:
                sel = sims
            counts = np.bincount(sel[:, final], minlength=NUM_BINS)[:NUM_BINS]
            tail = np.cumsum(counts[::-1])[::-1] / len(sel)
            row.append(tuple(tail.tolist()))
        ge.append(row)
    return _Tables(value_t, vbin, ge)


class _BatchTables(NamedTuple):
    """The tables of :class:`_Tables` and :func:`_potential` as read-only arrays, for
    :mod:`agents.expert_batch`'s kernel."""

    pot: np.ndarray  #: float64 (52**3,): the potential of every ordered triple
    vbin: np.ndarray  #: int64 (52**3,): value bins
    value: np.ndarray  #: float64 (52**3,): hand values
    ge: np.ndarray  #: float64 (SIM_TURNS + 1, SIM_TURNS + 2, NUM_BINS): ``ge[final][cond + 1]``, zero padded
    deck_bits: int  #: bitmask of the deck's cards


@lru_cache(maxsize=KEPT_TABLES)
def _batch_tables(
    deck: str, three_of_a_kind: float | None, opp_knock_at: float, horizon: int, blitz_bonus: float
) -> _BatchTables:
    """Build (once) the kernel's arrays from the very tables ``act`` reads."""
    t = _tables(deck, three_of_a_kind, opp_knock_at)
    ge = np.zeros((SIM_TURNS + 1, SIM_TURNS + 2, NUM_BINS), dtype=np.float64)
    for final, row in enumerate(t.ge):
        for j, probs in enumerate(row):
            ge[final, j] = probs
    arrays = (
        np.asarray(_potential(deck, three_of_a_kind, horizon, blitz_bonus), dtype=np.float64),
        np.asarray(t.vbin, dtype=np.int64),
        np.asarray(t.value, dtype=np.float64),
        ge,
    )
    for a in arrays:
        a.flags.writeable = False
    return _BatchTables(*arrays, deck_mask(DECKS[deck]))


def _floor_bin(t: _Tables, known: tuple[int, ...]) -> int:
    """Lowest value bin a hand holding the ``known`` cards can have."""
    if len(known) >= 3:
        a, b, c = known[:3]
        return t.vbin[a * PAIR_STRIDE + b * NUM_CARDS + c]
    sums = [0, 0, 0, 0]
    for c in known:
        sums[c // 13] += CARD_VALUES[c]
    return 2 * max(sums)


def _p_ge(base: tuple, floor: int, b: int) -> float:
    """P(value >= bin b) under ``base`` truncated to values >= bin ``floor``."""
    if b <= floor:
        return 1.0
    if b >= NUM_BINS:
        return 0.0
    denom = base[floor]
    return base[b] / denom if denom > 0 else 0.0


def _truncated(base: tuple, floor: int) -> list[float]:
    """The whole P(value >= bin) vector of ``base`` truncated at bin ``floor``."""
    if floor <= 0:
        return list(base)
    denom = base[floor]
    if denom <= 0:
        return [1.0] * (floor + 1) + [0.0] * (NUM_BINS - floor - 1)
    return [1.0] * (floor + 1) + [x / denom for x in base[floor + 1 :]]


class ExpertPlayer:
    """Expected-value draws and survival-chance knocks (see the module doc).

    Args:
        horizon: stock draws ahead the potential table looks (0 = greedy on value).
        knock_risk: knock when the expected lives lost by knocking is below this
            divided by the number of players still in.
        last_life_care: factor on that risk when the next loss would put this seat out.
        opp_knock_at: hand value at which the opponent model assumes a player knocks.
        knocker_floor: value a knocker is assumed to hold at least (besides known cards).
        feed_weight: potential points given up per card point not fed to a next player
            collecting that suit.
        blitz_bonus: extra points a 31 is worth in the potential table.
        table_knock_at: in Switch, the hand value it knocks on (Stop the Bus: the share
            of hands it must beat, ``table_strategy``'s default); the table moves of
            the variants follow :func:`thirtyone_env.game.table_strategy.table_move`
            (the Switch carry-over too: carried over only by the seat that plays first).
    """

    obs_encoding = "view"

    def __init__(
        self,
        horizon: int = 4,
        knock_risk: float = 0.5,
        last_life_care: float = 0.5,
        opp_knock_at: float = 31,
        knocker_floor: float = 20,
        feed_weight: float = 0.15,
        blitz_bonus: float = 5.0,
        table_knock_at: float = 27,
    ) -> None:
        if not 0 <= horizon <= MAX_HORIZON:
            raise ValueError(f"horizon={horizon!r} is not allowed: 0..{MAX_HORIZON}")
        self.horizon = horizon
        self.knock_risk = knock_risk
        self.last_life_care = last_life_care
        self.opp_knock_at = opp_knock_at
        self.knocker_floor = knocker_floor
        self.feed_weight = feed_weight
        self.blitz_bonus = blitz_bonus
        self.table_knock_at = table_knock_at
        self._rules: Rules | None = None  # the rules the cached tables below are for
        self._t: _Tables | None = None
        self._pot: tuple[float, ...] = ()
        self._batch_rules: Rules | None = None  # the rules _batch is for (act_batch)
        self._batch: _BatchTables | None = None

    # ------------------------------------------------------------------ entry point
    def act(self, observation: PlayerView, action_mask: np.ndarray) -> int:
        v = as_view(observation, self)
        rules = v.rules
        if rules is not self._rules:
            self._rules = rules
            self._t = _tables(rules.deck, rules.three_of_a_kind, float(self.opp_knock_at))
            self._pot = _potential(rules.deck, rules.three_of_a_kind, self.horizon, float(self.blitz_bonus))
        t = self._t
        if rules.table != "stock":  # the variants' table moves (thirtyone_env.game.table_strategy)
            own_knock = rules.table == "widow" and rules.scoring == "lives"
            if (
                own_knock
                and len(v.hand) == 3
                and v.knocker < 0
                and action_mask[KNOCK]
                and self._should_knock(v, t)
            ):
                return KNOCK
            move = table_move(v, action_mask, knock_at=99 if own_knock else self.table_knock_at)
            if move is not None:
                return move
        if len(v.hand) == 4:
            if v.knocker >= 0:
                return self._last_discard(v, t, action_mask)
            return self._discard(v, t, action_mask)
        if v.knocker >= 0:
            return self._last_draw(v, t, action_mask)
        if action_mask[KNOCK] and rules.scoring != "chips" and self._should_knock(v, t):
            return KNOCK  # (with chips the best hand takes the pot: table_move knocked above)
        return self._draw(v, t, action_mask)

    def act_batch(self, observations: ViewBatch, masks: np.ndarray) -> np.ndarray:
        """The move of every row of a stock-game batch, as ``act`` plays it for
        ``observations.view(k)`` and ``masks[k]``, in one compiled call (int64, shape
        ``(B,)``). ``ValueError`` (naming this player) for masks that do not fit the
        batch or a row that allows nothing."""
        mask = batch_masks("ExpertPlayer", observations, masks)
        b = observations
        out = np.empty(len(b), dtype=np.int64)
        expert_kernel(
            b.seat,
            b.hand,
            b.hand_len,
            b.pile,
            b.pile_len,
            b.known,
            b.discard_counts,
            b.lives,
            b.active,
            b.knocker,
            mask,
            *self.kernel_tables(b.rules),
            out,
        )
        return checked_actions("ExpertPlayer", out)

    def kernel_tables(self, rules: Rules) -> tuple:
        """The arguments :func:`~agents.expert_batch.expert_kernel` takes after the
        masks, for this player on ``rules``: its tables (built once per rules) and
        parameters (for callers that run the kernel inside their own, e.g. search)."""
        if rules is not self._batch_rules:
            self._batch = _batch_tables(
                rules.deck,
                rules.three_of_a_kind,
                float(self.opp_knock_at),
                self.horizon,
                float(self.blitz_bonus),
            )
            self._batch_rules = rules
        t = self._batch
        return (t.deck_bits, t.pot, t.vbin, t.value, t.ge, self._float_params(), self._int_params(rules))

    def _float_params(self) -> np.ndarray:
        """The kernel's float parameters (slots ``F_*`` of :mod:`agents.expert_batch`)."""
        f = np.empty(NUM_F, dtype=np.float64)
        f[F_KNOCK_RISK] = self.knock_risk
        f[F_LAST_LIFE_CARE] = self.last_life_care
        f[F_FEED_WEIGHT] = self.feed_weight
        return f

    def _int_params(self, rules: Rules) -> np.ndarray:
        """The kernel's rules switches and knocker floor (slots ``I_*``)."""
        i = np.empty(NUM_I, dtype=np.int64)
        i[I_FREE_RIDE] = rules.free_ride
        i[I_PENALTY] = rules.knocker_penalty
        i[I_TIE_SAFE] = rules.knocker_tie == "knocker_safe"
        i[I_TIE_PAYS] = rules.knocker_tie == "knocker_pays"
        i[I_RETURN] = rules.allow_discard_return
        i[I_BLITZ_LATE] = rules.blitz_after_knock
        i[I_MAY_KNOCK] = rules.scoring != "chips"
        i[I_FLOOR_BIN] = round(2 * self.knocker_floor)
        return i

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _turns(v: PlayerView) -> list[int]:
        """Turns each seat has completed this round (one discard per drawing turn)."""
        counts = [0] * v.num_players
        for seat, _ in v.discards:
            counts[seat] += 1
        return counts

    def _feed_penalty(self, v: PlayerView, card: int, nxt: int) -> float:
        """Potential points lost by handing ``card`` to seat ``nxt``: proportional to
        the card's value when ``nxt`` is known to hold that suit, large for a 31."""
        if nxt < 0 or nxt == v.seat:
            return 0.0
        suit = card // 13
        held = [c for c in v.known_of(nxt) if c // 13 == suit]
        if not held:
            return 0.0
        if len(held) == 2 and CARD_VALUES[held[0]] + CARD_VALUES[held[1]] + CARD_VALUES[card] == 31:
            return 5.0
        return self.feed_weight * CARD_VALUES[card]

    # ------------------------------------------------------------------ knocking
    def _should_knock(self, v: PlayerView, t: _Tables) -> bool:
        """Whether the expected lives lost by knocking now is below the threshold."""
        a, b, c = v.hand
        mine = t.vbin[a * PAIR_STRIDE + b * NUM_CARDS + c]
        turns = self._turns(v)
        gt = ge = 1.0
        others = 0
        for o in v.players_after():
            others += 1
            base = t.opponent(turns[o] + 1, turns[o] - 1)
            floor = _floor_bin(t, v.known_of(o))
            ge *= _p_ge(base, floor, mine)
            gt *= _p_ge(base, floor, mine + 1)
        rules = v.rules
        lives = v.lives[v.seat]
        spare = lives - (0 if rules.free_ride else 1) + 1  # losses this seat can absorb
        penalty = min(rules.knocker_penalty, spare)
        tie = 0.0 if rules.knocker_tie == "knocker_safe" else 1.0
        loss = penalty * gt + tie * (ge - gt)
        threshold = self.knock_risk / (others + 1)
        if spare <= 1:
            threshold *= self.last_life_care
        return loss < threshold

    # ------------------------------------------------------------------ normal turns
    def _draw(self, v: PlayerView, t: _Tables, mask: np.ndarray) -> int:
        """Stock or discard, by the expected potential of the hand kept."""
        w = self._pot
        a, b, c = v.hand
        ab, ac, bc = a * PAIR_STRIDE + b * NUM_CARDS, a * PAIR_STRIDE + c, b * NUM_CARDS + c
        now = w[ab + c]
        top = v.top_discard
        take = -1.0
        if top >= 0 and mask[TAKE_DISCARD]:
            take = max(w[top * PAIR_STRIDE + bc], w[ac + top * NUM_CARDS], w[ab + top])
            if v.rules.allow_discard_return:
                take = max(take, now)
        if not mask[DRAW_STOCK]:
            return TAKE_DISCARD if mask[TAKE_DISCARD] else STAND
        unseen = v.unseen()
        if take < 0 or not unseen:
            return DRAW_STOCK
        total = 0.0
        for u in unseen:
            total += max(now, w[u * PAIR_STRIDE + bc], w[ac + u * NUM_CARDS], w[ab + u])
        return TAKE_DISCARD if take > total / len(unseen) else DRAW_STOCK

    def _discard(self, v: PlayerView, t: _Tables, mask: np.ndarray) -> int:
        """The legal discard keeping the most potential, less the feeding penalty."""
        w = self._pot
        after = v.players_after()
        nxt = after[0] if after else -1
        hand = v.hand
        best, best_action = -1e9, -1
        for card in sorted(hand):
            action = DISCARD_BASE + card
            if not mask[action]:
                continue
            x, y, z = [h for h in hand if h != card]
            score = w[x * PAIR_STRIDE + y * NUM_CARDS + z] - self._feed_penalty(v, card, nxt)
            if score > best:
                best, best_action = score, action
        return best_action

    # ------------------------------------------------------------------ last turn
    def _lose_table(self, v: PlayerView, t: _Tables) -> list[float]:
        """P(this seat loses the showdown) for each value bin it could end with."""
        turns = self._turns(v)
        rules = v.rules
        knocker = v.knocker
        lose = [1.0] * NUM_BINS
        to_play = True  # seats after this one, up to the knocker, still have their turn
        for o in v.players_after():
            if o == knocker:
                to_play = False
                base = t.opponent(turns[o], -1)
                floor = max(_floor_bin(t, v.known_of(o)), round(2 * self.knocker_floor))
                floor = min(floor, 62)
                ge = _truncated(base, floor)
                if rules.knocker_tie == "knocker_pays":
                    ge = ge[1:] + [0.0]  # a tie with the knocker costs only the knocker
            else:
                if to_play:
                    base = t.opponent(turns[o] + 1, turns[o] - 1)
                else:
                    base = t.opponent(turns[o], turns[o] - 2)
                ge = _truncated(base, _floor_bin(t, v.known_of(o)))
            lose = [x * y for x, y in zip(lose, ge, strict=True)]
        if rules.blitz_after_knock:
            lose[62] = 0.0
        return lose

    def _last_draw(self, v: PlayerView, t: _Tables, mask: np.ndarray) -> int:
        """Stand, draw or take on the last turn: the lowest chance of losing."""
        lose = self._lose_table(v, t)
        vb = t.vbin
        a, b, c = v.hand
        ab, ac, bc = a * PAIR_STRIDE + b * NUM_CARDS, a * PAIR_STRIDE + c, b * NUM_CARDS + c
        now = lose[vb[ab + c]]
        options: list[tuple[float, int]] = []
        if mask[DRAW_STOCK]:
            unseen = v.unseen()
            total = 0.0
            for u in unseen:
                total += min(
                    now, lose[vb[u * PAIR_STRIDE + bc]], lose[vb[ac + u * NUM_CARDS]], lose[vb[ab + u]]
                )
            options.append((total / len(unseen) if unseen else now, DRAW_STOCK))
        top = v.top_discard
        if top >= 0 and mask[TAKE_DISCARD]:
            take = min(lose[vb[top * PAIR_STRIDE + bc]], lose[vb[ac + top * NUM_CARDS]], lose[vb[ab + top]])
            if v.rules.allow_discard_return:
                take = min(take, now)
            options.append((take, TAKE_DISCARD))
        if mask[STAND]:
            options.append((now + 1e-9, STAND))
        if not options:
            return int(np.flatnonzero(mask)[0])
        return min(options)[1]

    def _last_discard(self, v: PlayerView, t: _Tables, mask: np.ndarray) -> int:
        """The legal discard with the lowest chance of losing; ties: feed the next
        player least (if it still plays), then keep the higher value."""
        lose = self._lose_table(v, t)
        after = v.players_after()
        nxt = after[0] if after and after[0] != v.knocker else -1
        hand = v.hand
        best, best_action = None, -1
        for card in sorted(hand):
            action = DISCARD_BASE + card
            if not mask[action]:
                continue
            x, y, z = [h for h in hand if h != card]
            idx = x * PAIR_STRIDE + y * NUM_CARDS + z
            key = (-lose[t.vbin[idx]], -self._feed_penalty(v, card, nxt), t.value[idx])
            if best is None or key > best:
                best, best_action = key, action
        return best_action
