"""The table loop, written once: seat players, let them move, settle and deal rounds.

Every place that plays a game on the engine (the single-agent env's opponents, the
PettingZoo env, :func:`~thirtyone_env.harness.match.play_game`, tournaments, terminal play)
runs it through a :class:`Table`; search and imitation rollouts play a round out with
:func:`rollout_value`. A player is any object with ``act(observation, action_mask) ->
int``; it gets the observation its ``obs_encoding`` asks for (``"view"``, ``"flat"``
or ``"dict"``) and the int8 mask. All randomness comes from the one generator the
table is given, drawn in the engine's order, so one seed gives one game.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

import numpy as np

from thirtyone_env.game.actions import DISCARD_BASE, NUM_ACTIONS, action_name
from thirtyone_env.game.encoding import PLAYER_ENCODINGS, ObsLayout, encode_dict, encode_flat, split_encoding
from thirtyone_env.game.engine import (
    GAME_OVER,
    ROUND_OVER,
    GameState,
    IllegalActionError,
    RoundResult,
    apply_action,
    clone_state,
    legal_actions,
    legal_mask,
    start_round,
)
from thirtyone_env.game.player_stream import players_generator
from thirtyone_env.game.views import player_view
from thirtyone_env.harness.equity import equity_of

#: What a played-out round is worth (:func:`round_value`): the change of standing, or
#: the chance to win the game from the standing it leaves.
OBJECTIVES = ("lives", "win")
NOBODY = -1  #: ``Table.advance(NOBODY)``: no seat's decision stops the play


class MoveObserver(Protocol):
    """Watches every move played at a table (or in a replay): ``before`` sees the state
    the seat decides in and, when it returns true, ``after`` the state the move left,
    each with the seat and the (legal) action id. Research records are built this way
    from the engine's own states (:class:`~thirtyone_env.harness.analysis.TurnRecorder`);
    an observer that needs no ``after`` for most moves costs the table less."""

    def before(self, state: GameState, seat: int, action: int) -> bool: ...

    def after(self, state: GameState, seat: int, action: int) -> None: ...


#: ``move(state, rng)``: play the move of the seat to act in ``state``.
Move = Callable[[GameState, np.random.Generator], None]


def observe(state: Any, seat: int, encoding: str, layout: ObsLayout) -> Any:
    """The observation of ``seat`` in the named encoding (``"flat+history"``,
    ``"dict+history"``: with the ``opponent_history`` part)."""
    if encoding == "view":
        return player_view(state, seat)
    encoding, layout = split_encoding(encoding, layout)
    if encoding == "flat":
        return encode_flat(state, seat, layout)
    if encoding == "dict":
        return encode_dict(state, seat, layout)
    raise ValueError(f"unknown obs_encoding {encoding!r}; allowed: {list(PLAYER_ENCODINGS)}")


def policy_move(
    state: Any,
    policy: Any,
    encoding: str,
    layout: ObsLayout,
    rng: np.random.Generator,
    who: str,
    observer: MoveObserver | None = None,
) -> None:
    """Let ``policy`` play the seat to act (watched by ``observer`` when given). An
    illegal or malformed choice raises :class:`IllegalActionError` that names ``who``
    chose it and what was legal."""
    seat = state.current
    obs = player_view(state, seat) if encoding == "view" else observe(state, seat, encoding, layout)
    mask = legal_mask(state)
    try:
        action = policy.act(obs, mask)
    except SystemExit as e:  # a player's code may fail, not end the program that seats it
        raise RuntimeError(
            f"{who} in seat {seat} ({type(policy).__name__}) raised SystemExit({e.code!r}) in act"
        ) from None
    try:
        a = move_id(action)
        if not (0 <= a < len(mask) and mask[a]):  # 1.5 is no move, not move 1
            _refuse(state, action, own=False)
        if observer is None:
            apply_action(state, a, rng)
        else:  # observed_action written out (the mask is at hand): a call less a move
            if observer.before(state, seat, a):
                apply_action(state, a, rng)
                observer.after(state, seat, a)
            else:
                apply_action(state, a, rng)
    except (IllegalActionError, TypeError, ValueError) as e:
        raise IllegalActionError(
            f"{who} in seat {seat} ({type(policy).__name__}) chose {action!r}: {e}"
        ) from e


def move_id(action: Any) -> int:
    """``action`` as a move id: an ``int``, a numpy integer or a 0-d integer array; -1
    for anything else (a float, a bool, text), which no legal mask allows."""
    if isinstance(action, np.ndarray) and action.shape == ():
        action = action[()]
    if isinstance(action, bool | np.bool_) or not isinstance(action, int | np.integer):
        return -1
    return int(action)


def observed_action(
    state: GameState,
    action: int,
    rng: Any,
    observer: MoveObserver,
    mask: np.ndarray | None = None,
) -> None:
    """:func:`~thirtyone_env.game.engine.apply_action` with ``observer`` told before (and
    after, when ``before`` asks for it); an illegal action raises before the observer
    sees it. ``mask``: the state's legal mask when the caller has it."""
    if mask is None:
        mask = legal_mask(state)
    a = move_id(action)
    if not (0 <= a < len(mask) and mask[a]):  # a bool or a non-integer is refused too
        _refuse(state, action)
    action = a
    seat = state.current
    if observer.before(state, seat, action):
        apply_action(state, action, rng)
        observer.after(state, seat, action)
    else:
        apply_action(state, action, rng)


