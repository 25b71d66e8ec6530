"""Settlement: how a round ends and who pays.

A blitz (:func:`_settle_blitz`), a showdown (:func:`_settle_showdown`) and a void
round end here. Lives games take lives and eliminate (:func:`_settle`); points and
chips games score by rank or share the pot (:func:`_score_round`), chips games put out
whoever has no chips left (:func:`_chip_standings`), and :func:`_finish_scored`
records the round. Each records the :class:`~thirtyone_env.game.state.RoundResult`,
appends the ``"settle"`` event and sets the phase to ``ROUND_OVER`` or ``GAME_OVER``.
Imports only :mod:`~thirtyone_env.game.state` of the engine's modules.
"""

from __future__ import annotations

from thirtyone_env.game import events as ev
from thirtyone_env.game.cards import NUM_CARDS, PAIR_STRIDE
from thirtyone_env.game.events import Event
from thirtyone_env.game.state import (
    BLITZ,
    GAME_OVER,
    ROUND_OVER,
    T_KNOCK_TURNS,
    T_KNOCK_VALUE2,
    T_KNOCKS,
    T_KNOCKS_SHOWN,
    T_ROUNDS,
    T_SHOWDOWNS,
    T_SHOWN_VALUE2,
    GameState,
    RoundResult,
    _new,
    _value,
    hands_shown,
)


def _in_round(s: GameState) -> list[int]:
    return [p for p in range(s.num_players) if s.active[p]]


def _settle_blitz(s: GameState, blitzers: tuple[int, ...], detail: str) -> None:
    """Everyone not holding 31 loses one life (points and chips: see :func:`_score_round`)."""
    values = s._values
    losses = [0] * s.num_players
    for p in _in_round(s):
        if _value(values, s.hands[p]) != s._blitz:
            losses[p] = 1
    blitzers = tuple(p for p in _in_round(s) if losses[p] == 0)
    knocker = s.knocker if s.knocker >= 0 else None
    if s.rules.scoring != "lives":
        _score_round(s, BLITZ, detail, knocker, blitzers)
        return
    _settle(s, BLITZ, detail, losses, knocker, blitzers)


def _settle_showdown(s: GameState, reason: str, knocker: int) -> None:
    """Lowest hand(s) lose 1; a knocker strictly lowest pays ``knocker_penalty``."""
    if s.rules.scoring != "lives":
        _score_round(s, reason, reason, knocker if knocker >= 0 else None, ())
        return
    table = s._values
    values = tuple(table[h[0] * PAIR_STRIDE + h[1] * NUM_CARDS + h[2]] if h else None for h in s.hands)
    low = min(v for v in values if v is not None)
    tied = [p for p, v in enumerate(values) if v == low]
    losses = [0] * s.num_players
    rules = s.rules
    if knocker in tied:
        if len(tied) == 1 or rules.knocker_tie == "knocker_pays_penalty":
            losses[knocker] = rules.knocker_penalty
        elif rules.knocker_tie == "knocker_pays":
            losses[knocker] = 1
        elif rules.knocker_tie == "knocker_safe":
            for p in tied:
                if p != knocker:
                    losses[p] = 1
        else:  # all_lose
            for p in tied:
                losses[p] = 1
    else:
        for p in tied:
            losses[p] = 1
    _settle(s, reason, reason, losses, knocker if knocker >= 0 else None, (), values)


def _tally_round(s: GameState, reason: str, knocker: int | None, values: tuple) -> None:
    """Count the settled round into ``s.tally``: who was dealt in, the knock and the
    knocker's turn, and the hands shown (:func:`hands_shown`: everything a real table
    sees)."""
    tally = s.tally
    shown = hands_shown(reason, s.rules)
    for p, h in enumerate(s.hands):
        if not h:
            continue
        t = tally[p]
        t[T_ROUNDS] += 1
        if shown and values[p] is not None:
            v2 = int(2 * values[p])
            t[T_SHOWDOWNS] += 1
            t[T_SHOWN_VALUE2] += v2
            if p == knocker:
                t[T_KNOCKS_SHOWN] += 1
                t[T_KNOCK_VALUE2] += v2
    if knocker is not None:
        tally[knocker][T_KNOCKS] += 1
        tally[knocker][T_KNOCK_TURNS] += s.player_turns[knocker]


