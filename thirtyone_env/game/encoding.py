"""Observation encoders: one seat's view of a game as arrays.

Two encodings carry the same content:

- ``"flat"``: one ``float32`` vector in ``[0, 1]``; :class:`ObsLayout` names its slices
  (``layout.part(obs, "hand")`` gives that part, reshaped).
- ``"dict"``: the same parts as a dict of 1-D arrays (for SB3's ``MultiInputPolicy``;
  two-row parts are flattened row after row).

Seats are relative to the observer: row 0 is the observer, row 1 the player after
them clockwise, and so on. Parts (``n`` = number of players):

| part              | shape     | meaning                                                   |
|-------------------|-----------|-----------------------------------------------------------|
| ``hand``          | 52        | own cards (four while discarding)                         |
| ``drawn``         | 52        | the card just drawn (discard phase), else zeros           |
| ``top_discard``   | 52        | the card on top of the discard pile                       |
| ``dead_cards``    | 52        | cards buried in the discard pile (below the top)          |
| ``discard_history``| n x 52   | per seat: cards it discarded this round, weighted by how  |
|                   |           | recently: ``1 / (1 + k)`` with k later discards at table  |
| ``known_cards``   | (n-1) x 52| per opponent: cards seen taken from the discard pile and  |
|                   |           | not discarded since (certainly in that hand)              |
| ``phase``         | 4         | to draw/knock, to discard, knock pending, round over      |
| ``knocker``       | n         | one-hot seat of the knocker (zeros: no knock)             |
| ``dealer``        | n         | one-hot seat of the dealer                                |
| ``lives``         | n         | lives / starting lives                                    |
| ``active``        | n         | still in the game                                         |
| ``stock_size``    | 1         | cards in the stock / deck size                            |
| ``turn``          | 1         | own turn number this round / 20 (capped at 1)             |
| ``hand_values``   | 4         | own hand, scored / 31: its value now (best three of four  |
|                   |           | while discarding); with the top discard taken; expected   |
|                   |           | after a stock draw (over the unseen cards); the chance a  |
|                   |           | stock draw raises it (the last three: 0 while discarding) |
| ``discard_values``| 52        | while discarding: at each card in hand, the value / 31 of |
|                   |           | the three cards kept if it goes (lines up with the discard|
|                   |           | actions); else zeros                                      |

``hand_values`` and ``discard_values`` are functions of the parts above (features a
network would otherwise have to learn: the scoring table of Thirty-One); the unseen
cards are the deck less the own hand, the discard pile, the known opponent cards
and any face-up table card. Under Brag ranking values are scaled by the best Brag
hand instead of 31 (and the draw features stay 0: nobody draws in Stop the Bus).

No part depends on a card the observer cannot see: opponents' hands enter only
through ``known_cards``; the stock's order never enters.

The variants add parts (the stock game's layout is unchanged); ``T`` table hands
(banking 1, the widow; Switch 2; Stop the Bus 1). ``score`` and ``pot`` come with
points or chips scoring, the others with a table variant:

| part              | shape     | meaning                                                   |
|-------------------|-----------|-----------------------------------------------------------|
| ``hand_slots``    | 3 x 52    | own card in each hand slot (slot actions name slots)      |
| ``table_cards``   | 3T x 52   | the face-up card in each table slot                       |
| ``table_hidden``  | 3T        | 1 where a table slot holds a face-down card               |
| ``choice``        | 2 x 52    | Switch: the dealer's two dealt hands while choosing       |
| ``muck``          | 52        | face-up cards put out of play (Switch renewals)           |
| ``variant_phase`` | 3         | to choose a hand (Switch dealer); the turn goes on; you   |
|                   |           | are offered the Switch carry-over (your last hand, still  |
|                   |           | in ``hand``/``hand_slots``, laid face up as table hand 0) |
| ``move_values``   | 113       | per action id: the value / scale of the own hand after    |
|                   |           | that exchange (a widow, swap, whole-hand or bus move)     |
|                   |           | where every card it takes lies face up; else 0 (lines up  |
|                   |           | with the actions, as ``discard_values`` does with cards)  |
| ``score``         | n         | points / (6 x rounds) or chips / (all chips), per seat    |
| ``pot``           | 1         | chips in the pot / all chips                              |

``ObsLayout(..., opponent_history=True)`` (the envs' ``opponent_history`` option; off
by default) adds one more part, last, so the layout without it is its head: what a
real table shows of how each opponent plays, over this game's settled rounds (the
seat's :data:`~thirtyone_env.game.state.T_ROUNDS`... tally, ``GameState.tally``):

| part              | shape     | meaning                                                   |
|-------------------|-----------|-----------------------------------------------------------|
| ``opponent_history``| (n-1) x 6 | per opponent: rounds dealt in / 10 (capped at 1); knocks  |
|                   |           | per round; its mean own turn number at a knock / 20; the  |
|                   |           | mean hand value it showed when it knocked and at every    |
|                   |           | showdown (/ the value scale); discard-pile draws per draw |
|                   |           | (this round's draws too). 0 where nothing was seen yet    |

Only what every seat saw enters: knocks, turn numbers, draws from the pile, and hands
shown at a showdown (a blitz or a void round shows none).
"""