def _refuse(state: GameState, action: Any, own: bool = True) -> None:
    """Raise :class:`IllegalActionError` for an action the legal mask refuses, naming
    what was legal (``own``: to the one who chose it; else as others at the table may
    read it, :func:`legal_text`); the state is not touched (the engine would take a
    bool for an id)."""
    legal = legal_actions(state)
    named = ", ".join(f"{a} ({action_name(a)})" for a in legal) or "none" if own else legal_text(legal)
    raise IllegalActionError(f"illegal action {action!r}; legal: {named}")


def legal_text(legal: Iterable[int]) -> str:
    """A player's legal moves as an error about its choice may show them to the others
    at the table (an agent, a person at the web table): named, but for its discards,
    which would show its hand and are only counted."""
    legal = [int(a) for a in legal]
    named = [f"{a} ({action_name(a)})" for a in legal if not DISCARD_BASE <= a < NUM_ACTIONS]
    hidden = len(legal) - len(named)
    if hidden:
        named.append(f"{hidden} discard{'s' if hidden > 1 else ''} (not named: they would show its hand)")
    return ", ".join(named) or "none"


def reset_players(players: Iterable[Any], rng: np.random.Generator) -> np.random.Generator:
    """Hand the players' generator, seeded from a hash of the table's ``rng``
    (:func:`~thirtyone_env.game.player_stream.players_generator`; ``rng`` is not
    advanced), to every player with a ``reset(rng)`` method, in order (``None``
    entries, seats played from outside, are skipped). A game depends on ``rng`` alone,
    no player holds the generator that deals, and the cards dealt do not depend on
    what the players draw. Returns the players' generator."""
    shared = players_generator(rng)
    for player in players:
        reset = getattr(player, "reset", None)
        if callable(reset):
            reset(shared)
    return shared


def check_table(player: Any, num_players: int, rules: Any, label: str | None = None) -> None:
    """Tell ``player`` the table it is to sit at: its ``check_table(num_players,
    rules)``, where it has one, raises ``ValueError`` (or ``OSError``) naming what it
    cannot play. Any other exception its own code raises becomes a ``ValueError``
    naming the player (``label``, else its class), so a tool reports it in one line."""
    check = getattr(player, "check_table", None)
    if not callable(check):
        return
    try:
        check(num_players, rules)
    except (ValueError, OSError):
        raise
    except Exception as e:
        name = label if label is not None else type(player).__name__
        raise ValueError(
            f"player {name!r} could not be checked for the table: {type(e).__name__}: {e}"
        ) from None


def check_seated(players: Iterable[Any], num_players: int, rules: Any) -> None:
    """Tell each player the table it is seated at, before it plays there: a player with
    a ``check_table(num_players, rules)`` method gets it called once (a learned player
    picks or checks its model there, and raises ``ValueError`` naming it for a table it
    cannot play); ``None`` entries, seats played from outside, are skipped."""
    seen: set[int] = set()
    for player in players:
        if player is not None and id(player) not in seen:
            seen.add(id(player))
            check_table(player, num_players, rules)