def _settle(
    s: GameState,
    reason: str,
    detail: str,
    losses: list[int],
    knocker: int | None,
    blitzers: tuple[int, ...],
    values: tuple[float | None, ...] | None = None,
) -> None:
    """Apply lives lost, eliminate, and decide whether the game is over.

    ``values`` (every seat's hand value, ``None`` if not dealt in) is computed here
    unless the caller already has it.
    """
    if values is None:
        table = s._values
        values = tuple(
            table[h[0] * PAIR_STRIDE + h[1] * NUM_CARDS + h[2]] if len(h) == 3 else None for h in s.hands
        )
    if s.rules.scoring != "lives":  # a void round: nobody scores, the pot stays
        gains = [0] * s.num_players
        out: tuple[int, ...] = ()
        if s.rules.scoring == "chips":  # the ante was paid: whoever has no chips left is out
            players = [p for p in range(s.num_players) if s.active[p] and s.hands[p]]
            out = _chip_standings(s, players, gains)
        _finish_scored(s, reason, detail, gains, knocker, blitzers, values, out)
        return
    _tally_round(s, reason, knocker, values)
    players = [p for p, h in enumerate(s.hands) if h]
    lives = s.lives
    floor = 0 if s.rules.free_ride else 1
    out = [p for p in players if lives[p] - losses[p] < floor]
    if out and len(out) == len(players):
        # No game ends without a winner: all stay in at their lowest legal count, and
        # the result records the lives actually lost.
        for p in players:
            new = max(floor, lives[p] - losses[p])
            losses[p] = lives[p] - new
            lives[p] = new
        out = []
    else:
        for p in players:
            if losses[p]:
                lives[p] = max(0, lives[p] - losses[p])
        for p in out:
            s.active[p] = False
    result = RoundResult(
        s.round_no,
        s.dealer,
        reason,
        detail,
        tuple(losses),
        values,
        knocker,
        blitzers,
        tuple(out),
        tuple(lives),
        tuple(-x for x in losses),
        tuple(lives),
    )
    s.result = result
    s.history.append(_new(Event, (ev.SETTLE, -1, result)))
    s.drawn = -1
    s.took = -1
    remaining = [p for p in players if s.active[p]] if out else players
    if len(remaining) == 1:
        s.winners = (remaining[0],)
        s.phase = GAME_OVER
    elif s.round_no >= s.rules.max_rounds:
        best = max(lives[p] for p in remaining)
        s.winners = tuple(p for p in remaining if lives[p] == best)
        s.phase = GAME_OVER
    else:
        s.phase = ROUND_OVER


def _rank_points(values: dict[int, float], knocker: int | None) -> dict[int, int]:
    """No-elimination points by rank: lowest 1 (knocker 0), middle 2 (knocker 1),
    highest 3 (knocker 4). Ties take the best rank they share; with one player, high.
    A blitz's 31 is the highest hand: its holders take the top rank (and score 6 for
    it, :func:`_score_round`), so the others rank below it."""
    points = {}
    top = max(values.values())
    low = min(values.values())
    lowest_alone = sum(1 for v in values.values() if v == low) == 1 and low != top
    for p, v in values.items():
        if v == top:
            rank = 2
        elif v == low and lowest_alone:
            rank = 0
        else:
            rank = 1
        points[p] = ((0, 1, 4) if p == knocker else (1, 2, 3))[rank]
    return points


def _score_round(
    s: GameState, reason: str, detail: str, knocker: int | None, blitzers: tuple[int, ...]
) -> None:
    """Settle a points or chips round (see ``Rules.scoring``)."""
    table = s._values
    values = tuple(_value(table, h) if len(h) == 3 else None for h in s.hands)
    players = [p for p in range(s.num_players) if values[p] is not None]
    gains = [0] * s.num_players
    if s.rules.scoring == "points":
        for p, pts in _rank_points({p: values[p] for p in players}, knocker).items():
            gains[p] = pts
        for p in blitzers:
            gains[p] = 6
        for p in players:
            s.score[p] += gains[p]
        _finish_scored(s, reason, detail, gains, knocker, blitzers, values, ())
        return
    # chips: the ante is already in the pot
    if blitzers:
        for p in players:
            if p not in blitzers:
                paid = min(s.rules.blitz_chips, s.score[p])
                s.score[p] -= paid
                s.pot += paid
                gains[p] -= paid
        winners = list(blitzers)
    else:
        best = max(values[p] for p in players)
        winners = [p for p in players if values[p] == best]
    share = s.pot // len(winners)
    for p in winners:
        s.score[p] += share
    s.pot -= share * len(winners)
    out = _chip_standings(s, players, gains)
    _finish_scored(s, reason, detail, gains, knocker, blitzers, values, out)


def _chip_standings(s: GameState, players: list[int], gains: list[int]) -> tuple[int, ...]:
    """Chips games: fill ``gains`` with each player's change over the round (the ante
    and any blitz payment included) and put out whoever has no chips left, unless that
    is everyone (no game ends without a winner). Returns those put out."""
    for p in players:
        gains[p] = s.score[p] - s.score_start[p]
    out = tuple(p for p in players if s.score[p] <= 0)
    if len(out) == len(players):
        out = ()
    for p in out:
        s.active[p] = False
    return out


def _finish_scored(
    s: GameState,
    reason: str,
    detail: str,
    gains: list[int],
    knocker: int | None,
    blitzers: tuple[int, ...],
    values: tuple,
    out: tuple[int, ...],
) -> None:
    """Record a points/chips round and decide whether the game is over."""
    _tally_round(s, reason, knocker, values)
    result = RoundResult(
        s.round_no,
        s.dealer,
        reason,
        detail,
        (0,) * s.num_players,
        values,
        knocker,
        blitzers,
        out,
        tuple(s.lives),
        tuple(gains),
        tuple(s.score),
    )
    s.result = result
    s.history.append(_new(Event, (ev.SETTLE, -1, result)))
    s.drawn = -1
    s.took = -1
    remaining = [p for p in range(s.num_players) if s.active[p]]
    rules = s.rules
    last = s.round_no >= (rules.num_rounds if rules.scoring == "points" else rules.max_rounds)
    if len(remaining) == 1:
        s.winners = (remaining[0],)
        s.phase = GAME_OVER
    elif last:
        best = max(s.score[p] for p in remaining)
        s.winners = tuple(p for p in remaining if s.score[p] == best)
        s.phase = GAME_OVER
    else:
        s.phase = ROUND_OVER