from __future__ import annotations

import numpy as np

from thirtyone_env.game import events as ev
from thirtyone_env.game import state as st
from thirtyone_env.game.actions import NUM_ACTIONS_ALL, decode
from thirtyone_env.game.cards import NUM_CARDS, PAIR_STRIDE, hand_table
from thirtyone_env.game.engine import CARRY, CHOOSE, CONTINUE, DISCARD, DRAW, ROUND_OVER, GameState
from thirtyone_env.game.rules import Rules

ENCODINGS = ("flat", "dict")
#: Every part a layout may have, in the order of the flat encoding (a layout holds
#: those its table has, in this order). A network that reads the dict encoding's parts
#: in another order (SB3's ``MultiInputPolicy`` joins them in the dict space's sorted
#: key order) is played on the flat encoding by putting its inputs in this order.
PART_ORDER = (
    "hand", "drawn", "top_discard", "dead_cards", "discard_history", "known_cards", "phase",
    "knocker", "dealer", "lives", "active", "stock_size", "turn", "hand_values", "discard_values",
    "hand_slots", "table_cards", "table_hidden", "choice", "muck", "variant_phase", "move_values",
    "score", "pot", "opponent_history",
)  # fmt: skip
TURN_SCALE = 20
HISTORY_FEATURES = 6  #: numbers per opponent in ``opponent_history``
HISTORY_ROUNDS = 10  #: ``opponent_history``'s round count is rounds / this (capped at 1)
#: What a player may ask for (its ``obs_encoding``): a view (:mod:`thirtyone_env.game.views`)
#: or an encoding here, with or without the history part.
PLAYER_ENCODINGS = ("view", "flat", "dict", "flat+history", "dict+history")
#: A player's ``obs_encoding`` with this ending asks for the observation with the
#: ``opponent_history`` part (``"flat+history"``: a model trained with it).
WITH_HISTORY = "+history"


def split_encoding(encoding: str, layout: ObsLayout) -> tuple[str, ObsLayout]:
    """A player's ``obs_encoding`` as (the encoding, the layout it is read in): an
    encoding ending in :data:`WITH_HISTORY` is read in ``layout`` with the history part."""
    if encoding.endswith(WITH_HISTORY):
        return encoding[: -len(WITH_HISTORY)], layout.with_history()
    return encoding, layout