def encodings_of(players: Sequence[Any], default: str) -> list[str]:
    """Each player's ``obs_encoding`` (``default`` for those that name none)."""
    return [getattr(p, "obs_encoding", default) for p in players]


class Table:
    """One game on the engine with a player (or ``None``: played from outside) in each
    seat.

    :meth:`advance` lets the players move until a chosen seat must decide;
    :meth:`settle` only settles ended rounds. On the way every settled round is
    reported: appended to ``results`` (its :class:`RoundResult`) and, with
    ``keep_history``, to ``histories`` (its events), and passed to ``on_settle(state)``
    before the next round is dealt (``on_deal(state)`` after). An ``observer`` sees every
    move, the players' and those played from outside (:class:`MoveObserver`). The table
    has ``ended`` when the game is over, after one round with ``one_round``, or when the
    seat waited for is out of the game (unless ``play_out``).

    Args:
        state: a game from :func:`~thirtyone_env.game.engine.new_game`.
        players: one per seat, each told the table first (:func:`check_seated`).
        rng: the game's generator (deals and reshuffles draw from it; the players,
            from their own: :func:`reset_players`).
        layout: the observation layout (built from the state when not given).
        encoding: the observation of players without an ``obs_encoding``.
        labels: who a player is, in errors: one string, or one per seat.
        one_round: end after the first settlement.
        keep_history: keep every settled round's events in ``histories``.
        decks: ``decks(k)``: the deck order of the round after round ``k`` (``None``:
            shuffled from ``rng``).
        observer: watches every move (``None``: nothing is called, at no cost).
        play_out: when the seat waited for is out of the game, play on to the game's end
            (the others are players; the game's record is then whole).
    """

    __slots__ = (
        "state",
        "players",
        "encodings",
        "labels",
        "layout",
        "rng",
        "one_round",
        "decks",
        "on_settle",
        "on_deal",
        "observer",
        "results",
        "histories",
        "keep_history",
        "play_out",
        "ended",
    )

    def __init__(
        self,
        state: GameState,
        players: Sequence[Any],
        rng: np.random.Generator,
        *,
        layout: ObsLayout | None = None,
        encoding: str = "view",
        labels: str | Sequence[str] = "player",
        one_round: bool = False,
        keep_history: bool = False,
        decks: Callable[[int], Sequence[int]] | None = None,
        on_settle: Callable[[GameState], None] | None = None,
        on_deal: Callable[[GameState], None] | None = None,
        observer: MoveObserver | None = None,
        play_out: bool = False,
    ) -> None:
        n = state.num_players
        if len(players) != n:
            raise ValueError(f"a table of {n} seats needs {n} players, got {len(players)}")
        check_seated(players, n, state.rules)
        self.state = state
        self.players = list(players)
        self.encodings = encodings_of(self.players, encoding)
        self.labels = [labels] * n if isinstance(labels, str) else list(labels)
        self.layout = layout if layout is not None else ObsLayout(n, state.rules)
        self.rng = rng
        self.one_round = one_round
        self.decks = decks
        self.on_settle = on_settle
        self.on_deal = on_deal
        self.observer = observer
        self.results: list[RoundResult] = []
        self.histories: list[list] = []
        self.keep_history = keep_history
        self.play_out = play_out
        self.ended = False

    def play(self, action: int) -> None:
        """Play ``action`` for the seat to act (a seat played from outside)."""
        if self.observer is None:
            apply_action(self.state, action, self.rng)
        else:
            observed_action(self.state, action, self.rng, self.observer)

    def advance(self, seat: int) -> bool:
        """Let the players move, settling and dealing rounds, until ``seat`` must act
        (``NOBODY``: to the end). True when the table has ended."""
        if self.ended:
            return True
        s = self.state
        players = self.players
        encodings = self.encodings
        labels = self.labels
        layout = self.layout
        rng = self.rng
        observer = self.observer
        while True:
            if s.phase >= ROUND_OVER:
                if self._round_over(seat):
                    return True
                continue
            p = s.current
            if p == seat:
                return False
            policy_move(s, players[p], encodings[p], layout, rng, labels[p], observer)

    def settle(self) -> bool:
        """Settle ended rounds and deal the next until a seat must act. True when the
        table has ended."""
        if self.ended:
            return True
        s = self.state
        while s.phase >= ROUND_OVER:
            if self._round_over(NOBODY):
                return True
        return False

    def _round_over(self, seat: int) -> bool:
        """Report the settled round; end the table or deal the next round."""
        s = self.state
        self.results.append(s.result)
        if self.keep_history:
            self.histories.append(s.history)
        if self.on_settle is not None:
            self.on_settle(s)
        if s.phase == GAME_OVER or self.one_round or (seat >= 0 and not s.active[seat] and not self.play_out):
            self.ended = True
            return True
        start_round(s, self.rng, deck=None if self.decks is None else self.decks(s.round_no))
        if self.on_deal is not None:
            self.on_deal(s)
        return False


