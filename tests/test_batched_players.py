"""The expert and blitz31 at batched speed: ``act_batch`` over a
:class:`ViewBatch` plays exactly the moves ``act`` plays, row for row.

The views come from real Python games (every seat's view recorded, whoever plays it:
experts, blitz31, greedy, never-knocking greedy, random), on the presets the vector env
plays and on rules variants that reach every branch: knocks, last turns after a knock
(draw, take, stand, discard), an empty stock with a knock pending, discards that feed a
next player collecting a suit, every knocker-tie rule, last lives, chips scoring (the
expert never knocks on its own). Any view is a valid input for any player, so each
player configuration decides over the whole pool.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from agents.blitz31 import Blitz31Player
from agents.expert import ExpertPlayer
from thirtyone_env.game.actions import DISCARD_BASE, DRAW_STOCK, KNOCK, STAND, TAKE_DISCARD
from thirtyone_env.game.cards import CARD_VALUES
from thirtyone_env.game.policies import GreedyPolicy, RandomPolicy
from thirtyone_env.game.rules import PRESETS, Rules
from thirtyone_env.game.view_batch import ViewBatch, batch_rows
from thirtyone_env.harness.match import play_game

STANDARD = PRESETS["standard"]
#: (rules, table sizes): the kernels' presets and variants for the branches they leave out
TABLES: list[tuple[Rules, tuple[int, ...]]] = [
    (STANDARD, (2, 4, 7)),
    (PRESETS["pagat"], (3, 5)),
    (PRESETS["blitz31"], (4,)),
    (PRESETS["dutch"], (2, 6, 7)),  # 7 seats: a stock of 10, often empty after a knock
    (PRESETS["cut_throat"], (2, 3, 4)),
    (STANDARD.replace(knocker_tie="all_lose", allow_discard_return=True, stock_exhausted="showdown"), (3, 7)),
    (
        STANDARD.replace(
            knocker_tie="knocker_pays_penalty",
            blitz_after_knock=True,
            free_ride=False,
            lives=2,
            knocker_penalty=1,
        ),
        (4,),
    ),
    (PRESETS["pagat"].replace(stand_after_knock=False, knocker_penalty=3, three_of_a_kind=30), (5,)),
    (PRESETS["no_elimination"], (4,)),
    (STANDARD.replace(scoring="chips", max_rounds=30), (3,)),
]
VIEWS_PER_TABLE = 900

#: The players held to their ``act``: defaults and non-default parameters (ints too).
PLAYERS = {
    "expert": ExpertPlayer,
    "expert-h2": lambda: ExpertPlayer(horizon=2, knock_risk=0.3, opp_knock_at=27),
    "expert-odd": lambda: ExpertPlayer(
        horizon=0, knock_risk=1, last_life_care=1, knocker_floor=20.25, feed_weight=0.5, blitz_bonus=0
    ),
    "blitz31": Blitz31Player,
    "blitz31-early": lambda: Blitz31Player(early_knock=24, late_knock=28, late_stock=10),
}


class Recorder:
    """Plays as ``player`` and keeps every (view, mask) it is asked about."""

    obs_encoding = "view"

    def __init__(self, player: object, log: list) -> None:
        self.player = player
        self.log = log

    def reset(self, rng: np.random.Generator) -> None:
        if hasattr(self.player, "reset"):
            self.player.reset(rng)

    def act(self, observation, action_mask):
        self.log.append((observation, action_mask.copy()))
        return self.player.act(observation, action_mask)


def _table_players(n: int, game: int) -> list:
    """A mix of players for game ``game`` at an ``n``-seat table."""
    kinds = [
        ExpertPlayer,
        Blitz31Player,
        GreedyPolicy,
        lambda: GreedyPolicy(knock_at=99),  # never knocks: long rounds, an empty stock
        RandomPolicy,
        lambda: ExpertPlayer(horizon=2, knock_risk=0.3, opp_knock_at=27),
        lambda: Blitz31Player(early_knock=99, late_knock=0, late_stock=3),  # knocks as the stock runs out
    ]
    return [kinds[(game + 2 * s) % len(kinds)]() for s in range(n)]


def _collect(rules: Rules, n: int, seed: int) -> list:
    """Every seat's (view, mask) from games at this table, about VIEWS_PER_TABLE."""
    rng = np.random.default_rng(seed)
    log: list = []
    game = 0
    while len(log) < VIEWS_PER_TABLE:
        play_game([Recorder(p, log) for p in _table_players(n, game)], rng, rules)
        game += 1
    return log