class ObsLayout:
    """Names, shapes and offsets of the parts of the flat observation."""

    def __init__(self, num_players: int, rules: Rules | None = None, opponent_history: bool = False) -> None:
        n = num_players
        self.num_players = n
        rules = rules or Rules()
        self.rules = rules
        self.opponent_history = bool(opponent_history)
        self._with_history: ObsLayout | None = None
        self.variant = rules.table != "stock" or rules.scoring != "lives"
        self.value_scale = 31.0 if rules.hand_ranking == "points" else float(max(hand_table(rules)))
        self.shapes: dict[str, tuple[int, ...]] = {
            "hand": (52,),
            "drawn": (52,),
            "top_discard": (52,),
            "dead_cards": (52,),
            "discard_history": (n, 52),
            "known_cards": (n - 1, 52),
            "phase": (4,),
            "knocker": (n,),
            "dealer": (n,),
            "lives": (n,),
            "active": (n,),
            "stock_size": (1,),
            "turn": (1,),
            "hand_values": (4,),
            "discard_values": (52,),
        }
        if rules.table != "stock":
            t = {"widow": 1, "switch": 2, "bus": 1}[rules.table]
            self.shapes.update(
                {
                    "hand_slots": (3, 52),
                    "table_cards": (3 * t, 52),
                    "table_hidden": (3 * t,),
                    "choice": (2, 52),
                    "muck": (52,),
                    "variant_phase": (3,),
                    "move_values": (NUM_ACTIONS_ALL,),
                }
            )
        if rules.scoring != "lives":
            self.shapes.update({"score": (n,), "pot": (1,)})
        if self.opponent_history:  # last: the layout without it is this one's head
            self.shapes["opponent_history"] = (n - 1, HISTORY_FEATURES)
        self.offsets: dict[str, int] = {}
        self.slices: dict[str, slice] = {}
        pos = 0
        for name, shape in self.shapes.items():
            size = int(np.prod(shape))
            self.offsets[name] = pos
            self.slices[name] = slice(pos, pos + size)
            pos += size
        self.size = pos

    def with_history(self) -> ObsLayout:
        """This layout with the ``opponent_history`` part (itself if it has it)."""
        if self.opponent_history:
            return self
        if self._with_history is None:
            self._with_history = ObsLayout(self.num_players, self.rules, opponent_history=True)
        return self._with_history

    def part(self, obs: np.ndarray, name: str) -> np.ndarray:
        """The named part of a flat observation, in its shape (a view)."""
        if name not in self.shapes:
            raise KeyError(f"unknown observation part {name!r}; parts are {list(self.shapes)}")
        return obs[self.slices[name]].reshape(self.shapes[name])

    def split(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """All parts of a flat observation as a dict (views)."""
        return {name: self.part(obs, name) for name in self.shapes}

    def describe(self) -> str:
        """A table of the layout, one line per part."""
        return "\n".join(
            f"{n:<16} {str(self.shapes[n]):<10} [{s.start}:{s.stop}]" for n, s in self.slices.items()
        )


def encode_flat(s: GameState, seat: int, layout: ObsLayout) -> np.ndarray:
    """The flat observation of ``seat``."""
    o = layout.offsets
    n = s.num_players
    obs = np.zeros(layout.size, dtype=np.float32)
    idx = [o["hand"] + c for c in s.hands[seat]]
    mine = s.current == seat
    phase = s.phase
    if mine and phase == DISCARD:
        idx.append(o["drawn"] + s.drawn)
    pile = s.discard
    if pile:
        idx.append(o["top_discard"] + pile[-1])
        base = o["dead_cards"]
        idx.extend([base + c for c in pile[:-1]])
    base = o["known_cards"] - 52  # row r-1 holds relative seat r
    for p in range(n):
        m = s.known[p]
        if m and p != seat:
            row = base + ((p - seat) % n) * 52
            while m:
                low = m & -m
                idx.append(row + low.bit_length() - 1)
                m ^= low
    if mine and phase == DRAW:
        idx.append(o["phase"])
    elif mine and phase == DISCARD:
        idx.append(o["phase"] + 1)
    if s.knocker >= 0:
        idx.append(o["phase"] + 2)
        idx.append(o["knocker"] + (s.knocker - seat) % n)
    if phase >= ROUND_OVER:
        idx.append(o["phase"] + 3)
    idx.append(o["dealer"] + (s.dealer - seat) % n)
    active = s.active
    for p in range(n):
        if active[p]:
            idx.append(o["active"] + (p - seat) % n)
    obs[idx] = 1.0

    n_discards = len(s.discards)
    if n_discards:
        seats = np.asarray(s.disc_seat)
        cards = np.flatnonzero(seats >= 0)
        age = (n_discards - 1) - np.asarray(s.disc_order)[cards]
        rel = (seats[cards] - seat) % n
        obs[o["discard_history"] + rel * 52 + cards] = 1.0 / (1.0 + age)
    start_lives = s.rules.lives
    lv = o["lives"]
    for p in range(n):
        obs[lv + (p - seat) % n] = min(1.0, s.lives[p] / start_lives)
    obs[o["stock_size"]] = len(s.stock) / len(s.rules.deck_cards)
    obs[o["turn"]] = min(1.0, s.player_turns[seat] / TURN_SCALE)
    _encode_values(s, seat, obs, o, layout.value_scale)
    if layout.variant:
        _encode_variant(s, seat, obs, o)
    if layout.opponent_history:
        base = o["opponent_history"] - HISTORY_FEATURES  # row r-1 holds relative seat r
        for p in range(n):
            if p != seat:
                row = base + ((p - seat) % n) * HISTORY_FEATURES
                obs[row : row + HISTORY_FEATURES] = history_features(s.tally[p], layout.value_scale)
    return obs


def history_features(t: list[int], scale: float) -> tuple[float, ...]:
    """One seat's ``opponent_history`` row from its tally (``GameState.tally[seat]``):
    written once, compiled for the kernels too (plain arithmetic on numbers)."""
    rounds, knocks, shown, showdowns, draws = (
        t[st.T_ROUNDS], t[st.T_KNOCKS], t[st.T_KNOCKS_SHOWN], t[st.T_SHOWDOWNS], t[st.T_DRAWS],
    )  # fmt: skip
    return (
        min(1.0, rounds / HISTORY_ROUNDS),
        knocks / rounds if rounds > 0 else 0.0,
        min(1.0, t[st.T_KNOCK_TURNS] / knocks / TURN_SCALE) if knocks > 0 else 0.0,
        t[st.T_KNOCK_VALUE2] / (2.0 * shown) / scale if shown > 0 else 0.0,
        t[st.T_SHOWN_VALUE2] / (2.0 * showdowns) / scale if showdowns > 0 else 0.0,
        t[st.T_PICKUPS] / draws if draws > 0 else 0.0,
    )


def _encode_variant(s: GameState, seat: int, obs: np.ndarray, o: dict[str, int]) -> None:
    """The variant parts (see the module doc)."""
    n = s.num_players
    if s.rules.table != "stock":
        _encode_table(s, seat, obs, o)
    rules = s.rules
    if rules.scoring == "points":
        scale = 6.0 * rules.num_rounds
    elif rules.scoring == "chips":
        scale = float(rules.chips * n)
    else:
        scale = 0.0
    if scale:
        for p in range(n):
            obs[o["score"] + (p - seat) % n] = min(1.0, s.score[p] / scale)
        obs[o["pot"]] = min(1.0, s.pot / scale)


def _encode_table(s: GameState, seat: int, obs: np.ndarray, o: dict[str, int]) -> None:
    """Hand slots, table cards, the Switch choice, the public muck."""
    hand = s.hands[seat]
    if len(hand) == 3:
        for i, card in enumerate(hand):
            obs[o["hand_slots"] + i * 52 + card] = 1.0
    if s.phase == CARRY:  # the offer comes before the deal: no table yet
        if s.current == seat:
            obs[o["variant_phase"] + 2] = 1.0
        return
    k = 0
    for cards, ups in zip(s.table, s.table_up, strict=True):
        for card, up in zip(cards, ups, strict=True):
            if card >= 0:
                if up:
                    obs[o["table_cards"] + k * 52 + card] = 1.0
                else:
                    obs[o["table_hidden"] + k] = 1.0
            k += 1
    mine = s.current == seat
    if mine and s.phase == CHOOSE and s.dealt_pair is not None:
        for r, h in enumerate(s.dealt_pair):
            for card in h:
                obs[o["choice"] + r * 52 + card] = 1.0
        obs[o["variant_phase"]] = 1.0
    if mine and s.phase == CONTINUE:
        obs[o["variant_phase"] + 1] = 1.0
    m = s.muck_up
    while m:
        low = m & -m
        obs[o["muck"] + low.bit_length() - 1] = 1.0
        m ^= low
    if len(hand) == 3:
        _encode_move_values(s, hand, obs, o["move_values"])


#: Per table variant, the move kinds that exchange cards with the table.
EXCHANGE_KINDS = {"widow": (ev.WIDOW,), "switch": (ev.SWAP, ev.SWAP_HAND), "bus": (ev.BUS,)}
#: Per table variant, its exchanges: action id and (hand slot, table hand, table slot)
#: pairs, decoded once.
EXCHANGES = {
    table: tuple((a, decode(a).pairs) for a in range(NUM_ACTIONS_ALL) if decode(a).kind in kinds)
    for table, kinds in EXCHANGE_KINDS.items()
}


def _encode_move_values(s: GameState, hand: list[int], obs: np.ndarray, base: int) -> None:
    """``move_values``: the hand each exchange leaves, scored, where every card it takes
    lies face up (a face-down card's value is unknown: 0 there)."""
    values = hand_table(s.rules)
    scale = 31.0 if s.rules.hand_ranking == "points" else float(max(values))
    table, ups = s.table, s.table_up
    for action, pairs in EXCHANGES[s.rules.table]:
        after = list(hand)
        for slot, t, j in pairs:
            if t >= len(table) or j >= len(table[t]) or table[t][j] < 0 or not ups[t][j]:
                break
            after[slot] = table[t][j]
        else:
            a, b, c = after
            obs[base + action] = values[a * PAIR_STRIDE + b * NUM_CARDS + c] / scale


def _encode_values(s: GameState, seat: int, obs: np.ndarray, o: dict[str, int], scale: float) -> None:
    """Fill ``hand_values`` and ``discard_values`` (see the module doc)."""
    values = hand_table(s.rules)
    hand = s.hands[seat]
    hv = o["hand_values"]
    if len(hand) == 4:
        a, b, c, d = hand
        dv = o["discard_values"]
        kept = (
            values[b * PAIR_STRIDE + c * NUM_CARDS + d],
            values[a * PAIR_STRIDE + c * NUM_CARDS + d],
            values[a * PAIR_STRIDE + b * NUM_CARDS + d],
            values[a * PAIR_STRIDE + b * NUM_CARDS + c],
        )
        for card, value in zip(hand, kept, strict=True):
            obs[dv + card] = value / scale
        obs[hv] = max(kept) / scale
        return
    if len(hand) != 3:
        return
    if s.rules.table not in ("stock", "widow"):
        a, b, c = hand
        obs[hv] = values[a * PAIR_STRIDE + b * NUM_CARDS + c] / scale
        return
    a, b, c = hand
    now = values[a * PAIR_STRIDE + b * NUM_CARDS + c]
    ab, ac, bc = (
        a * PAIR_STRIDE + b * NUM_CARDS,
        a * PAIR_STRIDE + c * NUM_CARDS,
        b * PAIR_STRIDE + c * NUM_CARDS,
    )
    seen = (1 << a) | (1 << b) | (1 << c)
    for card in s.discard:
        seen |= 1 << card
    for p, mask in enumerate(s.known):
        if p != seat:
            seen |= mask
    for cards, ups in zip(s.table, s.table_up, strict=True):
        for card, up in zip(cards, ups, strict=True):
            if up:
                seen |= 1 << card
    total = better = count = 0
    for u in s.rules.deck_cards:
        if seen >> u & 1:
            continue
        v = max(values[bc + u], values[ac + u], values[ab + u])
        count += 1
        if v > now:
            total += v
            better += 1
        else:
            total += now
    obs[hv] = now / scale
    if s.discard:
        top = s.discard[-1]
        obs[hv + 1] = max(values[bc + top], values[ac + top], values[ab + top]) / scale
    if count:
        obs[hv + 2] = total / count / scale
        obs[hv + 3] = better / count


def encode_dict(s: GameState, seat: int, layout: ObsLayout) -> dict[str, np.ndarray]:
    """The dict observation of ``seat``: the flat parts as 1-D arrays."""
    obs = encode_flat(s, seat, layout)
    return {name: obs[sl] for name, sl in layout.slices.items()}