def player_move(players: Sequence[Any], encodings: Sequence[str], layout: ObsLayout, label: str) -> Move:
    """A :data:`Move` that lets ``players[seat]`` play the seat to act."""

    def move(s: GameState, rng: np.random.Generator) -> None:
        p = s.current
        policy_move(s, players[p], encodings[p], layout, rng, label)

    return move


def round_value(s: GameState, seat: int, elimination_penalty: float, objective: str = "lives") -> float:
    """What the settled round in ``s`` is worth to ``seat``: its change of standing in
    the scored games; in the lives games minus the lives lost, and
    ``elimination_penalty`` more when the loss puts the seat out; with ``objective``
    ``"win"`` the chance to win the game from the standing it leaves, in lives at the
    start (:mod:`~thirtyone_env.harness.equity`)."""
    if objective not in OBJECTIVES:
        raise ValueError(f"objective={objective!r} is not allowed; allowed values: {list(OBJECTIVES)}")
    result = s.result
    if objective == "lives" and s.rules.scoring != "lives":
        return float(result.gains[seat])
    return settled_value(
        s.rules, result.losses[seat], seat in result.eliminated, s.lives, s.active, s.winners, seat,
        elimination_penalty, objective,
    )  # fmt: skip


def settled_value(
    rules: Any,
    loss: int,
    eliminated: bool,
    lives: Sequence[int],
    active: Sequence[bool],
    winners: Sequence[int],
    seat: int,
    elimination_penalty: float,
    objective: str,
) -> float:
    """:func:`round_value` of a lives game's settled round from its numbers: ``seat``'s
    ``loss`` this round (``eliminated``: it went out), and the standing it leaves
    (``lives``, ``active``, the game's ``winners`` if it ended), as the engine and the
    compiled play-outs (:mod:`thirtyone_env.envs.playouts`) both give them."""
    if objective == "win":
        return equity_of(rules, lives, active, winners, seat)
    utility = -float(loss)
    if loss and eliminated:
        utility -= elimination_penalty
    return utility


def start_playout(
    state: GameState, action: int, rng: np.random.Generator, shuffle_stock: bool = True
) -> GameState:
    """A copy of ``state`` with ``action`` played, the first move of a play-out: the
    copy's stock shuffled with ``rng`` first (nobody at the table knows its order)
    unless ``shuffle_stock`` is false. An illegal action is a ``ValueError`` naming it."""
    s = clone_state(state)
    if shuffle_stock and len(s.stock) > 1:
        s.stock = [s.stock[k] for k in rng.permutation(len(s.stock)).tolist()]
    try:
        apply_action(s, int(action), rng)
    except IllegalActionError as e:
        raise ValueError(f"the oracle cannot play {action_name(int(action))} here: {e}") from None
    return s


def rollout_value(
    start: GameState,
    action: int,
    move: Move,
    rng: np.random.Generator,
    seat: int,
    elimination_penalty: float,
    objective: str = "lives",
) -> float:
    """Play ``action`` in a copy of ``start``, then ``move`` for every move to the end
    of the round: the :func:`round_value` of that round for ``seat``."""
    s = clone_state(start)
    apply_action(s, action, rng)
    while s.phase < ROUND_OVER:
        move(s, rng)
    return round_value(s, seat, elimination_penalty, objective)
