"""The computer player of the open-source Windows game Blitz31.

It collects a *master suit*: the suit worth most in its hand (ties: the higher suit
index). It takes the top discard only when that card is of the master suit and raises
the hand value, else draws from the stock; it throws the card that leaves the best
hand, preferring to keep master-suit cards; it knocks with a hand worth more than 25
while at least 20 cards remain in the stock, and more than 29 after.

``act_batch(observations, masks)`` decides for every row of a stock-game
:class:`~thirtyone_env.game.view_batch.ViewBatch` in one compiled call
(:mod:`agents.expert_batch`): row ``k`` gets exactly the move
``act(observations.view(k), masks[k])`` plays.
"""

from __future__ import annotations

import numpy as np

from agents.expert_batch import batch_masks, blitz31_kernel, checked_actions, hand_array
from thirtyone_env.game.actions import DISCARD_BASE, DRAW_STOCK, KNOCK, STAND, TAKE_DISCARD
from thirtyone_env.game.cards import CARD_VALUES, NUM_CARDS, PAIR_STRIDE, hand_table, value_with
from thirtyone_env.game.table_strategy import table_move
from thirtyone_env.game.view_batch import ViewBatch
from thirtyone_env.game.views import PlayerView, as_view


def master_suit(hand: tuple[int, ...]) -> int:
    """The suit with the highest card-value sum in ``hand`` (ties: higher suit)."""
    sums = [0, 0, 0, 0]
    for c in hand:
        sums[c // 13] += CARD_VALUES[c]
    return max(range(4), key=lambda s: (sums[s], s))


class Blitz31Player:
    """Blitz31's computer player (see the module doc)."""

    obs_encoding = "view"

    def __init__(self, early_knock: float = 25, late_knock: float = 29, late_stock: int = 20) -> None:
        self.early_knock = early_knock
        self.late_knock = late_knock
        self.late_stock = late_stock

    def act(self, observation: PlayerView, action_mask: np.ndarray) -> int:
        v = as_view(observation, self)
        threshold = self.early_knock if v.stock_size >= self.late_stock else self.late_knock
        if v.rules.table != "stock":  # the variants' table moves
            move = table_move(v, action_mask, threshold + 0.5)
            if move is not None:
                return move
        values = hand_table(v.rules)
        hand = v.hand
        if len(hand) == 4:
            return self._discard(hand, values, action_mask)
        a, b, c = hand
        now = values[a * PAIR_STRIDE + b * NUM_CARDS + c]
        if action_mask[KNOCK] and now > threshold:
            return KNOCK
        top = v.top_discard
        if top >= 0 and action_mask[TAKE_DISCARD]:
            with_top = value_with(hand, top, values)
            if (top // 13 == master_suit(hand) and with_top > now) or not action_mask[DRAW_STOCK]:
                return TAKE_DISCARD
        if action_mask[DRAW_STOCK]:
            return DRAW_STOCK
        return STAND if action_mask[STAND] else TAKE_DISCARD

    def act_batch(self, observations: ViewBatch, masks: np.ndarray) -> np.ndarray:
        """The move of every row of a stock-game batch, as ``act`` plays it for
        ``observations.view(k)`` and ``masks[k]``, in one compiled call (int64, shape
        ``(B,)``). ``ValueError`` (naming this player) for masks that do not fit the
        batch or a row that allows nothing."""
        mask = batch_masks("Blitz31Player", observations, masks)
        b = observations
        thresholds = np.array([self.early_knock, self.late_knock, self.late_stock], dtype=np.float64)
        out = np.empty(len(b), dtype=np.int64)
        blitz31_kernel(
            b.hand, b.hand_len, b.pile, b.pile_len, b.stock_size, mask, hand_array(b.rules), thresholds, out
        )
        return checked_actions("Blitz31Player", out)

    @staticmethod
    def _discard(hand: tuple[int, ...], values: tuple, action_mask: np.ndarray) -> int:
        master = master_suit(hand)
        best_key, best_action = None, -1
        for c in sorted(hand):
            a = DISCARD_BASE + c
            if not action_mask[a]:
                continue
            x, y, z = [h for h in hand if h != c]
            # best value first; then keep master-suit cards; then throw the low card
            key = (values[x * PAIR_STRIDE + y * NUM_CARDS + z], c // 13 != master, -CARD_VALUES[c])
            if best_key is None or key > best_key:
                best_key, best_action = key, a
        return best_action
