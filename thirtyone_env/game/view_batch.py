"""Many seats' views at once, as arrays: the batched :class:`~thirtyone_env.game.views.PlayerView`.

A player that decides for many games in one call (``act_batch(observations, masks)``)
and reads views gets a :class:`ViewBatch`: row ``k`` holds what the seat to act in game
``k`` can see, and no more (its own hand, the face-up cards and who played them, the
cards seen taken from the pile, lives, the knock, the stock's size). The vector env's
kernels fill one for the games waiting on a player (:mod:`thirtyone_env.envs.batch_kernels`);
:meth:`ViewBatch.from_views` builds one from views of the Python engine, and
:meth:`ViewBatch.view` turns a row back into a ``PlayerView``, so a batched player and
its one-game ``act`` can be held to the same decisions.

The stock game only (the table the kernels play): no table hands, muck or score.
Arrays may be views into buffers the caller reuses: a player must not keep them past
its call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from thirtyone_env.game.cards import NUM_CARDS
from thirtyone_env.game.engine import DISCARD, DRAW, PHASE_NAMES
from thirtyone_env.game.rules import Rules
from thirtyone_env.game.views import PlayerView


@dataclass(frozen=True)
class ViewBatch:
    """``len(self)`` seats' views, one row each (all seats to act, in the stock game).

    Card lists are padded with -1 past their length; seat-indexed arrays have
    ``num_players`` columns in absolute seat order.
    """

    rules: Rules  #: the table's rules (one for the batch)
    num_players: int  #: seats at the table
    seat: np.ndarray  #: (B,) the deciding seat
    phase: np.ndarray  #: (B,) engine phase code: ``DRAW`` or ``DISCARD``
    hand: np.ndarray  #: (B, 4) own cards in hand order (3 while drawing)
    hand_len: np.ndarray  #: (B,) 3 or 4
    drawn: np.ndarray  #: (B,) the card drawn this turn (-1 while drawing)
    took: np.ndarray  #: (B,) the card taken from the pile this turn (-1 if none)
    pile: np.ndarray  #: (B, 52) the discard pile, bottom to top (top = ``pile_len - 1``)
    pile_len: np.ndarray  #: (B,)
    known: np.ndarray  #: (B, n) int64 bitmasks: cards seen taken and not discarded since
    discard_counts: np.ndarray  #: (B, n) discards each seat made this round (its completed draws)
    discard_log: np.ndarray  #: (B, L) this round's discards in order, ``seat * 52 + card``; L may be 0
    num_discards: np.ndarray  #: (B,) discards this round, all seats
    lives: np.ndarray  #: (B, n)
    active: np.ndarray  #: (B, n) bool: still in the game
    dealer: np.ndarray  #: (B,)
    knocker: np.ndarray  #: (B,) -1 if nobody knocked
    stock_size: np.ndarray  #: (B,)
    turn: np.ndarray  #: (B,) the deciding seat's turn number this round (1 = first)
    round_no: np.ndarray  #: (B,)
    turns_played: np.ndarray  #: (B,) turns started this round, all seats

    def __len__(self) -> int:
        return len(self.seat)

    @property
    def top_discard(self) -> np.ndarray:
        """(B,) the top of the pile, -1 if it is empty."""
        rows = np.arange(len(self))
        top = self.pile[rows, np.maximum(self.pile_len - 1, 0)]
        return np.where(self.pile_len > 0, top, -1)

    def view(self, k: int) -> PlayerView:
        """Row ``k`` as the :class:`PlayerView` the Python engine gives that seat (needs
        the discard log: raises ``ValueError`` when it was not kept or is too short)."""
        nd = int(self.num_discards[k])
        if nd > self.discard_log.shape[1]:
            raise ValueError(
                f"view {k}: {nd} discards this round, the batch kept {self.discard_log.shape[1]}; "
                "a player reading PlayerView.discards needs the whole log"
            )
        log = self.discard_log[k, :nd].tolist()
        plen = int(self.pile_len[k])
        pile = tuple(self.pile[k, :plen].tolist())
        phase = int(self.phase[k])
        return PlayerView(
            seat=int(self.seat[k]),
            num_players=self.num_players,
            rules=self.rules,
            phase=PHASE_NAMES[phase],
            my_turn=True,
            hand=tuple(self.hand[k, : int(self.hand_len[k])].tolist()),
            drawn=int(self.drawn[k]) if phase == DISCARD else -1,
            took=int(self.took[k]),
            top_discard=pile[-1] if pile else -1,
            discard_pile=pile,
            discards=tuple((x // NUM_CARDS, x % NUM_CARDS) for x in log),
            known_masks=tuple(int(m) for m in self.known[k]),
            lives=tuple(int(x) for x in self.lives[k]),
            active=tuple(bool(x) for x in self.active[k]),
            dealer=int(self.dealer[k]),
            knocker=int(self.knocker[k]),
            stock_size=int(self.stock_size[k]),
            turn=int(self.turn[k]),
            round_no=int(self.round_no[k]),
            turns_played=int(self.turns_played[k]),
        )

    @classmethod
    def from_views(cls, views: Sequence[PlayerView]) -> ViewBatch:
        """The batch of these views (all of one table: the same rules and seat count,
        the stock game, each seat to act in a draw or discard phase)."""
        if not views:
            raise ValueError("from_views: no views")
        first = views[0]
        rules, n = first.rules, first.num_players
        B = len(views)
        longest = max(len(v.discards) for v in views)
        out = _empty(rules, n, B, longest)
        codes = {PHASE_NAMES[DRAW]: DRAW, PHASE_NAMES[DISCARD]: DISCARD}
        for k, v in enumerate(views):
            if v.rules != rules or v.num_players != n:
                raise ValueError(f"from_views: view {k} is of another table than view 0")
            if v.rules.table != "stock" or v.phase not in codes or not v.my_turn:
                raise ValueError(
                    f"from_views: view {k} is not a stock-game seat to draw or discard "
                    f"(table {v.rules.table!r}, phase {v.phase!r}, my_turn {v.my_turn})"
                )
            out.seat[k] = v.seat
            out.phase[k] = codes[v.phase]
            out.hand[k, : len(v.hand)] = v.hand
            out.hand_len[k] = len(v.hand)
            out.drawn[k] = v.drawn
            out.took[k] = v.took
            out.pile[k, : len(v.discard_pile)] = v.discard_pile
            out.pile_len[k] = len(v.discard_pile)
            out.known[k] = v.known_masks
            for j, (seat, card) in enumerate(v.discards):
                out.discard_counts[k, seat] += 1
                out.discard_log[k, j] = seat * NUM_CARDS + card
            out.num_discards[k] = len(v.discards)
            out.lives[k] = v.lives
            out.active[k] = v.active
            out.dealer[k] = v.dealer
            out.knocker[k] = v.knocker
            out.stock_size[k] = v.stock_size
            out.turn[k] = v.turn
            out.round_no[k] = v.round_no
            out.turns_played[k] = v.turns_played
        return out


def _empty(rules: Rules, n: int, B: int, log: int) -> ViewBatch:
    """A batch of ``B`` rows, card lists padded with -1."""

    def ints(*shape: int, fill: int = 0) -> np.ndarray:
        return np.full(shape, fill, dtype=np.int64)

    return ViewBatch(
        rules=rules,
        num_players=n,
        seat=ints(B),
        phase=ints(B),
        hand=ints(B, 4, fill=-1),
        hand_len=ints(B),
        drawn=ints(B, fill=-1),
        took=ints(B, fill=-1),
        pile=ints(B, NUM_CARDS, fill=-1),
        pile_len=ints(B),
        known=ints(B, n),
        discard_counts=ints(B, n),
        discard_log=ints(B, log, fill=-1),
        num_discards=ints(B),
        lives=ints(B, n),
        active=np.zeros((B, n), dtype=np.bool_),
        dealer=ints(B),
        knocker=ints(B, fill=-1),
        stock_size=ints(B),
        turn=ints(B),
        round_no=ints(B),
        turns_played=ints(B),
    )


def empty_batch(rules: Rules, num_players: int, size: int, log: int = 0) -> ViewBatch:
    """Buffers for ``size`` rows (the kernels fill them; :func:`batch_rows` slices)."""
    return _empty(rules, num_players, size, log)


def batch_rows(buffers: ViewBatch, start: int, stop: int) -> ViewBatch:
    """Rows ``start:stop`` of ``buffers`` as a batch of their own, copied: a player
    handed a view into the shared buffers could read, through its ``base``, the rows
    written for other seats (their hands)."""
    fields = {
        name: (value[start:stop].copy() if isinstance(value, np.ndarray) else value)
        for name, value in buffers.__dict__.items()
    }
    return ViewBatch(**fields)