def _known_hands(free: list[int]) -> list[tuple[int, ...]]:
    """Cards an opponent may be known to hold, picked from ``free`` (cards it could
    have taken): its best suit's top three (often a 31), that suit's top two, and
    three of one rank (a three of a kind)."""
    by_suit = [sorted((c for c in free if c // 13 == s), key=lambda c: CARD_VALUES[c]) for s in range(4)]
    best = max(by_suit, key=lambda cards: sum(CARD_VALUES[c] for c in cards[-3:]))
    out = [tuple(best[-3:]), tuple(best[-2:])]
    for rank in range(13):
        same = [c for c in free if c % 13 == rank]
        if len(same) >= 3:
            out.append(tuple(same[:3]))
            break
    return [cards for cards in out if cards]


def _crafted(log: list) -> list:
    """Recorded views with the next seat (or the knocker) known to hold other cards:
    a known 31, two cards of a suit, a three of a kind (rare in real games, and the
    branches of the knocker's floor, the feeding penalty's 31 and the blitz after a
    knock turn on them). The masks stay right: they follow the seat's own hand."""
    out = []
    for v, m in log[::8]:
        after = v.players_after()
        if not after:
            continue
        o = v.knocker if v.knocker >= 0 else after[0]
        free = sorted(set(v.unseen()) | set(v.known_of(o)))
        for cards in _known_hands(free):
            known = list(v.known_masks)
            known[o] = sum(1 << c for c in cards)
            out.append((v._replace(known_masks=tuple(known)), m))
    return out


@pytest.fixture(scope="module")
def pools() -> list[tuple[str, list]]:
    """(table label, recorded views) for every table of TABLES, and the crafted views."""
    out = []
    for t, (rules, sizes) in enumerate(TABLES):
        for n in sizes:
            log = _collect(rules, n, seed=100 * t + n)
            out.append((f"table {t} ({n} seats)", log))
            out.append((f"table {t} ({n} seats), crafted", _crafted(log)))
    return out


def _assert_same(player, log: list, label: str) -> np.ndarray:
    """``act_batch`` of the pool equals ``act`` view by view; returns ``act``'s moves."""
    views = [v for v, _ in log]
    masks = np.stack([m for _, m in log])
    want = np.array([player.act(v, m) for v, m in log])
    got = player.act_batch(ViewBatch.from_views(views), masks)
    assert got.shape == (len(log),)
    wrong = np.flatnonzero(got != want)
    assert wrong.size == 0, (
        f"{label}: {wrong.size} of {len(log)} decisions differ, first: view {views[wrong[0]]}, "
        f"act {want[wrong[0]]}, act_batch {got[wrong[0]]}"
    )
    return want


@pytest.mark.parametrize("name", list(PLAYERS))
def test_act_batch_plays_acts_moves(pools, name):
    moves = []
    for label, log in pools:
        moves.append(_assert_same(PLAYERS[name](), log, f"{name} on {label}"))
    played = np.concatenate(moves)
    for action in (DRAW_STOCK, TAKE_DISCARD, KNOCK):
        assert (played == action).any(), f"{name} never chose action {action} in the sample"
    assert (played >= DISCARD_BASE).sum() > 1000


def _counts(pools) -> dict[str, int]:
    """How often the sample reaches each branch the batch must get right."""
    expert = ExpertPlayer()
    c = dict.fromkeys(
        ("knock", "last_draw", "last_discard", "stand", "no_stock", "feed", "last_life", "chips"), 0
    )
    for _, log in pools:
        for v, m in log:
            move = expert.act(v, m)
            c["knock"] += move == KNOCK
            c["stand"] += move == STAND
            c["chips"] += v.rules.scoring == "chips" and len(v.hand) == 3 and v.knocker < 0 and bool(m[KNOCK])
            spare = v.lives[v.seat] - (0 if v.rules.free_ride else 1) + 1
            c["last_life"] += spare <= 1 and len(v.hand) == 3 and bool(m[KNOCK])
            if v.knocker >= 0:
                c["last_draw" if len(v.hand) == 3 else "last_discard"] += 1
                c["no_stock"] += len(v.hand) == 3 and not m[DRAW_STOCK]
            after = v.players_after()
            if len(v.hand) == 4 and after:
                nxt = after[0]
                c["feed"] += any(expert._feed_penalty(v, card, nxt) > 0 for card in v.hand)
    return c


def test_the_sample_reaches_every_branch(pools):
    c = _counts(pools)
    assert sum(len(log) for _, log in pools) >= 10_000
    for what, count in c.items():
        assert count >= 10, f"only {count} views of kind {what!r}: {c}"


def test_act_batch_on_a_slice_of_reused_buffers_and_bool_masks(pools):
    """Rows taken out of bigger buffers (as the vector env hands them) and bool masks
    give the same moves; the inputs are left as they were."""
    _, log = pools[0]
    views = [v for v, _ in log]
    masks = np.stack([m for _, m in log])
    whole = ViewBatch.from_views(views)
    part = batch_rows(whole, 10, 300)
    before = {k: x.copy() for k, x in whole.__dict__.items() if isinstance(x, np.ndarray)}
    for player in (ExpertPlayer(), Blitz31Player()):
        want = [player.act(v, m) for v, m in zip(views[10:300], masks[10:300], strict=True)]
        got = player.act_batch(part, masks[10:300].astype(bool))
        assert got.tolist() == want
        assert player.act_batch(part, masks[10:300]).tolist() == want  # deterministic
    for k, x in before.items():
        np.testing.assert_array_equal(getattr(whole, k), x)


@pytest.mark.parametrize("player", [ExpertPlayer(), Blitz31Player()], ids=["ExpertPlayer", "Blitz31Player"])
def test_act_batch_refuses_bad_input(pools, player):
    name = type(player).__name__
    _, log = pools[0]
    views = [v for v, _ in log[:5]]
    masks = np.stack([m for _, m in log[:5]])
    batch = ViewBatch.from_views(views)
    with pytest.raises(ValueError, match=rf"{name}.act_batch: masks of shape \(4, 56\)"):
        player.act_batch(batch, masks[:4])
    with pytest.raises(ValueError, match=rf"{name}.act_batch: masks of shape \(5, 113\)"):
        player.act_batch(batch, np.zeros((5, 113), dtype=np.int8))
    with pytest.raises(ValueError, match=rf"{name}.act_batch: masks must be int8"):
        player.act_batch(batch, masks.astype(np.float32))
    with pytest.raises(ValueError, match=rf"{name}.act_batch: observations must be a ViewBatch"):
        player.act_batch(views, masks)
    banking = dataclasses.replace(batch, rules=PRESETS["banking"])
    with pytest.raises(ValueError, match=rf"{name}.act_batch: the stock game only"):
        player.act_batch(banking, masks)
    empty = masks.copy()
    empty[3] = 0
    with pytest.raises(ValueError, match=rf"{name}.act_batch: row 3 of masks allows no action"):
        player.act_batch(batch, empty)
